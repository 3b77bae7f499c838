package recovery_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// memJournal stands in for a durable log; a real one would write each record before the
// worker acts on the decision.
type memJournal struct{ recs []recovery.JournalRecord }

func (j *memJournal) Append(_ int64, r *recovery.JournalRecord) { j.recs = append(j.recs, *r) }

// keyedTool is a fake tool that enforces idempotency by key (step, revision): it executes
// a key at most once and answers lookups from its record. Its faults are scripted: each call
// takes the next one ("error": fails fast; "lost": executes, but the reply is lost).
type keyedTool struct {
	done   map[[2]int32]bool
	faults []string
	execs  int
}

func (t *keyedTool) call(step, rev int32) string {
	f := "ok"
	if len(t.faults) > 0 {
		f, t.faults = t.faults[0], t.faults[1:]
	}
	if k := [2]int32{step, rev}; f != "error" && !t.done[k] {
		t.done[k] = true
		t.execs++
	}
	return f
}

func (t *keyedTool) lookup(step, rev int32) recovery.Lookup {
	if t.done[[2]int32{step, rev}] {
		return recovery.LookupCompleted
	}
	return recovery.LookupNotFound
}

// A worker embeds the engine: it owns time, randomness, the tool and the journal; the
// engine only decides. Here a two-step investigation meets a fast error, then a lost reply
// that inspection resolves without a second execution, then, after a crash, a new worker
// rebuilt from the journal finishes the job.
func Example() {
	policy := &recovery.Policy{
		Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2,
			Max: time.Minute, Jitter: recovery.JitterFull},
		InspectBeforeRetry: true,
		Revisions:          1,
		HumansAvailable:    true,
	}
	guards := recovery.NewGuards(1, &recovery.DefaultBudget, &recovery.DefaultBreaker) // shared by the fleet
	journal := &memJournal{}
	const id = 42
	eng := recovery.New(id, policy, journal)
	rng := rand.New(rand.NewPCG(2026, id)) // the investigation's own stream
	tool := &keyedTool{done: map[[2]int32]bool{}, faults: []string{"error", "lost"}}
	const steps, timeout = 2, int64(30 * time.Second)

	now := int64(0)
	ev := recovery.Event{Kind: recovery.EvStart}
	crashed := false
	for range 100 { // the investigation ends within a few decisions
		d, err := eng.Observe(now, ev, recovery.Env{Rand: rng, Guards: guards})
		if err != nil {
			fmt.Println("refused:", err)
			return
		}
		step, rev := eng.Op()
		fmt.Printf("%-9s op %d/%d  %-9s %-21s %s\n", time.Duration(now).Round(time.Millisecond), step, rev, d.Action, d.Reason, eng.State())
		switch d.Action {
		case recovery.ActNextStep, recovery.ActRevise, recovery.ActReplan:
			now += int64(2 * time.Second) // the model thinks, then asks to send
			ev = recovery.Event{Kind: recovery.EvSend, Tool: 0}
		case recovery.ActSend:
			switch tool.call(step, rev) {
			case "error":
				now += int64(10 * time.Millisecond)
				ev = recovery.Event{Kind: recovery.EvFailed, Tool: 0}
			case "lost":
				now += timeout
				ev = recovery.Event{Kind: recovery.EvTimedOut, Tool: 0}
			default:
				now += int64(time.Second)
				ev = recovery.Event{Kind: recovery.EvSucceeded, Tool: 0}
			}
		case recovery.ActRetry, recovery.ActPark, recovery.ActPause:
			now = max(now, d.At)
			ev = recovery.Event{Kind: recovery.EvTimer}
		case recovery.ActInspect:
			now = max(now, d.At)
			ev = recovery.Event{Kind: recovery.EvInspected, Lookup: tool.lookup(step, rev)}
		case recovery.ActValidate:
			ev = recovery.Event{Kind: recovery.EvValid}
			if step == steps-1 {
				ev.Kind = recovery.EvFinished
			}
			if step == 1 && !crashed {
				// The worker dies while validating; after the lease a new worker rebuilds
				// the engine from the journal alone and reports the crash.
				crashed = true
				eng, err = recovery.Replay(id, policy, journal.recs)
				if err != nil {
					fmt.Println("replay:", err)
					return
				}
				eng.SetJournal(journal)
				now += int64(5 * time.Minute)
				ev = recovery.Event{Kind: recovery.EvCrashed}
			}
		case recovery.ActConsult:
			ev = recovery.Event{Kind: recovery.EvSupervisor, Suggestion: recovery.Suggestion{Action: d.Judgement.Allowed[0]}}
		case recovery.ActEscalate:
			ev = recovery.Event{Kind: recovery.EvHuman, Approved: true}
		default: // ActComplete, ActTerminate
			fmt.Printf("executions %d, journal records %d\n", tool.execs, len(journal.recs))
			return
		}
	}
	fmt.Println("no end after 100 decisions")
	// Output:
	// 0s        op 0/0  next_step started               running
	// 2s        op 0/0  send      attempt_sent          waiting
	// 2.01s     op 0/0  retry     backoff               waiting
	// 2.77s     op 0/0  send      attempt_sent          waiting
	// 32.77s    op 0/0  inspect   inspect_before_retry  waiting
	// 32.77s    op 0/0  validate  inspected_completed   running
	// 32.77s    op 1/0  next_step valid                 running
	// 34.77s    op 1/0  send      attempt_sent          waiting
	// 35.77s    op 1/0  validate  reply                 running
	// 5m35.77s  op 1/0  inspect   inspect_before_retry  waiting
	// 5m35.77s  op 1/0  validate  inspected_completed   running
	// 5m35.77s  op 1/0  complete  finished              completed
	// executions 2, journal records 18
}
