package analysis
import ("testing";"encoding/json";"context"
"github.com/mayday-sim/mayday/scenarios"
"github.com/mayday-sim/mayday/sim"
"github.com/mayday-sim/mayday/sim/record")
func TestSimDump(t *testing.T) {
	sc, err := scenarios.Load("research-fleet", []string{"workload.investigations=400", "workload.arrival={uniform: 3h}"})
	if err != nil { t.Fatal(err) }
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 42, &c, sim.Options{Check: true})
	if err != nil { t.Fatal(err) }
	t.Logf("%+v", res)
	r := reference(refRun{ID:"x", Events:res.Events, Makespan:res.Makespan}, &c)
	b, _ := json.MarshalIndent(r.Metrics, "", " ")
	t.Logf("%s\nincidents %+v\nepisodes %d spans %d execs %d invs %d trans %d samples %d", b, r.Incidents, len(r.Episodes), len(c.Spans), len(c.Executions), len(c.Investigations), len(c.Transitions), len(c.Samples))
	st := map[string]int{}
	for _, s := range c.Spans { st[string(s.Operation)+"/"+string(s.Status)]++ }
	t.Log(st)
	oc := map[string]int{}
	for _, e := range c.Executions { oc[e.Outcome+"/"+map[bool]string{true:"d",false:"nd"}[e.Delivered]]++ }
	t.Log(oc)
	var maxT int64
	for _, s := range c.Spans { maxT = max(maxT, s.End) }
	t.Log("max span end", maxT, "makespan", res.Makespan)
}
