package fit

// Observed is what one run shows, in plain values: package analysis fills it from the
// trace tables of any run, imported or simulated, and uses nothing only a simulator knows
// (no fault table, no tool-side executions, no ground truth). Times are seconds since the
// run's time 0 (docs/fit.md says which instant that is).
type Observed struct {
	Name string
	// Arrivals are the root investigations' arrival times, sorted.
	Arrivals []float64
	// Steps are the steps of the investigations that completed with their full scope
	// (roots and subagents): a terminated one's steps are cut short.
	Steps []float64
	// MaxSteps is the most steps any investigation did.
	MaxSteps int
	// Turns are the successful model turns: duration (think time) and tokens, with the
	// index of the turn within its investigation (the step it precedes, from 0).
	Turns []Turn
	// StepsTried is how many steps were started on their first try (the chances to spawn);
	// Spawns the subagent groups started (children of one parent arriving at one instant)
	// and SpawnSizes their sizes; MaxDepth the deepest investigation (roots are 0).
	StepsTried int
	Spawns     []float64
	MaxDepth   int
	Tools      []ToolObs
	// Incidents are the incidents view's rows: correlated trouble at a tool.
	Incidents []Incident
	// Inspections says whether any operation was looked up before it was retried.
	Inspections bool
	// Humans are the human reviews, when the trace names them.
	Humans []Review
	// Escalations counts escalations; Terminated the investigations ended by spent retries.
	Escalations int
	// Metrics are the run's metrics, for calibration (NaN when undefined).
	Metrics map[string]float64
	// Recoveries are the lengths (seconds) of the recovery episodes that a tool's failure
	// began (failed or timed out) and that ended recovered.
	Recoveries []float64
	// Episodes are the run's recovery episodes (the recovery_episodes view), in any order
	// that does not depend on the database's.
	Episodes []Episode
}

// Episode is one recovery episode: the disrupted step of one investigation.
type Episode struct {
	// Tool is the tool whose failure began the episode: "" when a tool's failure (failed or
	// timed out) did not begin it (the model provider, an invalid result, a crash, a park).
	Tool string
	// Failed is the failed attempts in the episode.
	Failed int
	// Outcome is recovered, ended or in_flight; EndedAs the investigation's final state
	// (completed, terminated) when it ended.
	Outcome, EndedAs string
	// Investigation is the investigation the episode is in (0 when not known).
	Investigation int64
}

// Turn is one successful model turn.
type Turn struct {
	Index   int
	Seconds float64
	Tokens  float64
}

// ToolObs is one tool's attempts (sent, not blocked) in start order.
type ToolObs struct {
	Name     string
	Attempts []Attempt
	// Found is how many lookups of the tool found the operation's result, NotFound how
	// many found nothing (both 0 when there were none).
	Found, NotFound int
}

// Status of an attempt.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusTimeout = "timeout"
)

// Attempt is one attempt at a tool.
type Attempt struct {
	Start   float64 // sent
	Seconds float64 // end − start − queue wait: the service time for a success
	Wall    float64 // end − start
	Status  string  // ok | error | timeout
	Class   string  // the failure class ("" for none)
	Op      string  // the operation key ("" when unknown)
	Attempt int     // 1 = first try
}

// Incident is a row of the incidents view.
type Incident struct {
	Tool       string
	Start, End float64
}

// Review is one human review.
type Review struct {
	Start, Seconds float64
	Approved       bool
}
