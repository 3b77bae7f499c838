package sim

import (
	"context"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// Progress reports the root investigations ended so far, never fewer than before, against
// the workload's count; its last call, at the horizon, counts every root that completed or
// was terminated.
func TestProgressCountsEndedRoots(t *testing.T) {
	s := fleet(t, 40)
	var calls [][2]int
	var c record.Collector
	res, err := Run(context.Background(), s, 1, &c, Options{Progress: func(done, total int) {
		calls = append(calls, [2]int{done, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	ended := 0
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 && inv.Ended {
			ended++
		}
	}
	if ended == 0 || ended != res.Completed+res.Terminated {
		t.Fatalf("%d roots ended, result %+v", ended, res)
	}
	if len(calls) == 0 {
		t.Fatal("Progress never called")
	}
	for i, cl := range calls {
		if cl[1] != 40 || cl[0] < 0 || cl[0] > cl[1] || i > 0 && cl[0] < calls[i-1][0] {
			t.Fatalf("Progress call %d: %v (previous %v)", i, cl, calls[max(i-1, 0)])
		}
	}
	if last := calls[len(calls)-1]; last[0] != ended {
		t.Errorf("last Progress call %v, want %d ended of 40", last, ended)
	}
}
