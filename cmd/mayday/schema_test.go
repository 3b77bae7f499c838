//go:build duckdb_arrow

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// `mayday schema` prints the generated schema as one JSON document, and nothing else.
func TestSchemaCommand(t *testing.T) {
	out, errOut, code := execMayday(t, "schema")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !bytes.Equal([]byte(out), scenarios.JSONSchema()) {
		t.Error("mayday schema differs from scenarios.JSONSchema()")
	}
	var doc struct {
		Schema     string         `json:"$schema"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.Schema != "https://json-schema.org/draft/2020-12/schema" || doc.Properties["recovery"] == nil {
		t.Errorf("want a 2020-12 schema with the top-level keys; got $schema %q and %d properties", doc.Schema, len(doc.Properties))
	}
}
