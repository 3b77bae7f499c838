package compute

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Options configure a Sink.
type Options struct {
	// Prices is the run's price table as the trace stores it (StoredPrices); nil:
	// unpriced, the money metrics are undefined.
	Prices *scenarios.Prices
	// Redact, when set, is the trace writer's redaction of free text, which it applies to
	// termination reasons and model names: the reasons counted and the models priced here
	// are then the view's.
	Redact func(string) string
	// Guards: the run has a circuit breaker or a retry budget (recovery.breaker,
	// recovery.retry_budget), so operations can be parked. A park is placed on the keyed
	// span nearest to it, so only then are the keyed spans kept; a park in a run without
	// guards makes Finish fail.
	Guards bool
	// Investigations is how many investigations the run is expected to have (its
	// workload.investigations): a capacity hint, 0 for none.
	Investigations int
}

// GuardsOf reports whether scenario s has a guard that can park operations (Options.Guards).
func GuardsOf(s *scenarios.Scenario) bool {
	return s.Recovery.Breaker != nil || s.Recovery.RetryBudget != nil
}

// StoredPrices reads the price table of a run's config as the trace stores it (runs.config:
// the scenario's JSON, redacted), which is where the costs view reads prices and currency;
// nil when the run is unpriced.
func StoredPrices(config string) (*scenarios.Prices, error) {
	var c struct {
		Prices *scenarios.Prices `json:"prices"`
	}
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return nil, fmt.Errorf("compute: reading the prices of the run's config: %w", err)
	}
	return c.Prices, nil
}

// The kinds of a sign of trouble, in the order that breaks ties between a step's signs at
// one instant (views/06_recovery_episodes.sql).
const (
	kindFailed uint8 = iota
	kindTimedOut
	kindBlocked
	kindInvalid
	kindCrashed
	kindParked
	kindThrottled
)

// noTool is the tool of a sign or operation without one (NULL in SQL).
const noTool int32 = -1

// usPerMinute is a minute in microseconds, the resolution of a TIMESTAMP.
const usPerMinute = 60_000_000

// us is a simulated instant as DuckDB stores it: nanoseconds truncated to microseconds.
func us(ns int64) int64 { return ns / 1000 }

// minuteOf is sim_minute of a simulated instant.
func minuteOf(ns int64) int64 { return us(ns) / usPerMinute }

// inv is what the metrics need of one investigation: its row, once it arrives, and the
// totals of the records that name it.
type inv struct {
	seen                          bool // its investigations row arrived
	completed, terminated         bool
	trulyValid, validated         bool
	reduced                       bool // completed with scope reduced
	ended                         bool
	hasStart                      bool // a transition out of pending
	parent, root                  int64
	arrived, endedAt, started     int64 // ns
	escalations                   int64
	tokens                        int64
	reason                        int32   // index into Sink.reasons
	execCompute, execWasteCompute float64 // compute of its executions; of those duplicate or discarded
	spent, spentFailed            float64 // money of its spans; of its failed attempts' calls
	execSpent, execSpentWaste     float64 // money of its executions' compute; of those duplicate or discarded
	turnWaste                     int64   // tokens of its wasted model turns
	// tree totals, kept on a root's entry
	treeEscalations int64
	treeReduced     bool
	treeWrong       bool
}

// op is what the metrics need of one operation (op_key).
type op struct {
	tool      int32 // a tool of its execute_tool, inspect or keyed model-call spans, not the model
	attempted bool  // an attempt was sent
	valid     bool  // a validate span with status ok
	// the distinct span ids its execute_tool spans name in caused_by: the first two here
	// (the investigation's configuration and the turn that decided the operation, which
	// its retries name again), any others in Sink.moreCausers
	causer  [2]uint64
	causers int32
}

// tm is a tool's minute.
type tm struct {
	tool   int32
	minute int64
}

type tmCount struct {
	attempts, failed int64
	guarded          bool
}

// sign is a sign of trouble with an operation (views/03_disruptions.sql).
type sign struct {
	inv       int64
	key       record.OpKey
	at, known int64 // µs
	tool      int32 // its own tool; the operation's when noTool
	kind      uint8
}

// mark is a park on a breaker or a throttle of the retry budget, before it is placed on an
// operation.
type mark struct {
	inv  int64
	at   int64 // µs
	kind uint8
}

// keyed is a span that names an operation: where a mark finds its operation.
type keyed struct {
	inv   int64
	start int64 // µs
	id    uint64
	key   record.OpKey
	tool  int32
}

type plan struct {
	inv    int64
	start  int64 // µs
	id     uint64
	tokens int64
	bad    bool
}

// valid is a validate span with status ok that names an operation.
type valid struct {
	inv  int64
	step int32
	end  int64 // µs
}

// Sink computes the metrics of one run from its records; see the package documentation.
type Sink struct {
	opts Options
	end  int64 // ns: the run's last recorded instant

	invs   []inv
	sparse map[int64]*inv // ids outside the dense range

	tools  []string
	toolID map[string]int32

	reasons  []string // termination reasons, "" first
	reasonID map[string]int32
	unplaced bool // a park arrived in a run without guards

	attempts, operations int64
	failedCalls          int64
	ops                  map[record.OpKey]int32
	opList               []op
	moreCausers          map[int32][]uint64
	minutes              map[tm]*tmCount
	signs                []sign
	marks                []mark
	keyed                []keyed
	plans                map[uint64]int32
	planList             []plan
	valids               []valid
	validPerMinute       []int64

	hasWindow               bool
	firstWindow, lastWindow int64 // µs

	dupSideEffects, discarded int64
	compute                   float64

	// the price of the last model and tool looked up
	lastModel, lastTool     string
	modelCached, toolCached bool
	lastModelPrice          *scenarios.ModelPrice
	lastToolPrice           *scenarios.ToolPrice
}

var _ record.Sink = (*Sink)(nil)

// New returns an empty Sink.
func New(opts Options) *Sink {
	return &Sink{
		opts:        opts,
		sparse:      map[int64]*inv{},
		toolID:      map[string]int32{},
		reasons:     []string{""},
		reasonID:    map[string]int32{"": 0},
		ops:         make(map[record.OpKey]int32, opts.Investigations),
		moreCausers: map[int32][]uint64{},
		invs:        make([]inv, min(max(opts.Investigations+1, 1024), maxDense)),
		minutes:     map[tm]*tmCount{},
		plans:       make(map[uint64]int32, opts.Investigations),
		planList:    make([]plan, 0, opts.Investigations),
	}
}

// maxDense bounds the investigation ids kept in a slice; the simulator numbers them 1, 2, ...
const maxDense = 1 << 26

// invOf returns the entry of investigation id; the pointer is valid until the next call.
func (s *Sink) invOf(id int64) *inv {
	if id < 0 || id >= maxDense {
		e := s.sparse[id]
		if e == nil {
			e = &inv{}
			s.sparse[id] = e
		}
		return e
	}
	if id >= int64(len(s.invs)) {
		n := max(int64(2*len(s.invs)), id+1, 1024)
		grown := make([]inv, n)
		copy(grown, s.invs)
		s.invs = grown
	}
	return &s.invs[id]
}

// lookup returns the entry of investigation id when it has one.
func (s *Sink) lookup(id int64) *inv {
	if id >= 0 && id < int64(len(s.invs)) {
		return &s.invs[id]
	}
	return s.sparse[id]
}

func (s *Sink) tool(name string) int32 {
	if name == "" {
		return noTool
	}
	if id, ok := s.toolID[name]; ok {
		return id
	}
	id := int32(len(s.tools))
	s.tools = append(s.tools, name)
	s.toolID[name] = id
	return id
}

func (s *Sink) op(k record.OpKey) (*op, int32) {
	i, ok := s.ops[k]
	if !ok {
		i = int32(len(s.opList))
		s.opList = append(s.opList, op{tool: noTool})
		s.ops[k] = i
	}
	return &s.opList[i], i
}

// addCauser notes that operation i's execute_tool spans name span id in caused_by.
func (s *Sink) addCauser(o *op, i int32, id uint64) {
	switch {
	case o.causers > 0 && o.causer[0] == id || o.causers > 1 && o.causer[1] == id:
	case o.causers < 2:
		o.causer[o.causers] = id
		o.causers++
	case slices.Contains(s.moreCausers[i], id):
	default:
		s.moreCausers[i] = append(s.moreCausers[i], id)
		o.causers++
	}
}

// causersOf returns the distinct span ids operation i's execute_tool spans name in caused_by.
func (s *Sink) causersOf(o *op, i int32, buf []uint64) []uint64 {
	buf = append(buf[:0], o.causer[:min(o.causers, 2)]...)
	if o.causers > 2 {
		buf = append(buf, s.moreCausers[i]...)
	}
	return buf
}

func (s *Sink) minute(tool int32, m int64) *tmCount {
	k := tm{tool, m}
	c := s.minutes[k]
	if c == nil {
		c = &tmCount{}
		s.minutes[k] = c
	}
	return c
}

func (s *Sink) modelPrice(name string) *scenarios.ModelPrice {
	if s.opts.Prices == nil {
		return nil
	}
	if name != s.lastModel || !s.modelCached {
		stored := name
		if s.opts.Redact != nil {
			stored = s.opts.Redact(name)
		}
		s.lastModel, s.lastModelPrice, s.modelCached = name, s.opts.Prices.Model(stored), true
	}
	return s.lastModelPrice
}

func (s *Sink) toolPrice(name string) *scenarios.ToolPrice {
	if s.opts.Prices == nil {
		return nil
	}
	if name != s.lastTool || !s.toolCached {
		s.lastTool, s.lastToolPrice, s.toolCached = name, s.opts.Prices.Tool(name), true
	}
	return s.lastToolPrice
}

// Investigation keeps an investigation's row.
func (s *Sink) Investigation(r *record.Investigation) {
	s.end = max(s.end, r.ArrivedAt)
	if r.Ended {
		s.end = max(s.end, r.EndedAt)
	}
	e := s.invOf(r.InvestigationID)
	e.seen = true
	e.parent, e.root = r.ParentID, r.RootID
	e.arrived, e.ended, e.endedAt = r.ArrivedAt, r.Ended, r.EndedAt
	e.completed = r.FinalState == "completed"
	e.terminated = r.FinalState == "terminated"
	e.trulyValid, e.validated = r.TrulyValid, r.Validated
	e.reduced = r.Scope != "" && r.Scope != record.ScopeFull
	e.escalations, e.tokens = int64(r.Escalations), r.Tokens
	id, ok := s.reasonID[r.TerminationReason]
	if !ok {
		id = int32(len(s.reasons))
		s.reasons = append(s.reasons, r.TerminationReason)
		s.reasonID[r.TerminationReason] = id
	}
	e.reason = id
}

// Transition keeps when an investigation left pending, and parks.
func (s *Sink) Transition(r *record.Transition) {
	s.end = max(s.end, r.At)
	if (r.From == "" || r.From == "pending") && r.To != "pending" {
		e := s.invOf(r.InvestigationID)
		if !e.hasStart || r.At < e.started {
			e.hasStart, e.started = true, r.At
		}
	}
	if r.Action == "park" && (r.Reason == "breaker_open" || r.Reason == "retry_throttled") {
		s.unplaced = s.unplaced || !s.opts.Guards
		switch r.Reason {
		case "breaker_open":
			s.marks = append(s.marks, mark{r.InvestigationID, us(r.At), kindParked})
		case "retry_throttled":
			s.marks = append(s.marks, mark{r.InvestigationID, us(r.At), kindThrottled})
		}
	}
}

// Execution counts an execution's compute, duplicates and discarded results.
func (s *Sink) Execution(r *record.Execution) {
	if r.Outcome != "hung" {
		s.end = max(s.end, r.End)
	}
	duplicate := r.Execution > 1
	discarded := (r.Outcome == "ok" || r.Outcome == "lost") && !r.Delivered
	if duplicate && r.SideEffects {
		s.dupSideEffects++
	}
	if discarded {
		s.discarded++
	}
	s.compute += r.Compute
	var spent float64
	if tp := s.toolPrice(r.Tool); tp != nil {
		spent = r.Compute * tp.ComputeSecond
	}
	e := s.invOf(r.InvestigationID)
	e.execCompute += r.Compute
	e.execSpent += spent
	if duplicate || discarded {
		e.execWasteCompute += r.Compute
		e.execSpentWaste += spent
	}
}

// Fault keeps the extent of the fault windows.
func (s *Sink) Fault(r *record.Fault) {
	if !r.Window || r.End <= r.Start {
		return
	}
	start, end := us(r.Start), us(r.End)
	if !s.hasWindow || start < s.firstWindow {
		s.firstWindow = start
	}
	if !s.hasWindow || end > s.lastWindow {
		s.lastWindow = end
	}
	s.hasWindow = true
}

// Sample marks the minute before a sample guarded when the tool's breaker was open or half
// open, or operations were parked on it.
func (s *Sink) Sample(r *record.Sample) {
	if r.BreakerState == "open" || r.BreakerState == "half_open" || r.Parked > 0 {
		s.minute(s.tool(r.Tool), minuteOf(r.At)-1).guarded = true
	}
}

// Worker needs nothing.
func (s *Sink) Worker(*record.Worker) {}
