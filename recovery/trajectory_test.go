package recovery_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// TestTrajectory: the supervisor is shown what the journal holds, built by hand here. One
// step succeeds; the second fails fast three times (max_attempts 3) and comes back invalid
// once in between, so at the retries-exhausted consultation the engine reports 1 step done,
// 3 attempts of the operation in hand (revision 1, after the invalid result was revised), 5
// attempts sent in all, 3 transient failures and 1 invalid output, 2 classes. A journal
// replay gives the same summary.
func TestTrajectory(t *testing.T) {
	p := &recovery.Policy{
		Retry:      recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: recovery.JitterNone},
		Revisions:  1,
		Supervisor: true,
	}
	env := recovery.Env{Guards: recovery.NewGuards(1, nil, nil), Rand: rand.New(rand.NewPCG(1, 2))}
	j := &memJournal{}
	e := recovery.New(1, p, j)
	now := int64(0)
	step := func(ev recovery.Event) recovery.Decision {
		t.Helper()
		now += int64(time.Minute)
		d, err := e.Observe(now, ev, env)
		if d.At > now {
			now = d.At
		}
		if err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
		return d
	}
	send := recovery.Event{Kind: recovery.EvSend}
	step(recovery.Event{Kind: recovery.EvStart})
	step(send)
	step(recovery.Event{Kind: recovery.EvSucceeded})
	step(recovery.Event{Kind: recovery.EvValid})
	step(send)
	step(recovery.Event{Kind: recovery.EvSucceeded})
	if d := step(recovery.Event{Kind: recovery.EvInvalid, Fingerprint: 7}); d.Action == recovery.ActConsult {
		// The supervisor decides on invalid output: tell it to revise.
		step(recovery.Event{Kind: recovery.EvSupervisor, Suggestion: recovery.Suggestion{Action: recovery.ActRevise}})
	}
	var d recovery.Decision
	for i := 0; i < 3; i++ {
		step(send)
		d = step(recovery.Event{Kind: recovery.EvFailed})
	}
	if d.Action != recovery.ActConsult {
		t.Fatalf("after 3 failed attempts: %s, want consult", d.Action)
	}
	got := d.Judgement.Trajectory
	want := recovery.Trajectory{Steps: 1, Revision: 1, Attempts: 3, Sent: 5, Revisions: 1}
	want.Failures[recovery.Transient], want.Failures[recovery.InvalidOutput] = 3, 1
	if got != want || got.Classes() != 2 {
		t.Errorf("trajectory %+v (%d classes), want %+v (2)", got, got.Classes(), want)
	}
	r, err := recovery.Replay(1, p, j.recs)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := r.Observe(now+1, recovery.Event{Kind: recovery.EvSupervisor, Suggestion: recovery.Suggestion{Action: recovery.ActTerminate}}, env)
	if err != nil || d2.Action != recovery.ActTerminate {
		t.Errorf("replayed engine: %v %v", d2.Action, err)
	}
}

// TestTrajectoryClasses: Classes counts each failure class from Transient to NonProgress
// that has at least one failure, the first and the last included, and never NoFailure.
func TestTrajectoryClasses(t *testing.T) {
	var tr recovery.Trajectory
	tr.Failures[recovery.NoFailure] = 5
	if n := tr.Classes(); n != 0 {
		t.Errorf("only NoFailure: %d classes", n)
	}
	for c := recovery.Transient; c <= recovery.NonProgress; c++ {
		var one recovery.Trajectory
		one.Failures[c] = 1
		if n := one.Classes(); n != 1 {
			t.Errorf("one failure of %s: %d classes", c, n)
		}
		tr.Failures[c] = int32(c)
	}
	if n, want := tr.Classes(), int(recovery.NonProgress-recovery.Transient+1); n != want {
		t.Errorf("every class: %d, want %d", n, want)
	}
}
