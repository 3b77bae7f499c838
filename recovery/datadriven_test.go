package recovery_test

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/mayday-sim/mayday/recovery"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/*.txt")

// The scripts in testdata drive one engine (and its guards) per file. Commands:
//
//	new [attempts=N initial=D mult=F max=D jitter=J exhausted=escalate|terminate|reduce_scope
//	     inspect=BOOL revisions=N repeats=N exhaustion=terminate|pause|reduce_scope
//	     pause=D humans=BOOL supervisor=BOOL inspections=N every=D
//	     tools=N budget=(ratio,min_per_second,max_tokens) breaker=(window,ratio,min_calls,cooldown)
//	     subagents=(on_failure,max_respawns,then) seed=N id=N]
//	event KIND [at=D | after=D] [tool=N fp=N lookup=L resource=R action=A raise lift unavailable approved=BOOL]
//	engine NAME              switch to (or create, sharing the guards) another engine
//	state                    the engine's state and counters
//	scope                    whether it lost work, and the steps it dropped
//	guards [tool=N] [at=D]   the tool's budget, breaker and parked count
//	journal                  every record so far
//	replay                   rebuild the engine from its journal and compare
//	rebuild                  replace the engine by one rebuilt from its journal (a new worker)
//	edges                    the legal edge table
//
// An event prints the records it made, then its decision (or error), then the state.
// go test ./recovery -run TestScripts -update rewrites the outputs after a deliberate
// change, for the diff to be read.
func TestScripts(t *testing.T) {
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil { // the datadriven library's own flag
			t.Fatal(err)
		}
	}
	taken := map[[2]recovery.State]bool{}
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	for _, path := range paths {
		h := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out := h.run(t, td)
			for _, u := range h.units {
				for _, r := range u.j.recs {
					if !r.Note {
						taken[[2]recovery.State{r.From, r.To}] = true
					}
				}
			}
			return out
		})
	}
	// The scripts together must take every legal edge.
	for from := recovery.Pending; from <= recovery.Terminated; from++ {
		for to := recovery.Pending; to <= recovery.Terminated; to++ {
			if recovery.Legal(from, to) && !taken[[2]recovery.State{from, to}] {
				t.Errorf("no script takes the legal edge %s → %s", from, to)
			}
			if !recovery.Legal(from, to) && taken[[2]recovery.State{from, to}] {
				t.Errorf("a script journaled the illegal edge %s → %s", from, to)
			}
		}
	}
}

type journal struct{ recs []recovery.JournalRecord }

func (j *journal) Append(_ int64, r *recovery.JournalRecord) { j.recs = append(j.recs, *r) }

type unit struct {
	e   *recovery.Engine
	j   *journal
	rng *rand.Rand
}

type harness struct {
	p      recovery.Policy
	g      *recovery.Guards
	now    int64
	seed   uint64
	units  map[string]*unit
	cur    *unit
	nextID int64
}

func (h *harness) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "new":
		return h.newEngine(t, td)
	case "engine":
		name := td.CmdArgs[0].Key
		u, ok := h.units[name]
		if !ok {
			u = h.unit()
			h.units[name] = u
		}
		h.cur = u
		return "engine " + name
	case "event":
		return h.event(t, td)
	case "state":
		return stateLine(h.cur.e)
	case "scope":
		return scopeLine(h.cur.e)
	case "guards":
		tool := 0
		td.MaybeScanArgs(t, "tool", &tool)
		h.advance(t, td)
		return fmt.Sprintf("t=%s tokens=%s breaker=%s parked=%d", dur(h.now),
			strconv.FormatFloat(h.g.Tokens(tool, h.now), 'f', 3, 64), h.g.Breaker(tool, h.now), h.g.Parked(tool))
	case "journal":
		var b strings.Builder
		for i := range h.cur.j.recs {
			b.WriteString(recordLine(&h.cur.j.recs[i]))
			b.WriteByte('\n')
		}
		return b.String()
	case "replay":
		e, err := recovery.Replay(1, &h.p, h.cur.j.recs)
		if err != nil {
			return "error: " + err.Error()
		}
		if got, want := fullState(e), fullState(h.cur.e); got != want {
			return "replay differs:\n  replayed: " + got + "\n  original: " + want
		}
		return "replay ok: " + stateLine(e)
	case "rebuild":
		e, err := recovery.Replay(1, &h.p, h.cur.j.recs)
		if err != nil {
			return "error: " + err.Error()
		}
		e.SetJournal(h.cur.j)
		h.cur.e = e
		return "rebuilt: " + stateLine(e)
	case "edges":
		var b strings.Builder
		for from := recovery.Pending; from <= recovery.Terminated; from++ {
			var tos []string
			for to := recovery.Pending; to <= recovery.Terminated; to++ {
				if recovery.Legal(from, to) {
					tos = append(tos, to.String())
				}
			}
			fmt.Fprintf(&b, "%s → %s\n", from, strings.Join(tos, ", "))
		}
		return b.String()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func (h *harness) newEngine(t *testing.T, td *datadriven.TestData) string {
	h.p = recovery.Policy{
		Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2,
			Max: time.Minute, Jitter: recovery.JitterNone},
		InspectBeforeRetry: true, Revisions: 2, HumansAvailable: true,
	}
	tools, seed := 1, uint64(1)
	var budget *recovery.BudgetConfig
	var breaker *recovery.BreakerConfig
	for _, a := range td.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "attempts":
			h.p.Retry.MaxAttempts = atoi(t, td, v)
		case "initial":
			h.p.Retry.Initial = parseDur(t, td, v)
		case "mult":
			h.p.Retry.Multiplier, _ = strconv.ParseFloat(v, 64)
		case "max":
			h.p.Retry.Max = parseDur(t, td, v)
		case "jitter":
			j, ok := recovery.ParseJitter(v)
			if !ok {
				td.Fatalf(t, "bad jitter %q", v)
			}
			h.p.Retry.Jitter = j
		case "exhausted":
			x, ok := recovery.ParseExhausted(v)
			if !ok {
				td.Fatalf(t, "bad exhausted %q", v)
			}
			h.p.Retry.OnExhausted = x
		case "inspect":
			h.p.InspectBeforeRetry = v == "true"
		case "revisions":
			h.p.Revisions = atoi(t, td, v)
		case "repeats":
			h.p.NonProgressRepeats = atoi(t, td, v)
		case "exhaustion":
			x, ok := recovery.ParseOnExhaustion(v)
			if !ok {
				td.Fatalf(t, "bad exhaustion %q", v)
			}
			h.p.OnExhaustion = x
		case "pause":
			h.p.PauseFor = parseDur(t, td, v)
		case "humans":
			h.p.HumansAvailable = v == "true"
		case "supervisor":
			h.p.Supervisor = v == "true"
		case "inspections":
			h.p.MaxInspections = atoi(t, td, v)
		case "every":
			h.p.InspectEvery = parseDur(t, td, v)
		case "tools":
			tools = atoi(t, td, v)
		case "seed":
			seed = uint64(atoi(t, td, v))
		case "subagents":
			a.ExpectNumVals(t, 3)
			on, ok1 := recovery.ParseSubagentAction(a.Vals[0])
			then, ok2 := recovery.ParseSubagentAction(a.Vals[2])
			if !ok1 || !ok2 {
				td.Fatalf(t, "bad subagent actions %v", a.Vals)
			}
			h.p.Subagents = recovery.SubagentPolicy{OnFailure: on, MaxRespawns: atoi(t, td, a.Vals[1]), Then: then}
		case "budget":
			a.ExpectNumVals(t, 3)
			budget = &recovery.BudgetConfig{}
			a.Scan(t, 0, &budget.Ratio)
			a.Scan(t, 1, &budget.MinPerSecond)
			a.Scan(t, 2, &budget.MaxTokens)
		case "breaker":
			a.ExpectNumVals(t, 4)
			breaker = &recovery.BreakerConfig{Window: parseDur(t, td, a.Vals[0]),
				MinCalls: atoi(t, td, a.Vals[2]), Cooldown: parseDur(t, td, a.Vals[3])}
			a.Scan(t, 1, &breaker.FailureRatio)
		default:
			td.Fatalf(t, "unknown argument %q", a.Key)
		}
	}
	h.g = recovery.NewGuards(tools, budget, breaker)
	h.now, h.seed, h.nextID = 0, seed, 0
	h.units = map[string]*unit{}
	h.cur = h.unit()
	h.units["a"] = h.cur
	return "ok"
}

func (h *harness) unit() *unit {
	h.nextID++
	j := &journal{}
	return &unit{
		e:   recovery.New(1, &h.p, j),
		j:   j,
		rng: rand.New(rand.NewPCG(h.seed, uint64(h.nextID))),
	}
}

func (h *harness) advance(t *testing.T, td *datadriven.TestData) {
	if a, ok := td.Arg("at"); ok {
		h.now = int64(parseDur(t, td, a.SingleVal(t)))
	}
	if a, ok := td.Arg("after"); ok {
		h.now += int64(parseDur(t, td, a.SingleVal(t)))
	}
}

var eventKinds = map[string]recovery.EventKind{}

func init() {
	for k := recovery.EvStart; k <= recovery.EvSubagentFailed; k++ {
		eventKinds[k.String()] = k
	}
}

func (h *harness) event(t *testing.T, td *datadriven.TestData) string {
	kind, ok := eventKinds[td.CmdArgs[0].Key]
	if !ok {
		td.Fatalf(t, "unknown event %q", td.CmdArgs[0].Key)
	}
	ev := recovery.Event{Kind: kind}
	h.advance(t, td)
	for _, a := range td.CmdArgs[1:] {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "at", "after":
		case "tool":
			ev.Tool = atoi(t, td, v)
		case "fp":
			ev.Fingerprint = uint64(atoi(t, td, v))
		case "lookup":
			ev.Lookup = recovery.Lookup(lookupOf(t, td, v))
		case "resource":
			for r := recovery.Tokens; r <= recovery.Cost; r++ {
				if r.String() == v {
					ev.Resource = r
				}
			}
			if ev.Resource == 0 {
				t.Fatalf("%s: unknown resource %q", td.Pos, v)
			}
		case "action":
			ev.Suggestion.Action = actionOf(t, td, v)
		case "raise":
			ev.Suggestion.RaiseBudget = true
		case "lift":
			ev.Suggestion.LiftBlock = true
		case "unavailable":
			ev.Suggestion.Unavailable = true
		case "approved":
			ev.Approved = v == "true"
		default:
			td.Fatalf(t, "unknown argument %q", a.Key)
		}
	}
	u := h.cur
	before := len(u.j.recs)
	d, err := u.e.Observe(h.now, ev, recovery.Env{Rand: u.rng, Guards: h.g})
	var b strings.Builder
	for i := before; i < len(u.j.recs); i++ {
		b.WriteString(recordLine(&u.j.recs[i]))
		b.WriteByte('\n')
	}
	if err != nil {
		var te *recovery.TransitionError
		kind := "other"
		switch {
		case errors.As(err, &te) && errors.Is(err, recovery.ErrIllegalTransition):
			kind = "illegal"
		case errors.Is(err, recovery.ErrFinal):
			kind = "final"
		case errors.Is(err, recovery.ErrUnexpectedEvent):
			kind = "unexpected"
		case errors.Is(err, recovery.ErrUnknownTool):
			kind = "unknown tool"
		case errors.Is(err, recovery.ErrClock):
			kind = "clock"
		}
		fmt.Fprintf(&b, "error (%s): %v\n", kind, err)
	} else {
		b.WriteString(decisionLine(d, h.now))
		b.WriteByte('\n')
	}
	b.WriteString(stateLine(u.e))
	return b.String()
}

func lookupOf(t *testing.T, td *datadriven.TestData, v string) int {
	for l := recovery.LookupCompleted; l <= recovery.LookupFailed; l++ {
		if l.String() == v {
			return int(l)
		}
	}
	td.Fatalf(t, "bad lookup %q", v)
	return 0
}

func actionOf(t *testing.T, td *datadriven.TestData, v string) recovery.Action {
	for a := recovery.ActNone; a <= recovery.ActRespawn; a++ {
		if a.String() == v {
			return a
		}
	}
	td.Fatalf(t, "bad action %q", v)
	return 0
}

func decisionLine(d recovery.Decision, now int64) string {
	s := fmt.Sprintf("decision: %s", d.Action)
	if d.At != now {
		s += " at=" + dur(d.At)
	}
	if d.Class != recovery.NoFailure {
		s += " class=" + d.Class.String()
	}
	s += " by=" + d.DecidedBy.String() + " reason=" + d.Reason
	if d.Action == recovery.ActConsult {
		s += fmt.Sprintf(" point=%s allowed=%v", d.Judgement.Point, d.Judgement.Allowed)
	}
	return s
}

func recordLine(r *recovery.JournalRecord) string {
	s := fmt.Sprintf("  %s → %s", r.From, r.To)
	if r.Note {
		s = fmt.Sprintf("  note %s", r.From)
	}
	s += fmt.Sprintf(" [%s] %s by=%s reason=%s", r.Event, r.Action, r.DecidedBy, r.Reason)
	if r.Class != recovery.NoFailure {
		s += " class=" + r.Class.String()
	}
	return s + fmt.Sprintf(" op=%d/%d attempt=%d", r.Step, r.Revision, r.Attempt)
}

func stateLine(e *recovery.Engine) string {
	step, rev := e.Op()
	return fmt.Sprintf("state=%s op=%d/%d attempt=%d escalations=%d revisions=%d refusals=%d",
		e.State(), step, rev, e.Attempt(), e.Escalations(), e.Revisions(), e.Refusals())
}

// fullState adds what stateLine leaves out, for comparing a replayed engine.
func fullState(e *recovery.Engine) string {
	return fmt.Sprintf("%s tool=%d blocked=%t respawns=%d %s", stateLine(e), e.Tool(), e.Blocked(), e.Respawns(), scopeLine(e))
}

// scopeLine is what the investigation went on without.
func scopeLine(e *recovery.Engine) string {
	return fmt.Sprintf("lost=%t dropped=%d", e.LostWork(), e.Dropped())
}

func dur(ns int64) string { return time.Duration(ns).String() }

func atoi(t *testing.T, td *datadriven.TestData, v string) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		td.Fatalf(t, "bad number %q", v)
	}
	return n
}

func parseDur(t *testing.T, td *datadriven.TestData, v string) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil {
		td.Fatalf(t, "bad duration %q", v)
	}
	return d
}
