package scenarios

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// generatedGolden is what Parse makes of generated files, and of each with one mistake
// put in: a misspelt key, a value of the wrong kind, a --set of a value at a key the file
// writes. For a file Parse accepts it holds the size model's estimate, term by term, and
// the hash of the resolved scenario (every default filled in); for one it refuses, every
// error with its line, column, key, override and message. It pins at once, over every key
// of the tree, the messages users read and where they point, the defaults, and the
// estimates that decide which runs are too large.
const generatedGolden = "testdata/generated.golden"

// generatedFiles is how many files the golden file covers: each takes about a millisecond
// to parse, four times over.
const generatedFiles = 150

// Every generated file, and each with a mistake put in, parses as it did: the same
// errors at the same places, or the same scenario and the same estimate. Run `go test
// ./scenarios -run TestGeneratedGolden -update` after a deliberate change, then read the
// diff: each change of a message, a default or an estimate shows there.
func TestGeneratedGolden(t *testing.T) {
	var b strings.Builder
	for i := range generatedFiles {
		r := rand.New(rand.NewPCG(uint64(i), 28))
		data := Generate(r.IntN)
		fmt.Fprintf(&b, "## file %d\n", i)
		b.WriteString(parseOutcome(t, data, nil))

		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		keys := mappingKeys(doc.Content[0], "", nil)
		if len(keys) == 0 {
			continue
		}

		// A key misspelt: one letter dropped, two swapped, or the key in capitals.
		k := keys[r.IntN(len(keys))]
		was := k.node.Value
		k.node.Value = misspell(was, r.IntN(3))
		fmt.Fprintf(&b, "## file %d, %s written %s\n", i, k.path, k.node.Value)
		b.WriteString(parseOutcome(t, encode(t, &doc), nil))
		k.node.Value = was

		// A value of another kind in place of the one drawn.
		k = keys[r.IntN(len(keys))]
		v := wrongValues[r.IntN(len(wrongValues))]
		old := *k.value
		var repl yaml.Node
		if err := yaml.Unmarshal([]byte(v), &repl); err != nil {
			t.Fatal(err)
		}
		*k.value = *repl.Content[0]
		fmt.Fprintf(&b, "## file %d, %s: %s\n", i, k.path, v)
		b.WriteString(parseOutcome(t, encode(t, &doc), nil))
		*k.value = old

		// The same through --set, at a key the file writes.
		k = keys[r.IntN(len(keys))]
		set := k.path + "=" + wrongValues[r.IntN(len(wrongValues))]
		fmt.Fprintf(&b, "## file %d, --set %s\n", i, set)
		b.WriteString(parseOutcome(t, data, []string{set}))
	}
	got := b.String()
	if *update {
		if err := os.WriteFile(generatedGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(generatedGolden)
	if err != nil {
		t.Fatalf("%v; run go test ./scenarios -run TestGeneratedGolden -update", err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for j := 0; j < len(g) || j < len(w); j++ {
			var gl, wl string
			if j < len(g) {
				gl = g[j]
			}
			if j < len(w) {
				wl = w[j]
			}
			if gl != wl {
				t.Fatalf("%s:%d: differs:\n got: %s\nwant: %s\n(run go test ./scenarios -run TestGeneratedGolden -update after a deliberate change, and read the diff)", generatedGolden, j+1, gl, wl)
			}
		}
	}
}

// wrongValues are values put where the file had another: numbers at and past the usual
// bounds, words, durations, rates, collections and null.
var wrongValues = []string{"0", "-1", "1", "2.5", "1e400", "x", "5m", "-5m", "50/m", "true", "null", "[1]", "{a: 1}", "\"\"", "1d"}

type keyAt struct {
	path  string
	node  *yaml.Node // the key
	value *yaml.Node
}

// mappingKeys lists the keys of every mapping under n, with their dotted paths as --set
// writes them (faults[1].for).
func mappingKeys(n *yaml.Node, path string, out []keyAt) []keyAt {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			out = append(out, keyAt{p, n.Content[i], n.Content[i+1]})
			out = mappingKeys(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = mappingKeys(c, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
	return out
}

func misspell(k string, how int) string {
	switch {
	case how == 0 && len(k) > 1:
		return k[:len(k)/2] + k[len(k)/2+1:]
	case how == 1 && len(k) > 2:
		return k[:1] + k[2:3] + k[1:2] + k[3:]
	}
	return strings.ToUpper(k)
}

func encode(t *testing.T, doc *yaml.Node) []byte {
	t.Helper()
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseOutcome renders what Parse makes of data: each error on a line, or the scenario's
// hash and estimate.
func parseOutcome(t *testing.T, data []byte, sets []string) string {
	t.Helper()
	s, err := Parse("g.yaml", data, sets)
	var b strings.Builder
	if err != nil {
		var list ErrorList
		if !errors.As(err, &list) {
			t.Fatalf("error %T is not an ErrorList: %v", err, err)
		}
		for _, e := range list {
			fmt.Fprintf(&b, "%d:%d %s", e.Line, e.Column, e.Error())
			if e.Suggestion != "" {
				fmt.Fprintf(&b, " [suggest %s]", e.Suggestion)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	if verr := s.Validate(); verr != nil {
		t.Errorf("Parse accepted a scenario Validate refuses: %v", verr)
	}
	e := EstimateEvents(s)
	fmt.Fprintf(&b, "valid %s\n", s.Hash()[:16])
	fmt.Fprintf(&b, "events total %.6g agents %.6g attempts %.6g lookups %.6g hangs %.6g samples %.6g pauses %.6g crashes %.6g reviews %.6g floor %.6g\n",
		e.Total, e.Agents, e.Attempts, e.Lookups, e.Hangs, e.Samples, e.Pauses, e.Crashes, e.Reviews, e.Floor)
	return b.String()
}
