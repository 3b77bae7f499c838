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
// entity), so adding a fault shifts no other entity's draws.
type fault struct {
	id       string
	kind     scenarios.FaultKind
	tool     int32 // -1 = every tool
	p        float64
	start    int64 // windows: [start, end)
	end      int64
	slowdown float64
	rate     float64 // worker_crash: crashes per ns of running time
	factor   float64
	share    float64 // zone_crash
	lost     int     // zone_crash: workers taken away while it lasts
	key      uint64
	rng      *rand.Rand
}

func (f *fault) active(now int64) bool { return now >= f.start && now < f.end }

// hashUnit is a stateless uniform draw in (0, 1) for (seed, a, b, n): used for decisions
// made once per (fault, investigation) pair, so they do not depend on any draw order.
func hashUnit(seed, a, b, n uint64) float64 {
	x := mix64(seed ^ mix64(a^mix64(b^mix64(n+0x2545f4914f6cdd1d))))
	return (float64(x>>11) + 0.5) / (1 << 53)
}

// buildFaults resolves the scenario's faults against its tools.
func buildFaults(sc *scenarios.Scenario, seed uint64, horizon int64) ([]fault, error) {
	fs := make([]fault, len(sc.Faults))
	for i := range sc.Faults {
		c := &sc.Faults[i]
		id := c.ID
		if id == "" {
			id = strconv.Itoa(i)
		}
		f := fault{id: id, kind: c.Kind, tool: -1, p: c.Probability, slowdown: c.Slowdown,
			factor: c.Factor, share: c.Share, key: nameKey("fault:" + id), start: 0, end: math.MaxInt64}
		if c.Tool == scenarios.ModelTool && sc.Tool(c.Tool) < 0 {
			f.tool = int32(len(sc.Tools)) // the model provider
		} else if c.Tool != "" {
			f.tool = int32(sc.Tool(c.Tool))
		}
		if c.Kind.Correlated() || c.Kind == scenarios.FaultZoneCrash {
			f.start = int64(c.At)
			f.end = int64(c.At + c.For)
		}
		if c.Kind == scenarios.FaultWorkerCrash {
			f.rate = c.Rate.PerSecond / 1e9
		}
		if f.slowdown <= 0 {
			f.slowdown = 1
		}
		if c.Kind == scenarios.FaultOutage || c.Kind == scenarios.FaultHang {
			f.p = 1
		}
		f.rng = stream(seed, nsFault, f.key)
		fs[i] = f
	}
	return fs, nil
}

// record fills r with the fault as configured: windows with their start and end, the
// others spanning the run; Parameters is a small JSON object with the fields that matter.
func (f *fault) record(sc *scenarios.Scenario, r *record.Fault, horizon int64) {
	*r = record.Fault{FaultID: f.id, Kind: string(f.kind), Start: 0, End: horizon}
	if f.tool >= 0 && int(f.tool) < len(sc.Tools) {
		r.Tool = sc.Tools[f.tool].Name
	} else if f.tool >= 0 {
		r.Tool = scenarios.ModelTool
	}
	if f.kind.Correlated() || f.kind == scenarios.FaultZoneCrash {
		r.Start, r.End = f.start, f.end
	}
	var b strings.Builder
	b.WriteByte('{')
	field := func(k string, v float64) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	switch f.kind {
	case scenarios.FaultTransient, scenarios.FaultLostResponse, scenarios.FaultInvalidConfig:
		field("probability", f.p)
	case scenarios.FaultBudgetSpike:
		field("probability", f.p)
		field("factor", f.factor)
	case scenarios.FaultWorkerCrash:
		field("rate_per_hour", f.rate*3600e9)
	case scenarios.FaultBrownout:
		field("probability", f.p)
		field("slowdown", f.slowdown)
		field("duration_seconds", float64(f.end-f.start)/1e9)
	case scenarios.FaultOutage, scenarios.FaultHang:
		field("duration_seconds", float64(f.end-f.start)/1e9)
	case scenarios.FaultZoneCrash:
		field("share", f.share)
		field("duration_seconds", float64(f.end-f.start)/1e9)
	}
	b.WriteByte('}')
	r.Parameters = b.String()
}
