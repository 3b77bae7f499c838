package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// TestSwarm is swarm testing: each configuration switches random features of the
// research-fleet scenario on or off (inspection, guards, humans, supervisor, budgets and
// the exhaustion policy, jitter, subagents, crash rates, fault mixes) and must run with every
// invariant intact. A failure prints the configuration number, which reproduces it.
func TestSwarm(t *testing.T) {
	configs := 24
	if testing.Short() {
		configs = 6
	}
	for i := 0; i < configs; i++ {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		s := fleet(t, 300)
		rc := &s.Recovery
		coin := func(p float64) bool { return r.Float64() < p }
		rc.InspectBeforeRetry = coin(0.7)
		if coin(0.3) {
			rc.RetryBudget = nil
		}
		if coin(0.3) {
			rc.Breaker = nil
		}
		if coin(0.3) {
			rc.Humans = nil
		} else if coin(0.3) {
			rc.Humans.Reviewers = 1
		}
		if coin(0.4) {
			rc.Supervisor = scenarios.Supervisor{Kind: "rules"}
		} else {
			rc.Supervisor.Accuracy = r.Float64()
		}
		rc.OnExhaustion = []string{"pause", "reduce_scope", "terminate"}[r.IntN(3)]
		if coin(0.5) {
			rc.Budgets.Tokens = 20_000 + r.Int64N(50_000)
			rc.Budgets.Wall = time.Duration(1+r.IntN(6)) * time.Hour
		}
		rc.Retry.Jitter = []recovery.Jitter{recovery.JitterNone, recovery.JitterFull, recovery.JitterEqual, recovery.JitterDecorrelated}[r.IntN(4)]
		rc.Retry.MaxAttempts = 1 + r.IntN(5)
		if coin(0.5) {
			rc.Retry.OnExhausted = recovery.ExhaustedTerminate
		}
		rc.Revisions = r.IntN(4)
		if coin(0.3) {
			rc.NonProgress = nil
		}
		w := &s.Workload
		w.Subagents.Probability = []float64{0, 0.05, 0.3}[r.IntN(3)]
		w.Behaviour.Stuck = r.Float64() * 0.1
		w.Behaviour.PolicyViolation = r.Float64() * 0.05
		w.Behaviour.ValidationMiss = r.Float64() * 0.1
		var faults []scenarios.Fault
		for _, f := range s.Faults {
			if coin(0.7) {
				if f.Kind == scenarios.FaultWorkerCrash && coin(0.5) {
					f.Rate.PerSecond = 1.0 / 3600
				}
				f.Index = len(faults) // a valid scenario numbers its faults by position
				faults = append(faults, f)
			}
		}
		s.Faults = faults
		if coin(0.3) {
			s.Horizon = 6 * time.Hour // cut the run short: investigations in flight
		}
		res := run(t, s, uint64(i), nil)
		if res.Started == 0 {
			t.Fatalf("config %d: nothing started", i)
		}
	}
}
