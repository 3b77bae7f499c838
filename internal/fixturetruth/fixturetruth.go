// Package fixturetruth reads a capture's truth.json (analysis/testdata/libraries) as a trace
// can carry it, for the tests that hold mayday's import, fit and calibrate to that truth.
package fixturetruth

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// Truth is the records of a truth.json: the fleet's runs, operations and attempts.
type Truth struct {
	Runs []struct {
		RunID   string `json:"run_id"`
		Kind    string `json:"kind"`
		Outcome string `json:"outcome"`
	} `json:"runs"`
	Operations []struct {
		OpID    string `json:"op_id"`
		Outcome string `json:"outcome"`
	} `json:"operations"`
	Attempts []struct {
		RunID   string `json:"run_id"`
		Service string `json:"service"`
		OpID    string `json:"op_id"`
		Tool    string `json:"tool"`
		Status  string `json:"status"`
		Class   string `json:"failure_class"`
		Start   string `json:"start_unix_ns"`
		End     string `json:"end_unix_ns"`
		Outage  bool   `json:"in_outage"`
	} `json:"attempts"`
}

// Parse reads a truth.json.
func Parse(truthJSON []byte) (Truth, error) {
	var tr Truth
	err := json.Unmarshal(truthJSON, &tr)
	return tr, err
}

// Continued returns the operations of service that any trace reads as retries of the
// operation before them, each mapped to that operation: the capture's fleet gives every
// call of a tool in a run the same arguments, so an operation it gave up on and the next
// operation of that tool, begun before any call of another tool, are calls of one tool with
// one set of arguments, each failed call followed by another (docs/import.md, "Logical
// operations").
func (tr Truth) Continued(service string) (map[string]string, error) {
	outcome := map[string]string{}
	for _, o := range tr.Operations {
		outcome[o.OpID] = o.Outcome
	}
	type call struct {
		op, tool string
		start    int64
	}
	byRun := map[string][]call{}
	var runs []string
	for _, a := range tr.Attempts {
		if a.Service != service {
			continue
		}
		start, err := strconv.ParseInt(a.Start, 10, 64)
		if err != nil {
			return nil, err
		}
		if byRun[a.RunID] == nil {
			runs = append(runs, a.RunID)
		}
		byRun[a.RunID] = append(byRun[a.RunID], call{a.OpID, a.Tool, start})
	}
	continued := map[string]string{}
	for _, run := range runs {
		calls := byRun[run]
		slices.SortStableFunc(calls, func(x, y call) int { return cmp.Compare(x.start, y.start) })
		for k := 1; k < len(calls); k++ {
			prev, cur := calls[k-1], calls[k]
			if cur.op != prev.op && cur.tool == prev.tool && outcome[prev.op] == "gave_up" {
				continued[cur.op] = prev.op
			}
		}
	}
	return continued, nil
}
