package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// The size model: every count that drives a run's memory or time is bounded up front, so a
// scenario that validation accepts runs to the end on an ordinary machine instead of
// exhausting it. A bound that is hit says what the scenario would cost and which key to
// change. The limits sit far above every embedded example (the largest simulates about
// 100,000 investigations) and are documented in docs/scenarios.md.
const (
	MaxInvestigations = 10_000_000  // workload.investigations
	MaxSteps          = 1_000_000   // workload.steps: steps of one investigation
	MaxSubagentCount  = 10_000      // workload.subagents.count: children per spawn
	MaxAgents         = 20_000_000  // investigations x expected subagent tree
	MaxTotalSteps     = 200_000_000 // agents x mean steps: spans the run would write
	MaxTools          = 1_000       // tools
	MaxNameLen        = 128         // name, tool names, fault ids, model, tool versions
	MaxSweepPoints    = 10_000      // product of the sweep axes' value counts
	MaxHorizon        = 50 * 365 * 24 * time.Hour
	MaxFactor         = 1e6 // budget_spike factor, brownout slowdown
	MaxCompute        = 1e12
	// MaxPrice bounds every price (per 1000 tokens, per call, per compute-unit second), so
	// the cost of the largest run the other limits allow stays a finite number: about
	// 1e9 x 1e22 compute-unit seconds at most.
	MaxPrice = 1e9
)

// sizeMaximum is the size model's bound on the single key sch, when checkSize bounds it:
// JSONSchema states it as the key's maximum, so an editor refuses what Validate refuses.
func sizeMaximum(sch *schema) (float64, bool) {
	switch sch {
	case rootSchema.sub["workload"].sub["investigations"]:
		return MaxInvestigations, true
	case toolSchema.sub["compute"]:
		return MaxCompute, true
	case recoverySchema.sub["budgets"].sub["compute"]:
		return MaxCompute * 1e9, true
	case faultSchema.sub["factor"], faultSchema.sub["slowdown"]:
		return MaxFactor, true
	}
	return 0, false
}

// maxSubagentDepth is workload.subagents.max_depth's bound, as its key declares. The size
// model sums the subagent tree down to it at most: Validate refuses a deeper tree anyway,
// and a Go-built depth of 2^31 or more would otherwise keep it summing for seconds, or for
// ever.
const maxSubagentDepth = 64

// bytesPerStep is a rough cost of one step in the run's database (its spans and
// transitions), for the message only.
const bytesPerStep = 80

// checkSize applies the size model to s.
func (v *validator) checkSize(s *Scenario) {
	w := &s.Workload
	v.check(len(s.Name) <= MaxNameLen, "name", "%d characters long; want at most %d", len(s.Name), MaxNameLen)
	v.check(len(w.Model) <= MaxNameLen, "workload.model", "%d characters long; want at most %d", len(w.Model), MaxNameLen)
	v.check(s.Horizon <= MaxHorizon, "horizon", "%v; want at most 50 years (%v)", s.Horizon, MaxHorizon)
	v.check(w.Investigations <= MaxInvestigations, "workload.investigations", "%d; want at most %d", w.Investigations, MaxInvestigations)
	v.check(len(s.Tools) <= MaxTools, "tools", "%d tools; want at most %d", len(s.Tools), MaxTools)
	for _, t := range s.Tools {
		key := join("tools", t.Name)
		v.check(len(t.Name) <= MaxNameLen, key, "the name is %d characters long; want at most %d", len(t.Name), MaxNameLen)
		v.check(len(t.Version) <= MaxNameLen, key+".version", "%d characters long; want at most %d", len(t.Version), MaxNameLen)
		v.check(!(t.Compute > MaxCompute), key+".compute", "%v; want at most %v compute units per second", t.Compute, MaxCompute)
	}
	v.check(!(s.Recovery.Budgets.Compute > MaxCompute*1e9), "recovery.budgets.compute", "%v; want at most %v", s.Recovery.Budgets.Compute, MaxCompute*1e9)
	for i, f := range s.Faults {
		key := fmt.Sprintf("faults[%d]", i)
		v.check(len(f.ID) <= MaxNameLen, key+".id", "%d characters long; want at most %d", len(f.ID), MaxNameLen)
		v.check(!(f.Factor > MaxFactor), key+".factor", "%v; want at most %v", f.Factor, MaxFactor)
		v.check(!(f.Slowdown > MaxFactor), key+".slowdown", "%v; want at most %v", f.Slowdown, MaxFactor)
	}
	v.checkPrices(s.Prices)
	steps := distTop(w.Steps)
	v.check(steps <= MaxSteps, "workload.steps", "up to %s steps per investigation; want at most %d", approx(steps), MaxSteps)
	sub := w.Subagents
	count := distTop(sub.Count)
	v.check(sub.Probability == 0 || count <= MaxSubagentCount, "workload.subagents.count", "up to %s subagents per spawn; want at most %d", approx(count), MaxSubagentCount)
	// The expected tree of one investigation: each agent spawns with probability p a mean of
	// c children, down to max_depth levels: sum over k of (p*c)^k; with failed subagents
	// respawned, an agent that spawns may start up to on_failure.max replacements besides.
	tree, respawned := 1.0, 0.0
	if sub.Probability > 0 {
		respawned = respawns(s, sub.Probability*min(distMean(w.Steps), MaxSteps))
		tree = treeSum(sub.Probability*distMean(sub.Count)+respawned, sub.MaxDepth)
	}
	agents := float64(w.Investigations) * tree
	if agents > MaxAgents {
		if respawned > sub.Probability*distMean(sub.Count) {
			v.check(false, "recovery.subagents.on_failure.max", "%d investigations whose failed subagents are respawned up to %d times each could run about %s agents (each investigation a tree of about %s); the limit is %s: lower recovery.subagents.on_failure.max or workload.investigations",
				w.Investigations, s.Recovery.Subagents.OnFailure.Max, approx(agents), approx(tree), approx(MaxAgents))
			return
		}
		v.check(false, "workload.subagents", "%d investigations would run about %s agents (each investigation a tree of about %s); the limit is %s: lower workload.investigations, workload.subagents.probability, .count or .max_depth",
			w.Investigations, approx(agents), approx(tree), approx(MaxAgents))
		return
	}
	// The simulator caps a drawn step count at MaxSteps, which bounds a heavy tail's mean.
	total := agents * min(distMean(w.Steps), MaxSteps)
	if n := SweepPoints(s.Sweep); n > MaxSweepPoints {
		v.check(false, "sweep", "the grid has %s points; want at most %d: drop an axis or some values", approx(n), MaxSweepPoints)
	}
	if total <= MaxTotalSteps && v.checkEvents(s) {
		return
	}
	// Each lookup of an operation still running (inspect_before_retry) is a span too: as
	// many per tool call, on average, as the inspection makes while a call runs on after its
	// timeout (expectedLookups), and inspection.max for a call a hang never answers.
	mean := max(1, min(distMean(w.Steps), MaxSteps))
	_, hangs := lookups(s, agents, mean, 1)
	look := expectedLookups(s)
	lookupSpans := agents*mean*look + hangs/2
	if total <= MaxTotalSteps && total+lookupSpans > MaxTotalSteps {
		v.check(false, "recovery.inspection", "the run would write about %s spans of lookups besides %s of steps (%s agents x %s steps x %s lookups per call on average, of calls still running after their timeout, one every %v), about %s of traces; the limit is %s spans: raise recovery.inspection.interval, lower recovery.inspection.max or workload.investigations",
			approx(lookupSpans), approx(total), approx(agents), approx(mean), approx(look), s.Recovery.Inspection.Interval, fmtBytes((total+lookupSpans)*bytesPerStep), approx(MaxTotalSteps))
		return
	}
	v.check(total <= MaxTotalSteps, "workload", "the run would simulate about %s steps (%s agents x %s steps), about %s of traces; the limit is %s steps: lower workload.investigations or workload.steps",
		approx(total), approx(agents), approx(min(distMean(w.Steps), MaxSteps)), fmtBytes(total*bytesPerStep), approx(MaxTotalSteps))
}

// SweepPoints is the number of points of the grid axes span (as a float: it may be huge).
func SweepPoints(axes []SweepAxis) float64 {
	if len(axes) == 0 {
		return 0
	}
	n := 1.0
	for _, a := range axes {
		n *= float64(len(a.Values))
	}
	return n
}

// CheckSweepSize refuses a grid of more than MaxSweepPoints points.
func CheckSweepSize(axes []SweepAxis, seeds int) error {
	n := SweepPoints(axes)
	if n <= MaxSweepPoints {
		return nil
	}
	return fmt.Errorf("sweep: the grid has %s points (%s runs with %d seeds each); the limit is %d points: drop an axis or some values", approx(n), approx(n*float64(max(seeds, 1))), seeds, MaxSweepPoints)
}

// distTop is the largest value a count distribution plausibly draws: the value of a
// constant, the max of a uniform, and for the unbounded ones a high quantile (p99.9).
func distTop(d Dist) float64 {
	switch d.Kind {
	case DistConstant:
		return d.Value
	case DistUniform:
		return d.Max
	case DistExponential:
		return d.Mean * 6.9 // -ln(0.001)
	case DistLognormal:
		if d.Median <= 0 || d.P95 <= d.Median {
			return d.Median
		}
		sigma := lognormalSigma(d)
		return math.Exp(math.Log(d.Median) + 3.090232306167813*sigma)
	case DistPareto:
		if d.Alpha <= 0 {
			return math.Inf(1)
		}
		return d.Min * math.Pow(1000, 1/d.Alpha)
	}
	return 0
}

// lognormalSigma is the log-space standard deviation of a lognormal given by its median and
// p95 (P95 > Median > 0): ln(p95 / median) over the standard normal's 95th percentile.
func lognormalSigma(d Dist) float64 {
	return (math.Log(d.P95) - math.Log(d.Median)) / 1.6448536269514722
}

// distMean is a distribution's mean (+Inf for a Pareto with alpha <= 1).
func distMean(d Dist) float64 {
	switch d.Kind {
	case DistConstant:
		return d.Value
	case DistUniform:
		return (d.Min + d.Max) / 2
	case DistExponential:
		return d.Mean
	case DistLognormal:
		if d.Median <= 0 || d.P95 <= d.Median {
			return d.Median
		}
		sigma := lognormalSigma(d)
		return d.Median * math.Exp(sigma*sigma/2)
	case DistPareto:
		if d.Alpha <= 1 {
			return math.Inf(1)
		}
		return d.Alpha * d.Min / (d.Alpha - 1)
	}
	return 0
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.0f TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.0f GB", b/1e9)
	}
	return fmt.Sprintf("%.0f MB", b/1e6)
}

// approx prints an estimate to three significant digits.
func approx(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

// checkPrices refuses a price above MaxPrice, naming its key.
func (v *validator) checkPrices(p *Prices) {
	if p == nil {
		return
	}
	price := func(x float64, key string) {
		v.check(!(x > MaxPrice), key, "%v; want at most %v, so that costs stay finite", x, MaxPrice)
	}
	for _, m := range p.Models {
		price(m.Input, "prices.models."+m.Model+".input")
		price(m.Output, "prices.models."+m.Model+".output")
	}
	for _, t := range p.Tools {
		price(t.Call, "prices.tools."+t.Tool+".call")
		price(t.ComputeSecond, "prices.tools."+t.Tool+".compute_second")
	}
}
