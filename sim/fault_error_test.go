package sim

import (
	"reflect"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// A fault's error (scenarios.FailureParams) says how the calls it fails fail: each span it
// failed carries it as error.type, and nothing else changes. Without it, the records are
// exactly those of a scenario that never had the key (every example's digest unchanged).
func TestFaultErrorType(t *testing.T) {
	s, err := scenarios.Load("research-fleet", []string{"workload.investigations=300", "faults[3].at=1h"})
	if err != nil {
		t.Fatal(err)
	}
	withErr := *s
	withErr.Faults = slices.Clone(s.Faults)
	errOf := map[string]string{} // fault id -> its error type
	for i := range withErr.Faults {
		f := &withErr.Faults[i]
		switch f.Kind {
		case scenarios.FaultTransient, scenarios.FaultOutage, scenarios.FaultBrownout:
			f.Params = &scenarios.FailureParams{Error: "err_" + string(f.Kind)}
			errOf[f.ID] = "err_" + string(f.Kind)
		}
	}
	if len(errOf) < 3 {
		t.Fatalf("research-fleet has %d faults that fail calls fast; the test wants one of each kind", len(errOf))
	}
	if err := withErr.Validate(); err != nil {
		t.Fatal(err)
	}
	var plain, typed record.Collector
	run(t, s, 7, &plain)
	run(t, &withErr, 7, &typed)
	if len(plain.Spans) != len(typed.Spans) {
		t.Fatalf("%d spans without error types, %d with", len(plain.Spans), len(typed.Spans))
	}
	tagged := map[string]int{}
	for i := range typed.Spans {
		sp := typed.Spans[i]
		var et string
		sp.Attrs = slices.DeleteFunc(slices.Clone(sp.Attrs), func(a record.Attr) bool {
			if a.Key == "error.type" {
				et = a.Value
				return true
			}
			return false
		})
		want0 := plain.Spans[i]
		if len(sp.Attrs) == 0 && len(want0.Attrs) == 0 {
			sp.Attrs, want0.Attrs = nil, nil
		}
		if !reflect.DeepEqual(sp, want0) {
			t.Fatalf("span %d differs beyond error.type:\n%+v\n%+v", i, sp, plain.Spans[i])
		}
		want := ""
		if sp.Status == record.StatusError && sp.FaultID != "" {
			want = errOf[sp.FaultID]
		}
		if et != want {
			t.Errorf("span %d (%s, status %s, fault %q): error.type %q, want %q", i, sp.Operation, sp.Status, sp.FaultID, et, want)
		}
		if et != "" {
			tagged[sp.FaultID]++
		}
	}
	for id := range errOf {
		if tagged[id] == 0 {
			t.Errorf("fault %s failed no call carrying its error type", id)
		}
	}
	for i := range plain.Faults {
		p, q := plain.Faults[i], typed.Faults[i]
		if want := errOf[q.FaultID]; want != "" {
			if want := p.Parameters[:len(p.Parameters)-1] + sep(p.Parameters) + `"error":"` + want + `"}`; q.Parameters != want {
				t.Errorf("fault %s: parameters %s, want %s", q.FaultID, q.Parameters, want)
			}
			q.Parameters = p.Parameters
		}
		if p != q {
			t.Errorf("fault record %d: %+v without error types, %+v with", i, p, q)
		}
	}
	for _, name := range []string{"Investigations", "Transitions", "Executions", "Samples", "Workers"} {
		if !reflect.DeepEqual(reflect.ValueOf(plain).FieldByName(name).Interface(), reflect.ValueOf(typed).FieldByName(name).Interface()) {
			t.Errorf("%s differ with error types", name)
		}
	}
}

// sep is the comma a parameters object needs before another field.
func sep(obj string) string {
	if obj == "{}" {
		return ""
	}
	return ","
}
