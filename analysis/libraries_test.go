//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/internal/fixturetruth"
)

// libraryTruth is the part of a fixture's truth.json (analysis/testdata/libraries/README.md)
// that the import is held to.
type libraryTruth struct {
	File    string `json:"file"`
	Outages []struct {
		Tool  string `json:"tool"`
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"outages"`
	PerService map[string]serviceTruth `json:"per_service"`
	Runs       []struct {
		Service string `json:"service"`
		Kind    string `json:"kind"`
		Start   string `json:"start_unix_ns"`
	} `json:"runs"`
}

// failedSpansLost names the fixtures whose library never sends the span of a call that
// throws: OpenLLMetry JS 0.27's withTool and withAgent leave it open, so failed tool
// attempts and failed runs are missing from the trace (docs/import.md, "What a trace
// cannot know"). Their import is held to what the spans carry: the successful attempts,
// no failure, and every run that ended as completed.
var failedSpansLost = map[string]bool{"openllmetry": true}

// lastErrorUnreported names the fixtures whose library records a failed tool attempt only
// in the model request that reports its error (ADK JS 2.0 ends the tool span with no status)
// and marks no failed run: the last attempt of a run aborted by its model was never reported
// to a model, so it reads as a success, and the run as completed (docs/import.md, "What a
// trace cannot know"). Their import is held to that: see reported.
var lastErrorUnreported = map[string]bool{"adk": true}

// classesRedacted names the fixtures whose library writes one message for every failed
// tool, whatever the error: the OpenAI Agents SDK JS 0.20 sets the tool span's error to
// "Error running tool (non-fatal)" with "Error details are redacted", and the exception
// event carries only that (docs/import.md, "What a trace cannot know"); Ax 24 records a
// failed function call as an exception of type Error with no message. Every failure then
// reads as transient, the class of an error that names no other; their import is held to
// the failures' total.
var classesRedacted = map[string]bool{"openai-agents-openinference": true, "ax-otel": true}

type serviceTruth struct {
	Investigations     int              `json:"investigations"`
	Failed             int              `json:"investigations_failed"`
	Subagents          int              `json:"subagents"`
	Attempts           int              `json:"attempts"`
	Operations         int              `json:"operations"`
	RetryAmplification float64          `json:"retry_amplification"`
	Episodes           int              `json:"recovery_episodes"`
	Recovered          int              `json:"episodes_recovered"`
	FailuresPerClass   map[string]int64 `json:"failures_per_class"`
}

// libraryFixtures lists the folders of analysis/testdata/libraries that hold a truth.json:
// traces that real agent libraries sent while running scripted fleets, with what the
// fleets really did.
func libraryFixtures(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "libraries", "*", "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no fixtures under testdata/libraries")
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

func readTruth(t *testing.T, dir string) libraryTruth {
	t.Helper()
	var truth libraryTruth
	if err := json.Unmarshal(readFullTruth(t, dir).raw, &truth); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return truth
}

// Every fixture made by a real agent library imports to what its fleet did, service by
// service: the investigations and sub-agents, the ones that failed, every tool attempt and
// its failure class exactly; the logical operations, so retry amplification within 0.03 of
// the truth (the bound; the retry rule is a heuristic where the library records no
// attempt); recovered episodes within 10%; and timestamps as recorded.
func TestImportLibraryFixtures(t *testing.T) {
	for _, dir := range libraryFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth := readTruth(t, dir)
			db, res := importInto(t, []string{filepath.Join(dir, truth.File)}, ImportOptions{})
			if len(res.Runs) != len(truth.PerService) {
				t.Fatalf("%d runs, want one per service (%d)", len(res.Runs), len(truth.PerService))
			}
			outagesSeen := 0
			for _, run := range res.Runs {
				want, ok := truth.PerService[run.Service]
				if !ok {
					t.Errorf("run %s of service %q, which the truth does not have", run.RunID, run.Service)
					continue
				}
				seenTruth := truth
				want = asTraced(t, dir, run.Service, want)
				if failedSpansLost[filepath.Base(dir)] {
					want = carried(t, dir, run.Service, want)
				}
				if lastErrorUnreported[filepath.Base(dir)] {
					want, seenTruth = reported(t, dir, run.Service, want, truth)
				}
				if classesRedacted[filepath.Base(dir)] {
					want.FailuresPerClass = allTransient(want.FailuresPerClass)
				}
				if handoffWorkers[filepath.Base(dir)] {
					want = withoutTasks(t, dir, run.Service, want)
				}
				checkServiceTruth(t, db, run, want)
				checkAgainstOracle(t, db, run.RunID)
				outagesSeen += checkOutages(t, db, run.RunID, seenTruth)
			}
			if outagesSeen == 0 && !failedSpansLost[filepath.Base(dir)] {
				t.Errorf("no run saw an outage of the truth: the incidents were not checked")
			}
			first := int64(math.MaxInt64)
			for _, r := range truth.Runs {
				if n, err := strconv.ParseInt(r.Start, 10, 64); err == nil && r.Kind == "investigation" {
					first = min(first, n)
				}
			}
			var got time.Time
			if err := db.SQL().QueryRow("SELECT min(arrived_at) FROM investigations").Scan(&got); err != nil {
				t.Fatal(err)
			}
			// The first investigation may be one whose top span was never sent (then its
			// first recorded span starts later); allow the truth's first start and the
			// next few seconds, but never a shift to the simulated epoch.
			if d := got.UnixNano() - first; d < -int64(time.Microsecond) || d > int64(30*time.Second) {
				t.Errorf("first investigation arrives at %s, the fleet's first run began at %s", got.UTC(), time.Unix(0, first).UTC())
			}
		})
	}
}

// readFullTruth reads a fixture's truth.json whole: its records (fixturetruth.Truth) and,
// as raw, its text.
func readFullTruth(t *testing.T, dir string) fullTruth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := fixturetruth.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return fullTruth{Truth: tr, raw: b}
}

type fullTruth struct {
	fixturetruth.Truth
	raw []byte
}

// asTraced is the truth of a service as any trace carries its operations: an operation a
// trace reads as the retries of the one before it (fixturetruth.Continued) counts as part of
// that one, its episode the same episode, recovered when it succeeded; every other figure
// stands.
func asTraced(t *testing.T, dir, service string, want serviceTruth) serviceTruth {
	t.Helper()
	full := readFullTruth(t, dir)
	continued, err := full.Continued(service)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range full.Operations {
		if _, ok := continued[o.OpID]; !ok {
			continue
		}
		want.Operations--
		if o.Outcome == "succeeded" {
			want.Recovered++ // its first attempt now follows failures: the one episode recovers
		} else {
			want.Episodes-- // its own episode is the one it goes on
		}
	}
	if len(continued) > 0 {
		want.RetryAmplification = float64(want.Attempts) / float64(want.Operations)
	}
	return want
}

// handoffWorkers names the fixtures whose fleet's sub-agent is a worker agent a supervisor
// hands the conversation to (LangGraph's createSupervisor: transfer_to_researcher): a
// handoff is control flow, not a tool call, and the worker's run a step of the supervisor's
// graph, as every other worker's is; nothing in the trace marks that worker as a sub-agent
// (docs/import.md, "What a trace cannot know"). Their import is held to that: see
// withoutTasks.
var handoffWorkers = map[string]bool{"langgraph-supervisor-openinference": true}

// withoutTasks is the truth of a service as a trace of handoffs carries it: no sub-agents,
// and the Task attempts (the handoffs to the sub-agent) neither attempts nor operations.
func withoutTasks(t *testing.T, dir, service string, want serviceTruth) serviceTruth {
	t.Helper()
	full := readFullTruth(t, dir)
	ops := map[string]bool{}
	for _, a := range full.Attempts {
		if a.Service == service && a.Tool == "Task" {
			want.Attempts--
			ops[a.OpID] = true
		}
	}
	want.Operations -= len(ops)
	want.Subagents = 0
	want.RetryAmplification = float64(want.Attempts) / float64(want.Operations)
	return want
}

// allTransient is a count of failures per class as a trace that names no class carries it:
// every failure transient.
func allTransient(perClass map[string]int64) map[string]int64 {
	out, all := map[string]int64{}, int64(0)
	for class, n := range perClass {
		out[class] = 0
		all += n
	}
	out["transient"] = all
	return out
}

// carried is the truth of a service as a trace that loses every failed span carries it: the
// successful attempts, each its own operation unless a failed attempt of it was lost in
// between (then it still counts once), no failures, no episodes, no failed run.
func carried(t *testing.T, dir, service string, want serviceTruth) serviceTruth {
	t.Helper()
	full := readFullTruth(t, dir)
	ok := 0
	for _, a := range full.Attempts {
		if a.Service == service && a.Status == "ok" {
			ok++
		}
	}
	return serviceTruth{Investigations: want.Investigations, Subagents: want.Subagents, Attempts: ok, Operations: ok,
		RetryAmplification: 1, FailuresPerClass: map[string]int64{"transient": 0, "uncertain_completion": 0, "policy_violation": 0}}
}

// reported is the truth of a service as a trace that knows a failed attempt only from the
// model request reporting it carries it: the last attempt of each investigation that failed
// (its model gave up, so no request reported that attempt) is a success, which makes its
// episode recovered and its run completed; every other figure stands. An outage the trace
// sees ends, for the incident check, no later than the last failure it still carries in it.
func reported(t *testing.T, dir, service string, want serviceTruth, truth libraryTruth) (serviceTruth, libraryTruth) {
	t.Helper()
	full := readFullTruth(t, dir)
	aborted := map[string]bool{}
	for _, r := range full.Runs {
		if r.Kind == "investigation" && r.Outcome == "failed" {
			aborted[r.RunID] = true
		}
	}
	last := map[string]int{} // aborted run -> index of its last attempt
	for i, a := range full.Attempts {
		if aborted[a.RunID] && a.Service == service {
			last[a.RunID] = i
		}
	}
	unreported := map[int]bool{}
	for _, i := range last {
		if a := full.Attempts[i]; a.Status != "ok" {
			unreported[i] = true
		}
	}
	out := want
	out.Failed = 0
	out.FailuresPerClass = map[string]int64{}
	for class, n := range want.FailuresPerClass {
		out.FailuresPerClass[class] = n
	}
	for i := range unreported {
		out.FailuresPerClass[full.Attempts[i].Class]--
		out.Recovered++
	}
	seen := truth
	seen.Outages = append(seen.Outages[:0:0], truth.Outages...)
	for k, o := range seen.Outages {
		var lastFailed int64
		for i, a := range full.Attempts {
			if a.Tool == o.Tool && a.Outage && a.Status != "ok" && !unreported[i] {
				if n, err := strconv.ParseInt(a.End, 10, 64); err == nil {
					lastFailed = max(lastFailed, n)
				}
			}
		}
		if end, err := time.Parse(time.RFC3339, o.End); err == nil && lastFailed != 0 && lastFailed < end.UnixNano() {
			seen.Outages[k].End = time.Unix(0, lastFailed).UTC().Format(time.RFC3339Nano)
		}
	}
	return out, seen
}

func checkServiceTruth(t *testing.T, db *DB, run ImportedRun, want serviceTruth) {
	t.Helper()
	id := run.RunID
	n := func(q string) int64 { return queryInt(t, db, q, id) }
	if got := n("SELECT count(*) FROM investigations WHERE run_id = $1"); got != int64(want.Investigations+want.Subagents) {
		t.Errorf("%s: %d investigations, want %d runs and %d sub-agents", id, got, want.Investigations, want.Subagents)
	}
	if got := n("SELECT count(*) FROM investigations WHERE run_id = $1 AND parent_id IS NOT NULL"); got != int64(want.Subagents) {
		t.Errorf("%s: %d sub-agents, want %d", id, got, want.Subagents)
	}
	if got := n("SELECT count(*) FROM investigations WHERE run_id = $1 AND final_state = 'terminated'"); got != int64(want.Failed) {
		t.Errorf("%s: %d investigations terminated, want %d", id, got, want.Failed)
	}
	if got := n("SELECT count(*) FROM attempts WHERE run_id = $1"); got != int64(want.Attempts) {
		t.Errorf("%s: %d tool attempts, want %d", id, got, want.Attempts)
	}
	for class, c := range want.FailuresPerClass {
		if got := queryInt(t, db, "SELECT count(*) FROM attempts WHERE run_id = $1 AND failure_class = $2", id, class); got != c {
			t.Errorf("%s: %d attempts failed as %s, want %d", id, got, class, c)
		}
	}
	ops := n("SELECT count(DISTINCT op_key) FROM attempts WHERE run_id = $1")
	amp := float64(n("SELECT count(*) FROM attempts WHERE run_id = $1")) / float64(ops)
	if math.Abs(amp-want.RetryAmplification) > 0.03 {
		t.Errorf("%s: retry amplification %.4f (%d operations), want %.4f (%d) within 0.03", id, amp, ops, want.RetryAmplification, want.Operations)
	}
	var metricAmp float64
	if err := db.SQL().QueryRow("SELECT retry_amplification FROM metrics WHERE run_id = $1", id).Scan(&metricAmp); err != nil || math.Abs(metricAmp-amp) > 1e-9 {
		t.Errorf("%s: metrics.retry_amplification %v (%v), want the attempts' %v", id, metricAmp, err, amp)
	}
	rec := n("SELECT count(*) FROM recovery_episodes WHERE run_id = $1 AND outcome = 'recovered' AND tool <> 'model'")
	if d := math.Abs(float64(rec - int64(want.Recovered))); d > math.Max(1, 0.1*float64(want.Recovered)) {
		t.Errorf("%s: %d episodes recovered, want %d within 10%%", id, rec, want.Recovered)
	}
	eps := n("SELECT count(*) FROM recovery_episodes WHERE run_id = $1 AND tool <> 'model'")
	if d := math.Abs(float64(eps - int64(want.Episodes))); d > math.Max(1, 0.1*float64(want.Episodes)) {
		t.Errorf("%s: %d recovery episodes of tools, want %d within 10%%", id, eps, want.Episodes)
	}
}

// checkAgainstOracle holds an imported run's stored metrics row and derived tables, which the
// import computed by replaying its records through package metric/compute, equal to the
// oracle's SQL (derived_oracle_test.go).
func checkAgainstOracle(t *testing.T, db *DB, runID string) {
	t.Helper()
	if _, done := oracleDefined.LoadOrStore(db, true); !done {
		defineOracle(t, db)
	}
	compareDerived(t, db, runID, heldToOracle())
	want, err := oracleMetrics(db, runID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Metrics(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range MetricNames {
		g, _ := got.Value(name)
		w, _ := want.Value(name)
		if !sameMetric(g, w) {
			t.Errorf("%s: %s = %v stored, %v in the oracle", runID, name, g, w)
		}
	}
}

// checkOutages holds the incidents of an imported run to the outages its fleet lived
// through: each outage the trace saw (at least 5 failed calls of its tool inside it) is
// exactly one incident of that tool, from no more than 2 minutes before the outage began to
// no more than 3 minutes after the first call of the tool after it began, and ending no
// earlier than the outage's end and no more than 3 minutes after the first call of the tool
// after it ended (calls are a few a minute: the edges are where calls say they are).
// apiToolName is a tool's name as model APIs that allow only letters, digits, _ and -
// take it: every other character an underscore.
func apiToolName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

func checkOutages(t *testing.T, db *DB, runID string, truth libraryTruth) (seen int) {
	t.Helper()
	for _, o := range truth.Outages {
		if queryInt(t, db, "SELECT count(*) FROM calls WHERE run_id = $1 AND tool = $2", runID, o.Tool) == 0 {
			// A library whose model API allows only letters, digits, _ and - in a tool's
			// name (Anthropic's, or one that renames as the OpenAI Agents SDK does) records
			// the tool under that name.
			o.Tool = apiToolName(o.Tool)
		}
		var failedIn int64
		var firstIn, firstAfter, start, end sql.NullTime
		var n int64
		err := db.SQL().QueryRow(`SELECT
			(SELECT count(*) FROM calls WHERE run_id = $1 AND tool = $2 AND failed AND start >= $3::TIMESTAMPTZ AND start < $4::TIMESTAMPTZ),
			(SELECT min(start) FROM calls WHERE run_id = $1 AND tool = $2 AND start >= $3::TIMESTAMPTZ),
			(SELECT min(start) FROM calls WHERE run_id = $1 AND tool = $2 AND start >= $4::TIMESTAMPTZ),
			(SELECT count(*) FROM incidents WHERE run_id = $1 AND tool = $2 AND start < $4::TIMESTAMPTZ + INTERVAL 10 MINUTE AND "end" > $3::TIMESTAMPTZ),
			(SELECT min(start) FROM incidents WHERE run_id = $1 AND tool = $2 AND start < $4::TIMESTAMPTZ + INTERVAL 10 MINUTE AND "end" > $3::TIMESTAMPTZ),
			(SELECT max("end") FROM incidents WHERE run_id = $1 AND tool = $2 AND start < $4::TIMESTAMPTZ + INTERVAL 10 MINUTE AND "end" > $3::TIMESTAMPTZ)`,
			runID, o.Tool, o.Start, o.End).Scan(&failedIn, &firstIn, &firstAfter, &n, &start, &end)
		if err != nil {
			t.Fatal(err)
		}
		if failedIn < 5 {
			continue // the trace saw too little of this outage
		}
		seen++
		if n != 1 {
			t.Errorf("%s: the outage of %s from %s to %s reads as %d incidents, want 1", runID, o.Tool, o.Start, o.End, n)
			continue
		}
		os, _ := time.Parse(time.RFC3339, o.Start)
		oe, _ := time.Parse(time.RFC3339, o.End)
		if start.Time.Before(os.Add(-2*time.Minute)) || start.Time.After(firstIn.Time.Add(3*time.Minute)) {
			t.Errorf("%s: the incident of %s starts at %v, the outage at %v (the first call in it at %v)", runID, o.Tool, start.Time, os, firstIn.Time)
		}
		limit := oe.Add(3 * time.Minute)
		if firstAfter.Valid {
			limit = firstAfter.Time.Add(3 * time.Minute)
		}
		if end.Time.Before(oe) || (firstAfter.Valid && end.Time.After(limit)) {
			t.Errorf("%s: the incident of %s ends at %v, the outage at %v (the first call after it at %v)", runID, o.Tool, end.Time, oe, firstAfter.Time)
		}
	}
	return seen
}
