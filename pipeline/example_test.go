//go:build duckdb_arrow

package pipeline_test

import (
	"context"
	"fmt"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// A batch is a list of jobs (scenario, seed, run_id) run on a bounded number of workers;
// its outcomes come back in job order, whichever worker finished first.
func ExampleBatch() {
	s, err := scenarios.Parse("tiny.yaml", []byte(`
name: tiny
horizon: 1h
workload:
  investigations: 5
  arrival: {uniform: 1m}
  steps: {dist: constant, value: 2}
  think: {dist: constant, value: 1s}
  tokens: {dist: constant, value: 100}
  tools: {t: 1}
tools:
  t: {latency: {dist: constant, value: 1s}, idempotency: keyed}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := analysis.Create("") // in memory
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	jobs := pipeline.Seeds(s, 1, 4, "example")
	res, err := pipeline.Batch{Workers: 2, Into: db}.Run(context.Background(), jobs)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Close()
	for _, o := range res.Outcomes {
		fmt.Println(o.RunID, o.Status, o.Metrics.Get("completion_rate"))
	}
	// Output:
	// tiny-s1 complete 1
	// tiny-s2 complete 1
	// tiny-s3 complete 1
	// tiny-s4 complete 1
}
