package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// generatedGolden is what Parse makes of generated files, and of each with one mistake
// put in (a misspelt key, a value of the wrong kind, a --set of a value at a key the file
// writes) or a block added (a sweep, a tune and a hunt block over keys the file writes; a
// valid file tuned over its own values). For a file Parse accepts it holds the hash of the
// resolved scenario (every default filled in), the size model's estimate term by term, the
// sweep's points, the tuned parameters' values at points of their ranges and back, the
// hunt's entries; for one it refuses, every error with its line, column, key, override and
// message. It pins at once, over every key of the tree, the messages users read and where
// they point, the defaults, and the estimates that decide which runs are too large.
const generatedGolden = "testdata/generated.golden"

// generatedFiles is how many files the golden file covers: each takes about a millisecond
// to parse, eight times over.
const generatedFiles = 150

// Every generated file, and each with a mistake put in, parses as it did: the same
// errors at the same places, or the same scenario and the same estimate. Run `go test
// ./scenarios -run TestGeneratedGolden -update` after a deliberate change, then read the
// diff: each change of a message, a default or an estimate shows there.
func TestGeneratedGolden(t *testing.T) {
	files := generatedFiles
	if raceDetector {
		files = generatedFiles / 5
	}
	var b strings.Builder
	for i := range files {
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

		// A sweep, a tune and a hunt block over keys the file writes, with the values the
		// file gives them and others.
		k = keys[r.IntN(len(keys))]
		v1, v2 := valueOf(k.value), wrongValues[r.IntN(len(wrongValues))]
		block := fmt.Sprintf("sweep: {%s: [%s, %s]}\n", flowKey(k.path), v1, v2)
		if r.IntN(2) == 0 {
			block = fmt.Sprintf("sweep: {%s: [%s]}\n", flowKey(k.path), v2)
		}
		fmt.Fprintf(&b, "## file %d, %s", i, block)
		b.WriteString(parseOutcome(t, append(slices.Clip(data), block...), nil))

		k = keys[r.IntN(len(keys))]
		lo := valueOf(k.value)
		hi := above(lo)
		if r.IntN(4) == 0 {
			hi = tuneBounds[r.IntN(len(tuneBounds))]
		}
		vary := fmt.Sprintf("{min: %s, max: %s}", lo, hi)
		if r.IntN(3) == 0 {
			vary = fmt.Sprintf("[%s, %s]", hi, lo)
		}
		goal := "maximize: completion_rate"
		if r.IntN(4) == 0 {
			goal = []string{"maximize: ", "minimize: "}[r.IntN(2)] + Metrics[r.IntN(len(Metrics))]
		}
		block = fmt.Sprintf("tune: {vary: {%s: %s}, %s, budget: %s, seeds: %d, confidence: %s}\n", flowKey(k.path), vary, goal,
			[]string{"10", "5m", "1", "0", "x"}[r.IntN(5)], 1+r.IntN(4), []string{"0.9", "0.95", "1", "0.5"}[r.IntN(4)])
		fmt.Fprintf(&b, "## file %d, %s", i, block)
		b.WriteString(parseOutcome(t, append(slices.Clip(data), block...), nil))

		fk := faultKinds[r.IntN(len(faultKinds))]
		rule := ruleOf(FaultKind(fk))
		var entry []string
		for _, key := range rule.allowed() {
			if key == "id" || key == "kind" || !contains(rule.Required, key) && r.IntN(3) == 0 {
				continue
			}
			x := rule.keySchema(key).example()
			switch {
			case key == "tool":
				x = "t0"
			case key == "zone":
				x = "za"
			case r.IntN(2) == 0:
				y := above(x)
				if r.IntN(4) == 0 {
					y = tuneBounds[r.IntN(len(tuneBounds))]
				}
				x = fmt.Sprintf("{min: %s, max: %s}", x, y)
			}
			entry = append(entry, key+": "+x)
		}
		at := "{min: 1m, max: 1h}"
		if r.IntN(4) == 0 {
			at = fmt.Sprintf("{min: %s, max: %s}", tuneBounds[r.IntN(len(tuneBounds))], tuneBounds[r.IntN(len(tuneBounds))])
		}
		block = fmt.Sprintf("hunt: {faults: [{kind: %s, %s}], at: %s, max_faults: %d, budget: %s}\n", fk, strings.Join(entry, ", "),
			at, r.IntN(18), []string{"10", "5m", "1", "0"}[r.IntN(4)])
		fmt.Fprintf(&b, "## file %d, %s", i, block)
		b.WriteString(parseOutcome(t, append(slices.Clip(data), block...), nil))

		// A valid file tuned over up to two of its numbers, durations and rates, and a
		// word as a list of choices, with at most one mistake.
		if _, err := Parse("g.yaml", data, nil); err == nil {
			var vary []string
			for _, k := range keys {
				if k.value.Kind != yaml.ScalarNode || len(vary) == 2 || r.IntN(2) != 0 || mapValue(k.parent, "dist") != nil || isDist(k.path) ||
					slices.Contains([]string{"name", "description", "seed"}, k.path) || strings.HasPrefix(k.path, "expect.") || strings.HasPrefix(k.path, "tolerances.") {
					continue // what tune cannot vary: a distribution's parameters, the identity, the checks
				}
				v := strings.TrimSpace(k.value.Value)
				_, errF := strconv.ParseFloat(v, 64)
				_, errD := ParseDuration(v)
				_, errR := ParseRate(v)
				switch {
				case errF == nil || errD == nil:
					vary = append(vary, fmt.Sprintf("%s: {min: %s, max: %s}", flowKey(k.path), valueOf(k.value), above(v)))
				case errR == nil:
					num, per, _ := strings.Cut(v, "/")
					vary = append(vary, fmt.Sprintf("%s: {min: %s, max: %s/%s}", flowKey(k.path), v, above(num), per))
				default:
					vary = append(vary, fmt.Sprintf("%s: [%s]", flowKey(k.path), valueOf(k.value)))
				}
			}
			if len(vary) > 0 {
				parts := []string{"vary: {" + strings.Join(vary, ", ") + "}", "maximize: completion_rate", "budget: 10",
					"seeds: 2", "max_seeds: 4", "initial: 3", "confidence: 0.9", "subject_to: {terminated_rate: \"<= 0.5\"}"}
				if j := r.IntN(2 * len(tuneMistakes)); j < len(tuneMistakes) {
					parts = append(parts[:1], tuneMistakes[j])
					if !strings.Contains(tuneMistakes[j], "budget") {
						parts = append(parts, "budget: 5m")
					}
				}
				block = "tune: {" + strings.Join(parts, ", ") + "}\n"
				fmt.Fprintf(&b, "## file %d, %s", i, block)
				b.WriteString(parseOutcome(t, append(slices.Clip(data), block...), nil))
			}
		}
	}
	upTo := ""
	if files < generatedFiles {
		upTo = fmt.Sprintf("## file %d\n", files)
	}
	checkGolden(t, generatedGolden, "TestGeneratedGolden", b.String(), upTo)
}

// wrongValues are values put where the file had another: numbers at and past the usual
// bounds, words, durations, rates, collections and null.
var wrongValues = []string{"0", "-1", "1", "2.5", "1e400", "x", "5m", "-5m", "50/m", "true", "null", "[1]", "{a: 1}", "\"\"", "1d"}

// above is a value of the same kind as x and above it: twice it plus one (of its unit), or
// x itself when it is neither a number nor a duration.
func above(x string) string {
	if f, err := strconv.ParseFloat(x, 64); err == nil {
		return fmtNumber(2*f + 1)
	}
	if d, err := ParseDuration(strings.Trim(x, `"`)); err == nil {
		return fmtDuration(2*d + time.Second)
	}
	return x
}

// flowKey is path as a key of a flow mapping: quoted when it holds a list index.
func flowKey(path string) string {
	if strings.Contains(path, "[") {
		return strconv.Quote(path)
	}
	return path
}

// isDist reports whether the key at path (tools.t0.latency) holds a distribution.
func isDist(path string) bool {
	sch := ruleAt(strings.NewReplacer("[0]", "", "[1]", "", "[2]", "", "[3]", "").Replace(path))
	return sch != nil && (sch.kind == kindDurDist || sch.kind == kindCountDist || sch.kind == kindDurDistByClass)
}

// tuneMistakes are settings of a tune block, each wrong in one way.
var tuneMistakes = []string{"minimize: completion_rate", "maximize: makespan", "maximize: events", "maximize: nothing",
	"maximize: completion_rate, minimize: makespan", "maximize: completion_rate, budget: 0", "maximize: completion_rate, budget: -5m",
	"maximize: completion_rate, seeds: 1", "maximize: completion_rate, max_seeds: 1", "maximize: completion_rate, seeds: 5, max_seeds: 4",
	"maximize: completion_rate, initial: 0", "maximize: completion_rate, confidence: 0", "maximize: completion_rate, confidence: 1",
	"maximize: completion_rate, objectives: [completion_rate, events]", "maximize: completion_rate, objectives: [completion_rate, makespan]",
	"maximize: completion_rate, subject_to: {makespan: \"<= 5m\"}", "maximize: completion_rate, subject_to: {makespan: 5}",
	"maximize: completion_rate, budget: 10, budget_time: 5m", "maximize: completion_rate, unknown: 1"}

// tuneBounds are the other ends of ranges in tune and hunt blocks.
var tuneBounds = []string{"0", "1", "3", "0.5", "2.5", "1e9", "1s", "5m", "2d", "10/h", "x", "-1"}

// valueOf is a scalar's text as a flow sequence or mapping holds it, or 1 for a
// collection.
func valueOf(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "1"
	}
	if n.Tag == "!!str" {
		return strconv.Quote(n.Value)
	}
	return n.Value
}

type keyAt struct {
	parent *yaml.Node // the mapping that holds the key
	path   string
	node   *yaml.Node // the key
	value  *yaml.Node
}

// mappingKeys lists the keys of every mapping under n, with their dotted paths as --set
// writes them (faults[1].for).
func mappingKeys(n *yaml.Node, path string, out []keyAt) []keyAt {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			out = append(out, keyAt{n, p, n.Content[i], n.Content[i+1]})
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

// tuneParamText is a parameter's kind, range and levels, the values at a few points of its
// range, and where each lies back in the range.
func tuneParamText(p TuneParam) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s [%v, %v] %q levels %d:", p.Path, p.Kind, p.Min, p.Max, p.Choices, p.Levels())
	for _, u := range []float64{-0.5, 0, 0.1, 0.25, 0.5, 0.999, 1, 2} {
		v := p.Value(u)
		back, ok := p.Unit(v)
		fmt.Fprintf(&b, " %v=%s(%.4g,%t)", u, v, back, ok)
	}
	return b.String()
}

// placeholders writes the lists of fault kinds and metrics as the error cases do
// ({fault kinds}, {model fault kinds}, {metrics}), so that a new kind or metric changes no
// message line of the golden files (the generated files themselves, which draw from them,
// do change).
func placeholders(s string) string {
	return strings.NewReplacer(orList(faultKinds), "{fault kinds}", andList(modelFaultKinds), "{model fault kinds}",
		strings.Join(Metrics, ", "), "{metrics}").Replace(s)
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
			fmt.Fprintf(&b, "%d:%d %s", e.Line, e.Column, placeholders(e.Error()))
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
	// The JSON of a run's config reads back as the same scenario.
	var back Scenario
	if err := json.Unmarshal(s.JSON(), &back); err != nil || !bytes.Equal(back.JSON(), s.JSON()) {
		t.Errorf("the JSON does not read back (%v):\n%s\n%s", err, s.JSON(), back.JSON())
	}
	if c := s.Canonical(); c != s {
		t.Errorf("Parse returned a scenario that is not canonical: %s", s.JSON())
	}
	e := EstimateEvents(s)
	fmt.Fprintf(&b, "valid %s\n", s.Hash()[:16])
	for _, p := range s.Points() {
		c, err := s.With(p...)
		if err != nil {
			fmt.Fprintf(&b, "point %v: %v\n", p, err)
		} else {
			fmt.Fprintf(&b, "point %v: %s\n", p, c.Hash()[:16])
		}
	}
	if tn := s.Tune; tn != nil {
		name, higher := tn.Objective()
		fmt.Fprintf(&b, "tune %s (higher %t) budget %d %v seeds %d to %d initial %d confidence %v\n", name, higher, tn.Budget, tn.BudgetTime, tn.Seeds, tn.MaxSeeds, tn.Initial, tn.Confidence)
		for _, p := range tn.Vary {
			b.WriteString(tuneParamText(p) + "\n")
		}
	}
	if h := s.Hunt; h != nil {
		fmt.Fprintf(&b, "hunt at %v to %v, max %d faults, budget %d %v, liveness %v, shrink %d\n", h.At.Min, h.At.Max, h.MaxFaults, h.Budget, h.BudgetTime, h.Liveness, h.Shrink)
		for _, f := range h.Faults {
			us := make([]float64, len(f.Params))
			for j := range us {
				us[j] = 0.3
			}
			fmt.Fprintf(&b, "  %s (window %t) at 0.3: %s\n", f.Kind, f.Window(), f.Entry(us, "1m"))
			for _, p := range f.Params {
				b.WriteString("  " + tuneParamText(p) + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "events total %.6g agents %.6g attempts %.6g lookups %.6g hangs %.6g samples %.6g pauses %.6g crashes %.6g reviews %.6g floor %.6g\n",
		e.Total, e.Agents, e.Attempts, e.Lookups, e.Hangs, e.Samples, e.Pauses, e.Crashes, e.Reviews, e.Floor)
	return b.String()
}
