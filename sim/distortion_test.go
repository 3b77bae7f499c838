package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// admittedTurns lists the sizes of the model turns each investigation got through, in order.
func admittedTurns(c *record.Collector) (map[int64][]int64, int) {
	turns := map[int64][]int64{}
	refused := 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpPlan || spanAttr(sp, "kind") != "model_turn" {
			continue
		}
		if sp.Status != record.StatusOK {
			refused++
			continue
		}
		turns[sp.InvestigationID] = append(turns[sp.InvestigationID], sp.InputTokens+sp.OutputTokens)
	}
	return turns, refused
}

// TestRefusedTurnKeepsItsSize: a turn the provider refuses keeps its size when it is tried
// again. The turn sizes are uniform in [1000, 9000] and a 20000 tokens/min limit refuses
// many calls; without jitter nothing else draws from an investigation's stream on a refusal,
// so each investigation's admitted turns must be exactly, size for size, the turns of the
// same run with an unlimited provider. Redrawing a refused turn would shift every later
// draw (and favour small turns, which a token bucket admits more readily).
func TestRefusedTurnKeepsItsSize(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 30
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 6}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistUniform, Min: 1000, Max: 9000}
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 1000, Initial: time.Second, Multiplier: 2, Max: 30 * time.Second,
		Jitter: recovery.JitterNone, OnExhausted: recovery.ExhaustedEscalate}
	s.Model = &scenarios.ModelService{}
	var free, limited record.Collector
	run(t, s, 3, &free)
	s.Model = &scenarios.ModelService{TokensPerMinute: 20000}
	res := run(t, s, 3, &limited)
	want, refusedFree := admittedTurns(&free)
	got, refused := admittedTurns(&limited)
	if refusedFree != 0 || refused < 100 || res.Completed != 30 {
		t.Fatalf("%d refusals unlimited, %d limited, %d of 30 completed; want 0, >= 100 and all", refusedFree, refused, res.Completed)
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("investigation %d: admitted turns %v under the limit, %v without", id, got[id], w)
		}
	}
}

// TestCrashSignAtDeath: a worker crash is recorded as a takeover span from the instant the
// worker died to the expiry of its lease, exactly recovery.lease later; an attempt the crash
// interrupted ends at that same instant, and the engine hears of the crash (the crashed
// transition) no earlier than the lease's expiry.
func TestCrashSignAtDeath(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 200
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 5}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Minute)}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(5 * time.Minute)}
	s.Tools[0].Timeout = time.Hour
	s.Faults = []scenarios.Fault{{ID: "crash", Kind: scenarios.FaultWorkerCrash, Rate: scenarios.Rate{PerSecond: 1.0 / 1800}}}
	s.Recovery.Lease = 7 * time.Minute
	var c record.Collector
	run(t, s, 2, &c)
	interrupted := map[int64][]int64{} // investigation -> ends of attempts a crash interrupted
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpExecuteTool && sp.FaultID == "crash" {
			interrupted[sp.InvestigationID] = append(interrupted[sp.InvestigationID], sp.End)
		}
	}
	crashedAt := map[int64][]int64{}
	for _, tr := range c.Transitions {
		if tr.Event == "crashed" && tr.From != tr.To && tr.To == "recovering" {
			crashedAt[tr.InvestigationID] = append(crashedAt[tr.InvestigationID], tr.At)
		}
	}
	takeovers, atAttempt := 0, 0
	seen := map[int64]int{}
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpTakeover {
			continue
		}
		takeovers++
		if sp.End-sp.Start != int64(s.Recovery.Lease) || sp.FaultID != "crash" || sp.Status != record.StatusError || !sp.HasKey {
			t.Fatalf("takeover span %+v: want %v long, fault crash, status error, on an operation", sp, s.Recovery.Lease)
		}
		if slices.Contains(interrupted[sp.InvestigationID], sp.Start) {
			atAttempt++
		}
		k := seen[sp.InvestigationID]
		seen[sp.InvestigationID]++
		if at := crashedAt[sp.InvestigationID]; k >= len(at) || at[k] < sp.End {
			t.Fatalf("takeover %d of investigation %d ends at %d; crashed transitions at %v", k, sp.InvestigationID, sp.End, at)
		}
	}
	n := 0
	for _, ends := range interrupted {
		n += len(ends)
	}
	t.Logf("%d takeovers, %d of them interrupted an attempt (%d interrupted attempts)", takeovers, atAttempt, n)
	if takeovers < 50 || atAttempt != n || n == 0 {
		t.Errorf("%d takeovers, %d at an interrupted attempt's end, %d attempts interrupted; want >= 50 and every interrupted attempt ending at its crash", takeovers, atAttempt, n)
	}
}
