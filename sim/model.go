package sim

import (
	"math"
	"math/rand/v2"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// provider is the model provider as a shared, limited service. Every model turn is a call:
// it is admitted or refused when the turn starts. Rate limits are token buckets that hold one
// minute's worth and start full; a call needs one request and its tokens (at most a full
// bucket, so a turn larger than a minute's worth is admitted once the bucket is full, and
// leaves it in debt). A refused call is a transient failure of the turn, reported to the
// engine as a failed attempt at the model, which is guards index `index` (one past the last
// tool): the retry policy, retry budget and breaker apply to it as to a tool.
//
// It is active only when the scenario has a `model` block or a fault names the model; then
// a turn's tokens are drawn when it starts (they decide admission and latency), not when it
// ends. Inactive, nothing here runs and runs are as they always were.
type provider struct {
	active  bool
	index   int32
	rpm     float64 // requests per ns and bucket size (a minute's worth)
	rCap    float64
	rLevel  float64
	tpm     float64
	tCap    float64
	tLevel  float64
	last    int64
	perTok  float64 // ns of latency per token
	failure float64
	rng     *rand.Rand
	faults  []int32 // faults naming the model that have a model hook, in configuration order
	// Calls, refusals and retried calls since the last sample, and the last sample emitted
	// (with At zeroed): the model is sampled like a tool (sample.go).
	calls, refused, retries int32
	sampled                 bool
	lastSamp                record.Sample
}

func (p *provider) init(sc *scenarios.Scenario, faults []fault, seed uint64) {
	p.index = int32(len(sc.Tools))
	named := false
	for i := range faults {
		if faults[i].tool == p.index {
			named = true
			if faults[i].fk.model != nil {
				p.faults = append(p.faults, int32(i))
			}
		}
	}
	m := sc.Model
	p.active = m != nil || named
	if m == nil {
		return
	}
	p.rCap, p.rpm = m.RequestsPerMinute, m.RequestsPerMinute/60e9
	p.tCap, p.tpm = m.TokensPerMinute, m.TokensPerMinute/60e9
	p.rLevel, p.tLevel = p.rCap, p.tCap
	p.perTok = float64(m.LatencyPer1kTokens) / 1000
	p.failure = m.Failure
	p.rng = stream(seed, nsModel, 0)
}

// refill brings both buckets up to now. A bucket without its limit (capacity 0) stays at
// or below 0, and admit never reads it.
func (p *provider) refill(now int64) {
	dt := float64(now - p.last)
	p.last = now
	p.rLevel = math.Min(p.rCap, p.rLevel+dt*p.rpm)
	p.tLevel = math.Min(p.tCap, p.tLevel+dt*p.tpm)
}

// admit decides a call of n tokens at now: "" and the latency factor of an active brownout
// when admitted, else the refusal's error and the fault that caused it (-1 none). It keeps
// the provider's own accounting: a call that cannot reach the provider (a fault that makes
// it unreachable, an outage) or that the rate limits refuse at admission costs nothing
// against the limits; a call the limits admit has reached the provider and spends a request
// and its tokens whether it then succeeds or fails (a brownout's or a transient fault's
// error, the failure probability).
func (w *sim) admit(n int64) (refusal string, fault int32, slow float64) {
	p := &w.model
	w.adm = admission{slow: 1}
	for _, fi := range p.faults {
		if fk := w.faults[fi].fk; fk.unreachable && fk.model(w, fi) {
			return w.adm.why, fi, 1
		}
	}
	p.refill(w.now)
	need := math.Min(float64(n), p.tCap) // at most a full bucket; read only under a token limit
	if p.rCap > 0 && p.rLevel < 1 || p.tCap > 0 && p.tLevel < need {
		return "rate_limited", -1, 1
	}
	// A level without its limit (cap 0) is never read: it is spent all the same.
	p.rLevel--
	p.tLevel -= float64(n)
	for _, fi := range p.faults {
		if fk := w.faults[fi].fk; !fk.unreachable && fk.model(w, fi) {
			return w.adm.why, fi, 1
		}
	}
	if p.failure > 0 && chance(p.rng, p.failure) {
		return "model_error", -1, 1
	}
	return "", -1, w.adm.slow
}

// modelDown is the first fault that made the model unreachable (an outage) at some instant
// of [from, to], -1 none: a call in flight then gets no answer.
func (w *sim) modelDown(from, to int64) int32 {
	for _, fi := range w.model.faults {
		if f := &w.faults[fi]; f.fk.unreachable && f.start <= to && f.end > from {
			return fi
		}
	}
	return -1
}

// callModel starts a's model turn at the provider: an admitted call takes the think time
// plus the latency of its tokens; a refused one fails at once and goes to the engine.
func (w *sim) callModel(a *agent) {
	n := w.heldTurn(a)
	why, fi, slow := w.admit(n)
	a.modelCalls++
	w.model.calls++
	if a.modelCalls > 1 {
		w.model.retries++
	}
	if why == "" {
		w.guards.Passed(int(w.model.index), w.now, a.modelCalls > 1)
		a.held = false
		a.turnTokens = n
		tok := w.wait(a, phThink)
		a.thinkStart = w.now
		d := float64(w.thinkTime.duration(a.rng)) + w.model.perTok*float64(n)
		w.push(satAdd(w.now, satInt(d*slow)), evThought, a.slot, tok, 0)
		return
	}
	w.model.refused++
	w.failedCallSpan(a, w.now, why, fi)
	w.failedCall(a)
}

// failedCallSpan records a's model call from start to now that failed (why, fault fi).
func (w *sim) failedCallSpan(a *agent, start int64, why string, fi int32) {
	s := w.spanFor(a, record.OpPlan, w.newSpanID())
	s.Model = w.sc.Workload.Model
	// A refused call is a failed attempt at the model, a dependency like any tool: it names
	// the model as its tool and carries the key of the operation the turn is for, and the
	// call's number since the investigation's last completed turn.
	s.Tool = scenarios.ModelTool
	if a.op != nil {
		s.HasKey, s.OpKey = true, a.op.key
	}
	s.Attempt = a.modelCalls
	s.Start, s.End = start, w.now
	s.Status = record.StatusError
	s.FailureClass = recovery.Transient.String()
	if fi >= 0 {
		s.FaultID = w.faults[fi].id
	}
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	s.Attrs = append(s.Attrs[:0], record.Attr{Key: "kind", Value: "model_turn"}, record.Attr{Key: "error", Value: why})
	s.Attrs = w.errorType(s.Attrs, fi)
	w.sink.Span(s)
}

// failedCall tells a's engine that its model call failed.
func (w *sim) failedCall(a *agent) {
	// The engine sees an attempt at the model that failed: it answers the send with
	// ActSend (carried out as the failure below) or a parking, and the failure with its
	// retry policy. The retried turn starts again when the engine's timer comes.
	a.modelRetry = true
	a.modelCall = true
	w.observe(a, recovery.Event{Kind: recovery.EvSend, Tool: int(w.model.index)})
	// Whatever the engine answered (a send, carried out as the failure, or a parking), the
	// next send it allows is the agent's own again.
	a.modelCall = false
}

// lostTurn reports whether a's model turn that just ended was in flight while the model was
// unreachable (an outage began during it): then no answer came and no tokens are billed; the
// call failed like a refused one, and it is recorded now. The turn keeps its size for its
// retry, as a refused one does.
func (w *sim) lostTurn(a *agent) bool {
	if !w.model.active {
		return false
	}
	fi := w.modelDown(a.thinkStart, w.now)
	if fi < 0 {
		return false
	}
	w.model.refused++
	step, rev := a.eng.Op()
	a.heldTokens, a.heldOp, a.held = a.turnTokens, record.OpKey{Investigation: a.id, Step: step, Revision: rev}, true
	w.failedCallSpan(a, a.thinkStart, "unavailable", fi)
	return true
}

// heldTurn is the size of a's next model call: a turn the provider refused keeps its size
// when the same operation calls again (the prompt is the same), so refusals, which fall more
// often on large turns, do not bias the turns that get through towards small ones. Any other
// call draws a new turn.
func (w *sim) heldTurn(a *agent) int64 {
	step, rev := a.eng.Op()
	key := record.OpKey{Investigation: a.id, Step: step, Revision: rev}
	if a.held && a.heldOp == key {
		return a.heldTokens
	}
	n := w.turnTokens(a)
	a.heldTokens, a.heldOp, a.held = n, key, true
	return n
}

// turnTokens draws the tokens of a's next model turn: the workload's distribution, times a
// budget spike, grown by tokens.growth for a's current step, at most MaxTurnTokens.
func (w *sim) turnTokens(a *agent) int64 {
	n := satInt(float64(w.tokens.count(a.rng, 0)) * a.spike)
	if g := w.sc.Workload.TokensGrowth; g > 0 && g != 1 {
		// The context grows with every step: step s costs growth^s times as many tokens.
		step, _ := a.eng.Op()
		n = satInt(float64(n) * math.Pow(g, float64(step)))
	}
	return min(n, MaxTurnTokens)
}

// MaxTurnTokens is the most tokens one model turn uses (2^32, a thousand times any model's
// context): a draw above it (a heavy tail, a spike, a steep tokens.growth) is capped, so
// that a run's token sums stay far inside int64 (2^32 tokens times 2^31 turns).
const MaxTurnTokens = 1 << 32
