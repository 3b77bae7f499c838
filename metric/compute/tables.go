package compute

// The derived tables of a run: every quantity mayday derives from a run's records, beyond
// its metrics row, as rows of a table (docs/tables.md). A Sink computes them with the row
// (Sink.Tables), so each is written once, here, and computed once, when the run is stored;
// package analysis stores the rows in tables of the same names and columns.
//
// A row type is a struct whose fields are the table's columns, in order, each tagged
// `db:"<column>"`. Field types map to SQL types: int64 BIGINT, int32 INTEGER, float64
// DOUBLE, string VARCHAR, bool BOOLEAN, Time TIMESTAMP, []string VARCHAR[], and the Null*
// types the same, NULL when not Valid.

// Time is an instant as a TIMESTAMP stores it: microseconds since the Unix epoch, UTC.
type Time int64

// TimeOf is the TIMESTAMP of a record's instant (nanoseconds since record.Epoch), truncated
// to the microsecond as DuckDB stores it.
func TimeOf(ns int64) Time { return Time((epochNs + ns) / 1000) }

// epochNs is record.Epoch (simulated time 0, as Unix nanoseconds).
const epochNs int64 = 1767225600 * 1e9

// NullFloat is a DOUBLE that may be NULL.
type NullFloat struct {
	V     float64
	Valid bool
}

// NullInt is a BIGINT that may be NULL.
type NullInt struct {
	V     int64
	Valid bool
}

// NullString is a VARCHAR that may be NULL.
type NullString struct {
	V     string
	Valid bool
}

// NullTime is a TIMESTAMP that may be NULL.
type NullTime struct {
	V     Time
	Valid bool
}

// NullBool is a BOOLEAN that may be NULL.
type NullBool struct {
	V     bool
	Valid bool
}

// Float, Int, String, TimeAt and Bool are valid values of the Null types.
func Float(v float64) NullFloat  { return NullFloat{v, true} }
func Int(v int64) NullInt        { return NullInt{v, true} }
func String(v string) NullString { return NullString{v, true} }
func TimeAt(v Time) NullTime     { return NullTime{v, true} }
func Bool(v bool) NullBool       { return NullBool{v, true} }

// Incident is a row of incidents (docs/metrics.md, incidents): a span of one tool's calls
// whose failures the incident rule (package metric/detect) found far above the tool's
// baseline, from its first failed call to the first call after its last one that did not
// fail (or the run's end).
type Incident struct {
	RunID                  string   `db:"run_id"`
	Incident               int64    `db:"incident"`
	Tool                   string   `db:"tool"`
	Start                  Time     `db:"start"`
	End                    Time     `db:"end"`
	Minutes                float64  `db:"minutes"`
	DetectedAt             Time     `db:"detected_at"`
	Calls                  int64    `db:"calls"`
	FailedAttempts         int64    `db:"failed_attempts"`
	AffectedInvestigations int64    `db:"affected_investigations"`
	Parked                 int64    `db:"parked"`
	Throttled              int64    `db:"throttled"`
	RetriesSent            int64    `db:"retries_sent"`
	Baseline               float64  `db:"baseline"`
	FaultIDs               []string `db:"fault_ids"`
}

// Saturation is a row of saturation: a span of one tool's calls whose capacity refusals (a
// rate limit, a queue limit, load shedding) were far above the tool's baseline, found by the
// same rule as incidents; a refusal is never evidence of an incident.
type Saturation struct {
	RunID   string  `db:"run_id"`
	Episode int64   `db:"episode"`
	Tool    string  `db:"tool"`
	Start   Time    `db:"start"`
	End     Time    `db:"end"`
	Minutes float64 `db:"minutes"`
	Calls   int64   `db:"calls"`
	Refused int64   `db:"refused"`
}

// ToolMinute is a row of tool_minutes: a tool's calls in one minute of the run, and whether
// an incident of the tool covered part of it.
type ToolMinute struct {
	RunID          string `db:"run_id"`
	Tool           string `db:"tool"`
	Minute         int64  `db:"minute"`
	Start          Time   `db:"start"`
	Attempts       int64  `db:"attempts"`
	FailedAttempts int64  `db:"failed_attempts"`
	Retries        int64  `db:"retries"`
	Refused        int64  `db:"refused"`
	Parked         int64  `db:"parked"`
	Throttled      int64  `db:"throttled"`
	Guarded        bool   `db:"guarded"`
	InIncident     bool   `db:"in_incident"`
}

// Episode is a row of recovery_episodes (docs/metrics.md, recovery episodes).
type Episode struct {
	RunID            string     `db:"run_id"`
	RootID           NullInt    `db:"root_id"`
	InvestigationID  NullInt    `db:"investigation_id"`
	Tool             NullString `db:"tool"`
	OpKey            NullString `db:"op_key"`
	StepKey          string     `db:"step_key"`
	FirstKind        NullString `db:"first_kind"`
	Signs            int64      `db:"signs"`
	FailedAttempts   int64      `db:"failed_attempts"`
	Start            Time       `db:"start"`
	DetectedAt       NullTime   `db:"detected_at"`
	End              Time       `db:"end"`
	Outcome          string     `db:"outcome"`
	EndedAs          NullString `db:"ended_as"`
	Seconds          float64    `db:"seconds"`
	DetectionSeconds NullFloat  `db:"detection_seconds"`
	RepairSeconds    NullFloat  `db:"repair_seconds"`
}

// CurvePoint is a row of recovery_curve: the Kaplan–Meier estimate of the share of
// recovery episodes recovered within each episode length (docs/metrics.md).
type CurvePoint struct {
	RunID          string  `db:"run_id"`
	Seconds        float64 `db:"seconds"`
	AtRisk         int64   `db:"at_risk"`
	Recovered      int64   `db:"recovered"`
	NeverRecovered int64   `db:"never_recovered"`
	Censored       int64   `db:"censored"`
	OpenBefore     float64 `db:"open_before"`
	RecoveredShare float64 `db:"recovered_share"`
}

// GoodputMinute is a row of goodput: the valid results delivered in each minute of the
// run, beside the extent of the fault windows (docs/metrics.md, goodput_recovery_time, whose
// test counts results, not minutes).
type GoodputMinute struct {
	RunID            string   `db:"run_id"`
	Minute           int64    `db:"minute"`
	Start            Time     `db:"start"`
	ValidResults     int64    `db:"valid_results"`
	FirstFaultAt     NullTime `db:"first_fault_at"`
	FaultEndAt       NullTime `db:"fault_end_at"`
	ArrivalsContinue bool     `db:"arrivals_continue"`
}

// Tables are the derived tables of one run, each a slice of its rows but recovery_episodes,
// which a Sink makes a range at a time as it is stored (EpisodeCount, EpisodeRange).
type Tables struct {
	Curve       []CurvePoint
	Goodput     []GoodputMinute
	Lifecycle   []LifecycleRow
	Costs       []Cost
	Incidents   []Incident
	Saturation  []Saturation
	ToolMinutes []ToolMinute
	ToolStats   []ToolStat

	episodeCount int                                         // rows episodeRange makes
	episodeRange func(dst []Episode, from, to int) []Episode // nil without rows
}

// EpisodeCount is the number of rows of recovery_episodes.
func (t *Tables) EpisodeCount() int { return t.episodeCount }

// EpisodeRange appends the rows from to to (0 <= from <= to <= EpisodeCount) of
// recovery_episodes to dst.
func (t *Tables) EpisodeRange(dst []Episode, from, to int) []Episode {
	if from == to {
		return dst
	}
	return t.episodeRange(dst, from, to)
}
