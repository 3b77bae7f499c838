package recovery_test

import (
	"errors"
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// path is a legal journal that ends in state s.
func path(s recovery.State) []recovery.JournalRecord {
	rec := func(from, to recovery.State, a recovery.Action) recovery.JournalRecord {
		return recovery.JournalRecord{From: from, To: to, Action: a}
	}
	start := rec(recovery.Pending, recovery.Running, recovery.ActNextStep)
	fail := rec(recovery.Running, recovery.Recovering, recovery.ActNone)
	switch s {
	case recovery.Running:
		return []recovery.JournalRecord{start}
	case recovery.Waiting:
		return []recovery.JournalRecord{start, rec(recovery.Running, recovery.Waiting, recovery.ActSend)}
	case recovery.Recovering:
		return []recovery.JournalRecord{start, fail}
	case recovery.AwaitingHuman:
		return []recovery.JournalRecord{start, fail, rec(recovery.Recovering, recovery.AwaitingHuman, recovery.ActEscalate)}
	case recovery.Completed:
		return []recovery.JournalRecord{start, rec(recovery.Running, recovery.Completed, recovery.ActComplete)}
	case recovery.Terminated:
		return []recovery.JournalRecord{start, fail, rec(recovery.Recovering, recovery.Terminated, recovery.ActTerminate)}
	}
	return nil
}

// actionInto is an action a record into s may carry.
var actionInto = map[recovery.State]recovery.Action{
	recovery.Pending: recovery.ActNone, recovery.Running: recovery.ActRevise,
	recovery.Waiting: recovery.ActRetry, recovery.Recovering: recovery.ActNone,
	recovery.AwaitingHuman: recovery.ActEscalate, recovery.Completed: recovery.ActComplete,
	recovery.Terminated: recovery.ActTerminate,
}

// TestReplayRefusesIllegalEdges tries all 49 (from, to) pairs at the end of a legal
// journal: exactly the 12 edges of the table replay, every other is refused as an illegal
// transition, and final states are left by nothing.
func TestReplayRefusesIllegalEdges(t *testing.T) {
	legal := 0
	for from := recovery.Pending; from <= recovery.Terminated; from++ {
		for to := recovery.Pending; to <= recovery.Terminated; to++ {
			recs := append(path(from), recovery.JournalRecord{From: from, To: to, Action: actionInto[to]})
			e, err := recovery.Replay(1, &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 1}}, recs)
			if recovery.Legal(from, to) {
				legal++
				if err != nil || e.State() != to {
					t.Errorf("%s → %s is legal, replay: %v", from, to, err)
				}
				if from.Final() {
					t.Errorf("edge out of final state %s", from)
				}
				continue
			}
			var te *recovery.TransitionError
			if !errors.Is(err, recovery.ErrBadJournal) || !errors.Is(err, recovery.ErrIllegalTransition) ||
				!errors.As(err, &te) || te.From != from || te.To != to {
				t.Errorf("%s → %s is illegal, replay said %v", from, to, err)
			}
		}
	}
	if legal != 12 {
		t.Errorf("%d legal edges, want the 12 of doc.go", legal)
	}
}

func TestReplayRefusesBrokenJournals(t *testing.T) {
	p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 1}}
	for name, recs := range map[string][]recovery.JournalRecord{
		"gap": {
			{From: recovery.Pending, To: recovery.Running, Action: recovery.ActNextStep},
			{From: recovery.Waiting, To: recovery.Recovering},
		},
		"note that moves": {
			{From: recovery.Pending, To: recovery.Running, Action: recovery.ActNextStep},
			{From: recovery.Running, To: recovery.Waiting, Action: recovery.ActSend, Note: true},
		},
		"waiting for nothing": {
			{From: recovery.Pending, To: recovery.Running, Action: recovery.ActNextStep},
			{From: recovery.Running, To: recovery.Waiting, Action: recovery.ActComplete},
		},
	} {
		if _, err := recovery.Replay(1, p, recs); !errors.Is(err, recovery.ErrBadJournal) {
			t.Errorf("%s: replay said %v, want ErrBadJournal", name, err)
		}
	}
}
