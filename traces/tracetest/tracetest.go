// Package tracetest makes deterministic synthetic simulation records for tests and
// benchmarks of the trace pipeline. The records have the shapes the simulator emits (tool
// attempts with retries, transitions, executions, samples) but model nothing.
package tracetest

import (
	"math/rand/v2"
	"strconv"

	"github.com/mayday-sim/mayday/sim/record"
)

// Canary is a fake secret that Synthetic plants in a tool argument; it must never appear
// in a trace.
const Canary = "sk-canary-3f9a1c7e5b2d4068"

var (
	tools    = []string{"backtest", "fetch_data", "notify"}
	versions = []string{"3.2", "1.0", ""}
	states   = []string{"pending", "running", "waiting", "recovering", "running", "completed"}
	classes  = []string{"", "", "", "transient", "uncertain_completion", "invalid_output"}
	statuses = []record.Status{record.StatusOK, record.StatusOK, record.StatusOK, record.StatusError, record.StatusTimeout, record.StatusInvalid}
)

// Synthetic returns the records of a made-up run with about n span rows (and, per
// investigation, its transitions, executions and one investigation row, plus faults and
// tool samples), drawn from a PCG stream seeded with seed. Attributes are shaped like the
// simulator's: every tool attempt carries its tool's static arguments (arg.strategy and
// arg.api_key=Canary, appended last), a failed attempt also error=<its status>.
func Synthetic(n int, seed uint64) *record.Collector {
	rng := rand.New(rand.NewPCG(seed, 0x7472616365)) // "trace"
	c := &record.Collector{}
	c.Faults = append(c.Faults,
		record.Fault{FaultID: "0", Kind: "transient", Tool: "fetch_data", Start: 0, End: 48 * 3600e9, Parameters: `{"probability":0.02}`, Hits: record.HitsCalls},
		record.Fault{FaultID: "outage-1", Kind: "outage", Tool: "backtest", Start: 2 * 3600e9, End: 2*3600e9 + 30*60e9, Parameters: `{"for":"30m","api_key":"` + Canary + `"}`, Window: true, Hits: record.HitsCalls},
		record.Fault{FaultID: "2", Kind: "worker_crash", Start: 0, End: 48 * 3600e9, Parameters: `{"rate":"1/24h"}`, Hits: record.HitsWorkers},
	)
	var spanID uint64
	inv := int64(0)
	for len(c.Spans) < n {
		inv++
		root := inv
		arrived := int64(rng.IntN(3600)) * 1e9
		now := arrived
		spanID++
		agentSpan := spanID
		steps := 1 + rng.IntN(12)
		var attempts int32
		var prevOK uint64
		for step := 1; step <= steps && len(c.Spans) < n; step++ {
			tool := rng.IntN(len(tools))
			tries := 1
			for tries < 4 && rng.IntN(4) == 0 {
				tries++
			}
			for a := 1; a <= tries; a++ {
				attempts++
				spanID++
				start := now + int64(rng.IntN(30_000))*1e6
				end := start + int64(1+rng.IntN(600_000))*1e6
				k := rng.IntN(len(statuses))
				if a == tries {
					k = 0
				}
				s := record.Span{
					TraceID: root, SpanID: spanID, ParentSpanID: agentSpan, InvestigationID: inv, AgentID: inv,
					Operation: record.OpExecuteTool, Tool: tools[tool], ToolVersion: versions[tool],
					HasKey: true, OpKey: record.OpKey{Investigation: inv, Step: int32(step)}, Attempt: int32(a),
					Start: start, End: end, QueueWait: int64(rng.IntN(5000)) * 1e6,
					Status: statuses[k], FailureClass: classes[k], InputTokens: int64(rng.IntN(4000)),
					OutputTokens: int64(rng.IntN(800)), Compute: float64(end-start) / 1e9,
					InputRef: "inv/" + strconv.FormatInt(inv, 10) + "/in", OutputRef: "",
				}
				if statuses[k] != record.StatusOK {
					s.Attrs = append(s.Attrs, record.Attr{Key: "error", Value: string(statuses[k])})
				}
				s.Attrs = append(s.Attrs, record.Attr{Key: "arg.strategy", Value: "momentum"}, record.Attr{Key: "arg.api_key", Value: Canary})
				if k == 3 {
					s.FaultID = "0"
				}
				if prevOK != 0 {
					s.CausedBy = []uint64{prevOK}
				}
				c.Span(&s)
				c.Executions = append(c.Executions, record.Execution{
					Tool: tools[tool], OpKey: s.OpKey, InvestigationID: inv, Execution: int32(a),
					Start: start, End: end, Outcome: "ok", Delivered: a == tries, Compute: s.Compute,
					SideEffects: tool%2 == 0,
				})
				c.Transitions = append(c.Transitions, record.Transition{
					InvestigationID: inv, At: end, From: states[rng.IntN(4)], To: states[1+rng.IntN(4)],
					Event: "attempt_result", FailureClass: classes[k], Action: "retry", DecidedBy: "engine",
					Reason: "attempt " + strconv.Itoa(a) + " of 5", Attempt: int32(a),
				})
				now = end
				if a == tries {
					prevOK = spanID
				}
			}
		}
		c.Spans = append(c.Spans, record.Span{
			TraceID: root, SpanID: agentSpan, InvestigationID: inv, AgentID: inv, Operation: record.OpInvokeAgent,
			Model: "research-model-2", Start: arrived, End: now, Status: record.StatusOK,
			InputTokens: int64(rng.IntN(40000)), OutputTokens: int64(rng.IntN(9000)),
		})
		endInvestigation(c, rng, inv, root, arrived, now, steps, attempts)
		if inv%50 == 0 {
			for i, t := range tools {
				c.Samples = append(c.Samples, record.Sample{
					Tool: t, At: now, Queued: int32(rng.IntN(100)), InService: int32(rng.IntN(50)),
					Parked: int32(i), BudgetTokens: float64(rng.IntN(3)) - 1, BreakerState: "closed",
					Attempts: int32(rng.IntN(1000)), Failures: int32(rng.IntN(100)), Retries: int32(rng.IntN(50)),
				})
			}
		}
	}
	return c
}

// Rows returns the number of records in c.
func Rows(c *record.Collector) int {
	return len(c.Investigations) + len(c.Spans) + len(c.Transitions) + len(c.Executions) + len(c.Faults) + len(c.Samples) + len(c.Workers)
}

// endInvestigation appends the investigation record of a synthetic investigation.
func endInvestigation(c *record.Collector, rng *rand.Rand, inv, root, arrived, now int64, steps int, attempts int32) {
	ended := rng.IntN(10) != 0
	final := "completed"
	reason := ""
	if !ended {
		final = "running"
	} else if rng.IntN(8) == 0 {
		final, reason = "terminated", "retries_exhausted"
	}
	c.Investigations = append(c.Investigations, record.Investigation{
		InvestigationID: inv, RootID: root, ArrivedAt: arrived, Ended: ended, EndedAt: now,
		FinalState: final, TerminationReason: reason, Steps: int32(steps), Attempts: attempts,
		Tokens: int64(rng.IntN(100000)), Compute: float64(now-arrived) / 1e9,
		TrulyValid: final == "completed", Validated: final == "completed", Crashes: 0,
	})
}
