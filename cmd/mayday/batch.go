//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
)

// testHookRunDone, when set by a test, is called after each run of run, check and sweep
// ends: a test cancels the context there to interrupt a command at a known point.
var testHookRunDone func()

// runBatch runs specs in parallel (jobs workers, 0 = all cores) with a progress line on a
// terminal: runs done, rate and time left, and with perUnit > 1 also how many units (sweep
// points, scenarios) have all their perUnit consecutive specs done; a single run shows its
// investigations instead. With into, every run loads straight into that database as it
// runs; with dir, each run loads into a temporary database of its own under dir, for the
// runs to keep; with neither, nothing is stored: each run's metrics are computed in Go as it
// runs (pipeline.Batch.NoTrace), for runs that are only judged.
func runBatch(ctx context.Context, io *ioStreams, mw *pipeline.MemoryWatch, quiet bool, label string, specs []pipeline.Spec, jobs int, into *analysis.DB, dir string, unit string, perUnit int) (*pipeline.BatchResult, error) {
	bar := newProgress(io, quiet, label, len(specs))
	if len(specs) == 1 {
		specs[0].Progress = bar.seed(0)
	}
	for i := range specs {
		specs[i].Progress = mw.Wrap(specs[i].Progress)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	done, unitsDone := 0, 0
	perUnitDone := map[int]int{}
	step := func() {
		if len(specs) > 1 {
			detail := ""
			if perUnit > 1 {
				detail = fmt.Sprintf(" (%d/%d %s)", unitsDone, len(specs)/perUnit, unit)
			}
			bar.step(done, detail)
		}
	}
	step() // the line shows from the start, not from the first run's end
	b := pipeline.Batch{Workers: jobs, Into: into, Dir: dir, NoTrace: into == nil && dir == "", KeepGoing: true, Done: func(i int, _ analysis.Outcome, _ error) {
		done++
		if perUnit > 1 {
			if perUnitDone[i/perUnit]++; perUnitDone[i/perUnit] == perUnit {
				unitsDone++
			}
		}
		step()
		if testHookRunDone != nil {
			testHookRunDone()
		}
	}}
	res, err := b.Run(ctx, specs)
	bar.done()
	if res != nil {
		for _, s := range res.Stale {
			fmt.Fprintln(io.ErrOut, "mayday:", s)
		}
	}
	return res, err
}
