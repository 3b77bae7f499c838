package scenarios

import (
	"cmp"
	"slices"
)

// canonical puts every slice that holds a mapping of the file into name order: the tools,
// the step mix, each tool's arguments, the prices of models and tools, the reviewers' cases
// per failure class, and the checks of expect and tolerances (by metric). YAML mappings are
// unordered, so two files that differ only in the order of a mapping's keys are the same
// scenario: the same JSON, hash, simulation and digest. Only sweep keeps file order: its
// order is the order of the grid's points (the last axis varies fastest), never part of a
// run.
func canonical(s *Scenario) {
	slices.SortStableFunc(s.Tools, func(a, b Tool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.Tools {
		slices.SortStableFunc(s.Tools[i].Arguments, func(a, b Argument) int { return cmp.Compare(a.Key, b.Key) })
	}
	slices.SortStableFunc(s.Workload.Mix, func(a, b Weight) int { return cmp.Compare(a.Tool, b.Tool) })
	if p := s.Prices; p != nil {
		slices.SortStableFunc(p.Models, func(a, b ModelPrice) int { return cmp.Compare(a.Model, b.Model) })
		slices.SortStableFunc(p.Tools, func(a, b ToolPrice) int { return cmp.Compare(a.Tool, b.Tool) })
	}
	slices.SortStableFunc(s.Expect, func(a, b Expectation) int { return cmp.Compare(a.Metric, b.Metric) })
	slices.SortStableFunc(s.Tolerances, func(a, b Tolerance) int { return cmp.Compare(a.Metric, b.Metric) })
	if h := s.Recovery.Humans; h != nil {
		slices.SortStableFunc(h.ByClass, func(a, b HumanCase) int { return cmp.Compare(a.Class, b.Class) })
	}
}
