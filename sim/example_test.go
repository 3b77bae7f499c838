package sim_test

import (
	"context"
	"fmt"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

// Run an embedded example at a reduced size and hash its records: the same scenario and
// seed always give the same digest.
func ExampleRun() {
	s, err := scenarios.Load("transient-errors", nil)
	if err != nil {
		panic(err)
	}
	s.Workload.Investigations = 200
	d1, d2 := record.NewDigest(), record.NewDigest()
	res, err := sim.Run(context.Background(), s, 7, d1, sim.Options{Check: true})
	if err != nil {
		panic(err)
	}
	sim.Run(context.Background(), s, 7, d2, sim.Options{})
	fmt.Println("started:", res.Started)
	fmt.Println("conserved:", res.Completed+res.Terminated+res.AwaitingHuman+res.InFlight == res.Started)
	fmt.Println("violations:", len(res.Violations))
	fmt.Println("same digest:", d1.Sum() == d2.Sum())
	// Output:
	// started: 200
	// conserved: true
	// violations: 0
	// same digest: true
}
