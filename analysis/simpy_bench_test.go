//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// BenchmarkSimPy compares mayday with SimPy on one model, M/M/8 with fast failures and
// fixed-backoff retries (testdata/simpy/mm8.yaml and mm8_simpy.py say what both model),
// side by side in one run. Each iteration takes the wall time of
//
//   - simpy-s: the plain SimPy script, no tracing (os/exec, the interpreter's start
//     included), on the SimPy the script picks: `import simpy` (SimPy 3, python3-simpy3),
//     else SimPy 2 (python3-simpy);
//   - simpy2-s: the same script on SimPy 2, when both are installed;
//   - mayday-s: mayday's whole pipeline with its full trace, as `mayday run` does it: a
//     fresh DuckDB file created, the simulator feeding a Load, Finish, the file closed;
//   - mayday-sim-s: the simulator alone, its records counted and dropped;
//   - copy-s (untimed by the benchmark's own clock): DuckDB itself copying the rows of
//     mayday's file into a fresh file (duckDBCopy, as in BenchmarkEndToEnd), the least any
//     writer into DuckDB can take for this trace,
//
// and reports mayday/simpy (and mayday/simpy2), copy/simpy (above 1, no DuckDB writer of
// this trace can beat SimPy), the CPU seconds of both (the machine may be shared) and the
// trace rows. After the timed part it checks fidelity: each side's
// completed customers, attempts and mean time in system agree with the other's and with the
// closed forms (mm8Agree), or the benchmark fails. It needs python3 with SimPy (`apt-get
// install python3-simpy python3-simpy3`; MAYDAY_PYTHON names another interpreter) and
// skips without it.
func BenchmarkSimPy(b *testing.B) {
	py, apis := simpyPython()
	if py == "" {
		b.Skip("BenchmarkSimPy needs python3 with SimPy: apt-get install python3-simpy python3-simpy3 " +
			"(or set MAYDAY_PYTHON to a python3 that can import simpy or SimPy.Simulation)")
	}
	s, err := scenarios.Load(mm8File, nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := mm8Of(s)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	ctx := context.Background()
	walls := map[string]time.Duration{}
	cpus := map[string]time.Duration{}
	var rows int64
	var used []string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sides := map[string]mm8Stats{}
		for _, api := range apis {
			st, wall, cpu, which := runSimPy(b, py, api, m)
			walls[api] += wall
			cpus[api] += cpu
			if i == 0 {
				used = append(used, which)
			}
			sides[api] = st
		}
		if i == 0 {
			b.Logf("%s: %s", py, strings.Join(used, "; "))
		}
		path := filepath.Join(dir, "mm8-"+itoa(i)+".duckdb")
		wall, cpu, n := runMayday(b, s, path)
		walls["mayday"] += wall
		cpus["mayday"] += cpu
		rows = n
		t0 := time.Now()
		if _, err := sim.Run(ctx, s, s.Seed, &rowCounter{}, sim.Options{}); err != nil {
			b.Fatal(err)
		}
		walls["sim"] += time.Since(t0)

		b.StopTimer()
		checkMM8(b, m, path, apis, sides)
		cp := filepath.Join(dir, "mm8-copy-"+itoa(i)+".duckdb")
		walls["copy"] += duckDBCopy(b, path, cp)
		os.Remove(path)
		os.Remove(cp)
		b.StartTimer()
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(per(walls[apis[0]]), "simpy-s")
	b.ReportMetric(per(cpus[apis[0]]), "simpy-cpu-s")
	b.ReportMetric(per(walls["mayday"]), "mayday-s")
	b.ReportMetric(per(cpus["mayday"]), "mayday-cpu-s")
	b.ReportMetric(per(walls["sim"]), "mayday-sim-s")
	b.ReportMetric(walls["mayday"].Seconds()/walls[apis[0]].Seconds(), "mayday/simpy")
	b.ReportMetric(per(walls["copy"]), "copy-s")
	b.ReportMetric(walls["copy"].Seconds()/walls[apis[0]].Seconds(), "copy/simpy")
	if len(apis) > 1 {
		b.ReportMetric(per(walls[apis[1]]), "simpy2-s")
		b.ReportMetric(walls["mayday"].Seconds()/walls[apis[1]].Seconds(), "mayday/simpy2")
	}
	b.ReportMetric(float64(rows), "rows")
}

// simpyPython finds an interpreter with SimPy: $MAYDAY_PYTHON, else python3 on PATH, else
// /usr/bin/python3 (where Debian's packages install, should PATH lead to another python).
// apis lists mm8_simpy.py's --api values it can run, the one `--api auto` picks first.
func simpyPython() (py string, apis []string) {
	cands := []string{os.Getenv("MAYDAY_PYTHON")}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	for _, p := range cands {
		if p == "" {
			continue
		}
		apis = nil
		if exec.Command(p, "-c", "import simpy").Run() == nil {
			apis = append(apis, "simpy3")
		}
		if exec.Command(p, "-c", "import SimPy.Simulation").Run() == nil {
			apis = append(apis, "simpy2")
		}
		if len(apis) > 0 {
			return p, apis
		}
	}
	return "", nil
}

// runSimPy runs mm8_simpy.py on api and parses what it prints.
func runSimPy(b *testing.B, py, api string, m mm8Model) (st mm8Stats, wall, cpu time.Duration, which string) {
	b.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(py, append([]string{mm8Script, "--api", api}, m.args()...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", py, mm8Script, err, errOut.String())
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	kv := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, " ")
		kv[k] = v
	}
	num := func(k string) float64 {
		x, err := strconv.ParseFloat(kv[k], 64)
		if err != nil {
			b.Fatalf("%s printed %q for %s, want a number; output:\n%s", mm8Script, kv[k], k, out.String())
		}
		return x
	}
	st = mm8Stats{customers: int(num("customers")), completed: int(num("completed")), attempts: int(num("attempts")),
		meanTIS: num("mean_time_in_system_s"), seTIS: num("se_time_in_system_s")}
	return st, wall, cpu, kv["simpy"]
}

// runMayday is `mayday run`'s pipeline from nothing to a closed file at path: the same
// steps as BenchmarkSimulateIngest, the database's creation included (as the interpreter's
// start is on SimPy's side).
func runMayday(b *testing.B, s *scenarios.Scenario, path string) (wall, cpu time.Duration, rows int64) {
	b.Helper()
	var ct cpuTimer
	t0 := time.Now()
	ct.start()
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	rows = int64(loadRun(b, db, traces.ScenarioOptions(s), func(sink record.Sink) int { return simulateTo(b, s, sink) }))
	ct.stop()
	return time.Since(t0), ct.total, rows
}

// checkMM8 reads the customers back from mayday's database and fails b unless mayday, each
// SimPy run (by its --api) and the closed forms agree (mm8Agree).
func checkMM8(b *testing.B, m mm8Model, path string, apis []string, simpy map[string]mm8Stats) {
	b.Helper()
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	q := `SELECT final_state = 'completed', coalesce(epoch(ended_at - arrived_at), 0), attempts
		FROM investigations WHERE parent_id IS NULL ORDER BY arrived_at, investigation_id`
	rs, err := db.SQL().Query(q)
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	var cs []mm8Customer
	for rs.Next() {
		var c mm8Customer
		if err := rs.Scan(&c.served, &c.tis, &c.attempts); err != nil {
			b.Fatal(err)
		}
		cs = append(cs, c)
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	may := mm8Summarise(cs)
	var bad []string
	for _, e := range mm8Agree(m, may, nil) {
		bad = append(bad, "mayday vs closed form: "+e)
	}
	for _, api := range apis {
		st := simpy[api]
		for _, e := range mm8Agree(m, st, nil) {
			bad = append(bad, fmt.Sprintf("%s vs closed form: %s", api, e))
		}
		for _, e := range mm8Agree(m, may, &st) {
			bad = append(bad, fmt.Sprintf("mayday vs %s: %s", api, e))
		}
	}
	if len(bad) > 0 {
		b.Fatalf("mayday and SimPy disagree on %s:\n%s", mm8File, strings.Join(bad, "\n"))
	}
}
