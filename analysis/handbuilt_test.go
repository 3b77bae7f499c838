//go:build duckdb_arrow

package analysis

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// handBuilt is a small trace whose episodes, incident and goodput are worked out by hand
// in the tests below.
func handBuilt() *record.Collector {
	var c record.Collector
	var span uint64
	sp := func(inv int64, op record.Operation, tool string, key record.OpKey, attempt int32, start, end int64, st record.Status) {
		span++
		c.Spans = append(c.Spans, record.Span{TraceID: inv, SpanID: span, InvestigationID: inv, AgentID: inv, Operation: op,
			Tool: tool, HasKey: true, OpKey: key, Attempt: attempt, Start: start, End: end, Status: st})
	}
	inv := func(id int64, ended int64, state string, scope string) {
		c.Investigations = append(c.Investigations, record.Investigation{InvestigationID: id, RootID: id, ArrivedAt: 0,
			Ended: true, EndedAt: ended, FinalState: state, Tokens: 1000, Scope: scope})
	}
	k := func(inv int64, step, rev int32) record.OpKey {
		return record.OpKey{Investigation: inv, Step: step, Revision: rev}
	}
	// 1: an attempt sent at 10 s times out at 70 s; the retry at 75 s answers at 80 s, valid.
	sp(1, record.OpExecuteTool, "api", k(1, 0, 0), 1, 10*second, 70*second, record.StatusTimeout)
	sp(1, record.OpExecuteTool, "api", k(1, 0, 0), 2, 75*second, 80*second, record.StatusOK)
	sp(1, record.OpValidate, "", k(1, 0, 0), 2, 80*second, 80*second, record.StatusOK)
	inv(1, 90*second, "completed", "")
	// 2: parked on an open breaker at 100 s, sent at 160 s, valid at 165 s.
	c.Transitions = append(c.Transitions, record.Transition{InvestigationID: 2, At: 100 * second, From: "running",
		To: "waiting", Event: "send", Action: "park", Reason: "breaker_open"})
	sp(2, record.OpExecuteTool, "api", k(2, 0, 0), 1, 160*second, 165*second, record.StatusOK)
	sp(2, record.OpValidate, "", k(2, 0, 0), 1, 165*second, 165*second, record.StatusOK)
	inv(2, 170*second, "completed", record.ScopeReduced)
	// 3: a result at 200 s fails validation; revision 1 is valid at 220 s.
	sp(3, record.OpExecuteTool, "api", k(3, 0, 0), 1, 190*second, 200*second, record.StatusOK)
	sp(3, record.OpValidate, "", k(3, 0, 0), 1, 200*second, 200*second, record.StatusInvalid)
	sp(3, record.OpExecuteTool, "api", k(3, 0, 1), 1, 210*second, 220*second, record.StatusOK)
	sp(3, record.OpValidate, "", k(3, 0, 1), 1, 220*second, 220*second, record.StatusOK)
	inv(3, 230*second, "completed", "")
	// 4: blocked by policy at 300 s; the investigation is terminated at 900 s.
	sp(4, record.OpExecuteTool, "api", k(4, 0, 0), 0, 300*second, 300*second, record.StatusBlocked)
	inv(4, 900*second, "terminated", "")
	return &c
}

func TestEpisodesFromTheFirstSignOfTrouble(t *testing.T) { runViewCase(t, episodesCase) }

var episodesCase = viewCase{name: "hand-built episodes", load: func(t testing.TB, db *DB) {
	if err := LoadCollector(db, "hand", handBuilt(), traces.Run{Scenario: "hand", Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
}, check: checkHandEpisodes}

func checkHandEpisodes(t testing.TB, db *DB) {
	type ep struct {
		step, kind, outcome  string
		seconds, detect, fix float64
	}
	want := []ep{
		{"1/0", "timed_out", "recovered", 70, 60, 10}, // the wait for the timeout counts
		{"2/0", "parked", "recovered", 65, 0, 65},     // parking is an episode
		{"3/0", "invalid", "recovered", 20, 0, 20},    // a revision recovers the step
		{"4/0", "blocked", "ended", 600, 0, 600},      // the investigation ended
	}
	rows, err := db.SQL().Query(`SELECT step_key, first_kind, outcome, seconds, detection_seconds, repair_seconds
		FROM recovery_episodes WHERE run_id = 'hand' ORDER BY step_key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []ep
	for rows.Next() {
		var e ep
		if err := rows.Scan(&e.step, &e.kind, &e.outcome, &e.seconds, &e.detect, &e.fix); err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != len(want) {
		t.Fatalf("episodes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("episode %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Recovered at 20, 65 and 70 s, never at 600 s: half of the 4 had recovered by 65 s,
	// and with one never recovering no 95% point exists; full scope: 2 of 4 started (2
	// reduced, 4 terminated).
	m, err := db.Metrics(t.Context(), "hand")
	if err != nil {
		t.Fatal(err)
	}
	if m.Get("median_recovery_time") != 65 || m.Get("full_scope_completion_rate") != 0.5 {
		t.Errorf("median_recovery_time %v (want 65), full_scope_completion_rate %v (want 0.5)", m.Get("median_recovery_time"), m.Get("full_scope_completion_rate"))
	}
	if !math.IsNaN(m.Get("p95_recovery_time")) || m.Get("episode_recovery_rate") != 0.75 {
		t.Errorf("p95_recovery_time %v (want NULL: never), episode_recovery_rate %v (want 3/4)", m.Get("p95_recovery_time"), m.Get("episode_recovery_rate"))
	}
	if !math.IsNaN(m.Get("goodput_recovery_time")) || !math.IsNaN(m.Get("goodput_recovered")) {
		t.Errorf("no fault window: goodput_recovery_time %v, goodput_recovered %v; want NULL for both (not a collapse)",
			m.Get("goodput_recovery_time"), m.Get("goodput_recovered"))
	}
}

// An outage of minutes 10-11 followed by 20 minutes of an open breaker is one incident of
// 22 minutes: while the breaker is open no call is sent, and an incident ends only at the
// first call after its last failure that did not fail (the parked callers', sent once the
// breaker closes at 32:00), so the guarded time is the incident's and every parked
// investigation is affected. Before it, 10 minutes of 100 calls with 1 failure each set the
// baseline at 1%; 100 failures in a row are far past the threshold (edgeStep: 5 suffice).
func TestIncidentIncludesGuardedTime(t *testing.T) { runViewCase(t, guardedCase) }

var guardedCase = viewCase{name: "guarded incident", load: loadGuarded, check: checkGuarded}

func loadGuarded(t testing.TB, db *DB) {
	var c record.Collector
	var span uint64
	id := int64(0)
	attempt := func(at int64, fail bool) {
		span++
		id++
		st := record.StatusOK
		if fail {
			st = record.StatusError
		}
		c.Spans = append(c.Spans, record.Span{TraceID: id, SpanID: span, InvestigationID: id, Operation: record.OpExecuteTool,
			Tool: "api", HasKey: true, OpKey: record.OpKey{Investigation: id}, Attempt: 1, Start: at, End: at, Status: st})
		c.Investigations = append(c.Investigations, record.Investigation{InvestigationID: id, RootID: id, Ended: true,
			EndedAt: 40 * minute0, FinalState: "completed", Tokens: 10})
	}
	for m := int64(0); m < 10; m++ {
		for i := int64(0); i < 100; i++ {
			attempt(m*minute0+i*minute0/100, i == 0)
		}
	}
	for i := int64(0); i < 100; i++ { // the outage: minutes 10 and 11
		attempt(10*minute0+i*minute0/50, true)
	}
	for m := int64(12); m < 32; m++ {
		c.Samples = append(c.Samples, record.Sample{Tool: "api", At: (m + 1) * minute0, BreakerState: "open", Parked: 3})
		for i := int64(0); i < 3; i++ { // parked callers: one park each, sent once the breaker closes
			attempt(32*minute0+((m-12)*3+i)*second, false)
			c.Transitions = append(c.Transitions, record.Transition{InvestigationID: id, At: m*minute0 + second,
				Action: "park", Reason: "breaker_open", Event: "send"})
		}
	}
	if err := LoadCollector(db, "guarded", &c, traces.Run{Scenario: "guarded", Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
}

func checkGuarded(t testing.TB, db *DB) {
	if err := edgeStep(10, 1000+100+60, 5); err != nil {
		t.Fatal(err)
	}
	if err := db.ready(t.Context()); err != nil { // the derived tables of the run just loaded
		t.Fatal(err)
	}
	var n, failed, affected, parked int64
	var minutes float64
	var start, end int64
	if err := db.SQL().QueryRow(`SELECT count(*), max(minutes), max(failed_attempts), max(affected_investigations), max(parked),
		max(epoch_us(start)), max(epoch_us("end")) FROM incidents WHERE run_id = 'guarded'`).Scan(&n, &minutes, &failed, &affected, &parked, &start, &end); err != nil {
		t.Fatal(err)
	}
	start, end = start-epochMicros, end-epochMicros
	if n != 1 || minutes != 22 || start != 10*minute0/1000 || end != 32*minute0/1000 || failed != 100 || affected != 100+60 || parked != 60 {
		t.Errorf("incidents %d, minutes %v over [%d, %d) µs, failed %d, affected %d, parked %d; want 1, 22 over [10:00, 32:00), 100, 160, 60",
			n, minutes, start, end, failed, affected, parked)
	}
	// Every minute of the incident, the guarded ones included, is in it, and no other.
	r := query(t, db, `SELECT count(*) FILTER (WHERE in_incident), count(*) FILTER (WHERE in_incident AND (minute < 10 OR minute >= 32)),
		count(*) FILTER (WHERE guarded AND NOT in_incident) FROM tool_minutes WHERE run_id = 'guarded'`)
	if r[0][0].(int64) != 22 || r[0][1].(int64) != 0 || r[0][2].(int64) != 0 {
		t.Errorf("tool_minutes in the incident, outside minutes 10-31, guarded outside it: %v; want 22, 0, 0", r[0])
	}
	// The 10 background failures are outside the incident: share = 100 / 110.
	m, err := db.Metrics(t.Context(), "guarded")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.Get("correlated_failure_share")-100.0/110) > 1e-12 {
		t.Errorf("correlated_failure_share %v, want 100/110", m.Get("correlated_failure_share"))
	}
}

const minute0 = 60 * second

// goodput_recovery_time by the windowed rule (detect.GoodputRecovery): valid results 6 s
// apart (10 a minute) before a fault window of minutes 20-21, so the steady state (the
// results in [10:00, 20:00), the second half since the first arrival at 0:00) holds 100,
// its 71 windows of 30 results all last 29·6 = 174 s: Limit 174 s, and a window is back
// when 9·d <= 1740 s, d <= 193.3 s. None during the window and until minute 29, then 5 a
// minute 12 s apart (30:00 to 34:48), then 10 a minute 6 s apart from 35:00. A window with
// g gaps of 12 s lasts 174 + 6·g s: back when g <= 3. The window from 34:12 holds 4 (198 s),
// that from 34:24 holds 3 (34:24, 34:36, 34:48, then 27 results from 35:00 to 37:36: 192 s):
// back 34:24 − 22:00 = 744 s after the window. The window from 22:00 ends at its 30th
// result, 35:24, so with the last arrival at 37:00 windows are tested (not that ending at
// 37:36) and none is back: never (NULL, and goodput_recovered 0: tested, not back).
func TestGoodputRecoveryTime(t *testing.T) { runViewCase(t, goodputCase) }

var goodputRuns = []struct {
	run        string
	arrival    int64
	want, back float64
}{{"late", 45, 744, 1}, {"early", 37, math.NaN(), 0}}

var goodputCase = viewCase{name: "goodput recovery", load: loadGoodput, check: checkGoodput}

func loadGoodput(t testing.TB, db *DB) {
	build := func(lastArrival int64) *record.Collector {
		var c record.Collector
		c.Faults = append(c.Faults, record.Fault{FaultID: "down", Kind: "outage", Tool: "api", Start: 20 * minute0,
			End: 22 * minute0, Parameters: `{"duration_seconds":120}`, Window: true, Hits: record.HitsCalls})
		var span uint64
		for m := int64(0); m < 50; m++ {
			n := 10
			switch {
			case m >= 20 && m < 30:
				n = 0
			case m >= 30 && m < 35:
				n = 5
			}
			for i := range int64(n) {
				span++
				at := m*minute0 + i*minute0/int64(n)
				c.Spans = append(c.Spans, record.Span{TraceID: 1, SpanID: span, InvestigationID: 1, Operation: record.OpValidate,
					HasKey: true, OpKey: record.OpKey{Investigation: 1, Step: int32(span)}, Start: at, End: at, Status: record.StatusOK})
			}
		}
		c.Investigations = append(c.Investigations,
			record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 50 * minute0, FinalState: "completed"},
			record.Investigation{InvestigationID: 2, RootID: 2, ArrivedAt: lastArrival * minute0, Ended: true, EndedAt: 50 * minute0, FinalState: "completed"})
		return &c
	}
	for _, tc := range goodputRuns {
		if err := LoadCollector(db, tc.run, build(tc.arrival), traces.Run{Scenario: tc.run, Status: traces.StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}
}

func checkGoodput(t testing.TB, db *DB) {
	for _, tc := range goodputRuns {
		m, err := db.Metrics(t.Context(), tc.run)
		if err != nil {
			t.Fatal(err)
		}
		if g := m.Get("goodput_recovery_time"); !(g == tc.want || math.IsNaN(g) && math.IsNaN(tc.want)) {
			t.Errorf("%s: goodput_recovery_time %v, want %v", tc.run, g, tc.want)
		}
		if b := m.Get("goodput_recovered"); b != tc.back {
			t.Errorf("%s: goodput_recovered %v, want %v", tc.run, b, tc.back)
		}
	}
}
