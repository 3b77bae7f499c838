//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScenariosListsEmbeddedExamples(t *testing.T) {
	out, _, code := execMayday(t, "scenarios", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var list []struct{ Name, Description string }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, s := range list {
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		names[s.Name] = true
	}
	for _, want := range []string{"research-fleet", "transient-errors", "lost-responses", "shared-outage",
		"invalid-configs", "budget-exhaustion", "policy-violations", "runaway-loops", "worker-crashes"} {
		if !names[want] {
			t.Errorf("scenarios does not list %s", want)
		}
	}
	text, _, _ := execMayday(t, "scenarios")
	if !strings.Contains(text, "research-fleet (default)") {
		t.Errorf("text listing does not mark the default:\n%s", text)
	}
}

func TestValidateReportsEveryScenario(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nworkload:\n  investigatons: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := execMayday(t, "validate", "shared-outage", bad)
	if code != 2 {
		t.Fatalf("exit %d, want 2 for an invalid scenario", code)
	}
	if !strings.Contains(out, "ok  shared-outage") {
		t.Errorf("valid scenario not reported ok:\n%s", out)
	}
	if !strings.Contains(errOut, "bad.yaml:3: workload.investigatons: unknown key") {
		t.Errorf("error lacks file, line and key:\n%s", errOut)
	}

	out, _, code = execMayday(t, "validate", "--format", "json", "shared-outage", bad)
	if code != 2 {
		t.Fatalf("json: exit %d, want 2", code)
	}
	var got []validation
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got) != 2 || !got[0].OK || got[0].Name != "shared-outage" || got[1].OK || !strings.Contains(got[1].Error, "investigatons") {
		t.Fatalf("json verdicts: %+v", got)
	}

	out, _, code = execMayday(t, "validate", "--quiet", "shared-outage")
	if code != 0 || out != "" {
		t.Fatalf("quiet valid scenario: exit %d, printed %q", code, out)
	}
}
