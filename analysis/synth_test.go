package analysis

import (
	"math/rand/v2"

	"github.com/mayday-sim/mayday/sim/record"
)

// synth builds the records of a made-up run by hand: investigations with subagents, tool
// attempts that fail fast or time out, retries, inspections, blocked operations,
// duplicate and discarded executions, escalations, every final state (in flight included)
// and consistent lifecycle transitions. It is not a simulation; it only has to exercise
// every branch of the metric definitions, with times that are not whole microseconds.
type synth struct {
	r       *rand.Rand
	c       record.Collector
	spanID  uint64
	nextSub int64
	execs   map[execKey]int32
	end     int64 // latest recorded instant
	tools   []synthTool
	burst   *synthBurst
}

type synthTool struct {
	name        string
	sideEffects bool
}

// synthBurst makes every attempt at tool fail fast during [from, to) (an outage).
type synthBurst struct {
	tool     int
	from, to int64
	fault    string
}

type execKey struct {
	tool string
	key  record.OpKey
}

const (
	second = int64(1e9)
	minute = 60 * second
)

func newSynth(seed uint64) *synth {
	return &synth{
		r:     rand.New(rand.NewPCG(seed, 99)),
		execs: map[execKey]int32{},
		tools: []synthTool{{"backtest", true}, {"fetch_data", false}, {"notify", true}},
	}
}

func (s *synth) newSpan(inv, root int64, op record.Operation) *record.Span {
	s.spanID++
	return &record.Span{TraceID: root, SpanID: s.spanID, InvestigationID: inv, AgentID: inv, Operation: op}
}

func (s *synth) emitSpan(sp *record.Span) {
	s.note(sp.End)
	s.c.Span(sp)
}

func (s *synth) note(t int64) { s.end = max(s.end, t) }

// jitter is a sub-microsecond offset, so truncation to TIMESTAMP resolution matters.
func (s *synth) jitter() int64 { return s.r.Int64N(1000) }

func (s *synth) transition(inv int64, at int64, from, to, event string) {
	s.note(at)
	s.c.Transition(&record.Transition{InvestigationID: inv, At: at, From: from, To: to, Event: event, DecidedBy: "engine"})
}

func (s *synth) execution(tool synthTool, key record.OpKey, start, end int64, outcome string, delivered bool) {
	k := execKey{tool.name, key}
	s.execs[k]++
	if outcome != "hung" {
		s.note(end)
	}
	s.c.Execution(&record.Execution{Tool: tool.name, OpKey: key, InvestigationID: key.Investigation,
		Execution: s.execs[k], Start: start, End: end, Outcome: outcome, Delivered: delivered,
		Compute: float64(end-start) / 1e9 * 0.5, SideEffects: tool.sideEffects})
}

// operation runs one logical operation from time t; it reports when it ended and whether
// its result was delivered. state is the investigation's lifecycle state, kept current.
func (s *synth) operation(inv, root int64, key record.OpKey, ti int, t int64, state *string, forceFail int) (int64, bool) {
	tool := s.tools[ti]
	move := func(at int64, to, ev string) {
		if *state != to {
			s.transition(inv, at, *state, to, ev)
			*state = to
		}
	}
	maxAttempts := 1 + s.r.IntN(4)
	for attempt := int32(1); attempt <= int32(maxAttempts); attempt++ {
		sp := s.newSpan(inv, root, record.OpExecuteTool)
		sp.Tool, sp.HasKey, sp.OpKey, sp.Attempt = tool.name, true, key, attempt
		sp.Start = t + s.jitter()
		move(sp.Start, "waiting", "send")
		u := s.r.Float64()
		outage := s.burst != nil && s.burst.tool == ti && sp.Start >= s.burst.from && sp.Start < s.burst.to
		switch {
		case outage || int(attempt) <= forceFail:
			sp.Status, sp.FailureClass, sp.End = record.StatusError, "transient", sp.Start
			if outage {
				sp.FaultID = s.burst.fault
			}
		case attempt == 1 && u < 0.03:
			// Blocked by policy before sending: not an attempt; the operation ends.
			sp.Status, sp.FailureClass, sp.End = record.StatusBlocked, "policy_violation", sp.Start
			sp.Attempt = 0
			s.emitSpan(sp)
			move(sp.End, "recovering", "policy_violation")
			return sp.End, false
		case u < 0.6:
			sp.QueueWait = s.r.Int64N(3 * second)
			sp.End = sp.Start + sp.QueueWait + s.r.Int64N(20*second) + 1
			sp.Status = record.StatusOK
		case u < 0.8:
			sp.Status, sp.FailureClass, sp.End = record.StatusError, "transient", sp.Start
			if s.r.IntN(2) == 0 {
				sp.FaultID = "transient-" + tool.name
			}
		default:
			sp.QueueWait = s.r.Int64N(5 * second)
			sp.End = sp.Start + 30*second + s.jitter()
			sp.Status, sp.FailureClass = record.StatusTimeout, "uncertain_completion"
		}
		s.emitSpan(sp)
		switch sp.Status {
		case record.StatusOK:
			s.execution(tool, key, sp.Start+sp.QueueWait, sp.End, "ok", true)
			move(sp.End, "running", "succeeded")
			return s.validate(inv, root, key, sp.End, state)
		case record.StatusTimeout:
			// The work may still have happened: done but its reply lost, still running
			// (hung), or done late and never delivered.
			switch v := s.r.IntN(4); v {
			case 0:
				s.execution(tool, key, sp.Start+sp.QueueWait, sp.Start+sp.QueueWait+5*second, "lost", false)
			case 1:
				s.execution(tool, key, sp.Start+sp.QueueWait, sp.End+s.r.Int64N(10*minute), "hung", false)
			case 2:
				s.execution(tool, key, sp.Start+sp.QueueWait, sp.End+7*second, "ok", false)
			}
			move(sp.End, "recovering", "timed_out")
			if s.r.IntN(3) == 0 {
				// Inspect the operation by key: found (the result is taken) or not.
				in := s.newSpan(inv, root, record.OpInspect)
				in.Tool, in.HasKey, in.OpKey, in.Attempt = tool.name, true, key, attempt
				in.Start = sp.End + second + s.jitter()
				in.End = in.Start + 200_000_000 + s.jitter()
				// The lookup found the result, found nothing yet, or was impossible.
				lookup := []string{"completed", "running", "not_found", "failed"}[s.r.IntN(4)]
				in.Status = record.StatusOK
				if lookup == "failed" {
					in.Status = record.StatusError
				}
				in.Attrs = []record.Attr{{Key: "lookup", Value: lookup}}
				s.emitSpan(in)
				if lookup == "completed" {
					move(in.End, "running", "inspected")
					return s.validate(inv, root, key, in.End, state)
				}
				t = in.End
			} else {
				t = sp.End
			}
		default:
			move(sp.End, "recovering", "failed")
			t = sp.End
		}
		t += second + s.r.Int64N(5*second) // backoff
	}
	return t, false
}

// validate checks a delivered result at t: one in ten fails validation (an invalid result,
// a sign of trouble of its step), the others are valid.
func (s *synth) validate(inv, root int64, key record.OpKey, t int64, state *string) (int64, bool) {
	v := s.newSpan(inv, root, record.OpValidate)
	v.HasKey, v.OpKey = true, key
	v.Start, v.End = t, t
	v.Status = record.StatusOK
	if s.r.IntN(10) == 0 {
		v.Status, v.FailureClass = record.StatusInvalid, "invalid_output"
	}
	s.emitSpan(v)
	if v.Status == record.StatusInvalid {
		s.transition(inv, t, *state, "recovering", "invalid")
		*state = "recovering"
		return t, false
	}
	return t, true
}

// investigation simulates one investigation arriving at t; it returns when it ended and
// whether it completed (in flight counts as neither).
func (s *synth) investigation(id, parent, root int64, depth int32, t int64, storm bool) (end int64, completed, ended bool) {
	inv := record.Investigation{InvestigationID: id, ParentID: parent, RootID: root, Depth: depth, ArrivedAt: t}
	s.note(t)
	state := "pending"
	t += s.r.Int64N(2*second) + 1
	s.transition(id, t, "pending", "running", "start")
	state = "running"
	steps := 1 + s.r.IntN(4)
	ok := true
	for step := 0; step < steps && ok; step++ {
		ti := s.r.IntN(len(s.tools))
		force := 0
		if storm && step == 0 {
			ti, force = 0, 4
		}
		if parent == 0 && depth < 1 && s.r.Float64() < 0.3 {
			for range 1 + s.r.IntN(2) {
				s.nextSub++
				subEnd, subDone, _ := s.investigation(s.nextSub, id, root, depth+1, t+s.jitter(), false)
				if subDone {
					t = max(t, subEnd)
				}
			}
			if state != "running" {
				s.transition(id, t, state, "running", "joined")
				state = "running"
			}
		}
		key := record.OpKey{Investigation: id, Step: int32(step)}
		t, ok = s.operation(id, root, key, ti, t+s.r.Int64N(30*second)+1, &state, force)
		inv.Attempts += 1
		if !ok && s.r.IntN(2) == 0 {
			// Escalate; a human approves a revision, which is a new logical operation.
			inv.Escalations++
			s.transition(id, t+1, state, "awaiting_human", "escalate")
			t += 10*minute + s.jitter()
			s.transition(id, t, "awaiting_human", "running", "human")
			state = "running"
			inv.Revisions++
			key.Revision = 1
			t, ok = s.operation(id, root, key, ti, t+second, &state, 0)
		}
		if ok {
			inv.Steps++
		}
	}
	inv.Tokens = 1000 + s.r.Int64N(5000)
	for _, e := range s.c.Executions {
		if e.InvestigationID == id {
			inv.Compute += e.Compute
		}
	}
	u := s.r.Float64()
	switch {
	case ok && u < 0.85:
		s.transition(id, t+1, state, "completed", "finished")
		inv.FinalState, inv.Ended, inv.EndedAt = "completed", true, t+1
		inv.TrulyValid = s.r.Float64() < 0.9
		inv.Validated = inv.TrulyValid || s.r.Float64() < 0.3
	case u < 0.93:
		s.transition(id, t+1, state, "terminated", "terminate")
		reasons := []string{"retries_exhausted", "policy_violation", "non_progress", ""}
		inv.FinalState, inv.Ended, inv.EndedAt = "terminated", true, t+1
		inv.TerminationReason = reasons[s.r.IntN(len(reasons))]
	default:
		// Still open at the horizon: awaiting a human, or wherever it stands.
		if s.r.IntN(2) == 0 {
			inv.Escalations++
			s.transition(id, t+1, state, "awaiting_human", "escalate")
			state = "awaiting_human"
		}
		inv.FinalState = state
	}
	if inv.Ended {
		s.note(inv.EndedAt)
	}
	s.c.Investigation(&inv)
	return inv.EndedAt, inv.FinalState == "completed", inv.Ended
}

// synthMixed is a random run of roots arriving over an hour; with burst, the backtest tool
// is down during minutes 40-44 and a storm of roots arriving then retries against it.
func synthMixed(seed uint64, roots int, burst bool) *synth {
	s := newSynth(seed)
	s.nextSub = int64(roots) + 1000
	if burst {
		s.burst = &synthBurst{tool: 0, from: 40 * minute, to: 45 * minute, fault: "outage-backtest"}
	}
	for i := range roots {
		at := s.r.Int64N(60*minute) + s.jitter()
		storm := false
		if burst && i%4 == 0 {
			at = 40*minute + s.r.Int64N(5*minute)
			storm = true
		}
		s.investigation(int64(i+1), 0, int64(i+1), 0, at, storm)
	}
	return s
}

// synthFlat is a run with exactly the same failures every minute: for each of 120 minutes
// and each tool, one root whose single operation fails twice, then succeeds. No minute
// stands out, so there is no incident.
func synthFlat() *synth {
	s := newSynth(7)
	id := int64(0)
	for m := range int64(120) {
		for ti, tool := range s.tools {
			id++
			t := m*minute + second + int64(ti)*100_000_123
			s.note(t)
			s.transition(id, t+1, "pending", "running", "start")
			key := record.OpKey{Investigation: id}
			for a := int32(1); a <= 3; a++ {
				sp := s.newSpan(id, id, record.OpExecuteTool)
				sp.Tool, sp.HasKey, sp.OpKey, sp.Attempt = tool.name, true, key, a
				sp.Start = t + int64(a)*3*second + 777
				sp.End = sp.Start
				sp.Status = record.StatusError
				if a == 3 {
					sp.End = sp.Start + 2*second + 5
					sp.Status = record.StatusOK
					s.execution(tool, key, sp.Start, sp.End, "ok", true)
				}
				s.emitSpan(sp)
			}
			end := t + 20*second
			s.transition(id, end, "running", "completed", "finished")
			s.note(end)
			s.c.Investigation(&record.Investigation{InvestigationID: id, RootID: id, ArrivedAt: t,
				Ended: true, EndedAt: end, FinalState: "completed", Steps: 1, Attempts: 3,
				Tokens: 1500, TrulyValid: true, Validated: true})
		}
	}
	return s
}

// synthIdle is a run with one root that never called a tool and is still in flight: every
// ratio but the rates over started is undefined.
func synthIdle() *synth {
	s := newSynth(1)
	s.note(5 * second)
	s.transition(1, 5*second+3, "pending", "running", "start")
	s.c.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, ArrivedAt: 5 * second, FinalState: "running"})
	return s
}
