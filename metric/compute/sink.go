package compute

import (
	"encoding/json"
	"fmt"
	"github.com/mayday-sim/mayday/metric/detect"
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
	// MaxHeld bounds the spans and transitions the Sink holds for investigations that have
	// not ended (0: no bound). Past it the Sink lets go of everything, takes no more records
	// and Finish fails with ErrTooLarge, so that a caller with the trace in a database asks
	// the views instead: a run whose investigations all stay open at once (an overloaded
	// fleet) would otherwise keep its whole trace here. The count depends only on the
	// records, so the same run always takes the same path.
	MaxHeld int64
	// Origin is the Unix time in microseconds of the records' time 0, which the tables'
	// TIMESTAMPs add back: 0 is simulated time 0 (record.Epoch); an imported run replayed
	// from its stored trace counts from its own first instant (see run_origin_us).
	Origin int64
	// Replay: the records come from a stored run, replayed in an order the simulator could
	// have written them; an operation key that names another investigation (an imported or
	// hand-made trace may hold one) is then kept with the investigation whose span names it,
	// instead of failing Finish with ErrOrder.
	Replay bool
	// Tables: the run's derived tables are wanted (Sink.Tables), as they are for a run that
	// is stored; without it the Sink computes only the metrics row, and keeps nothing only
	// the tables need.
	Tables bool
	// UnknownQueueWait: the spans' queue waits are unknown (an imported run's, stored NULL):
	// tool_stats' queue waits are then those of the model's calls only (ToolStatsOptions).
	UnknownQueueWait bool
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

// inv is what the metrics need of one investigation while it runs: its row, once it
// arrives, the totals of the records that name it, and the summaries of its operations,
// model turns, signs of trouble and valid results. Its row comes after every span and
// transition that names it (the simulator ends an investigation's work before it writes
// the row), so the row settles the investigation (Sink.settle) and the entry is let go;
// only executions may arrive later, and they are added to the totals directly.
type inv struct {
	id                            int64
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
	reason                        string
	finalState                    string
	execCompute, execWasteCompute float64 // compute of its executions; of those duplicate or discarded
	spent, spentFailed            float64 // money of its spans; of its failed attempts' calls
	execSpent, execSpentWaste     float64 // money of its executions' compute; of those duplicate or discarded

	held   int64 // its spans and transitions (Sink.held)
	ops    []op  // its operations, indexed by Sink.ops
	shadow bool  // ops holds an entry of its own for a key another investigation has in Sink.ops
	plans  []plan
	signs  []sign
	marks  []mark
	keyed  []keyed
	valids []valid
	calls  []callRef
}

// reset empties e for another investigation, keeping its slices' memory.
func (e *inv) reset(id int64) {
	*e = inv{id: id, ops: e.ops[:0], plans: e.plans[:0], signs: e.signs[:0], marks: e.marks[:0],
		keyed: e.keyed[:0], valids: e.valids[:0], calls: e.calls[:0]}
}

// op is what the metrics need of one operation (op_key).
type op struct {
	key       record.OpKey
	tool      int32 // a tool of its execute_tool, inspect or keyed model-call spans, not the model
	attempted bool  // an attempt was sent
	valid     bool  // a validate span with status ok
	// the distinct span ids its execute_tool spans name in caused_by: the first two here
	// (the investigation's configuration and the turn that decided the operation, which
	// its retries name again), any others in more
	causer  [2]uint64
	causers int32
	more    []uint64
}

// tm is a tool's minute.
type tm struct {
	tool   int32
	minute int64
}

type tmCount struct {
	attempts, failed, retries, refused, parked, throttled int64
	guarded                                               bool
}

// sign is a sign of trouble with an operation (views/03_disruptions.sql).
type sign struct {
	key       record.OpKey
	at, known int64 // µs
	tool      int32 // its own tool; the operation's when noTool
	kind      uint8
}

// mark is a park on a breaker or a throttle of the retry budget, before it is placed on an
// operation.
type mark struct {
	at   int64 // µs
	kind uint8
}

// keyed is a span that names an operation: where a mark finds its operation.
type keyed struct {
	start int64 // µs
	id    uint64
	key   record.OpKey
	tool  int32
}

// plan is a model turn.
type plan struct {
	start  int64 // µs
	id     uint64
	tokens int64
	bad    bool
}

// planRef finds a model turn: the investigation whose entry holds it, and where.
type planRef struct {
	inv int64
	i   int32
}

// valid is a validate span with status ok that names an operation.
type valid struct {
	key record.OpKey
	end int64 // µs
}

// The state of a settled investigation, by id (Sink.states): what its row said that the
// metrics of its root need, and whether its work counts as wasted.
const (
	stSettled     uint16 = 1 << iota // its entry was settled
	stSeen                           // its row arrived
	stRoot                           // a root (parent 0)
	stCompleted                      // final state completed
	stTerminated                     // final state terminated
	stTrulyValid                     // its result is truly valid
	stValidated                      // validated
	stTreeEsc                        // (root) an investigation of its tree escalated
	stTreeReduced                    // (root) an investigation of its tree completed with scope reduced
	stTreeWrong                      // (root) an investigation of its tree completed, not truly valid
	stResolved                       // whether it is complete (it and its root completed) is known
	stComplete                       // it and its root completed
)

// waste is the wasted tokens, compute and money of settled investigations, as they count
// when their investigation is complete (c) and when it is not (n).
type waste struct {
	tokC, tokN         int64
	computeC, computeN float64
	costC, costN       float64
}

func (w *waste) add(o waste) {
	w.tokC, w.tokN = w.tokC+o.tokC, w.tokN+o.tokN
	w.computeC, w.computeN = w.computeC+o.computeC, w.computeN+o.computeN
	w.costC, w.costN = w.costC+o.costC, w.costN+o.costN
}

// pending is the waste of the completed investigations of a root that has not settled.
type pending struct {
	waste
	members []int64
}

// Sink computes the metrics of one run from its records; see the package documentation.
type Sink struct {
	opts Options
	end  int64 // ns: the run's last recorded instant
	late bool  // a span or transition named a settled investigation
	held int64 // spans and transitions of live investigations (Options.MaxHeld)
	over bool  // held passed Options.MaxHeld: the Sink let go of everything
	// finished: Finish has run (once only: it lets go of the calls and results it reads)
	finished bool

	live   map[int64]*inv  // investigations not settled
	free   []*inv          // settled entries, for reuse
	states idFlags[uint16] // settled investigations by id (st* bits)

	tools names

	reasons  map[string]int64 // terminated roots by redacted reason
	unplaced bool             // a park arrived in a run without guards

	attempts, operations int64
	failedCalls          int64
	ops                  packedMap[record.OpKey, int32] // the operations of live investigations: index in their entry
	plans                map[uint64]planRef             // the model turns of live investigations
	minutes              packedMap[tm, *tmCount]
	validPerMinute       []int64

	// the settled investigations
	started, completed, terminated, validated float64
	tokens                                    int64
	wasted                                    waste // settled, not complete
	wastedComplete                            waste // settled, complete
	pend                                      map[int64]*pending
	pendingRoot                               map[int64]int64 // member -> root, while pending
	cost                                      float64
	episodeRows                               chunks[episodeRec] // every recovery episode, in the order they settle
	finals                                    names              // investigations' final states (episodeRec.endedAs)
	openEpisodes                              []int              // those in flight at the end: their end is the run's
	curveRows                                 []CurvePoint
	goodputRows                               []GoodputMinute
	calls                                     []packedList // every tool's calls (packCall), by tool
	hits                                      [][]hit      // every tool's hits, by tool
	retried                                   [][]int64    // every tool's starts of calls a retry followed
	faults                                    names
	incidentRows                              []Incident
	saturationRows                            []Saturation
	minuteRows                                []ToolMinute
	life                                      *Lifecycle  // the lifecycle table
	costs                                     *Costs      // the costs table
	stats                                     *ToolStats  // the tool_stats table
	more                                      record.Sink // the three above, which take every record; nil without Options.Tables
	origin                                    int64       // Options.Origin, or simulated time 0: what Sink.at adds
	episodesDone                              []int64     // length (µs)<<2 | outcome (0 recovered, 1 never)
	censored                                  []int64     // starts (µs) of episodes still open at the end
	pendWait, subPendWait                     []int64     // µs
	pendArrived, subPendArrived               []int64     // arrivals (µs) of investigations that never started
	rootArrived, rootEnded                    []int64     // µs
	turnBuf                                   []*plan
	idBuf                                     []uint64

	validAt                 packedList // every valid result's instant (µs, orderedBits), for goodput
	windows                 []detect.Window
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
	s := &Sink{
		opts:        opts,
		live:        map[int64]*inv{},
		reasons:     map[string]int64{},
		ops:         newPackedMap[record.OpKey, int32](packOp),
		plans:       map[uint64]planRef{},
		minutes:     newPackedMap[tm, *tmCount](packMinute),
		pend:        map[int64]*pending{},
		pendingRoot: map[int64]int64{},
		states:      newIDFlags[uint16](opts.Investigations),
		origin:      opts.Origin,
	}
	if s.origin == 0 {
		s.origin = epochNs / 1000
	}
	if opts.Tables {
		// The records count from the Sink's time 0 (TimeOf(0)); Tables moves the rows'
		// instants to Options.Origin.
		s.life = NewLifecycle(TimeOf(0))
		s.costs = NewCosts(CostsOptions{Prices: opts.Prices, Redact: opts.Redact})
		s.stats = NewToolStats(ToolStatsOptions{UnknownQueueWait: opts.UnknownQueueWait})
		s.more = record.Tee{s.life, s.costs, s.stats}
	}
	return s
}

// state returns the state bits of investigation id (0 until it settles).
func (s *Sink) state(id int64) uint16 { return s.states.get(id) }

// setState adds bits to the state of investigation id.
func (s *Sink) setState(id int64, bits uint16) { s.states.set(id, bits) }

// invOf returns the live entry of investigation id, nil when it has settled (the record
// naming it came late: s.late).
func (s *Sink) invOf(id int64) *inv {
	if e := s.live[id]; e != nil {
		return e
	}
	if s.state(id)&stSettled != 0 {
		s.late = true
		return nil
	}
	var e *inv
	if n := len(s.free); n > 0 {
		e, s.free = s.free[n-1], s.free[:n-1]
	} else {
		e = &inv{}
	}
	e.reset(id)
	s.live[id] = e
	return e
}

// names numbers the distinct names it is given (tools, faults), 0, 1, ..., in the order
// they first came; "" is none (-1).
type names struct {
	list []string
	ids  map[string]int32
}

func (n *names) id(name string) int32 {
	if name == "" {
		return -1
	}
	if id, ok := n.ids[name]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = map[string]int32{}
	}
	id := int32(len(n.list))
	n.list = append(n.list, name)
	n.ids[name] = id
	return id
}

// tool returns the number of a tool, noTool for none.
func (s *Sink) tool(name string) int32 { return s.tools.id(name) }

// op returns operation k of investigation e (k.Investigation), adding it when new.
func (s *Sink) op(e *inv, k record.OpKey) *op {
	if j, ok := s.opIndex(e, k); ok {
		return &e.ops[j]
	}
	n := len(e.ops)
	e.ops = append(e.ops, op{key: k, tool: noTool, more: e.opMore(n)})
	if _, taken := s.ops.get(k); taken {
		// The key is another live investigation's operation (not what the simulator
		// writes; s.late says so): this investigation keeps its own entry for it.
		e.shadow = true
	} else {
		s.ops.put(k, int32(n))
	}
	return &e.ops[n]
}

// opIndex returns where investigation e keeps operation k.
func (s *Sink) opIndex(e *inv, k record.OpKey) (int, bool) {
	// An investigation's keys are distinct (op adds one only when it is missing), and the
	// records of an operation mostly follow one another: its latest operation first.
	n := len(e.ops)
	if n > 0 && e.ops[n-1].key == k {
		return n - 1, true
	}
	i, ok := s.ops.get(k)
	if ok && int(i) < n && e.ops[i].key == k {
		return int(i), true
	}
	// Every operation of e is in s.ops at its index, but for its own entries of another
	// investigation's keys (e.shadow): only then can k be elsewhere in e.ops.
	if ok || e.shadow {
		for j := range e.ops {
			if e.ops[j].key == k {
				return j, true
			}
		}
	}
	return 0, false
}

// opMore returns the spare memory of the i-th operation's extra causers, when an earlier
// investigation of this entry had one there.
func (e *inv) opMore(i int) []uint64 {
	if i < cap(e.ops) {
		return e.ops[:i+1][i].more[:0]
	}
	return nil
}

// addCauser notes that operation o's execute_tool spans name span id in caused_by.
func addCauser(o *op, id uint64) {
	switch {
	case o.causers > 0 && o.causer[0] == id || o.causers > 1 && o.causer[1] == id:
	case o.causers < 2:
		o.causer[o.causers] = id
		o.causers++
	case slices.Contains(o.more, id):
	default:
		o.more = append(o.more, id)
		o.causers++
	}
}

// causersOf returns the distinct span ids operation o's execute_tool spans name in caused_by.
func causersOf(o *op, buf []uint64) []uint64 {
	buf = append(buf[:0], o.causer[:min(o.causers, 2)]...)
	return append(buf, o.more...)
}

func (s *Sink) minute(tool int32, m int64) *tmCount {
	k := tm{tool, m}
	c, _ := s.minutes.get(k)
	if c == nil {
		c = &tmCount{}
		s.minutes.put(k, c)
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

// Investigation takes an investigation's row, which settles it (see inv).
func (s *Sink) Investigation(r *record.Investigation) {
	if s.over {
		return
	}
	if s.more != nil {
		s.more.Investigation(r)
	}
	s.end = max(s.end, r.ArrivedAt)
	if r.Ended {
		s.end = max(s.end, r.EndedAt)
	}
	e := s.invOf(r.InvestigationID)
	if e == nil {
		return
	}
	e.seen = true
	e.parent, e.root = r.ParentID, r.RootID
	e.arrived, e.ended, e.endedAt = r.ArrivedAt, r.Ended, r.EndedAt
	e.completed = r.FinalState == "completed"
	e.terminated = r.FinalState == "terminated"
	e.trulyValid, e.validated = r.TrulyValid, r.Validated
	e.reduced = r.Scope != "" && r.Scope != record.ScopeFull
	e.escalations, e.tokens = int64(r.Escalations), r.Tokens
	e.reason = r.TerminationReason
	e.finalState = r.FinalState
	s.settle(e)
}

// Transition keeps when an investigation left pending, and parks.
func (s *Sink) Transition(r *record.Transition) {
	if s.over {
		return
	}
	if s.more != nil {
		s.more.Transition(r)
	}
	defer s.count(r.InvestigationID)
	s.end = max(s.end, r.At)
	start := (r.From == "" || r.From == "pending") && r.To != "pending"
	park := r.Action == "park" && (r.Reason == "breaker_open" || r.Reason == "retry_throttled")
	if !start && !park {
		return
	}
	e := s.invOf(r.InvestigationID)
	if e == nil {
		return
	}
	switch {
	case start && !e.hasStart:
		e.hasStart, e.started = true, r.At
	case start:
		e.started = min(e.started, r.At) // the first start, whatever order they come in
	}
	if park {
		s.unplaced = s.unplaced || !s.opts.Guards
		switch r.Reason {
		case "breaker_open":
			e.marks = append(e.marks, mark{us(r.At), kindParked})
		case "retry_throttled":
			e.marks = append(e.marks, mark{us(r.At), kindThrottled})
		}
	}
}

// Execution counts an execution's compute, duplicates and discarded results.
func (s *Sink) Execution(r *record.Execution) {
	if s.over {
		return
	}
	if s.more != nil {
		s.more.Execution(r)
	}
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
	s.cost += spent
	if e := s.live[r.InvestigationID]; e != nil || s.state(r.InvestigationID)&stSettled == 0 {
		if e == nil {
			e = s.invOf(r.InvestigationID)
		}
		e.execCompute += r.Compute
		e.execSpent += spent
		if duplicate || discarded {
			e.execWasteCompute += r.Compute
			e.execSpentWaste += spent
		}
		return
	}
	// An execution of a settled investigation (a tool still executing after it ended).
	w := waste{computeN: r.Compute, costN: spent}
	if duplicate || discarded {
		w.computeC, w.costC = r.Compute, spent
	}
	s.lateWaste(r.InvestigationID, w)
}

// Fault keeps the extent of the fault windows.
func (s *Sink) Fault(r *record.Fault) {
	if s.over {
		return
	}
	if !r.Window || us(r.End) <= us(r.Start) { // as the trace keeps them: to the microsecond
		return
	}
	start, end := us(r.Start), us(r.End)
	s.windows = append(s.windows, detect.Window{Start: start, End: end})
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
	if s.over {
		return
	}
	if r.BreakerState == "open" || r.BreakerState == "half_open" || r.Parked > 0 {
		s.minute(s.tool(r.Tool), minuteOf(r.At)-1).guarded = true
	}
}

// Worker needs nothing.
func (s *Sink) Worker(*record.Worker) {}

// count adds a span or transition of investigation id to what the Sink holds, when the
// investigation is live, and lets go of everything past Options.MaxHeld.
func (s *Sink) count(id int64) {
	e := s.live[id]
	if e == nil {
		return
	}
	e.held++
	s.held++
	if s.opts.MaxHeld > 0 && s.held > s.opts.MaxHeld {
		// Everything goes: Finish fails with ErrTooLarge whatever else arrives.
		*s = Sink{opts: s.opts, over: true}
	}
}
