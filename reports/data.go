package reports

// The types in this file are what a report shows, as plain values: the database loader fills
// them (load.go) and the charts and pages are drawn from them alone, so the drawing code can
// be tested without a database. Times are seconds of simulated time since the run's start.

// Run is one column of a report: one scenario configuration with one or more seeds. The
// metrics table shows every seed (the mean and its interval when there are several); charts
// and detail tables show the first seed, Seeds[0].
type Run struct {
	Label       string // what the run is: its folder, or its sweep point and values; unique
	Key         string // a short unique name for legends and column headers; "" = Label
	Source      string // the run folder or database it was read from
	Point       string // the sweep grid point ("p3"), or "" outside a sweep
	Scenario    string
	Description string
	Seeds       []SeedInfo
	Metrics     []Metric // analysis.MetricNames order, then terminated_<reason> counts
	// Unknown lists, for a run imported from traces, the metrics its trace cannot give,
	// with the reason (runs.config $.import.unknown); they read "not recorded".
	Unknown map[string]string

	Makespan  float64 // seconds, of the charted seed
	States    StateSeries
	Faults    []Window     // injected fault windows (outage, brownout, hang)
	Failures  []ToolSeries // failed attempts per tool per simulated minute
	Incidents []Incident
	Guards    []GuardSeries // retries and retry-budget tokens of the tools that failed
	Recovery  []float64     // recovery episode durations, seconds, ascending
	// RecoveryCurve is the share of all episodes recovered by each episode length
	// (recovery_curve view), ascending in Seconds; it stays below 1 when some never recover.
	RecoveryCurve []CurvePoint
	Tools         []ToolStat
	Cost          Cost
	Terminations  []Count // root investigations terminated, by reason
	Refusals      []Refusal
	Slowest       []Episode // the slowest recovery episodes, slowest first
}

// Name is the run's name in legends and column headers: Key, or else Label.
func (r *Run) Name() string {
	if r.Key != "" {
		return r.Key
	}
	return r.Label
}

// SeedInfo identifies one seed's run inside a Run.
type SeedInfo struct {
	RunID  string
	Seed   uint64
	Status string // complete | partial
	Digest string
}

// Metric is one row of the metrics table for one Run. With one seed Value is the `metrics`
// view's value; with several it is their mean and [Lo, Hi] its bootstrap interval.
type Metric struct {
	Name   string
	Value  float64 // NaN = undefined for this run (its denominator is zero)
	Lo, Hi float64 // valid when N > 1
	N      int     // seeds with a defined value
	Text   string  // Value as people read it
	Range  string  // "[lo, hi]" as people read it, or ""
}

// StateSeries counts investigations in each lifecycle state over time: Counts[i][j] is the
// number in States[i] at the end of the interval ending at Times[j].
type StateSeries struct {
	Step   float64 // seconds between samples
	Times  []float64
	States []string
	Counts [][]float64
}

// Window is an interval of simulated time: an injected fault or a breaker that was open.
type Window struct {
	Label      string
	Tool       string
	Start, End float64
}

// ToolSeries is one tool's values over time, one per simulated minute.
type ToolSeries struct {
	Tool   string
	Times  []float64
	Values []float64
}

// Incident is one row of the `incidents` view.
type Incident struct {
	Tool           string
	Start, End     float64
	FailedAttempts int64
	Affected       int64  // root investigations with a failed attempt in it
	Retries        int64  // retries sent during it
	Faults         string // the injected faults its failed attempts carried, comma-separated
}

// GuardSeries is one tool's fleet guards over time, from tool_samples.
type GuardSeries struct {
	Tool     string
	Times    []float64
	Retries  []float64 // retries sent per minute
	Tokens   []float64 // retry-budget tokens; empty when the budget is off
	Open     []Window  // intervals in which the breaker was open
	Failures int64     // failed attempts over the run
}

// ToolStat is one row of the `tool_stats` view.
type ToolStat struct {
	Tool          string
	Operations    int64
	Attempts      int64
	Amplification float64 // NaN when the tool received no attempt
	Errors        int64
	Timeouts      int64
	Duplicates    int64 // duplicate side effects
	Discarded     int64
	Incidents     int64
	MedianRecover float64 // seconds; NaN without recovery episodes
}

// Cost is what a completed root investigation cost in the charted seed (the metrics
// tokens_per_completion, compute_per_completion and wasted_compute_ratio), with the wasted
// compute split by why it was wasted. An execution wasted for several reasons counts once,
// under the first of duplicate, discarded, incomplete, so the parts add up.
type Cost struct {
	Tokens  float64 // tokens per completed investigation
	Compute float64 // compute-unit seconds per completed investigation
	Wasted  float64 // share of all compute that was wasted

	// Compute-unit seconds per completed investigation spent on executions beyond the first
	// of an operation, on results that never reached their investigation, and on work for
	// investigations that did not complete.
	Duplicate, Discarded, Incomplete float64
}

// Count is a count under a name.
type Count struct {
	Key string
	N   int64
}

// Refusal is one kind of supervisor suggestion the engine refused (a `transitions` row that
// changes no state, decided by the supervisor), with how often it happened.
type Refusal struct {
	State   string // the state the investigation stayed in
	Action  string // what the supervisor suggested
	Reason  string // the guardrail that refused it
	N       int64
	Example int64 // the first investigation it happened to, to query its transitions
}

// Episode is one row of the `recovery_episodes` view: from a step's first sign of trouble to
// its valid result, or to the investigation's end.
type Episode struct {
	InvestigationID int64
	RootID          int64
	Tool            string
	OpKey           string
	Start           float64
	Seconds         float64
	Outcome         string // recovered | ended | in_flight
	FailedAttempts  int64
}

// CurvePoint is one step of the recovery curve.
type CurvePoint struct {
	Seconds, Share float64
}
