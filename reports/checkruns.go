//go:build duckdb_arrow

package reports

import (
	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// CheckRuns is the check of scenario s from its runs idx of a batch, the seeds from seed
// on: the first run's error, the wall time, and its expectations evaluated on the summary
// of the runs, which it returns too. When a run failed or did not run, the summary is nil
// and every expectation counts as unmet (the check's Error says why).
func CheckRuns(s *scenarios.Scenario, version string, seed uint64, res *pipeline.BatchResult, idx []int) (ScenarioCheck, *Summary) {
	sc := ScenarioCheck{Scenario: s.Name, Source: s.Source.File, Seed: seed, Seeds: len(idx)}
	var outs []analysis.Outcome
	for _, i := range idx {
		if e := res.Errs[i]; e != nil && sc.Error == "" {
			sc.Error = e.Error()
		}
		if res.Ran[i] {
			outs = append(outs, res.Outcomes[i])
			sc.WallSeconds += res.Outcomes[i].Wall.Seconds()
		}
	}
	if sc.Error != "" || len(outs) < len(idx) {
		if sc.Error == "" {
			sc.Error = "not every seed ran"
		}
		sc.Expectations = CheckExpectations(Summary{}, s.Expect)
		return sc, nil
	}
	sum := Summarize(s, version, outs)
	sc.Digest, sc.Status = sum.Digest, sum.Status
	sc.Expectations = CheckExpectations(sum, s.Expect)
	return sc, &sum
}
