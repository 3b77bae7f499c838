package scenarios

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// withSet is base (YAML) with path set to value, as an editor would see the file had the
// user written the value there: value read as YAML, maps made along the path, faults[i] an
// index into a list.
func withSet(t *testing.T, base, path, value string) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		t.Fatalf("%s: %v", value, err)
	}
	var cur any = doc
	parts := strings.Split(path, ".")
	for i, p := range parts {
		name, idx := p, -1
		if open := strings.IndexByte(p, '['); open >= 0 {
			name = p[:open]
			idx, _ = strconv.Atoi(strings.TrimSuffix(p[open+1:], "]"))
		}
		m := cur.(map[string]any)
		last := i == len(parts)-1
		if idx >= 0 {
			list := m[name].([]any)
			if last {
				list[idx] = v
				break
			}
			cur = list[idx]
			continue
		}
		if last {
			m[name] = v
			break
		}
		next, ok := m[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[name] = next
		}
		cur = next
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// boundCase is one key set to one value at or past its bounds, on a base scenario.
type boundCase struct{ base, path, value string }

// boundCases are the assignments of bounds.golden: every numeric key of the key tree and
// of each fault kind, at and just past each bound it declares.
func boundCases() []boundCase {
	var cases []boundCase
	var walk func(s *schema, path string, depth int)
	walk = func(s *schema, path string, depth int) {
		if s == nil || s.noSet || depth > 8 || s == faultSchema {
			return
		}
		for _, k := range s.keys {
			sub := s.sub[k]
			p := join(path, k)
			if vals := boundValues(sub); vals != nil {
				for _, v := range vals {
					cases = append(cases, boundCase{boundsBase, p, v})
				}
				continue
			}
			walk(sub, p, depth+1)
		}
		if s.elem != nil && s.named {
			walk(s.elem, join(path, "a"), depth+1)
		}
	}
	walk(rootSchema, "", 0)
	for _, r := range faultTable {
		entry := []string{"kind: " + string(r.Kind)}
		for _, k := range r.Required {
			x := r.keySchema(k).example()
			switch k {
			case "tool":
				x = "a"
			case "zone":
				x = "za"
			}
			entry = append(entry, k+": "+x)
		}
		switch r.Kind {
		case FaultBrownout:
			entry = append(entry, "slowdown: 2")
		case FaultZoneCrash:
			entry = append(entry, "zone: za")
		}
		base := boundsBase + "faults: [{" + strings.Join(entry, ", ") + "}]\n"
		for _, k := range r.allowed() {
			for _, v := range boundValues(r.keySchema(k)) {
				cases = append(cases, boundCase{base, "faults[0]." + k, v})
			}
		}
	}
	return cases
}

// Every bound Parse and Validate enforce on a value of its own, the JSON Schema states: a
// value at or past a declared bound (bounds.golden's assignments), written into the file,
// is refused by the schema exactly when mayday refuses it for that key. Refusals for
// another key (a distribution that then lacks its family) say nothing of this one's bound.
func TestJSONSchemaStatesEveryBound(t *testing.T) {
	s := compileSchema(t)
	checked := 0
	for _, c := range boundCases() {
		doc := withSet(t, c.base, c.path, c.value)
		sc, err := Parse("b.yaml", doc, nil)
		if err == nil {
			err = sc.Validate()
		}
		var list ErrorList
		ownKey := err != nil && errors.As(err, &list)
		for _, e := range list {
			ownKey = ownKey && e.Key == c.path
		}
		schemaErr := s.Validate(instance(t, c.path, doc))
		switch {
		case err == nil && schemaErr != nil:
			t.Errorf("%s=%s: mayday accepts it, the schema refuses it: %v", c.path, c.value, schemaErr)
		case ownKey && schemaErr == nil && !betweenKeys(err):
			t.Errorf("%s=%s: mayday refuses it (%v), the schema accepts it", c.path, c.value, err)
		}
		if err == nil || ownKey {
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d assignments checked; the walk lost the key tree", checked)
	}
}

// betweenKeys reports whether err is a rule between two keys, which the schema does not
// state (JSONSchema's documentation says so): retry.max against retry.initial, a cost budget
// against the prices block.
func betweenKeys(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "want max >= initial") || strings.Contains(msg, "a cost budget needs prices")
}

// The values an editor accepted that mayday refused: a horizon of 0s, 2^40 investigations
// (past the size model's 10^7); and seed: 1.0, a whole number JSON cannot tell from 1, which
// mayday now reads as 1. The size model's bounds are the schema's maxima.
func TestJSONSchemaAgreesOnReportedValues(t *testing.T) {
	s := compileSchema(t)
	for _, c := range []struct {
		path, value string
		want        bool // accepted
	}{
		{"horizon", "0s", false}, {"horizon", "0.0m", false}, {"horizon", "0", false}, {"horizon", "0.5s", true},
		{"seed", "1.0", true}, {"seed", "1.5", false},
		{"workload.investigations", strconv.FormatInt(1<<40, 10), false},
		{"workload.investigations", strconv.Itoa(MaxInvestigations + 1), false},
		{"workload.investigations", "300", true},
		{"tools.a.compute", strconv.FormatFloat(MaxCompute*2, 'g', -1, 64), false},
		{"name", strings.Repeat("n", MaxNameLen+1), false},
		{"workload.arrival.poisson", "0/s", false}, {"workload.arrival.poisson", "0.5/s", true},
	} {
		doc := withSet(t, boundsBase, c.path, c.value)
		sc, err := Parse("b.yaml", doc, nil)
		if err == nil {
			err = sc.Validate()
		}
		if (err == nil) != c.want {
			t.Errorf("%s: %s: mayday says %v, want accepted %v", c.path, c.value, err, c.want)
		}
		if schemaErr := s.Validate(instance(t, c.path, doc)); (schemaErr == nil) != c.want {
			t.Errorf("%s: %s: the schema says %v, want accepted %v", c.path, c.value, schemaErr, c.want)
		}
	}
}
