package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
)

// The result of 'mayday sweep' (and of 'mayday merge' of a sweep's shards), beside check's
// and compare's: what sweep.json holds and how the table prints.

// DefaultSweepMetrics are the columns of a sweep table unless --metrics says otherwise: did
// the work finish, what did recovery cost in retries and compute, did it duplicate side
// effects, how long did recovering take.
var DefaultSweepMetrics = []string{
	"completion_rate", "retry_amplification", "duplicate_side_effects", "p95_recovery_time", "wasted_compute_ratio",
}

// SweepProvenance is how a sweep was made, as its sweep.json records it; GridAxis is one
// axis of its grid. Both are package pipeline's, which makes sweeps and checks shards
// against them; the names here are those of the sweep table that carries them.
type (
	SweepProvenance = pipeline.SweepProvenance
	GridAxis        = pipeline.GridAxis
)

// SweepTable is the result of a sweep: per grid point its values and each chosen metric's
// mean over the seeds with a 95% interval.
type SweepTable struct {
	Scenario string       `json:"scenario"`
	Database string       `json:"database,omitempty"`
	Points   int          `json:"grid_points,omitempty"` // of the whole grid
	Seeds    int          `json:"seeds,omitempty"`
	Shard    string       `json:"shard,omitempty"`
	Metrics  []string     `json:"metrics"`
	Rows     []SweepPoint `json:"points"`
	// Provenance says how the sweep was made; merge checks shards against it.
	Provenance *SweepProvenance `json:"provenance,omitempty"`
}

type SweepPoint struct {
	Point   int                    `json:"point"`
	Params  []SweepValue           `json:"params"`
	RunIDs  []string               `json:"run_ids"`
	Seeds   []uint64               `json:"seeds"`
	Metrics map[string]SweepMetric `json:"metrics"`
}

type SweepValue struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

type SweepMetric struct {
	Mean, Lo, Hi float64
	N            int
}

func (m SweepMetric) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean *float64 `json:"mean"`
		Lo   *float64 `json:"lo"`
		Hi   *float64 `json:"hi"`
		N    int      `json:"n"`
	}{jsonNum(m.Mean), jsonNum(m.Lo), jsonNum(m.Hi), m.N})
}

func jsonNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ReadSweepTable builds the table from a database holding sweep runs (sweep_params), in
// point order; intervals come from MeanCI over each point's seeds.
func ReadSweepTable(ctx context.Context, db *analysis.DB, metrics []string) (SweepTable, error) {
	all, err := db.AllMetrics(ctx)
	if err != nil {
		return SweepTable{Metrics: metrics}, err
	}
	return SweepTableOf(ctx, db, metrics, all)
}

// SweepTableOf is ReadSweepTable with the metrics rows of the database's runs already read
// (db.AllMetrics): a sweep that has just read them for its outcomes does not compute the
// metrics view a second time. A run without a row in all has no values.
func SweepTableOf(ctx context.Context, db *analysis.DB, metrics []string, all []analysis.Metrics) (SweepTable, error) {
	t := SweepTable{Metrics: metrics}
	runs, err := analysis.ListRuns(ctx, db)
	if err != nil {
		return t, err
	}
	byRun := map[string]analysis.Metrics{}
	for _, m := range all {
		byRun[m.RunID] = m
	}
	var rows []SweepPoint
	at := map[int]int{}
	for _, r := range runs {
		if r.Point < 0 {
			continue
		}
		i, ok := at[r.Point]
		if !ok {
			sp := SweepPoint{Point: r.Point, Metrics: map[string]SweepMetric{}}
			for _, p := range r.Params {
				sp.Params = append(sp.Params, SweepValue{p.Path, p.Value})
			}
			i = len(rows)
			at[r.Point] = i
			rows = append(rows, sp)
		}
		rows[i].RunIDs = append(rows[i].RunIDs, r.RunID)
		rows[i].Seeds = append(rows[i].Seeds, r.Seed)
	}
	slices.SortStableFunc(rows, func(a, b SweepPoint) int { return a.Point - b.Point })
	for i := range rows {
		for mi, name := range metrics {
			var vals []float64
			for _, id := range rows[i].RunIDs {
				if v, ok := byRun[id].Value(name); ok {
					vals = append(vals, v)
				}
			}
			mean, lo, hi := MetricCI(name, vals, uint64(rows[i].Point*1000+mi))
			rows[i].Metrics[name] = SweepMetric{Mean: mean, Lo: lo, Hi: hi, N: len(vals)}
		}
	}
	t.Rows = rows
	if t.Rows == nil {
		t.Rows = []SweepPoint{} // an empty shard still lists its points: none
	}
	return t, nil
}

func (t SweepTable) WriteJSON(w io.Writer) error { return WriteJSON(w, t) }

func (t SweepTable) WriteText(w io.Writer) error {
	runs := 0
	for _, r := range t.Rows {
		runs += len(r.RunIDs)
	}
	head := fmt.Sprintf("sweep %s: %s", t.Scenario, countOf(len(t.Rows), "point", "points"))
	if t.Shard != "" && t.Shard != "1/1" {
		head += fmt.Sprintf(" (shard %s of a %d-point grid)", t.Shard, t.Points)
	}
	fmt.Fprintf(w, "%s, %s; mean over seeds with %d%% interval\n", head, countOf(runs, "run", "runs"), int(Confidence*100))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var paths []string
	if len(t.Rows) > 0 {
		for _, p := range t.Rows[0].Params {
			paths = append(paths, p.Path)
		}
	}
	fmt.Fprint(tw, "point\t")
	for _, p := range paths {
		fmt.Fprintf(tw, "%s\t", p)
	}
	fmt.Fprint(tw, "seeds\t")
	for _, m := range t.Metrics {
		fmt.Fprintf(tw, "%s\t", m)
	}
	fmt.Fprintln(tw)
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%d\t", r.Point)
		for _, p := range r.Params {
			fmt.Fprintf(tw, "%s\t", p.Value)
		}
		fmt.Fprintf(tw, "%d\t", len(r.RunIDs))
		for _, name := range t.Metrics {
			m := r.Metrics[name]
			cell := Format(name, m.Mean)
			if !math.IsNaN(m.Lo) {
				cell += fmt.Sprintf(" [%s, %s]", Format(name, m.Lo), Format(name, m.Hi))
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.Database != "" {
		fmt.Fprintf(w, "database: %s (run_id <name>-p<point>-s<seed>; table sweep_params)\n", t.Database)
	}
	return nil
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
