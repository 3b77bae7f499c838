package sim

import (
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// active reports whether work is left: open investigations, arrivals to come, or requests
// still at a tool (whose executions are ground truth even when nobody waits for them).
func (w *sim) active() bool {
	return w.open > 0 || w.res.Started < w.roots || w.reqLive > 0
}

// sample emits one Sample per tool whose state changed since its last sample (a row that
// would repeat the previous one is left out, so an idle tool costs nothing however long
// the horizon), then schedules the next one while there is activity.
func (w *sim) sample() {
	if !w.active() {
		return
	}
	for i := range w.tools {
		t := &w.tools[i]
		w.samp = record.Sample{
			Tool: t.cfg.Name, At: w.now, Queued: int32(t.waiting()), InService: t.busy,
			Parked: int32(w.guards.Parked(i)), BudgetTokens: w.guards.Tokens(i, w.now),
			BreakerState: w.guards.Breaker(i, w.now).String(),
			Attempts:     t.attempts, Failures: t.failures, Retries: t.retries,
		}
		t.attempts, t.failures, t.retries = 0, 0, 0
		same := w.samp
		same.At = 0
		if t.sampled && same == t.lastSamp {
			continue
		}
		t.sampled, t.lastSamp = true, same
		w.sink.Sample(&w.samp)
	}
	w.sampleModel()
	w.push(w.now+sampleEvery, evSample, 0, 0, 0)
}

// sampleModel samples the model provider, while it is active, like a tool: its guards, and
// its calls, refusals and retried calls since the previous sample (it has no queue).
func (w *sim) sampleModel() {
	p := &w.model
	if !p.active {
		return
	}
	i := int(p.index)
	w.samp = record.Sample{
		Tool: scenarios.ModelTool, At: w.now, Parked: int32(w.guards.Parked(i)),
		BudgetTokens: w.guards.Tokens(i, w.now), BreakerState: w.guards.Breaker(i, w.now).String(),
		Attempts: p.calls, Failures: p.refused, Retries: p.retries,
	}
	p.calls, p.refused, p.retries = 0, 0, 0
	same := w.samp
	same.At = 0
	if p.sampled && same == p.lastSamp {
		return
	}
	p.sampled, p.lastSamp = true, same
	w.sink.Sample(&w.samp)
}
