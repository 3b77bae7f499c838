package reports

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as indented JSON, the form every command's --format json prints.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
