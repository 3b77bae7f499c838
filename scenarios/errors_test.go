package scenarios

import (
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestParseErrors runs the error cases in testdata/*.txt: each is a directive
//
//	parse [set=PATH=VALUE ...]
//
// with the file t.yaml as input, and every error Parse reports, in order, as output. The
// lists of the registered fault kinds read {fault kinds} and {model fault kinds}, and the
// list of metrics {metrics}, so that a new kind or metric changes no case. Run
// `go test ./scenarios -run TestParseErrors -update` to regenerate the outputs after a
// deliberate change of message, then read the diff. (-update is the one regenerate flag of
// the repository's golden files; here it sets the datadriven library's own.)
func TestParseErrors(t *testing.T) {
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no error cases in testdata: %v", err)
	}
	for _, path := range paths {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "parse" {
				td.Fatalf(t, "unknown directive %q; want parse", td.Cmd)
			}
			var sets []string
			for _, a := range td.CmdArgs {
				if a.Key != "set" {
					td.Fatalf(t, "unknown argument %q; want set=PATH=VALUE", a.Key)
				}
				sets = append(sets, a.Vals...)
			}
			src := td.Input
			if src != "" {
				src += "\n"
			}
			return parseErrors(t, src, sets)
		})
	}
}

// parseErrors parses src and renders every error on its own line; a scenario that parses is
// itself a failure, since every case in testdata is a mistake.
func parseErrors(t *testing.T, src string, sets []string) string {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src), sets)
	if err == nil {
		t.Fatalf("no error; scenario %s", s.JSON())
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not an ErrorList: %v", err, err)
	}
	// The typed error carries the same place as the text.
	var first *Error
	if !errors.As(err, &first) || first != list[0] {
		t.Errorf("errors.As(*Error) = %v, want the first of the list", first)
	}
	var b strings.Builder
	for _, e := range list {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return strings.NewReplacer(orList(faultKinds), "{fault kinds}", andList(modelFaultKinds), "{model fault kinds}",
		strings.Join(Metrics, ", "), "{metrics}").Replace(b.String())
}
