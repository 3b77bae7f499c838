package compute

import "github.com/mayday-sim/mayday/sim/record"

// spanKind is a span's kind attribute (the first), "" when it has none.
func spanKind(r *record.Span) string {
	for _, a := range r.Attrs {
		if a.Key == "kind" {
			return a.Value
		}
	}
	return ""
}

func failed(st record.Status) bool { return st == record.StatusError || st == record.StatusTimeout }

func failKind(st record.Status) uint8 {
	if st == record.StatusTimeout {
		return kindTimedOut
	}
	return kindFailed
}

// Span takes what every view reads of a span: calls, signs, keyed spans, model turns, valid
// results and money.
func (s *Sink) Span(r *record.Span) {
	if s.over {
		return
	}
	if s.more != nil {
		s.more.Span(r)
	}
	defer s.count(r.InvestigationID)
	s.end = max(s.end, r.End)
	if r.HasKey && r.OpKey.Investigation != r.InvestigationID {
		s.late = true // an operation of another investigation: not what the simulator writes
	}
	switch r.Operation {
	case record.OpExecuteTool:
		s.toolSpan(r)
	case record.OpInspect:
		if r.HasKey {
			if e := s.invOf(r.InvestigationID); e != nil {
				s.keyedSpan(e, r, s.tool(r.Tool))
			}
		}
	case record.OpPlan:
		s.spend(r, s.tokenCost(r), false)
		if spanKind(r) == "model_turn" {
			s.modelCall(r)
		}
	case record.OpSupervise:
		s.spend(r, s.tokenCost(r), false)
	case record.OpValidate:
		s.validate(r)
	case record.OpTakeover:
		if r.HasKey {
			s.addSign(r, s.tool(r.Tool), kindCrashed)
		}
	}
}

// addSign notes a sign of trouble of the span's operation.
func (s *Sink) addSign(r *record.Span, tool int32, kind uint8) {
	if e := s.invOf(r.InvestigationID); e != nil {
		e.signs = append(e.signs, sign{r.OpKey, us(r.Start), us(r.End), tool, kind})
	}
}

// toolSpan takes an execute_tool span: an attempt sent, or an operation blocked.
func (s *Sink) toolSpan(r *record.Span) {
	tool := s.tool(r.Tool)
	var o *op
	if r.HasKey {
		e := s.invOf(r.InvestigationID)
		if e == nil {
			return
		}
		o = s.keyedSpan(e, r, tool)
		for _, id := range r.CausedBy {
			addCauser(o, id)
		}
	}
	if r.Status == record.StatusBlocked {
		if r.HasKey {
			s.addSign(r, tool, kindBlocked)
		}
		return
	}
	s.attempts++
	if o != nil && !o.attempted {
		o.attempted = true
		s.operations++
	}
	bad := failed(r.Status)
	s.call(tool, r, bad)
	var call float64
	if tp := s.toolPrice(r.Tool); tp != nil {
		call = tp.Call
	}
	s.spend(r, call, bad)
}

// keyedSpan notes a span of investigation e that names an operation (execute_tool,
// inspect, or a model call with an op_key) and returns the operation.
func (s *Sink) keyedSpan(e *inv, r *record.Span, tool int32) *op {
	if s.opts.Guards {
		e.keyed = append(e.keyed, keyed{us(r.Start), r.SpanID, r.OpKey, tool})
	}
	o := s.op(e, r.OpKey)
	if o.tool == noTool && tool != noTool && r.Tool != "model" {
		o.tool = tool
	}
	return o
}

// call counts a call to a dependency in its tool's minute and its tool's calls, keeps it
// with its investigation, and its sign when it failed.
func (s *Sink) call(tool int32, r *record.Span, bad bool) {
	model := r.Operation == record.OpPlan
	start := us(r.Start)
	c := s.minute(tool, minuteOf(r.Start))
	c.attempts++
	if !model && r.Attempt > 1 {
		c.retries++
	}
	refused := bad && capacityRefusal(r)
	if refused {
		c.refused++
	}
	if tool != noTool {
		for int(tool) >= len(s.calls) {
			s.calls = append(s.calls, packedList{})
		}
		s.calls[tool].add(packCall(start, bad, refused))
	}
	if !s.opts.Tables {
		// only the tables need the investigation's calls
	} else if e := s.invOf(r.InvestigationID); e != nil {
		e.calls = append(e.calls, callRef{key: r.OpKey, hasKey: r.HasKey, model: model, failed: bad, tool: tool,
			attempt: r.Attempt, start: start, span: r.SpanID, kind: failKind(r.Status), fault: s.faults.id(r.FaultID)})
	}
	if !bad {
		return
	}
	c.failed++
	s.failedCalls++
	if r.HasKey {
		s.addSign(r, tool, failKind(r.Status))
	}
}

// modelCall takes a plan span of kind model_turn: a call to the model provider, and a turn
// whose tokens may be wasted.
func (s *Sink) modelCall(r *record.Span) {
	s.call(s.tool("model"), r, failed(r.Status))
	e := s.invOf(r.InvestigationID)
	if e == nil {
		return
	}
	if r.HasKey {
		s.keyedSpan(e, r, s.tool(r.Tool))
	}
	s.plans[r.SpanID] = planRef{e.id, int32(len(e.plans))}
	e.plans = append(e.plans, plan{start: us(r.Start), id: r.SpanID, tokens: r.InputTokens + r.OutputTokens})
}

func (s *Sink) validate(r *record.Span) {
	switch r.Status {
	case record.StatusOK:
		m := minuteOf(r.End)
		for int64(len(s.validPerMinute)) <= m {
			s.validPerMinute = append(s.validPerMinute, 0)
		}
		s.validPerMinute[m]++
		s.validAt.add(orderedBits(us(r.End)))
		if r.HasKey {
			if e := s.invOf(r.InvestigationID); e != nil {
				s.op(e, r.OpKey).valid = true
				e.valids = append(e.valids, valid{r.OpKey, us(r.End)})
			}
		}
	case record.StatusInvalid:
		if r.HasKey {
			s.addSign(r, s.tool(r.Tool), kindInvalid)
		}
	}
}

// tokenCost is the price of a plan or supervise span's tokens.
func (s *Sink) tokenCost(r *record.Span) float64 {
	mp := s.modelPrice(r.Model)
	if mp == nil {
		return 0
	}
	return float64(r.InputTokens)/1000*mp.Input + float64(r.OutputTokens)/1000*mp.Output
}

// spend charges money to the span's investigation; failedCall: the call of a failed attempt.
func (s *Sink) spend(r *record.Span, amount float64, failedCall bool) {
	if s.opts.Prices == nil {
		return
	}
	e := s.invOf(r.InvestigationID)
	if e == nil {
		return
	}
	s.cost += amount
	e.spent += amount
	if failedCall {
		e.spentFailed += amount
	}
}
