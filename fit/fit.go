package fit

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Scenario is a fitted scenario: every value Fit chose and what it rests on. YAML writes it
// in mayday's scenario format.
type Scenario struct {
	Name           string
	Investigations int
	Arrival        ArrivalFit
	Steps          *Dist // nil: no completed investigation to fit
	Think          *Dist
	ThinkMedian    [3]float64 // the turns' think time median and its 95% interval
	Model          *ModelFit  // nil: a turn's time does not grow with its tokens
	Tokens         *Dist
	Growth         Growth
	Mix            []Share
	Subagents      *SubagentFit
	Tools          []ToolFit
	Faults         []FaultFit
	Retry          RetryFit
	Inspect        bool
	Humans         *HumanFit
	Notes          []string // what could not be fitted, and why
}

// ModelFit is the model provider's latency per 1000 tokens of a turn: the slope of a
// turn's time on its tokens, by least squares, with its 95% interval.
type ModelFit struct {
	Per1k, Lo, Hi float64 // seconds per 1000 tokens
	N             int     // turns
}

// Growth is the tokens' growth per step: ln tokens = a + s·ln growth, by least squares.
type Growth struct {
	Factor, Lo, Hi float64 // 1 = none
}

// Share is a tool's share of the operations (its weight in the step mix).
type Share struct {
	Tool string
	Ops  int
	P    Proportion
}

// SubagentFit is the subagents' spawning.
type SubagentFit struct {
	Probability Proportion
	Count       Dist
	MaxDepth    int
}

// ToolFit is one tool.
type ToolFit struct {
	Name        string
	Latency     *Dist // nil: no success outside incidents
	Median      [3]float64
	Timeout     float64 // seconds; 0 = none seen
	TimedOut    float64 // the timed-out attempts' median length, when Timeout was raised above it
	Slowest     float64 // the slowest success (end − start), which Timeout is never below
	Transient   Proportion
	Lost        Proportion // lost replies among the attempts that did not fail fast
	Idempotency string     // "" = not shown by the trace
}

// FaultFit is a fault window made from an incident.
type FaultFit struct {
	Kind        string // outage | hang | brownout
	Tool        string
	At, For     float64
	Probability float64 // brownout
	Slowdown    float64 // brownout
	Attempts    int     // attempts sent in the window
	Failed      int     // of them failed
	Incident    Incident
}

// RetryFit is the retry policy the trace shows.
type RetryFit struct {
	MaxAttempts         int
	Jitter              string
	Initial, Multiplier float64
	Max                 float64
	InitialHi           float64 // upper end of the initial backoff's 95% interval
	Gaps                int     // backoffs measured
	// Largest is the largest attempt number seen; MaxAttempts is it unless operations ran
	// out of attempts after a retry (Exhaust).
	Largest int
	Exhaust ExhaustFit
}

// HumanFit is the human reviewers.
type HumanFit struct {
	Reviewers  int
	ReviewTime Dist
	Approve    Proportion
}

// Fit fits a scenario to obs. An error says the run holds too little to fit anything.
func Fit(obs Observed) (Scenario, error) {
	if len(obs.Arrivals) == 0 {
		return Scenario{}, fmt.Errorf("the run has no root investigation to fit")
	}
	if len(obs.Tools) == 0 {
		return Scenario{}, fmt.Errorf("the run has no tool attempt to fit (a scenario needs at least one tool)")
	}
	s := Scenario{Name: obs.Name, Investigations: len(obs.Arrivals), Arrival: FitArrivals(obs.Arrivals), Inspect: obs.Inspections}
	if len(obs.Steps) > 0 {
		if d, err := Counts(obs.Steps, 1); err == nil {
			s.Steps = &d
		}
	} else {
		s.Notes = append(s.Notes, "no investigation completed with its full scope: steps left at 1")
	}
	s.fitTurns(obs.Turns)
	s.fitSubagents(obs)
	// One outage reads as one window: incidents of a tool with no success between them are
	// one. The shares are then fitted outside the fault windows, so the failures of an
	// outage do not count as independent ones.
	obs.Incidents = MergeIncidents(obs)
	for _, t := range obs.Tools {
		tf := fitTool(t, faultSpans(t, obs.Incidents))
		s.Tools = append(s.Tools, tf)
		if tf.TimedOut > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("tool %s: its timed-out attempts last %s (median), less than its slowest success, %s: the timeout is raised to %s, since a timeout below a success cannot be",
				t.Name, dur(tf.TimedOut), dur(tf.Slowest), dur(tf.Timeout)))
		}
		if tf.Latency != nil {
			s.refusedNote("tool "+t.Name+" latency", *tf.Latency)
		}
		ops := 0
		for _, a := range t.Attempts {
			if a.Attempt == 1 {
				ops++
			}
		}
		if ops > 0 {
			s.Mix = append(s.Mix, Share{Tool: t.Name, Ops: ops})
		}
	}
	total := 0
	for _, m := range s.Mix {
		total += m.Ops
	}
	for i := range s.Mix {
		s.Mix[i].P = Wilson(s.Mix[i].Ops, total)
	}
	s.Faults = faults(obs, s.Tools)
	s.Retry = fitRetry(obs)
	s.Humans = fitHumans(obs.Humans)
	s.Retry.Exhaust = fitExhaustion(obs.Episodes, s.Humans != nil)
	if m := s.Retry.Exhaust.MaxAttempts; m > 0 {
		s.Retry.MaxAttempts = m
		if s.Retry.Gaps >= 5 {
			// No cap is inferred: the largest backoff the attempts reach.
			s.Retry.Max = s.Retry.Initial * math.Pow(s.Retry.Multiplier, float64(max(0, m-2)))
		}
	}
	s.Notes = append(s.Notes, s.Retry.Exhaust.notes()...)
	for _, d := range []struct {
		what string
		d    *Dist
	}{{"workload.steps", s.Steps}, {"workload.think", s.Think}, {"workload.tokens", s.Tokens}} {
		if d.d != nil {
			s.refusedNote(d.what, *d.d)
		}
	}
	if s.Humans != nil {
		s.refusedNote("recovery.humans.review_time", s.Humans.ReviewTime)
	}
	return s, nil
}

// refusedNote notes the families passed over for what (Dist.Refused).
func (s *Scenario) refusedNote(what string, d Dist) {
	for _, r := range d.Refused {
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %s; %s chosen", what, r, d.Family))
	}
}

// fitTurns fits think time, tokens and their growth: ln tokens = a + s·ln g by least
// squares (gonum's stat.LinearRegression); the growth's interval is ± z·se of the slope.
// The tokens' distribution is fitted to the turns' tokens divided by g^s.
func (s *Scenario) fitTurns(turns []Turn) {
	if len(turns) == 0 {
		return
	}
	var secs, idx, logs, ktok, tsec []float64
	for _, t := range turns {
		secs = append(secs, t.Seconds)
		if t.Tokens > 0 {
			idx = append(idx, float64(t.Index))
			logs = append(logs, math.Log(t.Tokens))
			ktok = append(ktok, t.Tokens/1000)
			tsec = append(tsec, t.Seconds)
		}
	}
	// A turn takes its think time plus the provider's latency per 1000 tokens: the slope
	// of time on tokens by least squares, kept when its 95% interval lies above 0. Think
	// time is then fitted to each turn's time less its tokens' latency.
	if m := tokenLatency(ktok, tsec); m != nil {
		s.Model = m
		secs = secs[:0]
		for i := range ktok {
			secs = append(secs, tsec[i]-m.Per1k*ktok[i])
		}
	}
	if d, err := Durations(secs, 0); err == nil {
		s.Think = &d
		s.ThinkMedian[0], s.ThinkMedian[1], s.ThinkMedian[2] = MedianInterval(positive(secs))
	}
	if len(logs) < 3 {
		return
	}
	s.Growth = Growth{Factor: 1, Lo: 1, Hi: 1}
	if stat.Variance(idx, nil) > 0 {
		a, b := stat.LinearRegression(idx, logs, nil, false)
		var rss float64
		for i := range idx {
			r := logs[i] - a - b*idx[i]
			rss += r * r
		}
		se := math.Sqrt(rss / float64(len(idx)-2) / (stat.Variance(idx, nil) * float64(len(idx)-1)))
		if lo, hi := b-z95*se, b+z95*se; lo > 0 || hi < 0 {
			s.Growth = Growth{Factor: math.Exp(b), Lo: math.Exp(lo), Hi: math.Exp(hi)}
		} else {
			s.Growth = Growth{Factor: 1, Lo: math.Exp(lo), Hi: math.Exp(hi)}
		}
	}
	base := make([]float64, len(idx))
	for i := range idx {
		base[i] = math.Exp(logs[i]) / math.Pow(s.Growth.Factor, idx[i])
	}
	if d, err := Durations(base, 0); err == nil {
		s.Tokens = &d
	}
}

// tokenLatency is the slope of seconds on thousands of tokens (gonum's
// stat.LinearRegression) when its 95% interval, ± z·se with se = √(RSS/(n−2) / Σ(x−x̄)²),
// lies above 0; else nil.
func tokenLatency(k, secs []float64) *ModelFit {
	n := len(k)
	if n < 10 || stat.Variance(k, nil) <= 0 {
		return nil
	}
	a, b := stat.LinearRegression(k, secs, nil, false)
	var rss float64
	for i := range k {
		r := secs[i] - a - b*k[i]
		rss += r * r
	}
	se := math.Sqrt(rss / float64(n-2) / (stat.Variance(k, nil) * float64(n-1)))
	if lo := b - z95*se; !(lo > 0) {
		return nil
	}
	return &ModelFit{Per1k: b, Lo: b - z95*se, Hi: b + z95*se, N: n}
}

func (s *Scenario) fitSubagents(obs Observed) {
	if len(obs.Spawns) == 0 || obs.StepsTried == 0 {
		return
	}
	c, err := Counts(obs.Spawns, 1)
	if err != nil {
		return
	}
	s.Subagents = &SubagentFit{Probability: Wilson(len(obs.Spawns), obs.StepsTried), Count: c, MaxDepth: max(1, obs.MaxDepth)}
}

// span is a stretch [From, To) of time at one tool.
type span struct{ From, To float64 }

func inSpans(ss []span, t float64) bool {
	for _, s := range ss {
		if t >= s.From && t < s.To {
			return true
		}
	}
	return false
}

// MergeIncidents is obs's incidents with those of one tool that no success separates
// merged into one: an outage the incidents view splits (a quiet minute inside it) reads
// as one. A success is an attempt at the tool sent between the two that succeeded. The
// result is in the order of start, then tool.
func MergeIncidents(obs Observed) []Incident {
	byTool := map[string][]Incident{}
	var names []string
	for _, in := range obs.Incidents {
		if byTool[in.Tool] == nil {
			names = append(names, in.Tool)
		}
		byTool[in.Tool] = append(byTool[in.Tool], in)
	}
	var out []Incident
	for _, name := range names {
		incs := byTool[name]
		slices.SortFunc(incs, func(a, b Incident) int { return cmp.Compare(a.Start, b.Start) })
		var atts []Attempt
		if i := slices.IndexFunc(obs.Tools, func(t ToolObs) bool { return t.Name == name }); i >= 0 {
			atts = obs.Tools[i].Attempts
		}
		cur := incs[0]
		for _, next := range incs[1:] {
			if next.Start <= cur.End || !succeeded(atts, cur.End, next.Start) {
				cur.End = math.Max(cur.End, next.End)
				continue
			}
			out = append(out, cur)
			cur = next
		}
		out = append(out, cur)
	}
	slices.SortStableFunc(out, func(a, b Incident) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Tool, b.Tool)) })
	return out
}

// succeeded says whether an attempt sent in [from, to) succeeded.
func succeeded(atts []Attempt, from, to float64) bool {
	for _, a := range atts {
		if a.Status == StatusOK && a.Start >= from && a.Start < to {
			return true
		}
	}
	return false
}

// faultSpans are the stretches of tool t that its fault windows cover: each incident, and
// around it the windows refined from its timeouts and fast failures (faults), which may
// begin before the incident's first minute or end after its last.
func faultSpans(t ToolObs, incs []Incident) []span {
	var out []span
	for _, in := range incs {
		if in.Tool != t.Name {
			continue
		}
		sp := span{in.Start, in.End}
		for _, st := range []string{StatusTimeout, StatusError} {
			if at, d, ok := refine(t.Attempts, in, st); ok {
				sp.From, sp.To = math.Min(sp.From, at), math.Max(sp.To, at+d)
			}
		}
		out = append(out, sp)
	}
	return out
}

// fitTool fits a tool from its attempts outside its fault windows: the latency of its successes
// (truncated at the timeout, since only a success that beat it is seen as one), the share
// of fast failures (transient), the timeout and the lost replies. A timed-out attempt's
// reply may have been lost or its service slow; the fitted latency already predicts the
// share S(timeout) of slow ones, so the lost share is q = (τ − S)/(1 − S) with τ the
// share of timeouts among the attempts that did not fail fast, and its interval is
// Wilson's interval of τ mapped through the same increasing function.
func fitTool(t ToolObs, windows []span) ToolFit {
	f := ToolFit{Name: t.Name}
	var lat, timeouts []float64
	n, errs := 0, 0
	for _, a := range t.Attempts {
		if a.Status == StatusOK {
			f.Slowest = math.Max(f.Slowest, a.Wall)
		}
		if inSpans(windows, a.Start) {
			continue
		}
		n++
		switch a.Status {
		case StatusOK:
			lat = append(lat, a.Seconds)
		case StatusTimeout:
			timeouts = append(timeouts, a.Wall)
		default:
			errs++
		}
	}
	if len(timeouts) > 0 {
		f.Timeout = stat.Quantile(0.5, stat.Empirical, sorted(timeouts), nil)
	}
	for _, a := range t.Attempts {
		if a.Status == StatusTimeout && f.Timeout == 0 {
			f.Timeout = a.Wall
		}
	}
	// A timeout below a success cannot be: the success would have timed out. The timed-out
	// attempts were then misread (an error taken for a timeout) or the timeout changed
	// during the run; the slowest success is the least timeout the run allows.
	if f.Timeout > 0 && f.Timeout < f.Slowest {
		f.TimedOut, f.Timeout = f.Timeout, f.Slowest
	}
	if d, err := Durations(lat, f.Timeout); err == nil {
		f.Latency = &d
		f.Median[0], f.Median[1], f.Median[2] = MedianInterval(positive(lat))
	}
	f.Transient = Wilson(errs, n)
	tau := Wilson(len(timeouts), n-errs)
	slow := 0.0
	if f.Latency != nil && f.Timeout > 0 {
		slow = 1 - f.Latency.CDF(f.Timeout)
	}
	lost := func(p float64) float64 {
		if slow >= 1 {
			return 0
		}
		return math.Max(0, (p-slow)/(1-slow))
	}
	f.Lost = Proportion{K: len(timeouts), N: n - errs, P: lost(tau.P), Lo: lost(tau.Lo), Hi: lost(tau.Hi)}
	switch {
	case t.Found > 0:
		f.Idempotency = "keyed"
	case t.NotFound > 0:
		f.Idempotency = "natural"
	}
	return f
}

func sorted(x []float64) []float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y
}

// faults turns each incident into a fault window. The window of the incident's timeouts,
// or else of its fast failures, is refined from the minute-wide incident to the attempts
// (below); the attempts sent in it decide the kind: mostly timeouts (≥ ½) a hang, nearly
// all fast failures (≥ 0.9) an outage, else the incident is a brownout whose probability
// is the failure share above the tool's transient share and whose slowdown is the
// successes' median latency over the tool's. A refined window starts halfway
// between the last success before the first failure and that failure, and ends halfway
// between the last failure and the next success, so its error is at most half a gap
// between two attempts.
func faults(obs Observed, tools []ToolFit) []FaultFit {
	var out []FaultFit
	for _, in := range obs.Incidents {
		i := slices.IndexFunc(obs.Tools, func(t ToolObs) bool { return t.Name == in.Tool })
		if i < 0 {
			continue
		}
		if f, ok := incidentFault(in, obs.Tools[i], tools[i]); ok {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b FaultFit) int { return cmp.Compare(a.At, b.At) })
	return out
}

func incidentFault(in Incident, t ToolObs, tf ToolFit) (FaultFit, bool) {
	f := FaultFit{Tool: t.Name, Incident: in}
	// count tallies the attempts sent in [from, to).
	count := func(from, to float64) (n, errs, tos int, okLat []float64) {
		for _, a := range t.Attempts {
			if a.Start < from || a.Start >= to {
				continue
			}
			n++
			switch a.Status {
			case StatusError:
				errs++
			case StatusTimeout:
				tos++
			default:
				okLat = append(okLat, a.Seconds)
			}
		}
		return
	}
	n, errs, tos, okLat := count(in.Start, in.End)
	if n == 0 {
		return f, false
	}
	// The window of each kind of failure, and the share of it among the attempts sent then.
	if tos > 0 {
		at, d, _ := refine(t.Attempts, in, StatusTimeout)
		if m, _, k, _ := count(at, at+d+1e-9); float64(k) >= 0.5*float64(m) && float64(tos) >= 0.5*float64(tos+errs) {
			f.Kind, f.At, f.For, f.Attempts, f.Failed = "hang", at, d, m, k
			return f, d > 0
		}
	}
	if errs > 0 {
		at, d, _ := refine(t.Attempts, in, StatusError)
		if m, k, _, _ := count(at, at+d+1e-9); float64(k) >= 0.9*float64(m) {
			f.Kind, f.At, f.For, f.Attempts, f.Failed = "outage", at, d, m, k
			return f, d > 0
		}
	}
	f.Kind, f.Attempts, f.Failed = "brownout", n, errs
	f.At, f.For = in.Start, in.End-in.Start
	base := tf.Transient.P
	if math.IsNaN(base) || base >= 1 {
		base = 0
	}
	f.Probability = math.Max(0, (float64(errs)/float64(n)-base)/(1-base))
	f.Slowdown = 1
	if tf.Latency != nil && len(okLat) > 0 && tf.Median[0] > 0 {
		f.Slowdown = math.Max(1, stat.Quantile(0.5, stat.Empirical, sorted(okLat), nil)/tf.Median[0])
	}
	return f, f.For > 0 && (f.Probability > 0 || f.Slowdown > 1)
}

// refine finds the window of the failures of status within the incident (see faults); ok
// is false when the incident holds none.
func refine(atts []Attempt, in Incident, status string) (at, dur float64, ok bool) {
	first, last := math.Inf(1), math.Inf(-1)
	for _, a := range atts {
		if a.Status == status && a.Start >= in.Start && a.Start < in.End {
			first, last = math.Min(first, a.Start), math.Max(last, a.Start)
		}
	}
	if math.IsInf(first, 1) {
		return 0, 0, false
	}
	// The neighbouring successes, looked for up to 5 minutes away (else the window ends
	// at its failures).
	before, after := math.Inf(-1), math.Inf(1)
	for _, a := range atts {
		if a.Status != StatusOK {
			continue
		}
		if a.Start < first && a.Start >= first-300 {
			before = math.Max(before, a.Start)
		}
		if a.Start > last && a.Start <= last+300 {
			after = math.Min(after, a.Start)
		}
	}
	// Failures of the kind that no success separates from the incident's belong to its
	// window, though the incidents view's minutes left them out.
	lo, hi := math.Max(before, first-300), math.Min(after, last+300)
	for _, a := range atts {
		if a.Status == status && a.Start > lo && a.Start < hi {
			first, last = math.Min(first, a.Start), math.Max(last, a.Start)
		}
	}
	if math.IsInf(before, -1) {
		before = first
	}
	if math.IsInf(after, 1) {
		after = last
	}
	start, end := (before+first)/2, (last+after)/2
	return start, end - start, true
}

// fitRetry reads the retry policy from the backoffs between a failed attempt's end and the
// next attempt of the same operation, outside fault windows (where breakers and budgets add
// waits of their own). The jitter is read from the spread of the first backoffs: equal
// gaps (5%/95% quantile ratio > 0.9) are none, a spread down to about half (> 0.4) equal,
// else full. See backoff for the initial backoff and the multiplier.
func fitRetry(obs Observed) RetryFit {
	r := RetryFit{MaxAttempts: 1, Jitter: "full", Multiplier: 2}
	var gaps []gap
	for _, t := range obs.Tools {
		windows := faultSpans(t, obs.Incidents)
		byOp := map[string]map[int]Attempt{}
		for _, a := range t.Attempts {
			r.MaxAttempts = max(r.MaxAttempts, a.Attempt)
			r.Largest = r.MaxAttempts
			if a.Op == "" {
				continue
			}
			if byOp[a.Op] == nil {
				byOp[a.Op] = map[int]Attempt{}
			}
			byOp[a.Op][a.Attempt] = a
		}
		for _, atts := range byOp {
			for n, a := range atts {
				b, ok := atts[n+1]
				if !ok || a.Status != StatusError || inSpans(windows, a.Start) {
					continue
				}
				gaps = append(gaps, gap{n, math.Max(0, b.Start-(a.Start+a.Wall))})
			}
		}
	}
	// Map order must not reach the result: sort.
	slices.SortFunc(gaps, func(a, b gap) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.s, b.s)) })
	var first []float64
	for _, g := range gaps {
		if g.n == 1 {
			first = append(first, g.s)
		}
	}
	r.Gaps = len(first)
	if len(first) < 5 {
		return r
	}
	q05 := stat.Quantile(0.05, stat.Empirical, first, nil)
	q95 := stat.Quantile(0.95, stat.Empirical, first, nil)
	switch {
	case q95 > 0 && q05/q95 > 0.9:
		r.Jitter = "none"
	case q95 > 0 && q05/q95 > 0.4:
		r.Jitter = "equal"
	}
	r.Initial, r.Multiplier, r.InitialHi = backoff(gaps, r.Jitter)
	// No cap is inferred: the cap is the largest backoff the attempts can reach.
	r.Max = r.Initial * math.Pow(r.Multiplier, float64(max(0, r.MaxAttempts-2)))
	return r
}

// gap is a backoff s (seconds) before attempt n+1.
type gap struct {
	n int
	s float64
}

// backoff estimates the initial backoff d and the multiplier m. With jitter, the backoff
// before attempt n+1 is drawn from [lo·D_n, D_n], D_n = d·m^(n−1), lo = 0 for full jitter
// and ½ for equal. The largest of k such draws falls short of D_n by a factor k/(k+1) on
// average, so D_n is estimated by the largest times (k+1)/k; its 95% interval is
// [largest, largest/0.05^(1/k)], since the largest of k draws is below D·(1 − ε) with
// probability (1 − ε)^k. d is D_1, and m is D_2/D_1 (rounded to 0.05) when at least 5
// second backoffs were seen, else the default 2. Without jitter the backoffs are the
// delays themselves: d is the median first backoff and m the median second over d.
func backoff(gaps []gap, jitter string) (d, m, hi float64) {
	by := map[int][]float64{}
	for _, g := range gaps {
		by[g.n] = append(by[g.n], g.s)
	}
	if jitter == "none" {
		d = stat.Quantile(0.5, stat.Empirical, by[1], nil)
		m = 2
		if len(by[2]) > 0 && d > 0 { // without jitter one backoff is the delay itself
			m = math.Max(1, stat.Quantile(0.5, stat.Empirical, by[2], nil)/d)
		}
		return d, math.Round(m*100) / 100, d
	}
	ceiling := func(g []float64) (est, hi float64) {
		k := float64(len(g))
		top := slices.Max(g)
		return top * (k + 1) / k, top / math.Pow(0.05, 1/k)
	}
	d, hi = ceiling(by[1])
	m = 2
	if len(by[2]) >= 5 && d > 0 {
		d2, _ := ceiling(by[2])
		m = math.Max(1, math.Round(d2/d*20)/20)
	}
	return d, m, hi
}

// fitHumans fits the reviewers: as many as ever reviewed at once, their review time and
// their approval share.
func fitHumans(rs []Review) *HumanFit {
	if len(rs) == 0 {
		return nil
	}
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	var secs []float64
	ok := 0
	for _, r := range rs {
		evs = append(evs, ev{r.Start, 1}, ev{r.Start + r.Seconds, -1})
		secs = append(secs, r.Seconds)
		if r.Approved {
			ok++
		}
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	cur, most := 0, 0
	for _, e := range evs {
		cur += e.d
		most = max(most, cur)
	}
	d, err := Durations(secs, 0)
	if err != nil {
		d = Dist{Family: Constant, Value: 0}
	}
	return &HumanFit{Reviewers: max(1, most), ReviewTime: d, Approve: Wilson(ok, len(rs))}
}
