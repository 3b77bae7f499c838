package sim

import "github.com/mayday-sim/mayday/scenarios"

// money is the scenario's price table resolved for the run: per token of the workload's
// model, per attempt and per compute-unit second of each tool. Unpriced usage costs 0.
type money struct {
	in, out float64   // per input / output token
	call    []float64 // per attempt sent, by tool
	compute []float64 // per compute-unit second, by tool
}

func (m *money) init(sc *scenarios.Scenario) {
	m.call = make([]float64, len(sc.Tools))
	m.compute = make([]float64, len(sc.Tools))
	p := sc.Prices
	if mp := p.Model(sc.Workload.Model); mp != nil {
		m.in, m.out = mp.Input/1000, mp.Output/1000
	}
	for i := range sc.Tools {
		if tp := p.Tool(sc.Tools[i].Name); tp != nil {
			m.call[i], m.compute[i] = tp.Call, tp.ComputeSecond
		}
	}
}

// tokens is the price of a model call of n tokens, split as the spans record it (¾ input,
// ¼ output).
func (m *money) tokens(n int64) float64 {
	return float64(n-n/4)*m.in + float64(n/4)*m.out
}
