//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"fmt"
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

var workloadKeys = []string{"investigations", "arrival", "steps", "think", "tokens", "model", "tools", "subagents", "behaviour", "workers", "priority", "zones", "hold_worker"}

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
	var got []problem
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := problem{Ref: bad, File: bad, Line: 3, Column: 3, Key: "workload.investigatons",
		Message:    `unknown key "investigatons" (did you mean investigations?); want one of ` + strings.Join(workloadKeys, ", "),
		Suggestion: "investigations", Want: "one of " + strings.Join(workloadKeys, ", ")}
	// The file also lacks tools: a second problem, at no line.
	if len(got) != 2 || got[0].Key != "tools" || got[1] != want {
		t.Fatalf("json problems:\n got %+v\nwant [tools problem, %+v]", got, want)
	}

	out, _, code = execMayday(t, "validate", "--quiet", "shared-outage")
	if code != 0 || out != "" {
		t.Fatalf("quiet valid scenario: exit %d, printed %q", code, out)
	}
}

// validate --format json prints one object per problem of every scenario, with its place,
// and an empty array when all are valid.
func TestValidateJSONOnePerProblem(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src := "name: bad\ntools:\n  search: {idempotency: keyd}\nrecovery:\n  retry: {max_attempts: 0}\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := execMayday(t, "validate", "--format", "json", "shared-outage", bad, "no-such-fleet", "--set", "seed=7")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	var got []problem
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	type place struct {
		ref, key         string
		line, col        int
		suggestion, want string
	}
	var places []place
	for _, p := range got {
		places = append(places, place{p.Ref, p.Key, p.Line, p.Column, p.Suggestion, p.Want})
	}
	wantPlaces := []place{
		{bad, "tools.search.idempotency", 3, 25, "keyed", "keyed, natural or none"},
		{bad, "recovery.retry.max_attempts", 5, 25, "", "a whole number >= 1 (1 = never retry)"},
		{"no-such-fleet", "", 0, 0, "", got[len(got)-1].Want},
	}
	if fmt.Sprint(places) != fmt.Sprint(wantPlaces) {
		t.Errorf("problems:\n got %+v\nwant %+v", places, wantPlaces)
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last.Want, "a scenario file or one of: ") {
		t.Errorf("a missing scenario says what would be valid: %+v", last)
	}

	out, _, code = execMayday(t, "validate", "--format", "json", "shared-outage")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("valid scenario: exit %d, %q; want 0 and []", code, out)
	}
}
