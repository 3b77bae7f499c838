//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/sim/record"
)

// compareMetrics checks every metric of the view against the reference: counts exactly,
// everything else to 1e-9 relative (sums of floats may be added in another order);
// undefined (NaN) must match undefined.
func compareMetrics(t testing.TB, got, want Metrics) {
	t.Helper()
	if got.RunID != want.RunID {
		t.Errorf("run_id %q, want %q", got.RunID, want.RunID)
	}
	for _, name := range MetricNames {
		g, _ := got.Value(name)
		w, _ := want.Value(name)
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Errorf("%s of %s: view %v, reference %v", name, want.RunID, g, w)
			}
		case metric.All[metric.Index(name)].Unit == metric.Count:
			if g != w {
				t.Errorf("%s of %s: view %v, reference %v", name, want.RunID, g, w)
			}
		default:
			if math.Abs(g-w) > 1e-9*math.Max(math.Abs(w), 1e-300) && g != w {
				t.Errorf("%s of %s: view %.17g, reference %.17g (relative error %.3g)", name, want.RunID, g, w, math.Abs(g-w)/math.Abs(w))
			}
		}
	}
	if !reflect.DeepEqual(got.TerminationReasons, want.TerminationReasons) {
		t.Errorf("termination_reasons: view %v, reference %v", got.TerminationReasons, want.TerminationReasons)
	}
	if got.Currency != want.Currency {
		t.Errorf("currency: view %q, reference %q", got.Currency, want.Currency)
	}
}

const epochMicros = 1767225600 * 1_000_000

// readIncidents reads the incidents of a run, checking what a row says twice (its minutes
// against its window, its alarm inside it) and that incidents are numbered 1, 2, ...
func readIncidents(t testing.TB, db *DB, runID string) []refIncident {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT tool, start, "end", minutes, detected_at, calls, failed_attempts, affected_investigations,
		retries_sent, fault_ids, incident, parked, throttled, baseline
		FROM incidents WHERE run_id = ? ORDER BY incident`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []refIncident
	for rows.Next() {
		var inc refIncident
		var start, end, detected time.Time
		var number int64
		var minutes float64
		var faults []any
		if err := rows.Scan(&inc.Tool, &start, &end, &minutes, &detected, &inc.Calls, &inc.Failed, &inc.Affected, &inc.Retries,
			&faults, &number, &inc.Parked, &inc.Throttled, &inc.Baseline); err != nil {
			t.Fatal(err)
		}
		inc.Start, inc.End = start.UnixMicro()-epochMicros, end.UnixMicro()-epochMicros
		inc.DetectedAt = detected.UnixMicro() - epochMicros
		if w := inc.Minutes(); math.Abs(minutes-w) > 1e-12*math.Max(w, 1) {
			t.Errorf("incident %d: minutes = %v, but it spans [%v, %v)", number, minutes, start, end)
		}
		if !(inc.Start <= inc.DetectedAt && inc.DetectedAt < inc.End) {
			t.Errorf("incident %d: detected at %v, outside [%v, %v)", number, detected, start, end)
		}
		if number != int64(len(out)+1) {
			t.Errorf("incident numbers are not 1, 2, ...: got %d at position %d", number, len(out)+1)
		}
		inc.FaultIDs = []string{}
		for _, f := range faults {
			inc.FaultIDs = append(inc.FaultIDs, f.(string))
		}
		out = append(out, inc)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readSaturation reads the saturation spans of a run (numbered 1, 2, ...).
func readSaturation(t testing.TB, db *DB, runID string) []refSaturationSpan {
	t.Helper()
	var out []refSaturationSpan
	for i, r := range query(t, db, `SELECT episode, tool, epoch_us(start), epoch_us("end"), minutes, calls, refused FROM saturation
		WHERE run_id = '`+runID+`' ORDER BY episode`) {
		sp := refSaturationSpan{Tool: r[1].(string), Start: r[2].(int64) - epochMicros, End: r[3].(int64) - epochMicros,
			Calls: r[5].(int64), Refused: r[6].(int64)}
		if r[0].(int64) != int64(i+1) {
			t.Errorf("saturation episodes of %s are not numbered 1, 2, ...: %v at position %d", runID, r[0], i+1)
		}
		if w := float64(sp.End-sp.Start) / 60e6; math.Abs(r[4].(float64)-w) > 1e-12*math.Max(w, 1) {
			t.Errorf("saturation episode %v of %s: minutes %v, but it spans %d µs", r[0], runID, r[4], sp.End-sp.Start)
		}
		out = append(out, sp)
	}
	return out
}

func readEpisodes(t testing.TB, db *DB, runID string) []refEpisode {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT step_key, coalesce(tool, ''), start, "end", outcome, seconds, op_key, first_kind, detected_at, signs,
		root_id, investigation_id, failed_attempts, coalesce(ended_as, ''), detection_seconds, repair_seconds
		FROM recovery_episodes WHERE run_id = ? ORDER BY step_key`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []refEpisode
	for rows.Next() {
		var e refEpisode
		var start, end, detected time.Time
		if err := rows.Scan(&e.OpKey, &e.Tool, &start, &end, &e.Outcome, &e.Seconds, &e.FirstOp, &e.FirstKind, &detected, &e.Signs,
			&e.Root, &e.Investigation, &e.FailedAttempts, &e.EndedAs, &e.Detection, &e.Repair); err != nil {
			t.Fatal(err)
		}
		e.Start, e.End = start.UnixMicro()-epochMicros, end.UnixMicro()-epochMicros
		e.DetectedAt = detected.UnixMicro() - epochMicros
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareIncidents checks every incident row, column by column, against the reference (the
// baseline, a ratio of counts, to 1e-12 relative).
func compareIncidents(t testing.TB, got, want []refIncident) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d incidents in the table, %d in the reference:\n table %+v\n   ref %+v", len(got), len(want), got, want)
		return
	}
	for i := range want {
		g := got[i]
		if math.Abs(g.Baseline-want[i].Baseline) <= 1e-12*math.Abs(want[i].Baseline) {
			g.Baseline = want[i].Baseline
		}
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("incident %d: table %+v, reference %+v", i+1, got[i], want[i])
		}
	}
}

// compareSaturation checks every saturation row against the reference.
func compareSaturation(t testing.TB, got, want []refSaturationSpan) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("saturation: table %+v, reference %+v", got, want)
	}
}

func compareEpisodes(t testing.TB, got, want []refEpisode) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d recovery episodes in the view, %d in the reference", len(got), len(want))
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("recovery episode %d: view %+v, reference %+v", i, got[i], want[i])
		}
	}
}

// checkRun compares the metrics, incidents and recovery episodes of one loaded run.
func checkRun(t testing.TB, db *DB, run refRun, s *synth) refResult {
	t.Helper()
	return checkRunRecords(t, db, run, &s.c)
}

func checkRunRecords(t testing.TB, db *DB, run refRun, c *record.Collector) refResult {
	t.Helper()
	want := reference(run, c)
	got, err := db.Metrics(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	compareMetrics(t, got, want.Metrics)
	compareCalls(t, db, run.ID, c)
	compareAttempts(t, db, run.ID, c)
	compareExecutionCosts(t, db, run.ID, c)
	compareToolMinutes(t, db, run.ID, c, want.Incidents)
	compareTokenCosts(t, db, run.ID, c)
	compareIncidents(t, readIncidents(t, db, run.ID), want.Incidents)
	compareSaturation(t, readSaturation(t, db, run.ID), want.Saturation)
	compareEpisodes(t, readEpisodes(t, db, run.ID), want.Episodes)
	compareToolStats(t, db, run, c, want)
	compareGoodput(t, db, run.ID, c)
	compareRoots(t, db, run.ID, c)
	compareToolStatsExtra(t, db, run.ID, c, want)
	compareCosts(t, db, run, c)
	return want
}

// compareToolStats checks tool_stats against per-tool counts from the records, and its
// sums against the run's metrics and incidents.
func compareToolStats(t testing.TB, db *DB, run refRun, c *record.Collector, want refResult) {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT tool, attempts, operations, retries, ok, errors, timeouts, blocked,
		inspections, executions, duplicate_executions, duplicate_side_effects, discarded_results, compute,
		wasted_compute, incidents FROM tool_stats WHERE run_id = ? ORDER BY tool`, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []refToolStats
	var incidents int64
	for rows.Next() {
		var ts refToolStats
		var n int64
		if err := rows.Scan(&ts.Tool, &ts.Attempts, &ts.Operations, &ts.Retries, &ts.OK, &ts.Errors, &ts.Timeouts,
			&ts.Blocked, &ts.Inspections, &ts.Executions, &ts.DuplicateExecutions, &ts.DuplicateSideEffects,
			&ts.DiscardedResults, &ts.Compute, &ts.WastedCompute, &n); err != nil {
			t.Fatal(err)
		}
		incidents += n
		got = append(got, ts)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	ref := referenceToolStats(run, c)
	if len(got) != len(ref) {
		t.Fatalf("tool_stats has %d tools, the records %d:\n view %+v\n  ref %+v", len(got), len(ref), got, ref)
	}
	for i := range ref {
		g, w := got[i], ref[i]
		if math.Abs(g.Compute-w.Compute) > 1e-9*math.Abs(w.Compute) {
			t.Errorf("tool_stats %s: compute %v, reference %v", w.Tool, g.Compute, w.Compute)
		}
		if math.Abs(g.WastedCompute-w.WastedCompute) > 1e-9*math.Abs(w.WastedCompute) {
			t.Errorf("tool_stats %s: wasted compute %v, reference %v", w.Tool, g.WastedCompute, w.WastedCompute)
		}
		g.Compute, g.WastedCompute = w.Compute, w.WastedCompute
		if g != w {
			t.Errorf("tool_stats %s:\n view %+v\n  ref %+v", w.Tool, g, w)
		}
	}
	if incidents != int64(len(want.Incidents)) {
		t.Errorf("tool_stats counts %d incidents, the incidents view %d", incidents, len(want.Incidents))
	}
}

func TestMetricsMatchReference(t *testing.T) {
	db := openTestDB(t)
	mixed := synthMixed(11, 400, true)
	flat := synthFlat()
	idle := synthIdle()
	runs := []struct {
		run refRun
		s   *synth
	}{
		{loadSynth(t, db, "mixed", mixed, 123456), mixed},
		{loadSynth(t, db, "flat", flat, 999), flat},
		{loadSynth(t, db, "idle", idle, 3), idle},
	}

	t.Run("mixed", func(t *testing.T) {
		want := checkRun(t, db, runs[0].run, mixed)
		m := want.Metrics
		// The reference itself must see what the run was built to show, or the comparison
		// above proves little: a backtest incident covering the outage minutes 40-44 (its
		// calls fail from the outage's first call to its last), every
		// final state, duplicates, discards, escalations and several termination reasons.
		found := false
		for _, inc := range want.Incidents {
			if inc.Tool == "backtest" && inc.Start < 41*60_000_000 && inc.End > 44*60_000_000 && slices.Contains(inc.FaultIDs, "outage-backtest") {
				found = true
			}
		}
		if !found {
			t.Errorf("no backtest incident covers minutes 40-44: %+v", want.Incidents)
		}
		if !(m.Get("correlated_failure_share") > 0 && m.Get("correlated_failure_share") < 1) {
			t.Errorf("correlated_failure_share %v: want strictly between 0 and 1 (burst and background failures)", m.Get("correlated_failure_share"))
		}
		if m.Get("completed") == 0 || m.Get("terminated") == 0 || m.Get("completed")+m.Get("terminated") == m.Get("started") {
			t.Errorf("want completed, terminated and in-flight roots: %v started, %v completed, %v terminated", m.Get("started"), m.Get("completed"), m.Get("terminated"))
		}
		if m.Get("duplicate_side_effects") == 0 || m.Get("discarded_results") == 0 || m.Get("human_intervention_rate") == 0 || len(m.TerminationReasons) < 3 {
			t.Errorf("want duplicates, discards, escalations and several reasons: %+v", m)
		}
		outcomes := map[string]int{}
		for _, e := range want.Episodes {
			outcomes[e.Outcome]++
		}
		if outcomes["recovered"] == 0 || outcomes["ended"] == 0 || outcomes["in_flight"] == 0 {
			t.Errorf("want every kind of recovery episode: %v", outcomes)
		}
	})
	t.Run("flat", func(t *testing.T) {
		want := checkRun(t, db, runs[1].run, flat)
		if len(want.Incidents) != 0 || want.Metrics.Get("correlated_failure_share") != 0 {
			t.Errorf("a flat run has no incident: %+v, share %v", want.Incidents, want.Metrics.Get("correlated_failure_share"))
		}
		// 3 tools x 120 minutes, each one operation of 3 attempts that recovers in 6 s.
		if m := want.Metrics; m.Get("started") != 360 || m.Get("retry_amplification") != 3 || m.Get("median_recovery_time") == 0 {
			t.Errorf("flat run: %+v", m)
		}
	})
	t.Run("idle", func(t *testing.T) {
		want := checkRun(t, db, runs[2].run, idle)
		m := want.Metrics
		if m.Get("started") != 1 || m.Get("completion_rate") != 0 || !math.IsNaN(m.Get("retry_amplification")) || !math.IsNaN(m.Get("tokens_per_completion")) || !math.IsNaN(m.Get("median_recovery_time")) {
			t.Errorf("idle run: %+v", m)
		}
	})
	t.Run("all", func(t *testing.T) {
		all, err := db.AllMetrics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range all {
			ids = append(ids, m.RunID)
		}
		if !slices.Equal(ids, []string{"flat", "idle", "mixed"}) {
			t.Fatalf("AllMetrics runs %v, want flat, idle, mixed", ids)
		}
		for _, r := range runs {
			i := slices.Index(ids, r.run.ID)
			compareMetrics(t, all[i], reference(r.run, &r.s.c).Metrics)
		}
	})
	t.Run("no such run", func(t *testing.T) {
		_, err := db.Metrics(context.Background(), "mixd")
		if err == nil || !strings.Contains(err.Error(), "flat, idle, mixed") {
			t.Errorf("unknown run: error %v, want ErrNoRun naming the runs", err)
		}
	})
}

// TestViewsIdempotent creates the views twice and reads every view once.
func TestViewsIdempotent(t *testing.T) {
	db := openTestDB(t)
	loadSynth(t, db, "flat", synthFlat(), 1)
	if err := db.CreateViews(context.Background()); err != nil {
		t.Fatalf("second CreateViews: %v", err)
	}
	for _, v := range Views {
		var n int64
		if err := db.SQL().QueryRow("SELECT count(*) FROM " + v).Scan(&n); err != nil {
			t.Errorf("view %s: %v", v, err)
		}
	}
	for _, want := range []string{"metrics", "disruptions"} {
		if !slices.Contains(Views, want) {
			t.Errorf("no view %s in %v", want, Views)
		}
	}
	for _, d := range derivedTables {
		if slices.Contains(Views, d.name) {
			t.Errorf("%s is a stored table and a view", d.name)
		}
	}
}

// TestLifecycleMatchesTransitions checks the lifecycle view: at the end of each minute, the
// count of roots in each state equals the number whose latest transition up to then entered
// that state (pending from arrival until the first transition).
func TestLifecycleMatchesTransitions(t *testing.T) { runViewCase(t, lifecycleCase()) }

func lifecycleCase() viewCase {
	s := synthMixed(5, 150, false)
	sameStateTransitions(s)
	return viewCase{name: "lifecycle", load: func(t testing.TB, db *DB) { loadSynth(t, db, "run", s, 1) },
		check: func(t testing.TB, db *DB) { checkLifecycle(t, db, s) }}
}

// sameStateTransitions adds, to every third investigation, transitions that change no
// state, as the engine writes them: an arrival record ("" -> pending) at its arrival, and
// a refusal or audit note (from = to) at the same instant as each of its transitions.
func sameStateTransitions(s *synth) {
	arrived := map[int64]int64{}
	for _, inv := range s.c.Investigations {
		arrived[inv.InvestigationID] = inv.ArrivedAt
	}
	var out []record.Transition
	seen := map[int64]bool{}
	for _, tr := range s.c.Transitions {
		id := tr.InvestigationID
		if id%3 == 0 && !seen[id] {
			out = append(out, record.Transition{InvestigationID: id, At: arrived[id], To: "pending", Event: "arrived"})
		}
		seen[id] = true
		out = append(out, tr)
		if id%3 == 0 {
			out = append(out, record.Transition{InvestigationID: id, At: tr.At, From: tr.To, To: tr.To, Event: "refused"})
		}
	}
	s.c.Transitions = out
}

// checkLifecycle checks every row of the lifecycle view, roots and subagents, against the
// state each investigation is in at the end of the minute: the last transition's to_state
// before then (transitions of one investigation are in time order), pending from arrival.
func checkLifecycle(t testing.TB, db *DB, s *synth) {
	agents := map[string]map[int64]int64{"root": {}, "subagent": {}} // id -> arrival (µs)
	for _, inv := range s.c.Investigations {
		kind := "root"
		if inv.ParentID != 0 {
			kind = "subagent"
		}
		agents[kind][inv.InvestigationID] = tsMicros(inv.ArrivedAt)
	}
	if len(agents["subagent"]) == 0 {
		t.Fatal("the lifecycle dataset has no subagent")
	}
	var minutes int64
	if err := db.SQL().QueryRow(`SELECT minutes FROM run_clock WHERE run_id = 'run'`).Scan(&minutes); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"root", "subagent"} {
		if n := checkLifecycleRows(t, db, s, agent, agents[agent]); n != minutes || n < 60 {
			t.Errorf("lifecycle has %d minutes of %s rows, run_clock %d", n, agent, minutes)
		}
	}
}

func checkLifecycleRows(t testing.TB, db *DB, s *synth, agent string, arrivals map[int64]int64) int64 {
	rows, err := db.SQL().Query(`SELECT minute, "at", pending, running, waiting, recovering, awaiting_human, completed, terminated
		FROM lifecycle WHERE run_id = 'run' AND agent = ? ORDER BY minute`, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	states := []string{"pending", "running", "waiting", "recovering", "awaiting_human", "completed", "terminated"}
	var n int64
	for rows.Next() {
		var minute int64
		var at time.Time
		got := make([]int64, len(states))
		dest := []any{&minute, &at}
		for i := range got {
			dest = append(dest, &got[i])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		if minute != n {
			t.Fatalf("lifecycle %s minute %d at row %d", agent, minute, n)
		}
		n++
		end := (minute + 1) * 60_000_000
		if got := at.UnixMicro() - epochMicros; got != end {
			t.Errorf("lifecycle %s minute %d: at %d µs, want the minute's end %d", agent, minute, got, end)
		}
		want := make([]int64, len(states))
		for id, arrived := range arrivals {
			if arrived >= end {
				continue
			}
			state := "pending"
			for _, tr := range s.c.Transitions {
				if tr.InvestigationID == id && tsMicros(tr.At) < end {
					state = tr.To
				}
			}
			want[slices.Index(states, state)]++
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s minute %d: view %v, reference %v (%v)", agent, minute, got, want, states)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestClockMacros pins the SQL clock to the simulator's: sim_epoch() is record.Epoch, and
// the macros built on it count seconds and minutes from there for a simulated run; an
// imported run counts them from its own time 0 ($.import.time_zero_us of its config).
func TestClockMacros(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := query(t, db, `SELECT epoch_us(sim_epoch()), sim_seconds('sim', sim_epoch() + INTERVAL 90 SECOND),
		sim_minute('sim', sim_epoch() + INTERVAL 179 SECOND), sim_seconds('sim', sim_minute_start('sim', 3))`)
	want := []any{record.Epoch / 1000, 90.0, int64(2), 180.0}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("clock macros = %v, want %v", got[0], want)
	}
	// 2026-03-02T10:30:00Z as time 0 of an imported run.
	const zeroUS = int64(1772447400) * 1e6
	if _, err := db.SQL().Exec(`INSERT INTO runs (run_id, config) VALUES ('imp', $1)`,
		fmt.Sprintf(`{"import": {"time_zero_us": %d}}`, zeroUS)); err != nil {
		t.Fatal(err)
	}
	got = query(t, db, `SELECT sim_seconds('imp', make_timestamp(1772447400000000 + 90000000)),
		sim_minute('imp', make_timestamp(1772447400000000 + 179000000)), epoch_us(sim_minute_start('imp', 3)),
		sim_seconds('sim', sim_epoch() + INTERVAL 90 SECOND)`)
	want = []any{90.0, int64(2), zeroUS + 180e6, 90.0}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("clock macros of an imported run = %v, want %v", got[0], want)
	}
}
