package scenarios

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// JSON is the resolved scenario as compact JSON: fields in declaration order, lists in file
// order, no maps, so the same scenario always gives the same bytes. It is what runs.config
// stores. It panics only on a hand-built scenario holding a NaN or infinite number, which
// Validate rejects and Parse never produces.
func (s *Scenario) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep ">= 0.95" readable in runs.config
	if err := enc.Encode(s); err != nil {
		panic("scenarios: cannot encode scenario " + s.Name + " as JSON: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Hash is the hex SHA-256 of JSON(): equal for equal resolved scenarios, whatever their
// formatting and comments, and whether their defaults are spelt out or left implicit.
func (s *Scenario) Hash() string {
	sum := sha256.Sum256(s.JSON())
	return hex.EncodeToString(sum[:])
}
