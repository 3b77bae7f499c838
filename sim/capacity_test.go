package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

func spanAttr(s *record.Span, key string) string {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// TestQueueLimitRefuses: n attempts reach a tool with one server and queue_limit q at the
// same instant. One is served, q wait, and the other n-1-q are refused at once with an
// overload error (transient class). With a single attempt allowed and terminate on
// exhaustion, exactly q+1 investigations complete and n-1-q are terminated; nothing refused
// ever executes.
func TestQueueLimitRefuses(t *testing.T) {
	const n, q = 40, 5
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Tools[0].Concurrency = 1
	s.Tools[0].QueueLimit = q
	s.Recovery.Retry.MaxAttempts = 1
	s.Recovery.Retry.OnExhausted = "terminate"
	var c record.Collector
	res := run(t, s, 1, &c)
	refused := 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpExecuteTool && spanAttr(sp, "error") == "overloaded" {
			refused++
			if sp.Status != record.StatusError || sp.FailureClass != "transient" || sp.End != sp.Start {
				t.Errorf("refused attempt span %+v: want an immediate error of class transient", sp)
			}
		}
	}
	if refused != n-1-q || res.Completed != q+1 || res.Terminated != n-1-q || len(c.Executions) != q+1 {
		t.Errorf("refused %d, completed %d, terminated %d, executions %d; want %d, %d, %d, %d",
			refused, res.Completed, res.Terminated, len(c.Executions), n-1-q, q+1, n-1-q, q+1)
	}

	// Refusals are transient failures, retried under the retry policy: with enough
	// attempts and backoff every investigation completes, each key executing once.
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 50, Initial: time.Second, Multiplier: 1.5, Max: time.Minute,
		Jitter: "full", OnExhausted: "escalate"}
	c = record.Collector{}
	res = run(t, s, 1, &c)
	if res.Completed != n || len(c.Executions) != n {
		t.Errorf("with retries: %d completed, %d executions; want %d and %d", res.Completed, len(c.Executions), n, n)
	}
}

// TestLookupFailsWhileToolDown: during a hang of a keyed tool no attempt executes, so before
// lookups could fail the engine saw "not found" and retried; now every lookup inside the
// window fails (naming the fault) and none says not_found, and after the window lookups work
// again.
func TestLookupFailsWhileToolDown(t *testing.T) {
	for _, kind := range []scenarios.FaultKind{scenarios.FaultHang, scenarios.FaultOutage} {
		s := testScenario()
		s.Workload.Investigations = 20
		s.Tools[0].Timeout = time.Minute
		s.Faults = []scenarios.Fault{{ID: "down", Kind: kind, Tool: "svc", At: 0, For: time.Hour}}
		s.Recovery.Humans = &scenarios.Humans{Reviewers: 2, Approve: 1,
			ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(2 * time.Hour)}}
		var c record.Collector
		run(t, s, 2, &c)
		inside, failed := 0, 0
		for i := range c.Spans {
			sp := &c.Spans[i]
			if sp.Operation != record.OpInspect || sp.Start >= int64(time.Hour) {
				continue
			}
			inside++
			if spanAttr(sp, "lookup") == "failed" && sp.FaultID == "down" && sp.Status == record.StatusError {
				failed++
			}
		}
		if kind == scenarios.FaultHang && inside == 0 {
			t.Fatalf("%s: no lookups inside the window; the test sees nothing", kind)
		}
		if failed != inside {
			t.Errorf("%s: %d of %d lookups inside the window failed naming the fault; want all", kind, failed, inside)
		}
	}
}
