//go:build duckdb_arrow

package reports

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
)

// The report's queries live in sql/*.sql, one query a file, each reading the views of
// package analysis (the definitions of the metrics) for one run ($1 = run_id).
//
//go:embed sql/*.sql
var queryFiles embed.FS

func query(name string) string {
	b, err := queryFiles.ReadFile("sql/" + name + ".sql")
	if err != nil {
		panic("reports: no embedded query " + name)
	}
	return string(b)
}

// maxSamples bounds the points of the lifecycle chart per run: a 30-day run has 43,200
// minutes, far more than a chart has pixels.
const maxSamples = 1500

// slowest is how many recovery episodes the "slowest recoveries" table lists.
const slowest = 10

// Load reads what a report shows from each source: a run folder or a mayday.duckdb file,
// opened read-only. A database holding one scenario configuration (one or more seeds)
// becomes one Run; one holding several (a sweep) becomes one Run per grid point.
func Load(ctx context.Context, sources []string) ([]*Run, error) {
	return LoadProgress(ctx, sources, nil)
}

// LoadProgress is Load telling progress, when not nil, what it reads: the metrics of a
// source (one query over all its runs, the long part for a sweep), then each of its runs or
// sweep points (done of total). It only reports; nothing it is given changes what is read.
func LoadProgress(ctx context.Context, sources []string, progress func(what string, done, total int)) ([]*Run, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var runs []*Run
	for _, src := range sources {
		rs, err := loadSource(ctx, src, progress)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	labelRuns(runs, sources)
	return runs, nil
}

// DBPath turns a run folder or a database file into the database's path.
func DBPath(source string) (string, error) {
	st, err := os.Stat(source)
	if err != nil {
		return "", fmt.Errorf("%s: no run folder or database there", source)
	}
	if !st.IsDir() {
		return source, nil
	}
	p := filepath.Join(source, analysis.DBFile)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: a folder, but not a run folder (no %s inside)", source, analysis.DBFile)
	}
	return p, nil
}

type storedRun struct {
	SeedInfo
	scenario, hash, description string
	config                      string // runs.config, JSON
	point                       int    // sweep grid point, -1 outside a sweep
	params                      []string
	unknown                     map[string]string // imported run: metric -> why its trace cannot give it
}

// sharedViews are the views that more than one of a report's queries read (directly or
// through another view), in creation order: computed once per source (analysis Share). The
// rest of what a report reads (incidents, tool_minutes, tool_stats, recovery_episodes,
// recovery_curve, lifecycle, ...) is stored with each run.
var sharedViews = []string{"run_clock"}

// readMemory is DuckDB's memory limit while a report reads a database: the report's own
// tables and charts live in Go beside it, and the whole command stays under 1 GiB on a
// million-investigation run (1.26 GB at Open's default of 1 GiB, 0.78 GB at this limit;
// docs/performance.md). A query that needs more spills to disk.
const readMemory = "512MiB"

func loadSource(ctx context.Context, src string, progress func(what string, done, total int)) ([]*Run, error) {
	path, err := DBPath(src)
	if err != nil {
		return nil, err
	}
	db, err := analysis.OpenLimited(path, analysis.Limits{Memory: readMemory})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	defer db.Close()
	ctx, cancel := db.Limit(ctx)
	defer cancel()
	q := db.SQL()
	stored, err := readRuns(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(stored) == 0 {
		return nil, fmt.Errorf("%s: the database holds no run", path)
	}
	// One read of the metrics view for every run: with a sweep's many runs, far cheaper
	// than one read per run.
	progress(fmt.Sprintf("computing the metrics of %s (%d runs)", src, len(stored)), 0, 0)
	all, err := db.AllMetrics(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	metrics := map[string]analysis.Metrics{}
	for _, m := range all {
		metrics[m.RunID] = m
	}
	var out []*Run
	groups := groupRuns(stored)
	labels := pointLabels(groups)
	// The detail of a configuration is its first seed's: compute the views that several
	// of its tables read once, for those runs only.
	firsts := make([]string, len(groups))
	for i, g := range groups {
		firsts[i] = g[0].RunID
	}
	progress("reading the runs of "+src, 0, len(groups))
	if err := db.Share(ctx, firsts, sharedViews...); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, group := range groups {
		progress("reading the runs of "+src, i, len(groups))
		r, err := loadRun(ctx, db, src, group, metrics)
		if err != nil {
			return nil, fmt.Errorf("%s: run %s: %w", path, group[0].RunID, err)
		}
		r.Label = labels[i]
		if group[0].point >= 0 {
			r.Point = "p" + strconv.Itoa(group[0].point)
		}
		out = append(out, r)
	}
	return out, nil
}

// pointLabels names the grid points of a sweep by the values that tell them apart:
// "p1 recovery.retry.max_attempts=5", leaving out the values every point shares. Groups that
// are not sweep points get "" (labelRuns names them).
func pointLabels(groups [][]storedRun) []string {
	labels := make([]string, len(groups))
	shared := func(param string) bool {
		for _, g := range groups {
			if !slices.Contains(g[0].params, param) {
				return false
			}
		}
		return len(groups) > 1
	}
	for i, g := range groups {
		if g[0].point < 0 {
			continue
		}
		parts := []string{"p" + strconv.Itoa(g[0].point)}
		for _, p := range g[0].params {
			if !shared(p) {
				parts = append(parts, p)
			}
		}
		labels[i] = strings.Join(parts, " ")
	}
	return labels
}

func readRuns(ctx context.Context, q *sql.DB) ([]storedRun, error) {
	var tables []string
	err := each(ctx, q, "tables", nil, func(rows *sql.Rows) error {
		var name string
		err := rows.Scan(&name)
		tables = append(tables, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(tables, "runs") {
		return nil, errNotMayday
	}
	var runs []storedRun
	err = each(ctx, q, "runs", nil, func(rows *sql.Rows) error {
		var s storedRun
		s.point = -1
		var unknown string
		if err := rows.Scan(&s.RunID, &s.scenario, &s.Seed, &s.hash, &s.Status, &s.Digest, &s.description, &unknown, &s.config); err != nil {
			return err
		}
		if unknown != "" {
			if err := json.Unmarshal([]byte(unknown), &s.unknown); err != nil {
				return fmt.Errorf("run %s: runs.config $.import.unknown: %w", s.RunID, err)
			}
		}
		if err := analysis.CheckRunID(s.RunID); err != nil {
			return err
		}
		runs = append(runs, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(tables, "sweep_params") {
		return runs, nil
	}
	byID := map[string]int{}
	for i, r := range runs {
		byID[r.RunID] = i
	}
	err = each(ctx, q, "sweep", nil, func(rows *sql.Rows) error {
		var id, path, value string
		var point int
		if err := rows.Scan(&id, &point, &path, &value); err != nil {
			return err
		}
		if i, ok := byID[id]; ok {
			runs[i].point = point
			runs[i].params = append(runs[i].params, path+"="+value)
		}
		return nil
	})
	// A sweep commits its runs in the order they finish; the report shows them in grid order.
	analysis.GridOrder(runs, func(r storedRun) (int, uint64, string) { return r.point, r.Seed, r.RunID })
	return runs, err
}

// groupRuns puts the seeds of one configuration together: runs of one sweep grid point, or
// else runs with the same scenario and configuration hash. Groups keep the stored order.
func groupRuns(runs []storedRun) [][]storedRun {
	var groups [][]storedRun
	key := func(r storedRun) string {
		if r.point >= 0 {
			return "p" + strconv.Itoa(r.point)
		}
		return r.scenario + "\x00" + r.hash
	}
	index := map[string]int{}
	for _, r := range runs {
		k := key(r)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b storedRun) int {
			switch {
			case a.Seed < b.Seed:
				return -1
			case a.Seed > b.Seed:
				return 1
			}
			return 0
		})
	}
	return groups
}

// loadRun reads one configuration: every seed's metrics, and the first seed's details.
func loadRun(ctx context.Context, db *analysis.DB, src string, group []storedRun, metrics map[string]analysis.Metrics) (*Run, error) {
	first := group[0]
	r := &Run{Source: src, Scenario: first.scenario, Description: honestDescription(first.scenario, first.description, first.config), Unknown: first.unknown}
	ms := make([]analysis.Metrics, len(group))
	for i, s := range group {
		r.Seeds = append(r.Seeds, s.SeedInfo)
		m, ok := metrics[s.RunID]
		if !ok {
			return nil, fmt.Errorf("no metrics row for run %s", s.RunID)
		}
		ms[i] = m
	}
	// One query at a time: DuckDB already spreads each over the cores, and running them
	// side by side was measured to cost more CPU for no faster report.
	id := first.RunID
	q := db.SQL()
	for _, load := range []func(context.Context, *sql.DB, string, *Run) error{
		loadStates, loadFaults, loadFailures, loadIncidents, loadGuards, loadEpisodes, loadTools, loadRefusals, loadWaste,
	} {
		if err := load(ctx, q, id, r); err != nil {
			return nil, err
		}
	}
	reasons := map[string]int64{}
	for _, m := range ms {
		for k, v := range m.TerminationReasons {
			reasons[k] += v
		}
	}
	r.Metrics = metricRows(ms, first.Seed)
	markUnknown(r.Metrics, r.Unknown)
	for _, k := range sortedKeys(reasons) {
		r.Terminations = append(r.Terminations, Count{Key: k, N: reasons[k]})
	}
	slices.SortStableFunc(r.Terminations, func(a, b Count) int { return cmp.Compare(b.N, a.N) })
	r.Makespan = ms[0].Get("makespan")
	setCost(r, ms[0])
	return r, nil
}

// metricRows turns the seeds' metrics rows into the table's cells: the value itself for one
// seed; for several, the mean and the interval of MetricCI (the one run, check, sweep and
// compare use), with the same seed, so a report and the run folder's summary.json agree.
func metricRows(ms []analysis.Metrics, seed uint64) []Metric {
	out := make([]Metric, 0, len(analysis.MetricNames))
	currency := ""
	if len(ms) > 0 {
		currency = ms[0].Currency
	}
	for _, name := range analysis.MetricNames {
		var vals []float64
		for _, m := range ms {
			if v, ok := m.Value(name); ok {
				vals = append(vals, v)
			}
		}
		m := Metric{Name: name, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(vals)}
		switch {
		case len(ms) == 1 && len(vals) == 1:
			m.Value = vals[0]
		case len(vals) > 0:
			m.Value, m.Lo, m.Hi = MetricCI(name, vals, seed)
			m.Range = "[" + metric.FormatMoney(name, m.Lo, currency) + ", " + metric.FormatMoney(name, m.Hi, currency) + "]"
		}
		m.Text = metric.FormatMoney(name, m.Value, currency)
		out = append(out, m)
	}
	return out
}

// NotRecorded is how a report shows a metric that the run's trace cannot give (an imported
// run's NULL): unknown, which is not the same as undefined ("n/a", a zero denominator).
const NotRecorded = "not recorded"

// ImportUnknown reads the metrics the trace of each run in runIDs cannot give (runs
// imported with mayday import; none for a simulated run), metric -> why, over all of them.
func ImportUnknown(ctx context.Context, q *sql.DB, runIDs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, id := range runIDs {
		var js sql.NullString
		err := q.QueryRowContext(ctx, "SELECT CASE WHEN json_valid(config) THEN CAST(json_extract(config, '$.import.unknown') AS VARCHAR) END FROM runs WHERE run_id = $1", id).Scan(&js)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		if !js.Valid || js.String == "" {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(js.String), &m); err != nil {
			return nil, fmt.Errorf("run %s: runs.config $.import.unknown: %w", id, err)
		}
		maps.Copy(out, m)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// markUnknown shows the metrics in unknown that have no value as not recorded.
func markUnknown(ms []Metric, unknown map[string]string) {
	for i, m := range ms {
		if _, ok := unknown[m.Name]; ok && m.N == 0 {
			ms[i].Text = NotRecorded
		}
	}
}

func loadStates(ctx context.Context, q *sql.DB, id string, r *Run) error {
	states := []string{"pending", "running", "waiting", "recovering", "awaiting_human", "completed", "terminated"}
	var minutes []int64
	counts := make([][]float64, len(states))
	err := each(ctx, q, "lifecycle", []any{id}, func(rows *sql.Rows) error {
		var m int64
		v := make([]float64, len(states))
		dest := []any{&m}
		for i := range v {
			dest = append(dest, &v[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		minutes = append(minutes, m)
		for i := range v {
			counts[i] = append(counts[i], v[i])
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Keep every k-th minute, and the last; the counts are levels at the end of each
	// minute, so sampling them (rather than averaging) keeps every drawn value true.
	k := (len(minutes) + maxSamples - 1) / maxSamples
	s := StateSeries{Step: 60 * float64(max(1, k)), States: states, Counts: make([][]float64, len(states))}
	for j, m := range minutes {
		if k > 1 && (j+1)%k != 0 && j != len(minutes)-1 {
			continue
		}
		s.Times = append(s.Times, float64(m+1)*60)
		for i := range states {
			s.Counts[i] = append(s.Counts[i], counts[i][j])
		}
	}
	r.States = s
	return nil
}

func loadFaults(ctx context.Context, q *sql.DB, id string, r *Run) error {
	return each(ctx, q, "faults", []any{id}, func(rows *sql.Rows) error {
		var fid, kind, tool string
		var w Window
		if err := rows.Scan(&fid, &kind, &tool, &w.Start, &w.End); err != nil {
			return err
		}
		w.Tool = tool
		w.Label = strings.TrimSpace(fid + ": " + kind + " " + tool)
		r.Faults = append(r.Faults, w)
		return nil
	})
}

func loadFailures(ctx context.Context, q *sql.DB, id string, r *Run) error {
	var minutes int64
	var makespan float64
	if err := q.QueryRowContext(ctx, query("clock"), id).Scan(&minutes, &makespan); err != nil {
		return fmt.Errorf("query clock: %w", err)
	}
	var cur *ToolSeries
	err := each(ctx, q, "failures", []any{id}, func(rows *sql.Rows) error {
		var tool string
		var m, n int64
		if err := rows.Scan(&tool, &m, &n); err != nil {
			return err
		}
		if cur == nil || cur.Tool != tool {
			// Every minute of the run gets a point; minutes without traffic stay zero.
			r.Failures = append(r.Failures, ToolSeries{Tool: tool, Times: make([]float64, minutes), Values: make([]float64, minutes)})
			cur = &r.Failures[len(r.Failures)-1]
			for i := range cur.Times {
				cur.Times[i] = float64(i) * 60
			}
		}
		if m >= 0 && m < minutes {
			cur.Values[m] = float64(n)
		}
		return nil
	})
	r.Failures = slices.DeleteFunc(r.Failures, func(s ToolSeries) bool { return maxOf(s.Values) == 0 })
	return err
}

func loadIncidents(ctx context.Context, q *sql.DB, id string, r *Run) error {
	return each(ctx, q, "incidents", []any{id}, func(rows *sql.Rows) error {
		var in Incident
		var faults sql.NullString
		if err := rows.Scan(&in.Tool, &in.Start, &in.End, &in.FailedAttempts, &in.Affected, &in.Retries, &faults); err != nil {
			return err
		}
		in.Faults = faults.String
		r.Incidents = append(r.Incidents, in)
		return nil
	})
}

func loadGuards(ctx context.Context, q *sql.DB, id string, r *Run) error {
	var cur *GuardSeries
	var prev float64
	var openSince = math.NaN()
	closeOpen := func(at float64) {
		if cur != nil && !math.IsNaN(openSince) {
			cur.Open = append(cur.Open, Window{Tool: cur.Tool, Start: openSince, End: at})
		}
		openSince = math.NaN()
	}
	err := each(ctx, q, "guards", []any{id}, func(rows *sql.Rows) error {
		var tool, breaker string
		var at, tokens float64
		var retries, failures int64
		if err := rows.Scan(&tool, &at, &retries, &tokens, &breaker, &failures); err != nil {
			return err
		}
		if cur == nil || cur.Tool != tool {
			if cur != nil {
				closeOpen(prev)
			}
			r.Guards = append(r.Guards, GuardSeries{Tool: tool})
			cur = &r.Guards[len(r.Guards)-1]
			prev = 0
		}
		// A sample counts retries since the previous one; dividing by the interval gives a
		// rate per minute even when samples are not exactly a minute apart.
		rate := float64(retries)
		if dt := at - prev; dt > 0 {
			rate = float64(retries) * 60 / dt
		}
		cur.Times = append(cur.Times, at)
		cur.Retries = append(cur.Retries, rate)
		if tokens >= 0 {
			cur.Tokens = append(cur.Tokens, tokens)
		}
		cur.Failures += failures
		// The breaker's state is known at each sample; an open breaker is drawn from the
		// first sample that saw it open to the first that saw it otherwise.
		if breaker == "open" && math.IsNaN(openSince) {
			openSince = at
		} else if breaker != "open" {
			closeOpen(at)
		}
		prev = at
		return nil
	})
	closeOpen(prev)
	for i := range r.Guards {
		// A budget that is on reports tokens at every sample; partial token series (never
		// expected) are dropped rather than drawn against the wrong times.
		if g := &r.Guards[i]; len(g.Tokens) != len(g.Times) {
			g.Tokens = nil
		}
	}
	return err
}

func loadEpisodes(ctx context.Context, q *sql.DB, id string, r *Run) error {
	var desc []float64
	err := each(ctx, q, "episodes", []any{id}, func(rows *sql.Rows) error {
		var e Episode
		var tool, key sql.NullString
		if err := rows.Scan(&e.InvestigationID, &e.RootID, &tool, &key, &e.Start, &e.Seconds, &e.Outcome, &e.FailedAttempts); err != nil {
			return err
		}
		e.Tool, e.OpKey = tool.String, key.String
		desc = append(desc, e.Seconds)
		if len(r.Slowest) < slowest {
			r.Slowest = append(r.Slowest, e)
		}
		return nil
	})
	slices.Reverse(desc)
	r.Recovery = desc
	if err != nil {
		return err
	}
	return each(ctx, q, "recovery_curve", []any{id}, func(rows *sql.Rows) error {
		var p CurvePoint
		if err := rows.Scan(&p.Seconds, &p.Share); err != nil {
			return err
		}
		r.RecoveryCurve = append(r.RecoveryCurve, p)
		return nil
	})
}

func loadTools(ctx context.Context, q *sql.DB, id string, r *Run) error {
	return each(ctx, q, "tool_stats", []any{id}, func(rows *sql.Rows) error {
		var t ToolStat
		var amp, med sql.NullFloat64
		if err := rows.Scan(&t.Tool, &t.Operations, &t.Attempts, &amp, &t.Errors, &t.Timeouts, &t.Duplicates, &t.Discarded, &t.Incidents, &med); err != nil {
			return err
		}
		t.Amplification, t.MedianRecover = nullNaN(amp), nullNaN(med)
		r.Tools = append(r.Tools, t)
		return nil
	})
}

// loadWaste reads how the charted seed's compute was wasted, in compute-unit seconds;
// setCost turns it into the cost per completed investigation.
func loadWaste(ctx context.Context, q *sql.DB, id string, r *Run) error {
	var total float64
	k := &r.Cost
	if err := q.QueryRowContext(ctx, query("waste"), id).Scan(&total, &k.Duplicate, &k.Discarded, &k.Incomplete); err != nil {
		return fmt.Errorf("query waste: %w", err)
	}
	return nil
}

// setCost takes the charted seed's cost metrics and divides the wasted compute by the same
// completions as compute_per_completion, so that the parts add up to it.
func setCost(r *Run, m analysis.Metrics) {
	k := &r.Cost
	k.Tokens, k.Compute, k.Wasted = m.Get("tokens_per_completion"), m.Get("compute_per_completion"), m.Get("wasted_compute_ratio")
	completed := m.Get("completed")
	if completed == 0 {
		k.Duplicate, k.Discarded, k.Incomplete = math.NaN(), math.NaN(), math.NaN()
		return
	}
	k.Duplicate /= completed
	k.Discarded /= completed
	k.Incomplete /= completed
}

func loadRefusals(ctx context.Context, q *sql.DB, id string, r *Run) error {
	return each(ctx, q, "refusals", []any{id}, func(rows *sql.Rows) error {
		var x Refusal
		if err := rows.Scan(&x.State, &x.Action, &x.Reason, &x.N, &x.Example); err != nil {
			return err
		}
		r.Refusals = append(r.Refusals, x)
		return nil
	})
}

// each runs the named query and calls fn for every row.
func each(ctx context.Context, q *sql.DB, name string, args []any, fn func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query(name), args...)
	if err != nil {
		return fmt.Errorf("query %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("query %s: %w", name, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query %s: %w", name, err)
	}
	return nil
}

func nullNaN(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// labelRuns names each run for table headers and legends: the source's folder name, made
// unique by adding parent folders while two sources share it; a source with several
// configurations (a sweep) adds each one's grid point, or its first run id.
func labelRuns(runs []*Run, sources []string) {
	depth := 1
	names := func() map[string]string {
		m := map[string]string{}
		for _, s := range sources {
			m[s] = sourceName(s, depth)
		}
		return m
	}
	m := names()
	for depth < 8 && hasDuplicate(m, sources) {
		depth++
		m = names()
	}
	perSource := map[string]int{}
	for _, r := range runs {
		perSource[r.Source]++
	}
	for _, r := range runs {
		base := m[r.Source]
		switch {
		case perSource[r.Source] == 1:
			r.Label = base
		case r.Label != "": // a sweep's grid point
			if len(sources) > 1 {
				r.Label = base + " " + r.Label
			}
		default:
			r.Label = base + " " + r.Seeds[0].RunID
		}
	}
	// Whatever remains equal (the same source given twice) is numbered.
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Label]++
		if n := seen[r.Label]; n > 1 {
			r.Label += " (" + strconv.Itoa(n) + ")"
		}
	}
	// Legends and column headers need short names: a long label (a sweep point's values,
	// a deep path) is keyed by its grid point, or else by its position.
	keys := map[string]bool{}
	for _, r := range runs {
		keys[r.Label] = true
	}
	for i, r := range runs {
		if len([]rune(r.Label)) <= maxKey {
			continue
		}
		key := r.Point
		if key != "" && len(sources) > 1 {
			key = m[r.Source] + " " + key
		}
		if key == "" || len([]rune(key)) > maxKey || keys[key] {
			key = "run " + strconv.Itoa(i+1)
		}
		keys[key] = true
		r.Key = key
	}
}

// maxKey is the longest run label used as is in legends and column headers.
const maxKey = 24

// sourceName is the last depth elements of a source's folder path.
func sourceName(src string, depth int) string {
	parts := strings.Split(filepath.ToSlash(folderOf(src)), "/")
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	if len(parts) == 0 {
		return "/"
	}
	return strings.Join(parts[max(0, len(parts)-depth):], "/")
}

// folderOf is the absolute path of a source's folder: the run folder, or the folder holding
// the database file.
func folderOf(src string) string {
	p := filepath.Clean(src)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		p = filepath.Dir(p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// hasDuplicate reports whether two different folders have the same name in m.
func hasDuplicate(m map[string]string, sources []string) bool {
	seen := map[string]string{}
	for _, s := range sources {
		if other, ok := seen[m[s]]; ok && folderOf(other) != folderOf(s) {
			return true
		}
		seen[m[s]] = s
	}
	return false
}

var (
	errNoRuns    = errors.New("reports: no run given")
	errNotMayday = errors.New("not a mayday database: it has no runs table; give a run folder, a sweep folder or the mayday.duckdb inside one")
)

// Generate loads the sources and writes their report into dir.
func Generate(ctx context.Context, sources []string, dir, version string) (Files, error) {
	if len(sources) == 0 {
		return Files{}, errNoRuns
	}
	runs, err := Load(ctx, sources)
	if err != nil {
		return Files{}, err
	}
	return New(runs, version).Write(dir)
}
