//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

// The metamorphic relations of docs/metrics.md: changes to a scenario that must leave every
// metric as it was (or, for prices, scale the money metrics by exactly k and leave the rest
// as it was), checked on every embedded example and on scenarios of the simulator's fuzz
// generator. Each is exact, not approximate: the simulation draws every random number
// from a stream keyed by the entity's name, so what a relation adds draws from its own
// stream or none, and a power-of-two factor scales a float without rounding.

// relation is one metamorphic relation: change turns the scenario into its partner (a
// copy; the original is not modified).
type relation struct {
	name   string
	change func(s *scenarios.Scenario) *scenarios.Scenario
	// money is the factor the money metrics scale by (1: unchanged).
	money float64
	// sameDigest: the partner's trace is the same row for row, not only its metrics.
	sameDigest bool
}

// relPriceFactor scales prices; a power of two, so every product and sum of prices scales
// exactly (no rounding), and a cost budget binds at the same instant.
const relPriceFactor = 4

var relations = []relation{
	{name: "prices and cost budget scaled by 4", money: relPriceFactor, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := clonePrices(s)
		for i := range c.Prices.Models {
			c.Prices.Models[i].Input *= relPriceFactor
			c.Prices.Models[i].Output *= relPriceFactor
		}
		for i := range c.Prices.Tools {
			c.Prices.Tools[i].Call *= relPriceFactor
			c.Prices.Tools[i].ComputeSecond *= relPriceFactor
		}
		c.Recovery.Budgets.Cost *= relPriceFactor
		return c
	}},
	{name: "mappings in reverse order", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := clonePrices(s)
		c.Tools = slices.Clone(s.Tools)
		slices.Reverse(c.Tools)
		for i := range c.Tools {
			c.Tools[i].Arguments = slices.Clone(c.Tools[i].Arguments)
			slices.Reverse(c.Tools[i].Arguments)
		}
		c.Workload.Mix = slices.Clone(s.Workload.Mix)
		slices.Reverse(c.Workload.Mix)
		slices.Reverse(c.Prices.Models)
		slices.Reverse(c.Prices.Tools)
		c.Expect = slices.Clone(s.Expect)
		slices.Reverse(c.Expect)
		return c
	}},
	{name: "a tool no investigation uses", money: 1, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		// Named to sort first, so that every other tool moves in the canonical order.
		unused := s.Tools[0]
		unused.Name, unused.Arguments = "a-unused-tool", nil
		c.Tools = append([]scenarios.Tool{unused}, s.Tools...)
		return &c
	}},
	{name: "a fault with probability 0", money: 1, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Faults = append(slices.Clone(s.Faults), scenarios.Fault{ID: "never", Index: len(s.Faults),
			Kind: scenarios.FaultTransient, Tool: s.Workload.Mix[0].Tool, Probability: 0})
		return &c
	}},
	{name: "a fault window after the horizon", money: 1, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Faults = append(slices.Clone(s.Faults), scenarios.Fault{ID: "too-late", Index: len(s.Faults),
			Kind: scenarios.FaultOutage, Tool: s.Workload.Mix[0].Tool, At: s.Horizon + time.Hour, For: 30 * time.Minute})
		return &c
	}},
	{name: "renamed", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Name = s.Name + "-renamed"
		return &c
	}},
	{name: "another description", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Description = "the same fleet, described otherwise"
		return &c
	}},
	{name: "an expect block and tolerances added", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Expect = append(slices.Clone(s.Expect), scenarios.Expectation{Metric: "completion_rate", Op: ">=", Value: 0, Text: ">= 0"})
		c.Tolerances = append(slices.Clone(s.Tolerances), scenarios.Tolerance{Metric: "completion_rate", Value: 0.01})
		return &c
	}},
	{name: "step mix weights doubled", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		c.Workload.Mix = slices.Clone(s.Workload.Mix)
		for i := range c.Workload.Mix {
			c.Workload.Mix[i].Weight *= 2
		}
		return &c
	}},
	{name: "run again", money: 1, sameDigest: true, change: func(s *scenarios.Scenario) *scenarios.Scenario {
		c := *s
		return &c
	}},
}

// clonePrices copies s with its own price table; an unpriced s gets one (so that the money
// metrics are defined), the same as the base run's (see priced).
func clonePrices(s *scenarios.Scenario) *scenarios.Scenario {
	c := *s
	p := *s.Prices
	p.Models, p.Tools = slices.Clone(p.Models), slices.Clone(p.Tools)
	c.Prices = &p
	return &c
}

// priced returns s with a price table: its own, or one that prices the model and every
// tool, so that the money metrics are defined in every run.
func priced(s *scenarios.Scenario) *scenarios.Scenario {
	if s.Prices != nil {
		return s
	}
	c := *s
	if c.Workload.Model == "" {
		c.Workload.Model = "m"
	}
	c.Prices = &scenarios.Prices{Currency: "USD",
		Models: []scenarios.ModelPrice{{Model: c.Workload.Model, Input: 0.003, Output: 0.015}}}
	for i, t := range s.Tools {
		c.Prices.Tools = append(c.Prices.Tools, scenarios.ToolPrice{Tool: t.Name, Call: 0.001 * float64(i+1), ComputeSecond: 0.0002})
	}
	return &c
}

// relRun simulates s with seed as run id, and returns its digest and the metrics row its
// trace would store (the metric/compute.Sink's, as simulatedMetrics: the row
// TestComputedMetricsEqualViewsOnExamples holds equal to the metrics view's).
func relRun(t *testing.T, s *scenarios.Scenario, seed uint64, id string) (string, Metrics) {
	t.Helper()
	d := record.NewDigest()
	m := simulatedMetrics(t, s, seed, id, d)
	return d.Sum(), m
}

// sameValue compares two metric values: both undefined, or equal to within a relative 1e-12
// (the simulations themselves are identical).
func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// relCase is one scenario under test: its base run and each relation's partner.
type relCase struct {
	name    string
	digests []string  // base, then one per relation
	metrics []Metrics // likewise
}

// runRelations runs s (priced) and each relation's partner, as runs "<name>/base" and
// "<name>/<relation index>".
func runRelations(t *testing.T, name string, s *scenarios.Scenario, seed uint64) relCase {
	t.Helper()
	s = priced(s)
	if err := s.Validate(); err != nil {
		t.Fatalf("%s: base scenario: %v", name, err)
	}
	rc := relCase{name: name}
	add := func(s *scenarios.Scenario, id string) {
		d, m := relRun(t, s, seed, id)
		rc.digests, rc.metrics = append(rc.digests, d), append(rc.metrics, m)
	}
	add(s, name+"/base")
	for i, r := range relations {
		other := r.change(s)
		if err := other.Validate(); err != nil {
			t.Fatalf("%s, %s: the changed scenario is invalid: %v", name, r.name, err)
		}
		add(other, fmt.Sprintf("%s/%d", name, i))
	}
	return rc
}

// compareRelations compares each partner's metrics with its base's.
func compareRelations(t *testing.T, cases []relCase) {
	t.Helper()
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			base := rc.metrics[0]
			if !(base.Get("events") > 0) {
				t.Fatalf("the base run processed no events, so every relation would hold vacuously")
			}
			for i, r := range relations {
				got := rc.metrics[i+1]
				if r.sameDigest && rc.digests[i+1] != rc.digests[0] {
					t.Errorf("%s: digest %s, want %s", r.name, rc.digests[i+1], rc.digests[0])
				}
				for _, name := range MetricNames {
					want := base.Get(name)
					if m, _ := metric.Lookup(name); m.Unit == metric.Money {
						want *= r.money
					}
					if v := got.Get(name); !sameValue(v, want) {
						t.Errorf("%s: %s = %v, want %v", r.name, name, v, want)
					}
				}
				if !maps.Equal(got.TerminationReasons, base.TerminationReasons) {
					t.Errorf("%s: termination reasons %v, want %v", r.name, got.TerminationReasons, base.TerminationReasons)
				}
			}
		})
	}
}

// TestMetamorphicRelationsOnExamples checks every relation on every embedded example, cut
// to 40 investigations.
func TestMetamorphicRelationsOnExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	var cases []relCase
	for _, info := range scenarios.List() {
		s, err := scenarios.Load(info.Name, []string{"workload.investigations=40"})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, runRelations(t, info.Name, s, s.Seed))
	}
	compareRelations(t, cases)
}

// TestMetamorphicRelationsOnGeneratedScenarios checks every relation on scenarios written by
// the key tree's generator (scenarios.Generate, the one the simulator's fuzz test uses, so
// every key is reached), kept to those the size model expects to stay small.
func TestMetamorphicRelationsOnGeneratedScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	var cases []relCase
	for i := range 400 {
		r := rand.New(rand.NewPCG(uint64(i), 11))
		s, err := scenarios.Parse("generated.yaml", scenarios.Generate(r.IntN), nil)
		if err != nil || s.Validate() != nil || scenarios.EstimateEvents(s).Total > maxRelationEvents {
			continue
		}
		// A generated scenario may see no arrival before its horizon; every relation would
		// hold vacuously on it, so it is not one of the six.
		if res, err := sim.Run(context.Background(), priced(s), uint64(i+1), record.Discard{}, sim.Options{}); err != nil || res.Events == 0 {
			continue
		}
		if cases = append(cases, runRelations(t, fmt.Sprint("generated-", i), s, uint64(i+1))); len(cases) == 6 {
			break
		}
	}
	if len(cases) < 6 {
		t.Fatalf("only %d generated scenarios were valid and small", len(cases))
	}
	compareRelations(t, cases)
}

// maxRelationEvents bounds the size model's estimate of a generated scenario, so that each
// of its relation runs takes well under a second.
const maxRelationEvents = 200_000
