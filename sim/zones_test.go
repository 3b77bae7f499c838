package sim

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestZonePlacement: zones get their shares of the workers by largest remainder (ties to the
// zone first in name order), and the workers are interleaved: among the first n workers
// every zone holds its share of n to within 2 workers. Worker k sits at position
// (k-1)·stride mod c with stride/c near 1/φ and small partial quotients, so by the bound on
// the discrepancy of such a Weyl sequence (a constant times the sum of the partial
// quotients) the first n positions fill every run of positions in proportion, unlike zones
// in blocks, where the first workers would all be zone a's.
func TestZonePlacement(t *testing.T) {
	for _, tc := range []struct {
		c     int
		zones []scenarios.Zone
		sizes []int
	}{
		{40, []scenarios.Zone{{Name: "a", Share: 0.75}, {Name: "b", Share: 0.25}}, []int{30, 10}},
		{10, []scenarios.Zone{{Name: "a", Share: 1.0 / 3}, {Name: "b", Share: 1.0 / 3}, {Name: "c", Share: 1.0 / 3}}, []int{4, 3, 3}},
		{7, []scenarios.Zone{{Name: "x", Share: 0.5}, {Name: "y", Share: 0.5}}, []int{4, 3}},
		{1, nil, []int{1}},
		{1000, []scenarios.Zone{{Name: "a", Share: 0.2}, {Name: "b", Share: 0.3}, {Name: "c", Share: 0.5}}, []int{200, 300, 500}},
		{4099, []scenarios.Zone{{Name: "a", Share: 0.1}, {Name: "b", Share: 0.9}}, []int{410, 3689}},
	} {
		var p workerPool
		p.init(&scenarios.Workload{Workers: tc.c, Zones: tc.zones})
		count := make([]int, len(tc.sizes))
		for k := 1; k <= tc.c; k++ {
			z := p.zoneOf(int64(k))
			count[z]++
			for zi := range count {
				want := float64(p.zoneSize(zi)) * float64(k) / float64(tc.c)
				if d := float64(count[zi]) - want; d > 2 || d < -2 {
					t.Errorf("c=%d: after %d workers zone %s holds %d; its share is %.1f", tc.c, k, p.zones[zi], count[zi], want)
				}
			}
		}
		for zi, want := range tc.sizes {
			if count[zi] != want || p.zoneSize(zi) != want {
				t.Errorf("c=%d: zone %s holds %d workers (size %d); want %d", tc.c, p.zones[zi], count[zi], p.zoneSize(zi), want)
			}
		}
	}
}

// zoneScenario: 100 roots at once, 20 workers in zones a (15) and b (5), one step of a
// 10-minute model turn, lease 1m; zone b goes down at 5m for 30m.
func zoneScenario() *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = 100
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Workers = 20
	s.Workload.Zones = []scenarios.Zone{{Name: "b", Share: 0.25}, {Name: "a", Share: 0.75}}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
	s.Recovery.Lease = time.Minute
	s.Faults = []scenarios.Fault{{ID: "zone-b", Kind: scenarios.FaultZoneCrash, At: 5 * time.Minute, For: 30 * time.Minute}}
	s.Faults[0].Params = &zoneCrashParams{Zone: "b"}
	return s
}

// TestZoneCrashNamed: a crash of zone b takes down exactly b's workers and only the
// investigations running on them. At 0 the 20 workers start 20 roots; at 5m the 5 on
// zone b's workers crash (and no other), and while b is down (5m to 35m) no operation runs
// on a worker of b and at most the 15 workers of a run at once; afterwards b's workers
// work again. The takeover spans name the workers that died, all of zone b.
func TestZoneCrashNamed(t *testing.T) {
	var c record.Collector
	res := run(t, zoneScenario(), 1, &c)
	if res.Completed != 100 {
		t.Fatalf("%d of 100 completed", res.Completed)
	}
	zone := map[int64]string{}
	sizes := map[string]int{}
	for _, r := range c.Workers {
		zone[r.Worker] = r.Zone
		sizes[r.Zone]++
	}
	if len(c.Workers) != 20 || sizes["a"] != 15 || sizes["b"] != 5 {
		t.Fatalf("workers %v: want 20, 15 in a and 5 in b", sizes)
	}
	const from, to = int64(5 * time.Minute), int64(35 * time.Minute)
	crashed := map[int64]bool{}
	var afterB bool
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpTakeover {
			if sp.Start != from || zone[sp.Worker] != "b" || sp.FaultID != "zone-b" {
				t.Errorf("takeover of %d: died at %v on worker %d (zone %q), fault %q; want 5m, zone b, zone-b",
					sp.InvestigationID, time.Duration(sp.Start), sp.Worker, zone[sp.Worker], sp.FaultID)
			}
			crashed[sp.InvestigationID] = true
			continue
		}
		if sp.Operation == record.OpInvokeAgent {
			if sp.Worker != 0 {
				t.Errorf("invoke_agent span of %d names worker %d; want none", sp.InvestigationID, sp.Worker)
			}
			continue
		}
		if sp.Worker == 0 && !(sp.Operation == record.OpPlan && spanAttr(sp, "kind") == "config_change") {
			t.Errorf("%s span of %d at %v has no worker", sp.Operation, sp.InvestigationID, time.Duration(sp.End))
		}
		if zone[sp.Worker] == "b" && sp.End > from && sp.Start < to {
			t.Errorf("%s span of %d on worker %d of zone b runs [%v, %v], inside the crash",
				sp.Operation, sp.InvestigationID, sp.Worker, time.Duration(sp.Start), time.Duration(sp.End))
		}
		afterB = afterB || zone[sp.Worker] == "b" && sp.Start >= to
	}
	crashes := 0
	for _, inv := range c.Investigations {
		crashes += int(inv.Crashes)
		if inv.Crashes > 0 && !crashed[inv.InvestigationID] {
			t.Errorf("investigation %d crashed without a takeover span", inv.InvestigationID)
		}
	}
	if crashes != 5 || len(crashed) != 5 || !afterB {
		t.Errorf("%d crashes of %d investigations, zone b working after: %t; want 5, 5, true", crashes, len(crashed), afterB)
	}
	// The model turns (plan spans) are all the work there is: while zone b is down at most
	// the 15 workers of a run them at once.
	var edges []edge
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpPlan && spanAttr(sp, "kind") == "model_turn" && sp.End > from && sp.Start < to {
			edges = append(edges, edge{max(sp.Start, from), 1}, edge{min(sp.End, to), -1})
		}
	}
	if most := maxOverlap(edges); most != 15 {
		t.Errorf("%d model turns at once while zone b was down; want its 15 workers of a, busy", most)
	}

	// Unlimited workers: no worker on any span, no workers rows.
	s := zoneScenario()
	s.Faults[0].Params = nil
	s.Faults[0].Share = 0.3
	s.Workload.Workers = 0
	c = record.Collector{}
	run(t, s, 1, &c)
	for i := range c.Spans {
		if c.Spans[i].Worker != 0 {
			t.Fatalf("unlimited workers: span %d names worker %d", c.Spans[i].SpanID, c.Spans[i].Worker)
		}
	}
	if len(c.Workers) != 0 {
		t.Errorf("unlimited workers: %d workers rows; want none", len(c.Workers))
	}
}

type edge struct {
	at    int64
	delta int
}

// maxOverlap is the most intervals open at once, an interval ending at t closed before one
// starting at t opens.
func maxOverlap(edges []edge) int {
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// TestZoneCrashWhileReviewed: 10 roots at once on 10 workers in zones a and b (5 each),
// each escalated at once to a 30-minute review that rejects it; zone b goes down at 5m for
// 10m. The 5 investigations on b's workers were only waiting for a human: they lose their
// workers but do not crash, and their reviews (which ran on no worker) end at 30m as the
// others' do; every investigation is then rejected. The 5 on a's workers keep theirs.
func TestZoneCrashWhileReviewed(t *testing.T) {
	s := reviewFleet(10, 10, 1, 1, 30*time.Minute)
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
	s.Workload.Zones = []scenarios.Zone{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}
	s.Faults = []scenarios.Fault{{ID: "zone-b", Kind: scenarios.FaultZoneCrash, At: 5 * time.Minute, For: 10 * time.Minute,
		Params: &zoneCrashParams{Zone: "b"}}}
	var c record.Collector
	res := run(t, s, 1, &c)
	zone := map[int64]string{}
	for _, r := range c.Workers {
		zone[r.Worker] = r.Zone
	}
	crashes := 0
	for _, inv := range c.Investigations {
		crashes += int(inv.Crashes)
	}
	onA, onNone := 0, 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpHumanReview {
			continue
		}
		switch {
		case sp.Worker == 0:
			onNone++
		case zone[sp.Worker] == "a":
			onA++
		}
		if sp.End != int64(30*time.Minute) {
			t.Errorf("review of %d ended at %v; want 30m", sp.InvestigationID, time.Duration(sp.End))
		}
	}
	if crashes != 0 || res.Terminated != 10 || onA != 5 || onNone != 5 {
		t.Errorf("crashes %d, terminated %d, reviews held on a %d, on no worker %d; want 0, 10, 5, 5", crashes, res.Terminated, onA, onNone)
	}
}

// TestZoneCrashChecks: a zone_crash names exactly one of a zone and a share; a share lies in
// (0, 1] (0 is "no share given", reported once, as such); a zone is one of workload.zones,
// whose workers are limited. Each scenario gets exactly its one message.
func TestZoneCrashChecks(t *testing.T) {
	for _, c := range []struct {
		zone    string
		share   float64
		zones   bool
		workers int
		want    string
	}{
		{"", 0, false, 4, "faults[0]: a zone_crash needs zone (a zone of workload.zones) or share (a random part of the fleet)"},
		{"", -1, false, 4, "faults[0].share: -1; want a share in (0, 1]"},
		{"", 1.5, false, 4, "faults[0].share: 1.5; want a share in (0, 1]"},
		{"", math.NaN(), false, 4, "faults[0].share: NaN; want a share in (0, 1]"},
		{"", 1, false, 4, ""},
		{"b", 0, false, 4, `faults[0].zone: unknown zone "b": workload.zones declares none; declare the zones, such as zones: {a: 0.75, b: 0.25}`},
		{"c", 0, true, 4, `faults[0].zone: unknown zone "c"; want one of workload.zones: a, b`},
		{"b", 0.5, true, 4, "faults[0].zone: given together with share; want exactly one: zone names a zone of workload.zones, share takes a random part of the fleet"},
		{"b", 0, true, 0, `faults[0].zone: zone "b" has no workers: workload.workers is 0 (unlimited, in no zone); set workload.workers, or give share instead`},
		{"b", 0, true, 4, ""},
	} {
		s := testScenario()
		s.Workload.Workers = c.workers
		if c.zones {
			s.Workload.Zones = []scenarios.Zone{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}
		}
		s.Faults = []scenarios.Fault{{ID: "z", Kind: scenarios.FaultZoneCrash, At: time.Second, For: time.Second,
			Share: c.share, Params: &zoneCrashParams{Zone: c.zone}}}
		got := ""
		if err := s.Validate(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("zone %q, share %v, zones %t, workers %d:\n got %s\nwant %s", c.zone, c.share, c.zones, c.workers, got, c.want)
		}
	}
}

// stride searches the 65 candidates within 32 of c/φ, the farthest included: for c = 374
// (c/φ ≈ 231.1) the best is 263 = 231 + 32, whose ratio 263/374 = [0; 1, 2, 2, 1, 2, 2, 2,
// 2] has no partial quotient above 2, and no nearer candidate has one so small (a search
// stopping at 31 would take 237). For c = 532 (c/φ ≈ 328.8) it is 297 = 329 - 32, whose
// largest partial quotient is 3.
func TestStrideSearchesThirtyTwoEachWay(t *testing.T) {
	for _, c := range []struct{ c, want, q int }{{374, 263, 2}, {532, 297, 3}} {
		if got := stride(c.c); got != c.want {
			t.Errorf("stride(%d) = %d, want %d", c.c, got, c.want)
		}
		if q := maxQuotient(c.want, c.c); q != c.q {
			t.Errorf("maxQuotient(%d, %d) = %d, want %d", c.want, c.c, q, c.q)
		}
	}
}

// TestStrideOfSmallPools: a pool of 0, 1 or 2 workers steps by 1; from 3 on the stride is
// the best candidate near c/φ: 2 for 3, 3 for 4 and 5, 5 for 6 and 7 (1 never wins
// another coprime candidate: its ratio 1/c has the largest quotient of all, c).
func TestStrideOfSmallPools(t *testing.T) {
	for c, want := range []int{1, 1, 1, 2, 3, 3, 5, 5} {
		if got := stride(c); got != want {
			t.Errorf("stride(%d) = %d, want %d", c, got, want)
		}
		if c >= 1 && gcd(stride(c), c) != 1 {
			t.Errorf("stride(%d) = %d is not coprime to %d", c, stride(c), c)
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
