package compute

import (
	"maps"
	"slices"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Cost is the row of costs of a priced run (docs/tables.md; its test-only SQL is analysis/testdata/oracle/07b_money.sql): the money it spent at its
// scenario's prices, in its currency, and how much of it was wasted.
type Cost struct {
	RunID      string     `db:"run_id"`
	Currency   NullString `db:"currency"`
	Cost       float64    `db:"cost"`
	WastedCost float64    `db:"wasted_cost"`
}

// CostsOptions configure a Costs.
type CostsOptions struct {
	// Prices is the run's price table as the trace stores it (StoredPrices); nil: the run
	// is unpriced and has no row.
	Prices *scenarios.Prices
	// Redact, when set, is the trace writer's redaction of free text, which it applies to
	// model names: the models priced here are then the view's.
	Redact func(string) string
}

// Costs computes the costs row of one run from its records (a record.Sink).
//
// Each span and execution costs its price; what of it is wasted whatever happens (the call
// of a failed attempt, the compute of a duplicate or discarded execution) is added at
// once, the rest only if its investigation turns out incomplete (see completion), so it is
// held, one sum per investigation, until that is known. Memory: a byte per investigation
// and a float per investigation whose completeness is not known yet.
type Costs struct {
	opts       CostsOptions
	spanCost   float64
	spanWasted float64
	execCost   float64
	execWasted float64
	done       completion
	pending    map[int64]*[2]float64 // unresolved investigations: their spans', executions' money wasted if incomplete

	models, tools map[string]price // prices looked up, by stored name
}

// price is the sum of the prices that match a name: the view joins every one.
type price struct{ a, b float64 }

var _ record.Sink = (*Costs)(nil)

// NewCosts returns an empty Costs.
func NewCosts(opts CostsOptions) *Costs {
	c := &Costs{opts: opts, pending: map[int64]*[2]float64{}, models: map[string]price{}, tools: map[string]price{}}
	c.done = newCompletion(c.resolved)
	return c
}

// modelPrice is the price per 1000 input and output tokens of model name (as the span
// names it), summed over the price table's entries for its stored name.
func (c *Costs) modelPrice(name string) price {
	if name == "" || c.opts.Prices == nil {
		return price{}
	}
	if p, ok := c.models[name]; ok {
		return p
	}
	stored := name
	if c.opts.Redact != nil {
		stored = c.opts.Redact(name)
	}
	var p price
	for _, m := range c.opts.Prices.Models {
		if m.Model == stored {
			p.a += m.Input
			p.b += m.Output
		}
	}
	c.models[name] = p
	return p
}

// toolPrice is the price per call and per compute-unit second of tool name, summed over the
// price table's entries for it.
func (c *Costs) toolPrice(name string, span bool) price {
	if c.opts.Prices == nil || span && name == "" { // a span's tool "" is NULL, an execution's ''
		return price{}
	}
	if p, ok := c.tools[name]; ok {
		return p
	}
	var p price
	for _, t := range c.opts.Prices.Tools {
		if t.Tool == name {
			p.a += t.Call
			p.b += t.ComputeSecond
		}
	}
	c.tools[name] = p
	return p
}

// hold adds money to what investigation id wastes if it is incomplete (i: 0 spans, 1
// executions).
func (c *Costs) hold(id int64, i int, money float64) {
	switch known, complete := c.done.known(id); {
	case known && complete:
	case known:
		c.waste(i, money)
	default:
		h := c.pending[id]
		if h == nil {
			h = &[2]float64{}
			c.pending[id] = h
		}
		h[i] += money
	}
}

func (c *Costs) waste(i int, money float64) {
	if i == 0 {
		c.spanWasted += money
	} else {
		c.execWasted += money
	}
}

func (c *Costs) resolved(id int64, complete bool) {
	h := c.pending[id]
	if h == nil {
		return
	}
	delete(c.pending, id)
	if !complete {
		c.waste(0, h[0])
		c.waste(1, h[1])
	}
}

// Span prices model tokens (plan and supervise spans) and tool calls (attempts sent).
func (c *Costs) Span(r *record.Span) {
	var money float64
	switch {
	case r.Operation == record.OpPlan || r.Operation == record.OpSupervise:
		p := c.modelPrice(r.Model)
		money = float64(r.InputTokens)/1000*p.a + float64(r.OutputTokens)/1000*p.b
	case r.Operation == record.OpExecuteTool && r.Status != record.StatusBlocked:
		money = c.toolPrice(r.Tool, true).a
		if failed(r.Status) {
			c.spanCost += money
			c.spanWasted += money
			return
		}
	default:
		return
	}
	c.spanCost += money
	c.hold(r.InvestigationID, 0, money)
}

// Execution prices an execution's compute.
func (c *Costs) Execution(r *record.Execution) {
	money := r.Compute * c.toolPrice(r.Tool, false).b
	c.execCost += money
	if r.Execution > 1 || (r.Outcome == "ok" || r.Outcome == "lost") && !r.Delivered {
		c.execWasted += money
		return
	}
	c.hold(r.InvestigationID, 1, money)
}

// Investigation tells whether the money held for the investigation is wasted.
func (c *Costs) Investigation(r *record.Investigation) { c.done.row(r) }

// Transition, Fault, Sample and Worker cost nothing.
func (c *Costs) Transition(*record.Transition) {}
func (c *Costs) Fault(*record.Fault)           {}
func (c *Costs) Sample(*record.Sample)         {}
func (c *Costs) Worker(*record.Worker)         {}

// Rows returns the costs row of run runID: none when the run is unpriced, else one. It may
// be called once all records have arrived; money held for investigations whose
// completeness never resolved is wasted.
func (c *Costs) Rows(runID string) []Cost {
	if c.opts.Prices == nil {
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(c.pending)) { // in one order: the sums' last bits depend on it
		c.resolved(id, false)
	}
	return []Cost{{RunID: runID, Currency: String(c.opts.Prices.Currency),
		Cost: c.spanCost + c.execCost, WastedCost: c.spanWasted + c.execWasted}}
}
