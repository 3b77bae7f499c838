package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// This file computes every metric of docs/metrics.md in plain Go, straight from a run's
// records, written from the definitions in docs/metrics.md (and the interpretations documented at the
// top of each views/*.sql file), not from the SQL. The tests load the same records into
// DuckDB and compare.

// refRun is what the reference needs besides the records: the runs row.
type refRun struct {
	ID     string
	Events int64
	// SideEffects names the tools whose idempotency is keyed or none (from the scenario);
	// an execution has side effects if its record says so or its tool is named here.
	SideEffects map[string]bool
	// Prices is the run's price table (nil: unpriced, the money metrics are undefined).
	Prices *scenarios.Prices
}

// refIncident is one incident: its window [Start, End) and the alarm (µs since the epoch of
// simulated time, from the rule), the tool's baseline, and what the reference counts over
// the window.
type refIncident struct {
	Tool              string
	Start, End        int64 // µs, [start, end)
	DetectedAt        int64 // µs
	Calls, Failed     int64
	Affected          int64
	Retries           int64
	FaultIDs          []string
	Parked, Throttled int64
	Baseline          float64
}

// Minutes is the incident's length in minutes.
func (inc refIncident) Minutes() float64 { return float64(inc.End-inc.Start) / 60e6 }

type refEpisode struct {
	OpKey      string
	Tool       string
	Start, End int64 // µs since the epoch of simulated time
	Outcome    string
	Seconds    float64
	// The first sign: its operation, kind and when it was known (µs); the step's signs.
	FirstOp, FirstKind string
	DetectedAt, Signs  int64
	// Its investigation and root, its failed and timed-out attempts, the investigation's
	// final state, and the seconds to detection and from detection to the end.
	Root, Investigation int64
	FailedAttempts      int64
	EndedAs             string
	Detection, Repair   float64
}

type refResult struct {
	Metrics    Metrics
	Incidents  []refIncident
	Saturation []refSaturationSpan
	Episodes   []refEpisode
}

// tsMicros is how a simulated instant reaches DuckDB: a TIMESTAMP has microsecond
// resolution, so the nanoseconds are truncated (times are never negative).
func tsMicros(ns int64) int64 { return ns / 1000 }

func minuteOf(ns int64) int64 { return tsMicros(ns) / 60_000_000 }

func opKeyString(k record.OpKey) string {
	return fmt.Sprintf("%d/%d/%d", k.Investigation, k.Step, k.Revision)
}

// quantile7 is the linearly interpolated quantile (Hyndman and Fan type 7) of sorted x.
func quantile7(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func ratio(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// runEnd is the run's last recorded instant (virtual ns): the latest arrival, end of an
// ended investigation, span end, transition or end of a finished execution.
func runEnd(c *record.Collector) int64 {
	var end int64
	for _, inv := range c.Investigations {
		end = max(end, inv.ArrivedAt)
		if inv.Ended {
			end = max(end, inv.EndedAt)
		}
	}
	for _, s := range c.Spans {
		end = max(end, s.End)
	}
	for _, t := range c.Transitions {
		end = max(end, t.At)
	}
	for _, e := range c.Executions {
		if e.Outcome != "hung" {
			end = max(end, e.End)
		}
	}
	return end
}

func reference(run refRun, c *record.Collector) refResult {
	m := Metrics{RunID: run.ID, TerminationReasons: map[string]int64{}}
	m.Set("events", float64(run.Events))
	end := runEnd(c)

	// Root investigations and their trees.
	invByID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		invByID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	treeEscalations := map[int64]int64{}
	// A tree delivered in full when none of its investigations completed with a reduced
	// scope, and correctly when none completed with a wrong result.
	treeReduced, treeWrong := map[int64]bool{}, map[int64]bool{}
	var tokens int64
	for _, inv := range c.Investigations {
		treeEscalations[inv.RootID] += int64(inv.Escalations)
		tokens += inv.Tokens
		if inv.FinalState == "completed" {
			treeReduced[inv.RootID] = treeReduced[inv.RootID] || inv.Scope == record.ScopeReduced
			treeWrong[inv.RootID] = treeWrong[inv.RootID] || !inv.TrulyValid
		}
	}
	var correct, validated, escalated, full int64
	for _, inv := range c.Investigations {
		if inv.ParentID != 0 {
			continue
		}
		m.Set("started", m.Get("started")+1)
		switch inv.FinalState {
		case "completed":
			m.Set("completed", m.Get("completed")+1)
			if inv.TrulyValid && !treeWrong[inv.InvestigationID] && !treeReduced[inv.InvestigationID] {
				correct++
			}
			if inv.Validated {
				validated++
			}
			if !treeReduced[inv.InvestigationID] {
				full++
			}
		case "terminated":
			m.Set("terminated", m.Get("terminated")+1)
			reason := inv.TerminationReason
			if reason == "" {
				reason = "unspecified"
			}
			m.TerminationReasons[reason]++
		}
		if treeEscalations[inv.InvestigationID] > 0 {
			escalated++
		}
	}
	started, completed := float64(m.Get("started")), float64(m.Get("completed"))
	m.Set("completion_rate", ratio(float64(m.Get("completed")), started))
	m.Set("correct_completion_rate", ratio(float64(correct), started))
	m.Set("validation_pass_rate", ratio(float64(validated), completed))
	m.Set("full_scope_completion_rate", ratio(float64(full), started))
	m.Set("human_intervention_rate", ratio(float64(escalated), started))
	m.Set("terminated_rate", ratio(float64(m.Get("terminated")), started))
	m.Set("unfinished_rate", ratio(started-completed-float64(m.Get("terminated")), started))
	m.Set("tokens_per_completion", ratio(float64(tokens), completed))

	// Tool attempts: execute_tool spans that were sent.
	var attempts []*record.Span
	ops := map[record.OpKey]bool{}
	var failed int64
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.Operation != record.OpExecuteTool || s.Status == record.StatusBlocked {
			continue
		}
		attempts = append(attempts, s)
		ops[s.OpKey] = true
		if isFailed(s) {
			failed++
		}
	}
	m.Set("retry_amplification", ratio(float64(len(attempts)), float64(len(ops))))

	// Incidents, signs of trouble and recovery episodes (reference2_test.go). The model is
	// a dependency like any tool: its calls count with the attempts.
	calls := refCalls(c)
	failed = 0
	for _, cl := range calls {
		if isFailed(cl.s) {
			failed++
		}
	}
	signs := refSigns(c, invByID)
	incidents, inIncidents := refIncidents(c, calls, signs)
	m.Set("correlated_failure_share", ratio(float64(inIncidents), float64(failed)))
	episodes := refEpisodes(c, signs, invByID, end)
	m.Set("median_recovery_time", refRecoveryQuantile(episodes, 0.5))
	m.Set("p95_recovery_time", refRecoveryQuantile(episodes, 0.95))
	m.Set("episode_recovery_rate", refEpisodeRecoveryRate(episodes))
	gpTime, gpBack := refGoodputRecovery(c)
	m.Set("goodput_recovery_time", gpTime)
	m.Set("goodput_recovered", gpBack)
	wastedTokens, allTokens := refWastedTokens(c, invByID)
	m.Set("wasted_token_ratio", ratio(wastedTokens, allTokens))

	// Executions: duplicates, discarded results, compute and its waste.
	completedInv := func(id int64) bool {
		inv := invByID[id]
		return inv != nil && inv.FinalState == "completed"
	}
	var compute, wasted float64
	for _, e := range c.Executions {
		duplicate := e.Execution > 1
		discarded := (e.Outcome == "ok" || e.Outcome == "lost") && !e.Delivered
		if duplicate && (e.SideEffects || run.SideEffects[e.Tool]) {
			m.Set("duplicate_side_effects", m.Get("duplicate_side_effects")+1)
		}
		if discarded {
			m.Set("discarded_results", m.Get("discarded_results")+1)
		}
		incomplete := true
		if inv := invByID[e.InvestigationID]; inv != nil {
			incomplete = !(completedInv(inv.InvestigationID) && completedInv(inv.RootID))
		}
		compute += e.Compute
		if duplicate || discarded || incomplete {
			wasted += e.Compute
		}
	}
	m.Set("compute_per_completion", ratio(compute, completed))
	m.Set("wasted_compute_ratio", ratio(wasted, compute))
	m.Set("makespan", float64(tsMicros(end))/1e6)
	referenceCapacity(&m, c, end)
	setMoney(&m, run.Prices, c, invByID)
	return refResult{Metrics: m, Incidents: incidents, Saturation: refSaturation(c, calls), Episodes: episodes}
}

// refCall is one call to a dependency: a sent tool attempt, or a model call (a plan span
// of kind model_turn), whose tool is "model".
type refCall struct {
	s     *record.Span
	tool  string
	retry bool
}

func isModelCall(s *record.Span) bool {
	if s.Operation != record.OpPlan {
		return false
	}
	for _, a := range s.Attrs {
		if a.Key == "kind" {
			return a.Value == "model_turn"
		}
	}
	return false
}

// refCalls lists every call: tool attempts (a retry when attempt > 1) and model calls (a
// retry when the investigation's previous model call, by start then span id, failed).
func refCalls(c *record.Collector) []refCall {
	var out []refCall
	byInv := map[int64][]*record.Span{}
	for i := range c.Spans {
		s := &c.Spans[i]
		switch {
		case s.Operation == record.OpExecuteTool && s.Status != record.StatusBlocked:
			out = append(out, refCall{s: s, tool: s.Tool, retry: s.Attempt > 1})
		case isModelCall(s):
			byInv[s.InvestigationID] = append(byInv[s.InvestigationID], s)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byInv)) {
		model := byInv[id]
		slices.SortFunc(model, func(a, b *record.Span) int {
			return cmp.Or(cmp.Compare(tsMicros(a.Start), tsMicros(b.Start)), cmp.Compare(a.SpanID, b.SpanID))
		})
		for i, s := range model {
			out = append(out, refCall{s: s, tool: "model", retry: i > 0 && isFailed(model[i-1])})
		}
	}
	return out
}

func isFailed(s *record.Span) bool {
	return s.Status == record.StatusError || s.Status == record.StatusTimeout
}

// foundByLookup reports an inspection that found the operation completed at the tool.
func foundByLookup(s *record.Span) bool {
	for _, a := range s.Attrs {
		if a.Key == "lookup" {
			return a.Value == "completed"
		}
	}
	return false
}

// refToolStats is one row of the tool_stats view, computed from the records.
type refToolStats struct {
	Tool                                                  string
	Attempts, Operations, Retries, OK, Errors, Timeouts   int64
	Blocked, Inspections                                  int64
	Executions, DuplicateExecutions, DuplicateSideEffects int64
	DiscardedResults                                      int64
	Compute, WastedCompute                                float64
}

// countStatus counts one attempt's outcome.
func (ts *refToolStats) countStatus(status record.Status) {
	switch status {
	case record.StatusOK:
		ts.OK++
	case record.StatusError:
		ts.Errors++
	case record.StatusTimeout:
		ts.Timeouts++
	}
}

func referenceToolStats(run refRun, c *record.Collector) []refToolStats {
	by := map[string]*refToolStats{}
	get := func(tool string) *refToolStats {
		if by[tool] == nil {
			by[tool] = &refToolStats{Tool: tool}
		}
		return by[tool]
	}
	ops := map[string]map[record.OpKey]bool{}
	for _, cl := range refCalls(c) {
		if cl.tool != "model" {
			continue
		}
		ts := get("model")
		ts.Attempts++
		if cl.retry {
			ts.Retries++
		} else {
			ts.Operations++
		}
		ts.countStatus(cl.s.Status)
	}
	for _, s := range c.Spans {
		switch {
		case s.Operation == record.OpInspect:
			get(s.Tool).Inspections++
		case s.Operation != record.OpExecuteTool:
		case s.Status == record.StatusBlocked:
			get(s.Tool).Blocked++
		default:
			ts := get(s.Tool)
			ts.Attempts++
			if ops[s.Tool] == nil {
				ops[s.Tool] = map[record.OpKey]bool{}
			}
			ops[s.Tool][s.OpKey] = true
			if s.Attempt > 1 {
				ts.Retries++
			}
			ts.countStatus(s.Status)
		}
	}
	invByID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		invByID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	completed := func(id int64) bool {
		inv := invByID[id]
		return inv != nil && inv.FinalState == "completed"
	}
	for _, e := range c.Executions {
		ts := get(e.Tool)
		ts.Executions++
		ts.Compute += e.Compute
		inv := invByID[e.InvestigationID]
		if e.Execution > 1 || (e.Outcome == "ok" || e.Outcome == "lost") && !e.Delivered ||
			inv == nil || !completed(inv.InvestigationID) || !completed(inv.RootID) {
			ts.WastedCompute += e.Compute
		}
		if e.Execution > 1 {
			ts.DuplicateExecutions++
			if e.SideEffects || run.SideEffects[e.Tool] {
				ts.DuplicateSideEffects++
			}
		}
		if (e.Outcome == "ok" || e.Outcome == "lost") && !e.Delivered {
			ts.DiscardedResults++
		}
	}
	var out []refToolStats
	for tool, ts := range by {
		if tool != "model" {
			ts.Operations = int64(len(ops[tool]))
		}
		out = append(out, *ts)
	}
	slices.SortFunc(out, func(a, b refToolStats) int { return cmp.Compare(a.Tool, b.Tool) })
	return out
}

// referenceCapacity computes the capacity metrics by their definitions in docs/metrics.md:
// pending time from arrival to the first transition out of pending (censored at the run's
// end), of roots and of subagents apart, the open-root backlog's growth over the arrival window and its peak.
func referenceCapacity(m *Metrics, c *record.Collector, end int64) {
	started := map[int64]int64{}
	for _, tr := range c.Transitions {
		from := tr.From
		if from == "" {
			from = "pending"
		}
		if _, ok := started[tr.InvestigationID]; !ok && from == "pending" && tr.To != "pending" {
			started[tr.InvestigationID] = tr.At
		}
	}
	var pend, subPend []float64
	for _, inv := range c.Investigations {
		at, ok := started[inv.InvestigationID]
		if !ok {
			at = end
		}
		wait := float64(tsMicros(at)-tsMicros(inv.ArrivedAt)) / 1e6
		if inv.ParentID == 0 {
			pend = append(pend, wait)
		} else {
			subPend = append(subPend, wait)
		}
	}
	slices.Sort(pend)
	slices.Sort(subPend)
	m.Set("median_pending_time", quantile7(pend, 0.5))
	m.Set("median_subagent_pending_time", quantile7(subPend, 0.5))
	var first, last int64 = math.MaxInt64, math.MinInt64
	delta := map[int64]int64{}
	for _, inv := range c.Investigations {
		if inv.ParentID != 0 {
			continue
		}
		a := tsMicros(inv.ArrivedAt)
		first, last = min(first, a), max(last, a)
		delta[a]++
		if inv.Ended {
			delta[tsMicros(inv.EndedAt)]--
		}
	}
	m.Set("backlog_growth", math.NaN())
	if last > first {
		arrived, ended := 0, 0
		for _, inv := range c.Investigations {
			if inv.ParentID != 0 {
				continue
			}
			arrived++
			if inv.Ended && tsMicros(inv.EndedAt) <= last {
				ended++
			}
		}
		m.Set("backlog_growth", float64(arrived-ended)/(float64(last-first)/3600e6))
	}
	times := slices.Sorted(maps.Keys(delta))
	var open int64
	for _, t := range times {
		open += delta[t]
		m.Set("peak_backlog", max(m.Get("peak_backlog"), float64(open)))
	}
}
