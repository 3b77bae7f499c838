package fit

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mayday-sim/mayday/scenarios"
)

// load writes s and loads it back with the scenario decoder.
func load(t *testing.T, s Scenario) (*scenarios.Scenario, string) {
	t.Helper()
	s.Name = "trust-fit"
	var b bytes.Buffer
	if err := s.WriteYAML(&b, Source{Run: "synthetic"}); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("fitted.yaml", b.Bytes(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return sc, b.String()
}

// TestTimeoutNeverBelowASuccess: a trace whose timed-out attempts last 0.83s (errors
// misread as timeouts) while its successes take up to several seconds gets a timeout no
// shorter than its slowest success, and a note that says why.
func TestTimeoutNeverBelowASuccess(t *testing.T) {
	obs := synthetic()
	tool := &obs.Tools[0]
	slowest := 0.0
	for i := range tool.Attempts {
		a := &tool.Attempts[i]
		if a.Status == StatusOK {
			slowest = math.Max(slowest, a.Wall)
		}
		if a.Status == StatusError && a.Start < 3600 && i%2 == 0 {
			a.Status, a.Wall, a.Seconds = StatusTimeout, 0.83, 0.83
		}
	}
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	tf := s.Tools[0]
	if tf.Timeout < slowest || tf.TimedOut != 0.83 {
		t.Errorf("timeout %v (timed out %v), want at least the slowest success %v", tf.Timeout, tf.TimedOut, slowest)
	}
	if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "timeout is raised") }) {
		t.Errorf("no note on the raised timeout: %q", s.Notes)
	}
	sc, text := load(t, s)
	if got := sc.Tools[0].Timeout.Seconds(); got < slowest*(1-1e-3) {
		t.Errorf("the file's timeout %vs is below the slowest success %vs\n%s", got, slowest, text)
	}
}

// TestParetoOfInfiniteMeanRefused: draws of a pareto of alpha 0.8 (infinite mean) are
// best fitted, by AIC, by a pareto of alpha near 0.8 (the MLE's standard error is
// alpha/√n = 0.018 for n = 2000); that fit is refused, the next family is chosen, and the
// refusal is said.
func TestParetoOfInfiniteMeanRefused(t *testing.T) {
	src := rand.New(rand.NewPCG(21, 22))
	x := draws(distuv.Pareto{Xm: 1, Alpha: 0.8, Src: src}, 2000)
	d, err := Durations(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Family == Pareto || len(d.Refused) == 0 || !strings.Contains(d.Refused[0], "infinite mean") {
		t.Fatalf("fitted %v, refused %q; want pareto refused for its infinite mean", d, d.Refused)
	}
	if m := d.Quantile(0.5); math.IsInf(m, 0) || math.IsNaN(m) || math.IsNaN(d.KS) {
		t.Errorf("the chosen fit %v has median %v, KS %v", d, m, d.KS)
	}
	if q := quality(d); !strings.Contains(q, "pareto") || !strings.Contains(q, "refused") {
		t.Errorf("the comment %q does not say pareto was refused", q)
	}
	// A pareto of finite mean is still chosen (TestDurationsRecoverTheirFamily), with
	// nothing refused.
	y := draws(distuv.Pareto{Xm: 1, Alpha: 2.5, Src: src}, 2000)
	if d, _ := Durations(y, 0); d.Family != Pareto || len(d.Refused) != 0 {
		t.Errorf("alpha 2.5: fitted %v, refused %q", d, d.Refused)
	}
}

// TestSharesOutsideFaultWindows: the incidents view's minutes cover only part of an outage
// (3660 to 4140 of 3600 to 4200). The fault window still covers all of it, within half a
// gap between attempts (7.2s on average; 20s is about 2.8 mean gaps, missed with probability
// e^-2.8 = 6% per side for this fixed seed, which passes), and none of its failures count
// as transient: the transient share's interval holds the true 0.04 and no attempt sent in
// the outage is among the attempts it counts.
func TestSharesOutsideFaultWindows(t *testing.T) {
	obs := synthetic()
	obs.Incidents = []Incident{{Tool: "search", Start: 3660, End: 4140}}
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Faults) != 1 || s.Faults[0].Kind != "outage" {
		t.Fatalf("faults %+v, want one outage", s.Faults)
	}
	f := s.Faults[0]
	if math.Abs(f.At-3600) > 20 || math.Abs(f.At+f.For-4200) > 20 {
		t.Errorf("outage %v to %v, want 3600 to 4200", f.At, f.At+f.For)
	}
	outside := 0
	for _, a := range obs.Tools[0].Attempts {
		if a.Start < f.At || a.Start >= f.At+f.For {
			outside++
		}
	}
	tr := s.Tools[0].Transient
	if tr.N != outside || tr.Lo > 0.04 || tr.Hi < 0.04 {
		t.Errorf("transient %+v counts %d attempts, want the %d outside the window and 0.04 inside its interval", tr, tr.N, outside)
	}
}

// TestMergeIncidents: incidents of one tool with no success between them are one; a
// success between keeps them apart; other tools are left alone.
func TestMergeIncidents(t *testing.T) {
	atts := []Attempt{{Start: 10, Status: StatusError}, {Start: 70, Status: StatusError}, {Start: 130, Status: StatusTimeout},
		{Start: 200, Status: StatusOK}, {Start: 260, Status: StatusError}}
	obs := Observed{
		Tools: []ToolObs{{Name: "a", Attempts: atts}},
		Incidents: []Incident{{Tool: "a", Start: 0, End: 60}, {Tool: "b", Start: 30, End: 90}, {Tool: "a", Start: 120, End: 180},
			{Tool: "a", Start: 240, End: 300}},
	}
	got := MergeIncidents(obs)
	want := []Incident{{Tool: "a", Start: 0, End: 180}, {Tool: "b", Start: 30, End: 90}, {Tool: "a", Start: 240, End: 300}}
	if !slices.Equal(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	// Calibrate counts the merged incidents on both sides.
	sim := obs
	sim.Incidents = []Incident{{Tool: "a", Start: 0, End: 30}, {Tool: "a", Start: 90, End: 180}, {Tool: "a", Start: 240, End: 300}}
	c := Calibrate(obs, []Observed{sim, sim})
	for _, ch := range c.Checks {
		if ch.Metric == "incidents" && ch.Tool == "a" && (ch.Observed != 2 || ch.Simulated != 2) {
			t.Errorf("incidents a: observed %v simulated %v, want 2 and 2", ch.Observed, ch.Simulated)
		}
	}
}

// TestFitRealToolNames: tools named as real fleets name them are written so the file loads
// back naming the same tools, with fault ids the format takes.
func TestFitRealToolNames(t *testing.T) {
	obs := synthetic()
	names := []string{"Bash", "WebSearch", "mcp.github.create_issue", "web search/v2", "true", "検索"}
	base := obs.Tools[0]
	obs.Tools = nil
	for _, n := range names {
		tl := base
		tl.Name = n
		obs.Tools = append(obs.Tools, tl)
	}
	obs.Incidents = []Incident{{Tool: "web search/v2", Start: 3600, End: 4260}}
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	sc, text := load(t, s)
	var got []string
	for _, tl := range sc.Tools {
		got = append(got, tl.Name)
	}
	// The decoder keeps tools in name order.
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Errorf("tools %q, want %q\n%s", got, names, text)
	}
	var mix []string
	for _, w := range sc.Workload.Mix {
		mix = append(mix, w.Tool)
	}
	if slices.Sort(mix); !slices.Equal(mix, slices.Sorted(slices.Values(names))) {
		t.Errorf("step mix %q, want %q", mix, names)
	}
	if !slices.ContainsFunc(sc.Faults, func(f scenarios.Fault) bool { return f.Kind == "outage" && f.Tool == "web search/v2" }) {
		t.Errorf("no outage of web search/v2: %+v", sc.Faults)
	}
}

// TestModelLatencyPerToken: turns of think time exponential (mean 8s) plus 1s per 1000
// tokens (tokens uniform 1000..9000). The slope's standard error is σ/(s_x·√n) = 8/(2309·
// √4000) = 0.055 s per 1000 tokens, so its 95% interval holds 1 and excludes 0; the think
// mean's standard error is 8/√4000 = 0.13s, so within 10% (6 standard errors).
func TestModelLatencyPerToken(t *testing.T) {
	obs := synthetic()
	r := rand.New(rand.NewPCG(31, 32))
	obs.Turns = nil
	for i := 0; i < 4000; i++ {
		tok := 1000 + 8000*r.Float64()
		obs.Turns = append(obs.Turns, Turn{Index: i % 5, Seconds: 8*r.ExpFloat64() + tok/1000, Tokens: tok})
	}
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model == nil || s.Model.Lo > 1 || s.Model.Hi < 1 {
		t.Fatalf("model %+v, want latency per 1000 tokens near 1s", s.Model)
	}
	if s.Think == nil || s.Think.Family != Exponential || math.Abs(s.Think.Mean/8-1) > 0.1 {
		t.Errorf("think %v, want exponential mean 8s", s.Think)
	}
	sc, text := load(t, s)
	if sc.Model == nil || math.Abs(sc.Model.LatencyPer1kTokens.Seconds()-s.Model.Per1k) > 1e-3 {
		t.Errorf("the file's model %+v, want latency_per_1k_tokens %v\n%s", sc.Model, s.Model.Per1k, text)
	}
	// Turn times that do not grow with tokens give no model block.
	for i := range obs.Turns {
		obs.Turns[i].Seconds = 8 * r.ExpFloat64()
	}
	if s, _ := Fit(obs); s.Model != nil {
		t.Errorf("model %+v from turns independent of tokens", s.Model)
	}
}

// TestCalibrateMakespanAndTurns: calibrate judges makespan and the model turns' times; a
// scenario whose turns are twice as long fails model_turn_ks (KS distance about 0.25 for
// exponentials of means 8 and 16, far above 0.05 + 1.95·√(2/4000) = 0.094).
func TestCalibrateMakespanAndTurns(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	run := func(mean, makespan float64) Observed {
		o := Observed{Name: "r", Metrics: map[string]float64{"makespan": makespan}}
		for i := 0; i < 4000; i++ {
			o.Turns = append(o.Turns, Turn{Seconds: mean * r.ExpFloat64()})
		}
		return o
	}
	obs := run(8, 1000)
	check := func(c Calibration, metric string) Check {
		i := slices.IndexFunc(c.Checks, func(ch Check) bool { return ch.Metric == metric })
		if i < 0 {
			t.Fatalf("no %s check in %+v", metric, c.Checks)
		}
		return c.Checks[i]
	}
	good := Calibrate(obs, []Observed{run(8, 990), run(8, 1010)})
	if !check(good, "model_turn_ks").Pass || !check(good, "makespan").Pass {
		t.Errorf("the same law fails: %+v", good.Checks)
	}
	bad := Calibrate(obs, []Observed{run(16, 1500), run(16, 1510)})
	if check(bad, "model_turn_ks").Pass || check(bad, "makespan").Pass {
		t.Errorf("turns twice as long and a makespan 50%% longer pass: %+v", bad.Checks)
	}
}

// TestBandBothBounds: an observed value below the band fails as one above it does, and a
// share's band is clipped to [0, 1].
func TestBandBothBounds(t *testing.T) {
	c := band(Check{Observed: -3.0}, []float64{1, 2, 3}, 0, 0)
	if c.Pass || c.Lo > -2.9 {
		t.Errorf("-3 is below [−2.968, 6.968]: %+v", c)
	}
	s := within(band(Check{Metric: "failure_share", Observed: 0.01}, []float64{0.01, 0.02, 0.03}, 0.01, 0.1))
	if s.Lo != 0 || s.Hi > 1 || !s.Pass {
		t.Errorf("a share's band %+v, want it clipped at 0", s)
	}
}
