//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// benchSweep is the sweep BenchmarkMerge shards: research-fleet cut to 2,000 investigations,
// two grid points (retry budgets) × three seeds, six runs of about a second each.
func benchSweep(b *testing.B) ([]Spec, []SweepParam) {
	b.Helper()
	base, err := scenarios.Load("research-fleet", []string{"workload.investigations=2000"})
	if err != nil {
		b.Fatal(err)
	}
	var specs []Spec
	var params []SweepParam
	for p, attempts := range []string{"2", "4"} {
		s, err := base.With(scenarios.Override{Path: "recovery.retry.max_attempts", Value: attempts})
		if err != nil {
			b.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			id := SweepRunID(base.Name, p, seed)
			specs = append(specs, Spec{Scenario: s, Seed: seed, RunID: id})
			params = append(params, SweepParam{RunID: id, Point: p, Path: "recovery.retry.max_attempts", Value: attempts})
		}
	}
	return specs, params
}

// BenchmarkMerge merges two shard databases (the two grid points of benchSweep, made once)
// into a fresh file and, in the same iteration, has DuckDB itself copy the same tables of
// the same files into another fresh file (ATTACH, then INSERT INTO t SELECT * FROM src.t
// per table): merge/copy is mayday's merge over DuckDB's own copy. peak-MiB is the resident
// high-water mark of a process that does nothing but the merge (this test binary, re-run
// as a helper), so the runs that made the shards do not count.
func BenchmarkMerge(b *testing.B) {
	shards := benchShards(b)
	dir := b.TempDir()
	var merge, cp time.Duration
	var rows int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, n := timeMerge(b, shards, filepath.Join(dir, "merge-"+itoa(i)+".duckdb"))
		merge += d
		rows = n
		cp += timeCopy(b, shards, filepath.Join(dir, "copy-"+itoa(i)+".duckdb"))
	}
	b.StopTimer()
	peak := mergePeak(b, shards, filepath.Join(dir, "peak.duckdb"))
	n := float64(b.N)
	b.ReportMetric(merge.Seconds()/n, "merge-s")
	b.ReportMetric(cp.Seconds()/n, "copy-s")
	b.ReportMetric(merge.Seconds()/cp.Seconds(), "merge/copy")
	b.ReportMetric(float64(rows)/(merge.Seconds()/n), "rows/s")
	b.ReportMetric(peak, "peak-MiB")
}

// benchShards writes the shard databases of benchSweep, one per grid point.
func benchShards(b *testing.B) []string {
	b.Helper()
	specs, params := benchSweep(b)
	dir := b.TempDir()
	var paths []string
	for p := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.duckdb", p+1))
		db, err := Create(path)
		if err != nil {
			b.Fatal(err)
		}
		var ps []SweepParam
		for k, s := range specs {
			if params[k].Point != p {
				continue
			}
			if _, err := Execute(context.Background(), db, s); err != nil {
				b.Fatal(err)
			}
			ps = append(ps, params[k])
		}
		if err := errors.Join(WriteSweepParams(context.Background(), db, ps), db.Close()); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// timeMerge merges the shards into a new database at path and returns the time from
// creating it to closing it, and the rows merged.
func timeMerge(b *testing.B, shards []string, path string) (time.Duration, int64) {
	b.Helper()
	start := time.Now()
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	ids, err := Merge(context.Background(), db, shards)
	if err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	rows := totalRows(b, db) // not timed: the copy counts nothing
	start = time.Now()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	d += time.Since(start)
	if len(ids) != 6 {
		b.Fatalf("merged %d runs, want 6", len(ids))
	}
	os.Remove(path)
	return d, rows
}

// timeCopy is DuckDB copying the tables of the shards into a new database at path, with the
// same tables and DuckDB's own settings (createAsDuckDB): the floor a merge can reach.
func timeCopy(b *testing.B, shards []string, path string) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	db := createAsDuckDB(b, path)
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i, s := range shards {
		alias := fmt.Sprintf("copy_src_%d", i)
		if _, err := conn.ExecContext(ctx, "ATTACH "+literal(s)+" AS "+alias+" (READ_ONLY)"); err != nil {
			b.Fatal(err)
		}
		tables, err := queryStrings(ctx, conn, "SELECT table_name FROM duckdb_tables() WHERE database_name = '"+alias+"'")
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tables {
			q := "INSERT INTO " + ident(t) + " SELECT * FROM " + alias + "." + ident(t)
			if t == "sweep_params" && i == 0 {
				q = "CREATE TABLE sweep_params AS SELECT * FROM " + alias + ".sweep_params"
			}
			if _, err := conn.ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := conn.ExecContext(ctx, "DETACH "+alias); err != nil {
			b.Fatal(err)
		}
	}
	conn.Close()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	os.Remove(path)
	return d
}

func totalRows(b *testing.B, db *DB) int64 {
	b.Helper()
	tables, err := queryStringsDB(context.Background(), db, "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()")
	if err != nil {
		b.Fatal(err)
	}
	var sum int64
	for _, t := range tables {
		var n int64
		if err := db.SQL().QueryRow("SELECT count(*) FROM " + ident(t)).Scan(&n); err != nil {
			b.Fatal(err)
		}
		sum += n
	}
	return sum
}

// mergeHelperEnv carries the merge a helper process does: the output path, then the inputs,
// separated by newlines.
const mergeHelperEnv = "MAYDAY_MERGE_HELPER"

// mergePeak merges shards into out in a helper process and returns its peak resident memory
// in MiB. The helper reads its own VmHWM: the child's getrusage ru_maxrss would not do, since
// Linux carries the parent's resident size at fork into the child's high-water mark.
func mergePeak(b *testing.B, shards []string, out string) float64 {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMergeHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), mergeHelperEnv+"="+strings.Join(append([]string{out}, shards...), "\n"))
	msg, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("merge helper: %v\n%s", err, msg)
	}
	_, after, ok := strings.Cut(string(msg), "VmHWM:")
	kb, _, _ := strings.Cut(strings.TrimSpace(after), " ")
	n, perr := strconv.ParseFloat(kb, 64)
	if !ok || perr != nil {
		b.Skipf("the merge helper reported no VmHWM (no /proc/self/status here?):\n%s", msg)
	}
	return n / 1024
}

// TestMergeHelperProcess is the merge of mergePeak, run in a process of its own; it does
// nothing in a normal test run.
func TestMergeHelperProcess(t *testing.T) {
	spec := os.Getenv(mergeHelperEnv)
	if spec == "" {
		t.Skip("only run by BenchmarkMerge as a helper process")
	}
	paths := strings.Split(spec, "\n")
	db, err := Create(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := LimitBuffers(context.Background(), db, MergeBufferLimit); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(context.Background(), db, paths[1:]); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Println(strings.Join(strings.Fields(line), " ")) // "VmHWM: <n> kB"
		}
	}
}
