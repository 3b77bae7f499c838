package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary files (and one --set) to Parse. No input may panic; a rejected
// input must be an ErrorList of non-empty messages naming the file; an accepted one must
// satisfy Validate and encode to JSON that survives a round trip.
func FuzzParse(f *testing.F) {
	for _, info := range List() {
		data, _ := Embedded(info.Name)
		f.Add(data, "")
		f.Add(data, "recovery.retry.max_attempts=2")
		f.Add(data, "faults[2].for=-1m")
	}
	broken := []string{
		"",
		"name: [\n",
		"- a\n- b\n",
		"name: t\n---\nname: u\n",
		"name: t\ntools: {a: {}}\nworkload: {arrival: {poisson: 50/x}}\n",
		"name: t\ntools: {a: &x {b: *x}}\n",
		"name: t\ntools: {a: {latency: {dist: lognormal, median: 10m, p95: 1m}}}\n",
		"name: t\ntools: {a: {}}\nfaults: [{kind: hang, for: 1m}]\n",
		"name: t\ntools: {a: {timeout: 1s}}\nsweep: {tools.a.timeout: [0, 1s, -1s]}\n",
		"name: t\ntools: {a: {}}\nexpect: {completion_rate: between 1 and 0}\n",
		"name: t\ntools: {a: {}}\nrecovery: {<<: {lease: 1m}}\n",
		"name: t\ntools: {a: {}}\nhorizon: 99999999999d\n",
		"name: t\ntools: {a: {}}\nseed: -1\n",
		"name: t\ntools:\n  a: {}\n  a: {}\n",
		"&a name: *a\n",
		"name: t\ntools: {a: {}}\nworkload: {investigations: 1e300}\n",
		"name: t\ntools: {a: {arguments: {k: [1]}}}\n",
		"x: &a [*a]\n",
	}
	for _, b := range broken {
		f.Add([]byte(b), "")
	}
	f.Add([]byte("name: t\ntools: {a: {}}\n"), "tools.a.concurrency={x: 1}")
	f.Add([]byte("name: t\ntools: {a: {}}\n"), "faults[0]=1")
	f.Add([]byte("name: t\ntools: {a: {}}\n"), "recovery.humans={reviewers: 2, review_time: 1m}")

	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		s, err := Parse("fuzz.yaml", data, sets)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
			}
			for _, e := range list {
				if e.Msg == "" || e.File != "fuzz.yaml" {
					t.Fatalf("empty error or wrong file: %#v", e)
				}
				// Without overrides every problem with a key is somewhere in the file.
				if set == "" && e.Key != "" && e.Line <= 0 {
					t.Fatalf("error without a line: %v", e)
				}
			}
			_ = err.Error()
			return
		}
		if verr := s.Validate(); verr != nil {
			t.Fatalf("Parse accepted a scenario that fails Validate: %v\n%s", verr, data)
		}
		js := s.JSON()
		var back Scenario
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("JSON does not decode: %v", err)
		}
		if !bytes.Equal(back.JSON(), js) {
			t.Fatalf("JSON round trip changed:\n%s\n%s", js, back.JSON())
		}
	})
}
