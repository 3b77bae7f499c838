package scenarios

import (
	"os"
	"strings"
	"testing"
)

// checkGolden holds got equal to the golden file path, line by line, naming the first line
// that differs; with -update it writes got there instead. upTo, when not "", is the heading
// where got stops (a run under the race detector computes only the first part of the larger
// files): the file is compared up to it, and never rewritten from the part.
func checkGolden(t *testing.T, path, test, got, upTo string) {
	t.Helper()
	if *update && upTo == "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./scenarios -run %s -update", err, test)
	}
	want := string(data)
	if upTo != "" {
		if i := strings.Index(want, upTo); i >= 0 {
			want = want[:i]
		}
	}
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for j := 0; j < len(g) || j < len(w); j++ {
		var gl, wl string
		if j < len(g) {
			gl = g[j]
		}
		if j < len(w) {
			wl = w[j]
		}
		if gl != wl {
			t.Fatalf("%s:%d: differs:\n got: %s\nwant: %s\n(run go test ./scenarios -run %s -update after a deliberate change, and read the diff)", path, j+1, gl, wl, test)
		}
	}
}
