package scenarios

import (
	"cmp"
	"slices"
)

// Canonical returns s with every slice that holds a mapping of the file in name order: the
// tools, the step mix, the zones, each tool's arguments, the prices of models and tools, the
// reviewers' cases per failure class, and the checks of expect and tolerances (by metric).
// YAML mappings are unordered, so two files that differ only in the order of a mapping's
// keys are the same scenario: the same JSON, hash, simulation and digest. Only sweep keeps
// file order: its order is the order of the grid's points (the last axis varies fastest),
// never part of a run. Parse returns canonical scenarios; for one built in code, Canonical
// returns s itself when it already is, else a copy (s is not changed).
func (s *Scenario) Canonical() *Scenario {
	if s.isCanonical() {
		return s
	}
	c := *s
	c.Tools = slices.Clone(s.Tools)
	for i := range c.Tools {
		c.Tools[i].Arguments = slices.Clone(c.Tools[i].Arguments)
	}
	c.Workload.Mix = slices.Clone(s.Workload.Mix)
	c.Workload.Zones = slices.Clone(s.Workload.Zones)
	c.Expect = slices.Clone(s.Expect)
	c.Tolerances = slices.Clone(s.Tolerances)
	if s.Prices != nil {
		p := *s.Prices
		p.Models, p.Tools = slices.Clone(p.Models), slices.Clone(p.Tools)
		c.Prices = &p
	}
	if s.Recovery.Humans != nil {
		h := *s.Recovery.Humans
		h.ByClass = slices.Clone(h.ByClass)
		c.Recovery.Humans = &h
	}
	canonical(&c)
	return &c
}

func byTool(a, b Tool) int               { return cmp.Compare(a.Name, b.Name) }
func byKey(a, b Argument) int            { return cmp.Compare(a.Key, b.Key) }
func byMixTool(a, b Weight) int          { return cmp.Compare(a.Tool, b.Tool) }
func byZone(a, b Zone) int               { return cmp.Compare(a.Name, b.Name) }
func byModel(a, b ModelPrice) int        { return cmp.Compare(a.Model, b.Model) }
func byToolPrice(a, b ToolPrice) int     { return cmp.Compare(a.Tool, b.Tool) }
func byCaseClass(a, b HumanCase) int     { return cmp.Compare(a.Class, b.Class) }
func byExpectation(a, b Expectation) int { return cmp.Compare(a.Metric, b.Metric) }
func byTolerance(a, b Tolerance) int     { return cmp.Compare(a.Metric, b.Metric) }

func (s *Scenario) isCanonical() bool {
	for i := range s.Tools {
		if !slices.IsSortedFunc(s.Tools[i].Arguments, byKey) {
			return false
		}
	}
	ok := slices.IsSortedFunc(s.Tools, byTool) && slices.IsSortedFunc(s.Workload.Mix, byMixTool) &&
		slices.IsSortedFunc(s.Workload.Zones, byZone) &&
		slices.IsSortedFunc(s.Expect, byExpectation) && slices.IsSortedFunc(s.Tolerances, byTolerance)
	if p := s.Prices; p != nil {
		ok = ok && slices.IsSortedFunc(p.Models, byModel) && slices.IsSortedFunc(p.Tools, byToolPrice)
	}
	if h := s.Recovery.Humans; h != nil {
		ok = ok && slices.IsSortedFunc(h.ByClass, byCaseClass)
	}
	return ok
}

// canonical sorts s's mapping slices in place (see Canonical).
func canonical(s *Scenario) {
	slices.SortStableFunc(s.Tools, byTool)
	for i := range s.Tools {
		slices.SortStableFunc(s.Tools[i].Arguments, byKey)
	}
	slices.SortStableFunc(s.Workload.Mix, byMixTool)
	slices.SortStableFunc(s.Workload.Zones, byZone)
	slices.SortStableFunc(s.Expect, byExpectation)
	slices.SortStableFunc(s.Tolerances, byTolerance)
	if p := s.Prices; p != nil {
		slices.SortStableFunc(p.Models, byModel)
		slices.SortStableFunc(p.Tools, byToolPrice)
	}
	if h := s.Recovery.Humans; h != nil {
		slices.SortStableFunc(h.ByClass, byCaseClass)
	}
}
