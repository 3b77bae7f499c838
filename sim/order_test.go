package sim

import (
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/scenarios/scenariotest"
)

// TestMappingOrderChangesNothing: YAML mappings are unordered, so every embedded example
// with the keys of every mapping (tools, the step mix, prices, arguments, every block) in
// reverse order, and in two shuffled orders, is the same scenario: the same JSON (but for
// the order of a sweep's axes) and the same digest, row for row.
func TestMappingOrderChangesNothing(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 40
	}
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			data, _ := scenarios.Embedded(info.Name)
			if m, err := scenariotest.Mappings(data); err != nil || m < 3 {
				t.Fatalf("%d reorderable mappings (%v): the test would prove little", m, err)
			}
			load := func(data []byte) (string, string) {
				s, err := scenarios.Parse("embedded:"+info.Name, data, nil)
				if err != nil {
					t.Fatal(err)
				}
				s.Workload.Investigations = min(s.Workload.Investigations, n)
				d, _ := digest(t, s, s.Seed)
				// A sweep keeps its file order: it numbers the grid's points, never a run.
				s.Sweep = nil
				return string(s.JSON()), d
			}
			json, want := load(data)
			variants := map[string]func([]byte) ([]byte, error){
				"reversed":   scenariotest.Reverse,
				"shuffled 1": func(b []byte) ([]byte, error) { return scenariotest.Shuffle(b, 1) },
				"shuffled 2": func(b []byte) ([]byte, error) { return scenariotest.Shuffle(b, 2) },
			}
			for _, name := range []string{"reversed", "shuffled 1", "shuffled 2"} {
				other, err := variants[name](data)
				if err != nil {
					t.Fatal(err)
				}
				j, d := load(other)
				if j != json {
					t.Errorf("%s: the resolved scenario differs:\n%s\nwant\n%s", name, j, json)
				}
				if d != want {
					t.Errorf("%s: digest %s, want %s", name, d, want)
				}
			}
		})
	}
}
