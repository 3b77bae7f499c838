package fit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Check is one metric of a calibration: the observed run's value, the simulated runs'
// mean, the band the observed value must fall in, and the verdict.
type Check struct {
	Metric    string  // latency_ks, failure_share, incidents, incident_minutes, completion_rate, retry_amplification, episode_recovery_rate, makespan, model_turn_ks, recovery_ks
	Tool      string  // "" for a fleet-wide metric
	Observed  float64 // NaN when undefined
	Simulated float64 // the mean over the simulated runs (NaN when undefined in all)
	Lo, Hi    float64 // the observed value passes inside [Lo, Hi]
	Tolerance string  // the tolerance, as text
	Pass      bool
}

// Name is the check's metric and tool.
func (c Check) Name() string {
	if c.Tool == "" {
		return c.Metric
	}
	return c.Metric + " " + c.Tool
}

// Calibration sets the simulated runs of a scenario beside an observed run.
type Calibration struct {
	Run    string
	Seeds  int
	Checks []Check
	// Latency holds each tool's success latencies (seconds, sorted), observed and pooled
	// over the simulated runs, for the overlaid distributions of the report.
	Latency []LatencyPair
}

// LatencyPair is one tool's observed and simulated success latencies.
type LatencyPair struct {
	Tool                string
	Observed, Simulated []float64
}

// Pass says whether every check passed.
func (c Calibration) Pass() bool {
	for _, ch := range c.Checks {
		if !ch.Pass {
			return false
		}
	}
	return true
}

// Failed lists the checks that failed.
func (c Calibration) Failed() []Check {
	var out []Check
	for _, ch := range c.Checks {
		if !ch.Pass {
			out = append(out, ch)
		}
	}
	return out
}

// The tolerances of calibrate (docs/fit.md). Every band but latency's is the simulated
// mean ± (tolerance + the prediction half-width), where the prediction half-width is
// t(0.975; k−1)·s·√(1 + 1/k) over k seeds of standard deviation s: the range in which one
// more run of the scenario would fall 95% of the time, which is what the observed run is
// if the scenario reproduces it. The tolerance on top is the model error accepted.
const (
	tolFailureAbs   = 0.01 // failure share: 1 point plus 10%
	tolFailureRel   = 0.10
	tolCompletion   = 0.02 // completion_rate: 2 points
	tolAmplifyRel   = 0.05 // retry_amplification: 5%
	tolEpisodes     = 0.05 // episode_recovery_rate: 5 points
	tolIncidents    = 0.5  // incidents per tool: half an incident (so the counts must agree)
	tolIncidentMins = 2.0  // incident minutes per tool: 2 minutes plus 10%
	tolIncidentRel  = 0.10
	tolMakespanRel  = 0.10 // makespan: 10%
	// Latency: the two-sample KS distance between the observed and the pooled simulated
	// successes may exceed c(α)·√((n+m)/(n·m)) (its critical value at α = 0.001,
	// c = √(−ln(α/2)/2) = 1.95, what sampling alone explains) by at most 0.05; recovery
	// times (of the episodes that recovered) by at most 0.10, since they add the policy's
	// waits to the tools' latencies. Model-turn times are held to latency's 0.05.
	tolKS         = 0.05
	tolRecoveryKS = 0.10
)

// Calibrate compares the observed run with the simulated runs of a scenario.
func Calibrate(obs Observed, sims []Observed) Calibration {
	c := Calibration{Run: obs.Name, Seeds: len(sims)}
	// Incidents are counted as fit reads them: one outage, one incident.
	obs.Incidents = MergeIncidents(obs)
	sims = slices.Clone(sims)
	for i := range sims {
		sims[i].Incidents = MergeIncidents(sims[i])
	}
	for _, t := range obs.Tools {
		c.toolChecks(obs, t, sims)
	}
	metric := func(name string, absTol, relTol float64, tol string) {
		of := metricOf
		if name == "episode_recovery_rate" {
			of = toolEpisodeRecovery
		}
		vals := make([]float64, len(sims))
		for i, s := range sims {
			vals[i] = of(s, name)
		}
		c.Checks = append(c.Checks, within(band(Check{Metric: name, Observed: of(obs, name), Tolerance: tol}, vals, absTol, relTol)))
	}
	metric("completion_rate", tolCompletion, 0, "±0.02")
	metric("retry_amplification", 0, tolAmplifyRel, "±5%")
	metric("episode_recovery_rate", tolEpisodes, 0, "±0.05")
	metric("makespan", 0, tolMakespanRel, "±10%")
	var simTurns []float64
	for _, s := range sims {
		simTurns = append(simTurns, turnSeconds(s)...)
	}
	c.Checks = append(c.Checks, ksCheck("model_turn_ks", "", sorted(turnSeconds(obs)), sorted(simTurns), tolKS))
	var simRec []float64
	for _, s := range sims {
		simRec = append(simRec, s.Recoveries...)
	}
	c.Checks = append(c.Checks, ksCheck("recovery_ks", "", sorted(obs.Recoveries), sorted(simRec), tolRecoveryKS))
	return c
}

// turnSeconds are the lengths of o's successful model turns.
func turnSeconds(o Observed) []float64 {
	out := make([]float64, len(o.Turns))
	for i, t := range o.Turns {
		out[i] = t.Seconds
	}
	return out
}

// toolEpisodeRecovery is episode_recovery_rate over the episodes a tool's failure began
// (failed or timed out), as recovery_ks reads them: those are what a fitted scenario's
// faults make. An episode the model provider's failure began (an agent library that marks
// its last model call failed when the agent gives up), an invalid output, a crash or a
// breaker's park comes from what fit leaves at its defaults, so the simulated runs have
// none, and counting them on the observed side only would compare two different
// populations. Without episodes read (nil), the run's own metric.
func toolEpisodeRecovery(o Observed, name string) float64 {
	if o.Episodes == nil {
		return metricOf(o, name)
	}
	n, rec := 0, 0
	for _, e := range o.Episodes {
		if e.Tool == "" {
			continue
		}
		n++
		if e.Outcome == "recovered" {
			rec++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(rec) / float64(n)
}

func metricOf(o Observed, name string) float64 {
	if v, ok := o.Metrics[name]; ok {
		return v
	}
	return math.NaN()
}

func (c *Calibration) toolChecks(obs Observed, t ToolObs, sims []Observed) {
	simTool := func(s Observed) (ToolObs, bool) {
		i := slices.IndexFunc(s.Tools, func(x ToolObs) bool { return x.Name == t.Name })
		if i < 0 {
			return ToolObs{Name: t.Name}, false
		}
		return s.Tools[i], true
	}
	obsLat := successes(t)
	var simLat []float64
	shares := make([]float64, len(sims))
	counts := make([]float64, len(sims))
	mins := make([]float64, len(sims))
	for i, s := range sims {
		st, _ := simTool(s)
		simLat = append(simLat, successes(st)...)
		shares[i] = failureShare(st)
		counts[i], mins[i] = incidentsOf(s, t.Name)
	}
	slices.Sort(obsLat)
	slices.Sort(simLat)
	c.Latency = append(c.Latency, LatencyPair{Tool: t.Name, Observed: obsLat, Simulated: simLat})
	c.Checks = append(c.Checks, ksCheck("latency_ks", t.Name, obsLat, simLat, tolKS))
	c.Checks = append(c.Checks, within(band(Check{Metric: "failure_share", Tool: t.Name, Observed: failureShare(t), Tolerance: "±0.01 + 10%"}, shares, tolFailureAbs, tolFailureRel)))
	oc, om := incidentsOf(obs, t.Name)
	c.Checks = append(c.Checks,
		within(band(Check{Metric: "incidents", Tool: t.Name, Observed: oc, Tolerance: "±0.5"}, counts, tolIncidents, 0)),
		within(band(Check{Metric: "incident_minutes", Tool: t.Name, Observed: om, Tolerance: "±2 + 10%"}, mins, tolIncidentMins, tolIncidentRel)))
}

// ksCheck compares two sorted samples by their two-sample Kolmogorov–Smirnov distance
// (gonum's stat.KolmogorovSmirnov): it passes at most tol above the critical value at
// α = 0.001. Two empty samples pass; one empty fails.
func ksCheck(metric, tool string, obs, sim []float64, tol float64) Check {
	c := Check{Metric: metric, Tool: tool, Observed: math.NaN(), Simulated: 0, Lo: 0, Hi: tol}
	if n, m := float64(len(obs)), float64(len(sim)); n > 0 && m > 0 {
		crit := math.Sqrt(-math.Log(0.001/2)/2) * math.Sqrt((n+m)/(n*m))
		c.Observed = stat.KolmogorovSmirnov(obs, nil, sim, nil)
		c.Hi = tol + crit
		c.Pass = c.Observed <= c.Hi
	} else {
		c.Pass = len(obs) == len(sim)
	}
	c.Tolerance = fmt.Sprintf("KS ≤ %.3f", c.Hi)
	return c
}

// successes are a tool's success latencies (service time, seconds).
func successes(t ToolObs) []float64 {
	var out []float64
	for _, a := range t.Attempts {
		if a.Status == StatusOK {
			out = append(out, a.Seconds)
		}
	}
	return out
}

// failureShare is the share of a tool's attempts that failed (fast or by timeout).
func failureShare(t ToolObs) float64 {
	if len(t.Attempts) == 0 {
		return math.NaN()
	}
	f := 0
	for _, a := range t.Attempts {
		if a.Status != StatusOK {
			f++
		}
	}
	return float64(f) / float64(len(t.Attempts))
}

// incidentsOf is the number of incidents at tool and their total minutes.
func incidentsOf(o Observed, tool string) (n, minutes float64) {
	for _, in := range o.Incidents {
		if in.Tool == tool {
			n++
			minutes += (in.End - in.Start) / 60
		}
	}
	return n, minutes
}

// within clips a check's band to the values its metric can take (shares in [0, 1], counts,
// minutes and seconds at least 0), so the band shows both its bounds as values; the
// verdict is unchanged, since the observed value is one of them.
func within(c Check) Check {
	switch c.Metric {
	case "failure_share", "completion_rate", "episode_recovery_rate":
		c.Lo, c.Hi = math.Max(c.Lo, 0), math.Min(c.Hi, 1)
	case "incidents", "incident_minutes", "makespan", "retry_amplification":
		c.Lo = math.Max(c.Lo, 0)
	}
	return c
}

// band fills a check's simulated mean, its band and its verdict from the simulated values.
// NaN values (a metric undefined in a run) are left out; a check whose both sides are
// undefined passes, one undefined on one side only fails.
func band(c Check, sims []float64, absTol, relTol float64) Check {
	var vals []float64
	for _, v := range sims {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		c.Simulated, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN()
		c.Pass = math.IsNaN(c.Observed)
		return c
	}
	mean := stat.Mean(vals, nil)
	half := absTol + relTol*math.Abs(mean)
	if k := float64(len(vals)); k >= 2 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: k - 1}.Quantile(0.975)
		half += t * stat.StdDev(vals, nil) * math.Sqrt(1+1/k)
	}
	c.Simulated, c.Lo, c.Hi = mean, mean-half, mean+half
	c.Pass = !math.IsNaN(c.Observed) && c.Observed >= c.Lo && c.Observed <= c.Hi
	return c
}
