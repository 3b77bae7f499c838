package recovery_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// Replay refuses a record whose action cannot go with its event or its target state, and
// takes each action the engine itself journals there: a subagent_failed note only respawns or
// reduces the scope; another note only records a step, a block, a consultation or a re-park
// (a supervisor's answer may carry any action); a record into waiting only sends, retries,
// parks, inspects or pauses.
func TestReplayRefusesActionsOutOfPlace(t *testing.T) {
	start := recovery.JournalRecord{From: recovery.Pending, To: recovery.Running, Event: recovery.EvStart, Action: recovery.ActNextStep}
	note := func(ev recovery.EventKind, act recovery.Action) recovery.JournalRecord {
		return recovery.JournalRecord{From: recovery.Running, To: recovery.Running, Event: ev, Action: act, Note: true}
	}
	into := func(to recovery.State, act recovery.Action) recovery.JournalRecord {
		return recovery.JournalRecord{From: recovery.Running, To: to, Event: recovery.EvSend, Action: act}
	}
	for _, tc := range []struct {
		rec recovery.JournalRecord
		bad string // the refusal's text; "" when the record is taken
	}{
		{note(recovery.EvSubagentFailed, recovery.ActRespawn), ""},
		{note(recovery.EvSubagentFailed, recovery.ActReduceScope), ""},
		{note(recovery.EvSubagentFailed, recovery.ActNextStep), "subagent_failed note with action next_step"},
		{note(recovery.EvSubagentFailed, recovery.ActTerminate), "subagent_failed note with action terminate"},
		{note(recovery.EvSupervisor, recovery.ActRetry), ""},
		{note(recovery.EvPolicyViolation, recovery.ActBlock), ""},
		{note(recovery.EvPolicyViolation, recovery.ActNextStep), ""},
		{note(recovery.EvPolicyViolation, recovery.ActConsult), ""},
		{note(recovery.EvTimer, recovery.ActPark), ""},
		{note(recovery.EvFailed, recovery.ActRetry), "note record with action retry"},
		{note(recovery.EvFailed, recovery.ActRespawn), "note record with action respawn"},
		{into(recovery.Waiting, recovery.ActSend), ""},
		{into(recovery.Waiting, recovery.ActValidate), "waiting with action validate"},
		{into(recovery.Waiting, recovery.ActNextStep), "waiting with action next_step"},
	} {
		_, err := recovery.Replay(1, &recovery.Policy{}, []recovery.JournalRecord{start, tc.rec})
		what := tc.rec.Event.String() + " " + tc.rec.Action.String()
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s refused: %v", what, err)
		case tc.bad != "" && (!errors.Is(err, recovery.ErrBadJournal) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s: %v, want a bad journal: %s", what, err, tc.bad)
		}
	}
}
