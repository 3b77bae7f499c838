package scenarios

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files: docs/scenario.schema.json, the key tables of docs/scenarios.md, testdata/*.txt")

const schemaFile = "../docs/scenario.schema.json"

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(JSONSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(JSONSchemaID)
	if err != nil {
		t.Fatalf("the schema does not compile against the 2020-12 meta-schema: %v", err)
	}
	return s
}

// instance reads YAML the way an editor's language server does: as JSON values.
func instance(t *testing.T, name string, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: as JSON: %v", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// The published file is the generated schema; `go test ./scenarios -run Schema -update`
// rewrites it after a change to the key tree.
func TestJSONSchemaFileIsCurrent(t *testing.T) {
	if *update {
		if err := os.WriteFile(schemaFile, JSONSchema(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, JSONSchema()) {
		t.Errorf("%s is not the schema the key tree generates; run go test ./scenarios -run Schema -update", schemaFile)
	}
}

// Every scenario the decoder accepts passes the schema: every embedded example and every
// scenario file in the repository's testdata.
func TestJSONSchemaAcceptsEveryValidScenario(t *testing.T) {
	s := compileSchema(t)
	files := map[string][]byte{}
	for _, info := range List() {
		data, _ := Embedded(info.Name)
		files["embedded:"+info.Name] = data
	}
	paths, _ := filepath.Glob("../cmd/mayday/testdata/*.yaml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	// Shapes the decoder accepts that a schema easily forgets: null values read as absent,
	// a tool given by name only, a name that YAML reads as a number.
	files["null values"] = []byte("name: n\ntools:\n  search:\nworkload: {model: ~, arrival: ~}\nfaults:\n  - {kind: transient, probability: 0.1, tool: ~}\nrecovery: {retry: {jitter: ~}, breaker: ~}\n")
	files["numeric name"] = []byte("name: 123\ntools: {search: {}}\n")
	if len(files) < 10 {
		t.Fatalf("only %d scenario files found; the embedded examples are missing", len(files))
	}
	for name, data := range files {
		if _, err := Parse(name, data, nil); err != nil {
			t.Errorf("%s does not parse, so it cannot test the schema: %v", name, err)
			continue
		}
		if err := s.Validate(instance(t, name, data)); err != nil {
			t.Errorf("%s: the decoder accepts it but the schema refuses it:\n%v", name, err)
		}
	}
}

// Files the decoder refuses for their shape (unknown keys, wrong types, values outside an
// enum or a range, a fault key its kind does not take) fail the schema too.
func TestJSONSchemaRefusesInvalidScenarios(t *testing.T) {
	s := compileSchema(t)
	const base = "name: bad\ntools: {search: {latency: 1s}}\n"
	for _, tc := range []struct{ name, yaml string }{
		{"missing name", "tools: {search: {}}\n"},
		{"missing tools", "name: bad\n"},
		{"no tools", "name: bad\ntools: {}\n"},
		{"bad name", "name: Bad Name\ntools: {search: {}}\n"},
		{"unknown top-level key", base + "horizn: 1d\n"},
		{"unknown nested key", base + "recovery: {retry: {max_atempts: 3}}\n"},
		{"enum", base + "recovery: {retry: {jitter: random}}\n"},
		{"idempotency enum", "name: bad\ntools: {search: {idempotency: once}}\n"},
		{"integer range", base + "recovery: {retry: {max_attempts: 0}}\n"},
		{"probability above 1", base + "workload: {behaviour: {stuck: 1.5}}\n"},
		{"duration without unit", base + "horizon: 30\n"},
		{"duration syntax", base + "horizon: 3 days\n"},
		{"rate syntax", base + "workload: {arrival: {poisson: 100 per hour}}\n"},
		{"two arrivals", base + "workload: {arrival: {poisson: 10/h, uniform: 1h}}\n"},
		{"fault kind", base + "faults: [{kind: meteor, tool: search}]\n"},
		{"fault without kind", base + "faults: [{tool: search, probability: 0.1}]\n"},
		{"key its fault kind does not take", base + "faults: [{kind: transient, tool: search, probability: 0.1, for: 1h}]\n"},
		{"fault missing a required key", base + "faults: [{kind: outage, tool: search}]\n"},
		{"distribution family", "name: bad\ntools: {search: {latency: {dist: normal, mean: 1s}}}\n"},
		{"distribution parameter", "name: bad\ntools: {search: {latency: {dist: exponential, median: 1s}}}\n"},
		{"distribution missing a parameter", "name: bad\ntools: {search: {latency: {dist: uniform, min: 1s}}}\n"},
		{"unknown metric", base + "expect: {completion: \">= 0.9\"}\n"},
		{"boolean as text", base + "recovery: {inspect_before_retry: \"yes\"}\n"},
		{"rules supervisor with accuracy", base + "recovery: {supervisor: {kind: rules, accuracy: 0.9}}\n"},
		{"model supervisor without accuracy", base + "recovery: {supervisor: {kind: model}}\n"},
		{"humans without reviewers", base + "recovery: {humans: {approve: 0.5}}\n"},
		{"empty sweep axis", base + "sweep: {recovery.retry.max_attempts: []}\n"},
	} {
		if _, err := Parse("bad.yaml", []byte(tc.yaml), nil); err == nil {
			t.Errorf("%s: the decoder accepts it, so it does not test the schema:\n%s", tc.name, tc.yaml)
			continue
		}
		if err := s.Validate(instance(t, tc.name, []byte(tc.yaml))); err == nil {
			t.Errorf("%s: the schema accepts a file the decoder refuses:\n%s", tc.name, tc.yaml)
		}
	}
}

// Every key of the tree is described, so the schema never publishes a key without saying
// what it is; a key added to the tree without a kind and a description fails here.
func TestJSONSchemaDescribesEveryKey(t *testing.T) {
	var walk func(path string, s *schema)
	walk = func(path string, s *schema) {
		if s.kind == kindAny || s.doc == "" {
			t.Errorf("%s: no kind or description in the key tree (scenarios/schema.go)", path)
			return
		}
		if s.kind == kindDurDist || s.kind == kindCountDist {
			return // the parameters are described per family (distParams)
		}
		for _, k := range s.keys {
			walk(join(path, k), s.sub[k])
		}
		if s.elem != nil {
			walk(path+".*", s.elem)
		}
	}
	walk("", rootSchema)
	if !strings.Contains(string(JSONSchema()), `"description"`) {
		t.Error("the schema has no descriptions")
	}
}

// A file the schema refuses is one the decoder refuses too, so an editor never flags a file
// mayday accepts. Checked on every embedded example with each of its values replaced, one at
// a time, by values of other shapes and kinds. Each value gets 2 of the replacements, in
// rotation, so every replacement meets every kind of key while the test stays quick under
// -race.
func TestJSONSchemaNeverRefusesWhatTheDecoderAccepts(t *testing.T) {
	s := compileSchema(t)
	replacements := []string{"0", "-1", "1.5", "true", "abc", "10m", "5/h", "~", "[]", "{}", "full"}
	checked := 0
	for _, info := range List() {
		data, _ := Embedded(info.Name)
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var scalars []*yaml.Node
		var collect func(n *yaml.Node)
		collect = func(n *yaml.Node) {
			if n.Kind == yaml.ScalarNode {
				scalars = append(scalars, n)
			}
			for i, c := range n.Content {
				if n.Kind == yaml.MappingNode && i%2 == 0 {
					continue // keys stay; unknown keys are covered above
				}
				collect(c)
			}
		}
		collect(&doc)
		for i, n := range scalars {
			orig := *n
			for j := range 2 {
				r := replacements[(2*i+j)%len(replacements)]
				var v yaml.Node
				if err := yaml.Unmarshal([]byte(r), &v); err != nil {
					t.Fatal(err)
				}
				*n = *v.Content[0]
				b, err := yaml.Marshal(&doc)
				if err != nil {
					t.Fatal(err)
				}
				if _, perr := Parse("mutant.yaml", b, nil); perr == nil {
					checked++
					if verr := s.Validate(instance(t, "mutant", b)); verr != nil {
						t.Errorf("%s with %q at line %d: the decoder accepts it, the schema refuses it: %v", info.Name, r, orig.Line, verr)
					}
				}
			}
			*n = orig
		}
	}
	if checked < 100 {
		t.Errorf("only %d accepted mutants checked; the test exercises too little", checked)
	}
	t.Logf("%d accepted mutants checked", checked)
}

// TestKeyTablesAreCurrent: the key tables of docs/scenarios.md are those the declarations
// generate (KeyTable); go test ./scenarios -run KeyTables -update rewrites them.
func TestKeyTablesAreCurrent(t *testing.T) {
	const path = "../docs/scenarios.md"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := renderKeyTables(string(old))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(doc, "<!-- keys ") < 15 {
		t.Fatalf("%s has %d generated key tables; the markers were lost", path, strings.Count(doc, "<!-- keys "))
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != string(old) {
		t.Errorf("%s: a key table is not what the declarations generate; run go test ./scenarios -run KeyTables -update", path)
	}
}
