//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// oddRowsRecords is a run built by hand of the rows the simulator's runs never hold but the
// views must still read right (an imported trace, a replayed journal): spans that name a
// model turn without being one, a tool attempt without an operation key, an inspection
// that decided work, a validation without a key, an investigation ended by a failure whose
// reason names a guard without any park, and a worker that died before its operation's
// first call, which the model then refused before the operation went to a tool. The variant "odd-rows" is that run;
// "odd-rows-twin" has the same span ids and keys but no validation of step 0, so that a
// view mixing the two runs' rows gets step 0's turn wrong in one of them; "odd-keyless" is
// step 3 alone with an attempt that has no operation key.
func oddRowsRecords(variant string) *record.Collector {
	const second = int64(1e9)
	var c record.Collector
	key := func(inv int64, step int32) record.OpKey { return record.OpKey{Investigation: inv, Step: step} }
	span := func(id uint64, inv int64, op record.Operation, tool string, st record.Status, at int64) record.Span {
		return record.Span{TraceID: inv, SpanID: id, InvestigationID: inv, Operation: op, Tool: tool,
			Start: at * second, End: at*second + second/2, Status: st}
	}
	keyed := func(s record.Span, k record.OpKey, attempt int32, causedBy ...uint64) record.Span {
		s.HasKey, s.OpKey, s.Attempt, s.CausedBy = true, k, attempt, causedBy
		return s
	}
	tokens := func(s record.Span, kind string, in, out int64) record.Span {
		s.Model, s.InputTokens, s.OutputTokens = "m", in, out
		s.Attrs = []record.Attr{{Key: "kind", Value: kind}}
		return s
	}
	c.Spans = []record.Span{
		// The investigation's configuration, carrying tokens: no model turn, never wasted,
		// though it caused work that never passed validation (step 1).
		tokens(span(1, 1, record.OpPlan, "", record.StatusOK, 0), "config_change", 50, 5),
		// Step 0: a turn whose operation passed validation (not in the twin).
		tokens(span(2, 1, record.OpPlan, "", record.StatusOK, 1), "model_turn", 100, 20),
		keyed(span(3, 1, record.OpExecuteTool, "api", record.StatusOK, 2), key(1, 0), 1, 1, 2),
		// Step 1: a turn whose operation's result was invalid and never revised: wasted. Its
		// attempt succeeded: an execute_tool span with status ok is no validation.
		tokens(span(5, 1, record.OpPlan, "", record.StatusOK, 4), "model_turn", 200, 40),
		keyed(span(6, 1, record.OpExecuteTool, "api", record.StatusOK, 5), key(1, 1), 1, 1, 5),
		keyed(span(7, 1, record.OpValidate, "", record.StatusInvalid, 6), key(1, 1), 0),
		// Step 2: a supervisor's consultation tagged like a turn caused work never validated:
		// no plan span, so no model turn, and never wasted.
		tokens(span(8, 1, record.OpSupervise, "", record.StatusOK, 7), "model_turn", 400, 40),
		keyed(span(9, 1, record.OpExecuteTool, "api", record.StatusOK, 8), key(1, 2), 1, 8),
		// Step 3: a turn whose operation passed validation (its attempt names a later turn too).
		tokens(span(11, 1, record.OpPlan, "", record.StatusOK, 9), "model_turn", 500, 50),
		keyed(span(13, 1, record.OpExecuteTool, "api", record.StatusOK, 11), key(1, 3), 1, 11, 10),
		keyed(span(14, 1, record.OpValidate, "", record.StatusOK, 12), key(1, 3), 0),
		// A later turn that thought out step 3's operation again: wasted (66 tokens).
		tokens(span(10, 1, record.OpPlan, "", record.StatusOK, 10), "model_turn", 60, 6),
		// Step 4: a turn whose operation passed validation, and that an inspection of an
		// operation never validated names: only tool attempts waste a turn.
		tokens(span(15, 1, record.OpPlan, "", record.StatusOK, 13), "model_turn", 700, 70),
		keyed(span(16, 1, record.OpInspect, "api", record.StatusOK, 14), key(1, 5), 0, 15),
		keyed(span(17, 1, record.OpExecuteTool, "api", record.StatusOK, 15), key(1, 4), 1, 15),
		keyed(span(18, 1, record.OpValidate, "", record.StatusOK, 16), key(1, 4), 0),
		// A validation without a key validates nothing.
		span(19, 1, record.OpValidate, "", record.StatusOK, 17),
		// Investigations 3 and 4 fail at api, then end terminated with a reason that names a
		// guard (an imported agent's error type): no park, so no sign of a guard.
		keyed(span(20, 3, record.OpExecuteTool, "api", record.StatusError, 20), key(3, 0), 1),
		keyed(span(21, 4, record.OpExecuteTool, "api", record.StatusError, 20), key(4, 0), 1),
		// Investigation 5's worker dies at 30 s before its operation's first call (the
		// lease expires at 40 s); the model then refuses the call, and the operation is sent
		// to api and passes validation: the crash is api's, never the model's.
		keyed(tokens(span(31, 5, record.OpPlan, "model", record.StatusError, 41), "model_turn", 0, 0), key(5, 0), 1),
		keyed(span(30, 5, record.OpTakeover, "", record.StatusError, 30), key(5, 0), 0),
		keyed(span(32, 5, record.OpExecuteTool, "api", record.StatusOK, 43), key(5, 0), 1),
		keyed(span(33, 5, record.OpValidate, "", record.StatusOK, 44), key(5, 0), 0),
	}
	c.Spans[len(c.Spans)-4].FailureClass = "transient"
	c.Spans[len(c.Spans)-3].End = 40 * second
	const minute = 60 * second
	c.Investigations = []record.Investigation{
		{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: minute, FinalState: "completed", Tokens: 10000, TrulyValid: true, Validated: true, Steps: 5},
		{InvestigationID: 3, RootID: 3, Ended: true, EndedAt: 21 * second, FinalState: "terminated", TerminationReason: "retry_throttled"},
		{InvestigationID: 4, RootID: 4, Ended: true, EndedAt: 21 * second, FinalState: "terminated", TerminationReason: "breaker_open"},
		{InvestigationID: 5, RootID: 5, Ended: true, EndedAt: 45 * second, FinalState: "completed", TrulyValid: true, Validated: true, Steps: 1, Tokens: 500},
	}
	for _, inv := range []int64{3, 4} {
		c.Transitions = append(c.Transitions, record.Transition{InvestigationID: inv, At: 21 * second, From: "running",
			To: "terminated", Event: "finished", Reason: c.Investigations[inv-2].TerminationReason, DecidedBy: "engine"})
	}
	switch variant {
	case "odd-rows":
		c.Spans = append(c.Spans, keyed(span(4, 1, record.OpValidate, "", record.StatusOK, 3), key(1, 0), 0))
	case "odd-keyless":
		// Step 3's turn also caused an attempt without an operation key (a trace whose span
		// lost its mayday.op_key): it names no operation, so it wastes nothing.
		c.Spans = append(c.Spans[8:11:11], keyed(span(12, 1, record.OpExecuteTool, "api", record.StatusOK, 10), record.OpKey{}, 1, 11))
		c.Spans[len(c.Spans)-1].HasKey = false
		c.Investigations = c.Investigations[:1]
		c.Transitions = nil
	}
	return &c
}

// oddRowsCase: the odd rows against the reference, and the token waste of the first run
// worked out by hand. The first run's configuration is not JSON: its metrics are still
// read (a configuration that is no JSON has no list of metrics an import could not give).
func oddRowsCase() viewCase {
	ids := []string{"odd-keyless", "odd-rows", "odd-rows-twin"}
	runs := map[string]*record.Collector{}
	for _, id := range ids {
		runs[id] = oddRowsRecords(id)
	}
	configs := map[string]string{"odd-rows": "name: odd-rows, not json"}
	return viewCase{name: "odd rows", load: func(t testing.TB, db *DB) {
		for _, id := range ids {
			if err := LoadCollector(db, id, runs[id], traces.Run{Scenario: id, Config: cmp.Or(configs[id], `{"name": "`+id+`"}`), Status: traces.StatusComplete}); err != nil {
				t.Fatal(err)
			}
		}
	}, check: func(t testing.TB, db *DB) {
		// By hand: step 1's turn (240 tokens) and step 3's second turn (66) are wasted in
		// odd-rows; step 0's turn too (120) in the twin, whose step 0 was never validated;
		// nothing in odd-keyless. Investigation 5 wastes nothing of its 500 tokens.
		for id, want := range map[string]float64{"odd-rows": 306, "odd-rows-twin": 426, "odd-keyless": 0} {
			rows := query(t, db, `SELECT wasted_tokens::DOUBLE FROM token_costs WHERE run_id = '`+id+`' AND investigation_id = 1`)
			if len(rows) != 1 || rows[0][0] != want {
				t.Errorf("token_costs of %s, investigation 1: wasted %v, want %v", id, rows, want)
			}
		}
		for _, id := range ids[1:] {
			checkRunRecords(t, db, refRun{ID: id}, runs[id])
		}
		// An attempt without a key is no call the reference counts (its retry flag is
		// unknown): only the run's token costs are compared.
		compareTokenCosts(t, db, "odd-keyless", runs["odd-keyless"])
	}}
}

func TestOddRows(t *testing.T) { runViewCase(t, oddRowsCase()) }
