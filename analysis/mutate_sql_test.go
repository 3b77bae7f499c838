//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// viewCase is a dataset and the check of the views on it against an independent
// computation (the Go reference, or numbers worked out by hand). Its tests run it on a
// fresh database; the mutation harness (TestViewMutants) loads every case once and runs
// every check against each mutant of the view SQL.
type viewCase struct {
	name  string
	load  func(t testing.TB, db *DB) // loads the case's runs (run ids unique across cases)
	check func(t testing.TB, db *DB)
}

func runViewCase(t *testing.T, c viewCase) {
	t.Helper()
	db := openTestDB(t)
	c.load(t, db)
	c.check(t, db)
}

// viewCases lists every case the mutation harness runs, the small hand-built ones first (a
// mutant is killed by the first check that fails). With MAYDAY_MUTATE_SQL_SIMULATED set,
// larger simulations of three embedded scenarios are checked too (slower).
func viewCases() []viewCase {
	cases := append(thresholdCases(), runClockCase(), treesCase(), edgeModelCase())
	cases = append(cases, episodesCase, guardedCase, goodputCase, tokensCase, spanAttributesCase(), referenceCase(), lifecycleCase(), moneyCase(), oddRowsCase())
	// Two small simulations whose records hold what the hand-built datasets lack:
	// takeovers after crashes, parks on an open breaker and retries throttled by the budget.
	cases = append(cases, simulatedCase("worker-crashes", []string{"workload.investigations=60"}),
		simulatedCase("shared-outage", []string{"workload.investigations=150", "workload.arrival={uniform: 2h}"}))
	if os.Getenv("MAYDAY_MUTATE_SQL_SIMULATED") == "" {
		return cases
	}
	for _, s := range []struct {
		scenario string
		sets     []string
	}{
		{"research-fleet", []string{"workload.investigations=200", "workload.arrival={uniform: 90m}"}},
		{"shared-outage", []string{"workload.investigations=300"}},
		{"lost-responses", []string{"workload.investigations=150", "horizon=40m", "recovery.inspect_before_retry=false"}},
	} {
		cases = append(cases, simulatedCase(s.scenario, s.sets))
	}
	return cases
}

// referenceCase: the synthetic runs of TestMetricsMatchReference against the reference.
func referenceCase() viewCase {
	mixed, flat, idle := synthMixed(11, 400, true), synthFlat(), synthIdle()
	var runs []refRun
	return viewCase{name: "synthetic reference runs", load: func(t testing.TB, db *DB) {
		runs = []refRun{loadSynth(t, db, "mixed", mixed, 123456), loadSynth(t, db, "flat", flat, 999), loadSynth(t, db, "idle", idle, 3)}
	}, check: func(t testing.TB, db *DB) {
		for i, s := range []*synth{mixed, flat, idle} {
			checkRun(t, db, runs[i], s)
		}
	}}
}

// simulatedCase: a small run of an embedded scenario (seed 1) against the reference.
func simulatedCase(name string, sets []string) viewCase {
	var c record.Collector
	var run refRun
	return viewCase{name: "simulated " + name, load: func(t testing.TB, db *DB) {
		sc, err := scenarios.Load(name, sets)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run = refRun{ID: RunID(sc.Name, 1), Events: res.Events, SideEffects: map[string]bool{}}
		for _, tool := range sc.Tools {
			run.SideEffects[tool.Name] = tool.Idempotency != scenarios.Natural
		}
		if err := LoadCollector(db, run.ID, &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
			ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}, check: func(t testing.TB, db *DB) { checkRunRecords(t, db, run, &c) }}
}

// mutantTB records the first failure of a check and stops it.
type mutantTB struct {
	testing.TB
	failure string
}

type stopCheck struct{}

func (m *mutantTB) fail(s string) {
	if m.failure == "" {
		m.failure = s
	}
	panic(stopCheck{})
}

func (m *mutantTB) Helper()                        {}
func (m *mutantTB) Log(...any)                     {}
func (m *mutantTB) Logf(string, ...any)            {}
func (m *mutantTB) Error(a ...any)                 { m.fail(fmt.Sprint(a...)) }
func (m *mutantTB) Errorf(format string, a ...any) { m.fail(fmt.Sprintf(format, a...)) }
func (m *mutantTB) Fatal(a ...any)                 { m.fail(fmt.Sprint(a...)) }
func (m *mutantTB) Fatalf(format string, a ...any) { m.fail(fmt.Sprintf(format, a...)) }
func (m *mutantTB) Fail()                          { m.fail("failed") }
func (m *mutantTB) FailNow()                       { m.fail("failed") }
func (m *mutantTB) Failed() bool                   { return m.failure != "" }
func (m *mutantTB) Skip(...any)                    { m.fail("skipped") }
func (m *mutantTB) Skipf(string, ...any)           { m.fail("skipped") }

// runCheck runs one check against the views as they are and returns its first failure.
func runCheck(t testing.TB, c viewCase, db *DB) (failure string) {
	m := &mutantTB{TB: t}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopCheck); !ok {
				failure = fmt.Sprint("panic: ", r)
				return
			}
			failure = m.failure
		}
	}()
	c.check(m, db)
	return m.failure
}

// recomputedView is the oracle's view of the metrics row (testdata/oracle/12_metrics_recomputed.sql).
const recomputedView = "metrics_recomputed"

// createViews defines the views from files (one of them possibly mutated), metrics_recomputed
// as one statement over them (composedView) as CreateViews does, and the metrics view over
// it: the harness's database recomputes its metrics (recomputing).
func createViews(db *DB, files []viewFile) error {
	for _, f := range files {
		if _, err := db.SQL().Exec(f.sql); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := composeMetrics(db, files); err != nil {
		return err
	}
	_, err := db.SQL().Exec("CREATE OR REPLACE VIEW metrics AS SELECT * FROM " + recomputedView)
	return err
}

// composeMetrics redefines metrics_recomputed as one statement over files, the view files
// whose views are views (not tables) now, when it is one of them.
func composeMetrics(db *DB, files []viewFile) error {
	if !slices.ContainsFunc(files, func(f viewFile) bool { return f.view == recomputedView }) {
		return nil
	}
	if _, err := db.SQL().Exec(composedView(files, recomputedView)); err != nil {
		return fmt.Errorf("metrics_recomputed as one statement: %w", err)
	}
	return nil
}

// recomputing defines db's views again before the harness mutates them. (The metrics are
// stored rows computed in Go now; the harness's createViews points the metrics view at the
// SQL it mutates.)
func recomputing(t testing.TB, db *DB) {
	t.Helper()
	if err := db.CreateViews(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// harnessFiles is the view files whose mutants the harness runs: all but the metrics view's,
// which in the harness's database reads metrics_recomputed (createViews).
func harnessFiles() []viewFile {
	return slices.DeleteFunc(viewSQL(), func(f viewFile) bool { return f.view == "metrics" })
}

// withFile returns files with file f's SQL replaced by sql.
func withFile(files []viewFile, f viewFile, sql string) []viewFile {
	out := slices.Clone(files)
	for i := range out {
		if out[i].name == f.name {
			out[i].sql = sql
		}
	}
	return out
}

// killMutant defines the view of file f, one of files (those whose views are views now),
// from a mutant's SQL and runs the cases' checks in the order given until one fails; it
// returns that failure ("" when every check passed) and whether the SQL defined the view at
// all. A view is bound by name when it is queried, so only f's view is replaced, and the
// metrics view, which holds the text of the views it reads (composedView), is redefined
// with the mutant's; both are restored afterwards. The case that kills a mutant moves to
// the front of order: neighbouring mutants tend to fall to the same check, so survivors
// alone pay for every case, and which mutants die does not depend on the order.
func killMutant(t testing.TB, db *DB, cases []viewCase, order []int, files []viewFile, f viewFile, sql string) (failure string, valid bool) {
	defer func() {
		if _, err := db.SQL().Exec(f.sql); err != nil {
			t.Fatalf("%s: restoring the view: %v", f.name, err)
		}
		if err := composeMetrics(db, files); err != nil {
			t.Fatalf("%s: restoring the metrics view: %v", f.name, err)
		}
	}()
	if _, err := db.SQL().Exec(sql); err != nil {
		return "", false
	}
	if err := composeMetrics(db, withFile(files, f, sql)); err != nil {
		return "", false
	}
	for k, i := range order {
		if failure = runCheck(t, cases[i], db); failure != "" {
			copy(order[1:k+1], order[:k])
			order[0] = i
			return failure, true
		}
	}
	return "", true
}

// materialize replaces file f's view by a table of its rows; later are the files after it,
// whose views are still views. The files are in dependency order (a view reads only views
// of earlier files: TestViewFilesInDependencyOrder), so once f's mutants are done its rows
// are what every later mutant must see, and a query of a later view no longer recomputes
// f's: the harness's queries get much cheaper as it goes. The metrics view is redefined
// over the later files, so that it too reads the table.
func materialize(t testing.TB, db *DB, f viewFile, later []viewFile) {
	for _, q := range []string{
		`CREATE TABLE mutate_materialized AS SELECT * FROM ` + f.view,
		`DROP VIEW ` + f.view,
		`ALTER TABLE mutate_materialized RENAME TO ` + f.view,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("%s: materializing %s: %v", f.name, f.view, err)
		}
	}
	if err := composeMetrics(db, later); err != nil {
		t.Fatalf("%s: materializing %s: %v", f.name, f.view, err)
	}
}

// equivalentMutants reads testdata/sql-mutants-equivalent.txt: a mutant's key (file |
// change | its line) on a line of its own, then the reason it cannot change any result,
// indented.
func equivalentMutants(t testing.TB) map[string]string {
	b, err := os.ReadFile("testdata/sql-mutants-equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	key := ""
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, " "):
			if key == "" {
				t.Fatalf("sql-mutants-equivalent.txt:%d: a reason without a mutant", i+1)
			}
			out[key] = strings.TrimSpace(out[key] + " " + strings.TrimSpace(line))
		default:
			key = strings.TrimSpace(line)
			out[key] = ""
		}
	}
	for k, why := range out {
		if why == "" {
			t.Fatalf("sql-mutants-equivalent.txt: %q has no reason", k)
		}
	}
	return out
}

// TestViewMutants is the mutation harness of the metric SQL (make mutate-sql): with
// MAYDAY_MUTATE_SQL naming a report file, it mutates the view files one change at a time
// (sqlMutants), runs every viewCase's check against each mutant, and writes the report:
// mutants killed, survivors, the equivalent ones with their reasons, and the invalid ones
// (SQL that does not define the view). It fails below 90% of the non-equivalent valid
// mutants killed, or when the list of equivalents names a mutant that no longer exists or
// is killed.
func TestViewMutants(t *testing.T) {
	report := os.Getenv("MAYDAY_MUTATE_SQL")
	if report == "" {
		t.Skip("set MAYDAY_MUTATE_SQL to a report file (make mutate-sql)")
	}
	started := time.Now()
	db := openTestDB(t)
	recomputing(t, db)
	cases := viewCases()
	// MAYDAY_MUTATE_SQL_CASES keeps only the cases whose names contain one of its
	// comma-separated parts: a quick look at one file's mutants against the datasets meant
	// for it. Fewer cases can only kill fewer mutants, so its survivors are candidates only.
	if keep := os.Getenv("MAYDAY_MUTATE_SQL_CASES"); keep != "" {
		cases = slices.DeleteFunc(cases, func(c viewCase) bool {
			return !slices.ContainsFunc(strings.Split(keep, ","), func(p string) bool { return strings.Contains(c.name, p) })
		})
	}
	for _, c := range cases {
		c.load(t, db)
		if f := runCheck(t, c, db); f != "" {
			t.Fatalf("%s fails on the views as they are: %s", c.name, f)
		}
	}
	equivalent := equivalentMutants(t)
	files := harnessFiles()
	var killed, lived, equiv, invalid []string
	seen := map[string]bool{}
	only := os.Getenv("MAYDAY_MUTATE_SQL_FILE") // view files (names or parts, comma-separated)
	order := make([]int, len(cases))            // the cases in the order they are tried (see killMutant)
	for i := range order {
		order[i] = i
	}
	for i, f := range files {
		// Every file before f is a table by now (materialize): its mutants are done.
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(p string) bool { return strings.Contains(f.name, p) }) {
			materialize(t, db, f, files[i+1:])
			continue
		}
		for _, m := range sqlMutants(f.name, f.sql) {
			seen[m.key()] = true
			failure, valid := killMutant(t, db, cases, order, files[i:], f, m.sql)
			if !valid {
				invalid = append(invalid, m.String())
				continue
			}
			if os.Getenv("MAYDAY_MUTATE_SQL_VERBOSE") != "" {
				fmt.Fprintf(os.Stderr, "%s: %.100s\n", m, cmp.Or(failure, "LIVED"))
			}
			why, isEquiv := equivalent[m.key()]
			switch {
			case failure != "" && isEquiv:
				t.Errorf("listed as equivalent but killed: %s (%s)", m, failure)
				killed = append(killed, m.String())
			case failure != "":
				killed = append(killed, m.String())
			case isEquiv:
				equiv = append(equiv, m.String()+"\n    "+why)
			default:
				lived = append(lived, m.String())
			}
		}
		materialize(t, db, f, files[i+1:])
	}
	for _, f := range files {
		if _, err := db.SQL().Exec(`DROP TABLE ` + f.view); err != nil {
			t.Fatal(err)
		}
	}
	if err := createViews(db, files); err != nil {
		t.Fatal(err)
	}
	for k := range equivalent {
		if !seen[k] && only == "" {
			t.Errorf("sql-mutants-equivalent.txt lists a mutant that no longer exists: %s", k)
		}
	}
	score := float64(len(killed)) / float64(len(killed)+len(lived))
	var b strings.Builder
	fmt.Fprintf(&b, "SQL view mutants (%d cases, %s): %d killed, %d lived, %d equivalent, %d invalid\n",
		len(cases), time.Since(started).Round(time.Second), len(killed), len(lived), len(equiv), len(invalid))
	fmt.Fprintf(&b, "killed / (killed + lived) = %.1f%%\n", 100*score)
	for _, sec := range []struct {
		title string
		list  []string
	}{{"lived", lived}, {"equivalent", equiv}, {"invalid", invalid}} {
		fmt.Fprintf(&b, "\n%s (%d):\n", sec.title, len(sec.list))
		for _, l := range sec.list {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if err := os.WriteFile(report, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(b.String())
	if score < 0.9 {
		t.Errorf("%.1f%% of the SQL mutants killed, want at least 90%%", 100*score)
	}
}

// TestViewFilesInDependencyOrder: no view file reads a view of a later file, which the
// mutation harness relies on (materialize).
func TestViewFilesInDependencyOrder(t *testing.T) {
	files := viewSQL()
	for i, f := range files {
		for _, later := range files[i+1:] {
			if regexp.MustCompile(`\b` + later.view + `\b`).MatchString(stripSQLComments(f.sql)) {
				t.Errorf("%s reads %s, defined later in %s", f.name, later.view, later.name)
			}
		}
	}
}

// stripSQLComments drops -- comments.
func stripSQLComments(sql string) string {
	return regexp.MustCompile(`--[^\n]*`).ReplaceAllString(sql, "")
}

// TestSQLMutantGenerator pins the mutants of a small view: each kind of change, and none
// inside a comment, a string or a quoted name.
func TestSQLMutantGenerator(t *testing.T) {
	sql := `-- a comment: x < 1 AND median(y)
CREATE OR REPLACE VIEW v AS
SELECT run_id, median(x) AS m, count(DISTINCT k) AS n, "end" >= 0.9 * b AS ok
FROM t JOIN u ON t.id = u.id AND t.k <> 'a < b'
WHERE x BETWEEN 1 AND 2 AND y IS NULL AND NOT z
GROUP BY run_id;`
	var got []string
	for _, m := range sqlMutants("v.sql", sql) {
		got = append(got, fmt.Sprintf("%d: %s", m.line, m.desc))
	}
	want := []string{
		"3: median → avg", "3: DISTINCT → ", "3: >= → >", "3: 0.9 → 1.0", "3: 0.9 → 0.8",
		"4: = → <>", "4: <> → =", "4: t.id = u.id → TRUE", "4: t.k <> 'a < b' → TRUE",
		"5: x BETWEEN 1 AND 2 → TRUE", "5: y IS NULL → TRUE", "5: NOT z → TRUE",
		"5: 1 → 2", "5: 1 → 0", "5: 2 → 3", "5: 2 → 1", "5:  → NOT ", "5: NOT → ",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n got %q\nwant %q", got, want)
	}
}

// TestSQLMutantKeysUnique: every mutant of the view files has a key of its own, so that
// the list of equivalent mutants names exactly one.
func TestSQLMutantKeysUnique(t *testing.T) {
	seen := map[string]string{}
	for _, f := range viewSQL() {
		for _, m := range sqlMutants(f.name, f.sql) {
			if prev, ok := seen[m.key()]; ok {
				t.Errorf("two mutants with the key %q: %s and %s", m.key(), prev, m)
			}
			seen[m.key()] = m.String()
		}
	}
	// Two identical changes on one line, and the same line twice: four keys.
	var keys []string
	for _, m := range sqlMutants("v.sql", "SELECT coalesce(a, 0) + coalesce(b, 0)\nFROM t;\nSELECT coalesce(a, 0) + coalesce(b, 0)\nFROM t;") {
		if m.desc == "0 → 1" {
			keys = append(keys, m.key())
		}
	}
	want := []string{"v.sql | 0 → 1 | SELECT coalesce(a, 0) + coalesce(b, 0)", "v.sql | 0 → 1 | SELECT coalesce(a, 0) + coalesce(b, 0) | #2",
		"v.sql | 0 → 1 | SELECT coalesce(a, 0) + coalesce(b, 0) | #3", "v.sql | 0 → 1 | SELECT coalesce(a, 0) + coalesce(b, 0) | #4"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
}

// composedView returns the statement that defines view target, one of files' views, as one
// query: every view of files that target reads, directly or through another, becomes a
// common table expression of that name, in file order, with its file's query as it is,
// and target's own query reads them. DuckDB expands a view wherever it is read, so a view
// read by several others (calls, disruptions, ...) was computed once per reader; a common
// table expression read more than once is computed once and its rows shared (DuckDB
// materializes it). The files stay the definitions: the statement holds their queries
// unchanged, and each name a query reads resolves to the same rows as before (a view's own
// common table expressions still come first within it). A view read but not among files
// (the mutation harness's table standing in for it) is read by name.
func composedView(files []viewFile, target string) string {
	i := slices.IndexFunc(files, func(f viewFile) bool { return f.view == target })
	if i < 0 {
		panic("analysis: no view file defines " + target)
	}
	needed := map[string]bool{target: true}
	bare := make([]string, i+1) // each file's SQL without comments, in lower case
	for j := range bare {
		bare[j] = strings.ToLower(sqlComment.ReplaceAllString(files[j].sql, ""))
	}
	for j := i; j >= 0; j-- {
		if !needed[files[j].view] {
			continue
		}
		for _, g := range files[:j] {
			if reads(bare[j], g.view) {
				needed[g.view] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("CREATE OR REPLACE VIEW " + target + " AS\n")
	sep := "WITH "
	for _, f := range files[:i] {
		if needed[f.view] {
			as := " AS ("
			if slices.Contains(expandedViews, f.view) {
				as = " AS NOT MATERIALIZED ("
			}
			b.WriteString(sep + f.view + as + "\n" + viewQuery(f) + "\n)")
			sep = ",\n"
		}
	}
	b.WriteString("\nSELECT * FROM (\n" + viewQuery(files[i]) + "\n)")
	return b.String()
}

// expandedViews are the views composedView has each reader compute again, as a view is,
// rather than share: execution_costs is one join, and the sums of its float compute
// (compute_per_completion, wasted_compute_ratio, the money) add their terms in the order
// the join yields them; read from a shared result they would add them in another order and
// could differ in the last bits from the same sums elsewhere (a report's tables).
var expandedViews = []string{"execution_costs"}

// viewQuery returns the query of a view file's CREATE OR REPLACE VIEW (the file's last
// statement), without its closing semicolon.
func viewQuery(f viewFile) string {
	marker := "CREATE OR REPLACE VIEW " + f.view + " AS"
	i := strings.Index(f.sql, marker)
	if i < 0 {
		panic("analysis: " + f.name + " does not CREATE OR REPLACE VIEW " + f.view + " AS")
	}
	return strings.TrimSuffix(strings.TrimSpace(f.sql[i+len(marker):]), ";")
}
