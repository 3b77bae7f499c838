package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// fault is one configured fault, ready to fire. Faults are plain values built once from
// the scenario; each draws from its own stream, or from a stateless hash of (seed, fault,
// entity), so adding a fault shifts no other entity's draws. What a fault does is its
// kind's (see faultKind), and so are its parameters: x holds the kind's own typed value.
type fault struct {
	id    string
	kind  scenarios.FaultKind
	fk    *faultKind
	tool  int32 // -1 = every tool
	start int64 // windows: [start, end); the whole run otherwise
	end   int64
	key   uint64
	rng   *rand.Rand
	x     any    // the kind's parameters (a pointer to its own struct), set by its build
	err   string // how the calls it fails fail (the span's error.type); "" = not said
}

func (f *fault) active(now int64) bool { return now >= f.start && now < f.end }

// faultKind is one kind of fault, whole: its scenario rule, its typed parameters, the hooks
// the simulator calls at its hook points (in the manner of an error injector) and its
// record. Each kind lives in its own file (fault_<kind>.go) and registers itself; a hook
// it leaves nil is never called. At start the simulator files every fault under the hooks
// its kind has (per tool, per model, per investigation, per worker, timed), so the event
// loop calls plain functions through fixed tables: no switch on the kind, no allocation.
type faultKind struct {
	// rule is the kind's scenario rule: its keys, whether it is a window (it acts, and its
	// record spans, [at, at+for); otherwise the whole run), whether its tool may be the
	// model and whether the tools it hits need a timeout. Registering the kind registers
	// its rule with package scenarios, which decodes and validates faults by it.
	rule scenarios.FaultRule
	// build reads the kind's own parameters from the scenario's entry into f.x.
	build func(f *fault, c *scenarios.Fault)
	// params writes the parameters the `faults` record shows.
	params func(f *fault, p *params)

	// attempt is called for each attempt sent to a tool the fault hits, in configuration
	// order; it returns true when it settled the attempt (it then scheduled the reply or
	// the caller's timeout itself), else it may slow the attempt or lose its reply (w.fx).
	attempt func(w *sim, fi int32, a *agent, tok int32) bool
	// model is called for each model call when the fault names the model; it returns
	// true when it refused the call (w.adm says why; fi is the fault that refused it),
	// else it may slow the call (w.adm).
	model func(w *sim, fi int32) bool
	// unreachable: while active, the tool cannot answer lookups either.
	unreachable bool
	// investigation is called once when an investigation starts (parent nil for a root).
	investigation func(w *sim, f *fault, a, parent *agent)
	// worker is called whenever a worker starts working for a (at start and takeover).
	worker func(w *sim, fi int32, a *agent)
	// begin and end are called at the start and end of a window.
	begin, end func(w *sim, fi int32)
}

// hits is what a fault of the kind strikes, from the hooks it has (the faults table's hits).
func (fk *faultKind) hits() string {
	switch {
	case fk.attempt != nil || fk.model != nil || fk.unreachable:
		return record.HitsCalls
	case fk.investigation != nil:
		return record.HitsInvestigations
	default:
		return record.HitsWorkers
	}
}

// attemptEffects is what faults did to an attempt that still goes to the tool.
type attemptEffects struct {
	slow float64 // latency factor
	lost bool    // the reply will be lost
}

// admission is the outcome of the faults on one model call.
type admission struct {
	why  string  // the refusal's error, "" when admitted
	slow float64 // latency factor when admitted
}

var faultKinds = map[scenarios.FaultKind]*faultKind{}

// registerFault is called by each fault_<kind>.go file's init: it registers the kind's
// behaviour here and its scenario rule with package scenarios.
func registerFault(fk *faultKind) {
	k := fk.rule.Kind
	if faultKinds[k] != nil {
		panic("sim: fault kind " + string(k) + " registered twice")
	}
	if fk.build == nil {
		panic("sim: fault kind " + string(k) + " has no build")
	}
	scenarios.RegisterFault(fk.rule)
	faultKinds[k] = fk
}

// hashUnit is a stateless uniform draw in (0, 1) for (seed, a, b, n): used for decisions
// made once per (fault, investigation) pair, so they do not depend on any draw order.
func hashUnit(seed, a, b, n uint64) float64 {
	x := mix64(seed ^ mix64(a^mix64(b^mix64(n+0x2545f4914f6cdd1d))))
	return (float64(x>>11) + 0.5) / (1 << 53)
}

// hits reports whether per-investigation fault f, of probability p, applies to a: one
// stateless draw.
func (f *fault) hits(w *sim, a *agent, p float64) bool { return hashUnit(w.seed, f.key, a.key, 0) < p }

// buildFaults resolves the scenario's faults against its tools.
func buildFaults(sc *scenarios.Scenario, seed uint64) ([]fault, error) {
	fs := make([]fault, len(sc.Faults))
	for i := range sc.Faults {
		c := &sc.Faults[i]
		fk := faultKinds[c.Kind]
		if fk == nil {
			return nil, &Error{Key: "faults[" + strconv.Itoa(i) + "].kind", Msg: "unknown fault kind " + strconv.Quote(string(c.Kind))}
		}
		id := c.ID
		if id == "" {
			id = strconv.Itoa(i)
		}
		f := fault{id: id, kind: c.Kind, fk: fk, tool: -1, key: nameKey("fault:" + id), start: 0, end: math.MaxInt64}
		if c.Tool == scenarios.ModelTool && sc.Tool(c.Tool) < 0 {
			f.tool = int32(len(sc.Tools)) // the model provider
		} else if c.Tool != "" {
			f.tool = int32(sc.Tool(c.Tool)) // Validate refused an unknown tool
		}
		if fk.rule.Window {
			f.start = int64(c.At)
			f.end = int64(c.At + c.For)
		}
		fk.build(&f, c)
		f.err = c.ErrorType()
		f.rng = stream(seed, nsFault, f.key)
		fs[i] = f
	}
	return fs, nil
}

// fileFaults files every fault under the hooks its kind has, in configuration order.
func (w *sim) fileFaults() {
	for i := range w.faults {
		fk, fi := w.faults[i].fk, int32(i)
		if fk.attempt != nil || fk.unreachable {
			for t := range w.tools {
				if tl := w.faults[i].tool; tl < 0 || tl == int32(t) {
					if fk.attempt != nil {
						w.tools[t].faults = append(w.tools[t].faults, fi)
					}
					if fk.unreachable {
						w.tools[t].down = append(w.tools[t].down, fi)
					}
				}
			}
		}
		if fk.investigation != nil {
			w.perInv = append(w.perInv, fi)
		}
		if fk.worker != nil {
			w.crash = append(w.crash, fi)
		}
		if fk.begin != nil || fk.end != nil {
			w.timed = append(w.timed, fi)
		}
	}
}

// params builds the small JSON object of a `faults` record's parameters.
type params struct{ b strings.Builder }

func (p *params) field(k string, v float64) {
	if p.b.Len() > 1 {
		p.b.WriteByte(',')
	}
	p.b.WriteString(strconv.Quote(k))
	p.b.WriteByte(':')
	p.b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
}

// text writes a field whose value is a name (letters, digits and _ . : / -: no escapes).
func (p *params) text(k, v string) {
	if p.b.Len() > 1 {
		p.b.WriteByte(',')
	}
	p.b.WriteString(strconv.Quote(k))
	p.b.WriteByte(':')
	p.b.WriteString(strconv.Quote(v))
}

// record fills r with the fault as configured: windows with their start and end, the
// others spanning the run; Parameters is a small JSON object with the fields that matter.
func (f *fault) record(sc *scenarios.Scenario, r *record.Fault, horizon int64) {
	*r = record.Fault{FaultID: f.id, Kind: string(f.kind), Start: 0, End: horizon}
	if f.tool >= 0 { // else every tool: the record names none
		r.Tool = scenarios.ModelTool // the index after the tools' is the model's
		if int(f.tool) < len(sc.Tools) {
			r.Tool = sc.Tools[f.tool].Name
		}
	}
	if f.fk.rule.Window {
		r.Start, r.End, r.Window = f.start, f.end, true
	}
	r.Hits = f.fk.hits()
	var p params
	p.b.WriteByte('{')
	if f.fk.params != nil {
		f.fk.params(f, &p)
	}
	if f.err != "" {
		p.text("error", f.err)
	}
	p.b.WriteByte('}')
	r.Parameters = p.b.String()
}

// duration writes a window's length.
func (f *fault) duration(p *params) { p.field("duration_seconds", float64(f.end-f.start)/1e9) }
