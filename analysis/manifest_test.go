package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file larger than fullHash is recorded by its first and last MiB, a smaller one whole;
// a change in either part of what was hashed is refused by name; and a folder whose
// manifest hashed a large file whole (as the bound of 256 MiB before 8 December did) is
// checked whole, as its manifest says.
func TestManifestHashesAsRecorded(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, fullHash+3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mayday.duckdb", big)
	write("summary.json", []byte(`{"run":"r"}`))
	if err := writeFolderManifest(dir, "run folder"); err != nil {
		t.Fatal(err)
	}
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, FolderManifest))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sampled := map[string]bool{}
	for _, e := range m.Files {
		sampled[e.Path] = e.Sampled
	}
	if !sampled["mayday.duckdb"] || sampled["summary.json"] {
		t.Fatalf("sampled: %v, want the database only", sampled)
	}
	if err := VerifyManifest(dir); err != nil {
		t.Fatalf("the folder as written: %v", err)
	}
	refusedNaming := func(what, name string) {
		t.Helper()
		err := VerifyManifest(dir)
		if !errors.Is(err, ErrUnrecognised) || !strings.Contains(err.Error(), name+" (changed)") {
			t.Errorf("%s: %v, want %s named as changed", what, err, name)
		}
	}
	// a header rewritten (what a checkpoint does), then the file's end
	for _, at := range []int{4096, len(big) - 10} {
		changed := append([]byte(nil), big...)
		changed[at]++
		write("mayday.duckdb", changed)
		refusedNaming("a byte changed in a sampled part", "mayday.duckdb")
	}
	write("mayday.duckdb", big)
	write("summary.json", []byte(`{"run":"x"}`))
	refusedNaming("a small file changed", "summary.json")
	write("summary.json", []byte(`{"run":"r"}`))

	// A manifest that hashed the database whole: checked whole, so a change in its middle
	// is found too.
	whole := sha256.Sum256(big)
	for i := range m.Files {
		if m.Files[i].Path == "mayday.duckdb" {
			m.Files[i].Sampled, m.Files[i].SHA256 = false, hex.EncodeToString(whole[:])
		}
	}
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	write(FolderManifest, b)
	if err := VerifyManifest(dir); err != nil {
		t.Fatalf("a manifest that hashed the database whole: %v", err)
	}
	changed := append([]byte(nil), big...)
	changed[len(big)/2]++
	write("mayday.duckdb", changed)
	refusedNaming("a byte changed in the middle of a file hashed whole", "mayday.duckdb")
}
