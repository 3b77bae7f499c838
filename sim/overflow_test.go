package sim

import (
	"runtime"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Counts at the top of their validated range are carried at full width: 2^31 servers, a
// queue limit and a breaker's min_calls of 2^31 behave as "more than ever needed", exactly
// like a large count that fits in 32 bits. Before, they wrapped to a negative int32 and no
// request was ever served (completion 0).
func TestFullWidthCounts(t *testing.T) {
	const huge = 1 << 31
	digest := func(conc, qlimit, minCalls int) (string, Result) {
		s := testScenario()
		s.Tools[0].Concurrency, s.Tools[0].QueueLimit = conc, qlimit
		s.Recovery.Breaker = &scenarios.Breaker{Window: 60e9, FailureRatio: 0.5, MinCalls: minCalls, Cooldown: 60e9}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		d := record.NewDigest()
		res := run(t, s, 1, d)
		return d.Sum(), res
	}
	want, res := digest(1<<30, 1<<30, 1<<30)
	if res.Completed != res.Started || res.Started != 100 {
		t.Fatalf("reference run: %+v", res)
	}
	if got, res := digest(huge, huge, huge); got != want {
		t.Errorf("2^31 servers, queue limit and min_calls: digest %s, %+v; want the run of 2^30 (%s)", got, res, want)
	}
}

// A pool of 2^31 reviewers is hired as escalations need them: the run allocates what its
// busiest moment needs, not 2^31 desks (about 100 GB before the first event).
func TestReviewersAllocatedWhenNeeded(t *testing.T) {
	s := testScenario()
	s.Recovery.Retry.MaxAttempts = 1
	s.Faults = []scenarios.Fault{{ID: "0", Kind: scenarios.FaultTransient, Probability: 0.5}}
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 1 << 31, ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: 60e9}, Approve: 1}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := run(t, s, 1, record.NewDigest())
	runtime.ReadMemStats(&after)
	// 100 small investigations allocate a few MB; one desk per reviewer would be 2^31 x 48 B.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("the run allocated %d MB", alloc>>20)
	}
	if res.Completed+res.Terminated != res.Started || res.Started != 100 {
		t.Errorf("result %+v", res)
	}
}
