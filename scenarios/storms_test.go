package scenarios_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

// Storms: scenarios whose growth the size model must see. Each is refused by validation at
// the size that cannot finish within the stated limits, naming the key to change and the
// limit, and accepted small (the full storms are never run here).

const respawnStorm = `name: respawn-storm
horizon: 48h
workload:
  investigations: %d
  steps: 8
  subagents: {probability: 0.5, count: 1, max_depth: 1}
tools:
  search: {latency: 1s, timeout: 1m}
faults:
  - {kind: transient, tool: search, probability: 0.5}
recovery:
  retry: {max_attempts: 1}
  subagents: {on_failure: {action: respawn, max: 1000}}
`

const inspectionStorm = `name: inspection-storm
horizon: 48h
workload:
  investigations: %d
  steps: 8
tools:
  search: {latency: {dist: exponential, mean: 30s}, timeout: 10s, idempotency: keyed}
recovery:
  inspect_before_retry: true
  inspection: {interval: 1ns, max: 100000}
`

// TestValidateRefusesStorms: 20,000 investigations that each respawn failed subagents up to
// 1000 times run about 20,000 x (1 + 4 + 1000) agents, past MaxAgents; 20,000 whose calls
// are looked up every nanosecond up to 100,000 times write about 20,000 x 8 x 10^5 spans
// of lookups, past MaxTotalSteps. Twenty of each are accepted.
func TestValidateRefusesStorms(t *testing.T) {
	for _, c := range []struct {
		name, src, key, limit string
	}{
		{"respawn", respawnStorm, "recovery.subagents.on_failure.max", fmt.Sprintf("the limit is %.3g", float64(scenarios.MaxAgents))},
		{"inspection", inspectionStorm, "recovery.inspection", fmt.Sprintf("the limit is %.3g spans", float64(scenarios.MaxTotalSteps))},
	} {
		_, err := scenarios.Parse(c.name+".yaml", []byte(fmt.Sprintf(c.src, 20_000)), nil)
		if err == nil || !strings.Contains(err.Error(), ": "+c.key+": ") || !strings.Contains(err.Error(), c.limit) {
			t.Errorf("%s storm of 20,000 investigations: %v; want it refused at %s, saying %q", c.name, err, c.key, c.limit)
		}
		if _, err := scenarios.Parse(c.name+".yaml", []byte(fmt.Sprintf(c.src, 20)), nil); err != nil {
			t.Errorf("%s storm of 20 investigations: %v; want it accepted", c.name, err)
		}
	}
}

// TestBudgetWithoutAFloorDoesNotPoll: retries parked on a retry budget that only first
// attempts refill (ratio, no floor), in a run whose first attempts all come at the start,
// used to wake every second until the horizon: 48h x 1/s = 172,800 wake-ups for a single
// parked retry. They now come back a doubling gap apart (up to an hour), so the whole run
// stays below that, and within the size model's estimate.
func TestBudgetWithoutAFloorDoesNotPoll(t *testing.T) {
	const src = `name: budget-storm
horizon: 48h
workload:
  investigations: 100
  steps: 8
tools:
  search: {latency: 1s, timeout: 1m}
faults:
  - {kind: transient, tool: search, probability: 0.5}
recovery:
  retry: {max_attempts: 5}
  retry_budget: {ratio: 0.1, min_per_second: 0}
`
	s, err := scenarios.Parse("budget.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(t.Context(), s, 1, record.NewDigest(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	polls := float64(s.Horizon / time.Second)
	if float64(res.Events) >= polls {
		t.Errorf("%d events; a retry polling the budget every second until the horizon alone makes %.0f", res.Events, polls)
	}
	if est := scenarios.EstimateEvents(s); float64(res.Events) > est.Total || !(est.Waits > 0) {
		t.Errorf("%d events; the size model expects at most %.0f (waits %.0f)", res.Events, est.Total, est.Waits)
	}
}
