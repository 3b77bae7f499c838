package sim

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

func TestDebugScenario(t *testing.T) {
	name := os.Getenv("SIMDEBUG")
	if name == "" {
		t.Skip()
	}
	s, err := scenarios.Load(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := os.Getenv("SIMN"); n != "" {
		fmt.Sscan(n, &s.Workload.Investigations)
	} else {
		s.Workload.Investigations = 400
	}
	var c record.Collector
	res, _ := Run(t.Context(), s, s.Seed, &c, Options{Check: true})
	fmt.Printf("%+v\n", res)
	reasons := map[string]int{}
	for _, in := range c.Investigations {
		reasons[in.FinalState+"/"+in.TerminationReason]++
	}
	fmt.Println(reasons)
	tr := map[string]int{}
	for _, x := range c.Transitions {
		tr[x.From+">"+x.To+" "+x.Event+" "+x.Action+" "+x.Reason]++
	}
	keys := make([]string, 0, len(tr))
	for k := range tr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%6d %s\n", tr[k], k)
	}
	var pick int64 = -1
	for _, in := range c.Investigations {
		if in.FinalState == os.Getenv("SIMSTATE") {
			pick = in.InvestigationID
			break
		}
	}
	if pick >= 0 {
		fmt.Println("investigation", pick)
		for _, sp := range c.Spans {
			if sp.InvestigationID == pick {
				fmt.Printf("  span %d %s %s %v att=%d %d..%d %s %s %s %v\n", sp.SpanID, sp.Operation, sp.Tool, sp.OpKey, sp.Attempt, sp.Start/1e9, sp.End/1e9, sp.Status, sp.FailureClass, sp.FaultID, sp.Attrs)
			}
		}
		for _, x := range c.Transitions {
			if x.InvestigationID == pick {
				fmt.Printf("  %d %s>%s %s %s %s %s att=%d\n", x.At/1e9, x.From, x.To, x.Event, x.Action, x.DecidedBy, x.Reason, x.Attempt)
			}
		}
	}
}
