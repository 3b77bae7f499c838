package scenarios

import "time"

// Every default of the file format lives in this file (doc.go lists them for users). The
// rule: what a scenario omits is off or unlimited, except the few settings a real recovery
// policy always has (retry, inspection and its polling, lease) and a finite horizon.

const (
	// DefaultSeed is the seed of a scenario that names none (--seed overrides either).
	DefaultSeed uint64 = 1
	// DefaultHorizon is the simulated time limit of a scenario that names none.
	DefaultHorizon = 30 * 24 * time.Hour
)

// Defaults is the resolved scenario before any key of a file is read: the one set of
// defaults, for a scenario built in Go (a simulator test, say) to start from. It has no
// name and no tools; Validate says what it still lacks.
func Defaults() *Scenario { return defaultScenario() }

// defaultScenario is the resolved scenario before any key of the file is read. Tools and the
// tool mix are filled in by defaultTool and defaultMix once the file's tools are known.
func defaultScenario() *Scenario {
	return &Scenario{
		Seed:    DefaultSeed,
		Horizon: DefaultHorizon,
		Workload: Workload{
			Investigations: 1,
			Arrival:        Arrival{Kind: ArrivalAtOnce},
			Steps:          Dist{Kind: DistConstant, Value: 1},
			Think:          Dist{Kind: DistConstant, Value: 0},
			Tokens:         Dist{Kind: DistConstant, Value: 0},
			Subagents:      defaultSubagents(),
			// Behaviour: every probability 0.
		},
		Recovery: Recovery{
			Retry:              defaultRetry(),
			InspectBeforeRetry: true,
			Inspection:         defaultInspection(),
			Revisions:          0,
			OnExhaustion:       "terminate",
			Lease:              5 * time.Minute,
			Supervisor:         Supervisor{Kind: "rules"},
			Subagents:          SubagentRecovery{OnFailure: SubagentFailure{Action: SubagentReduceScope}},
			// RetryBudget, Breaker, NonProgress, Humans: nil (off); Budgets: zero (unlimited).
		},
	}
}

func defaultRetry() Retry {
	return Retry{
		MaxAttempts: 3,
		Initial:     time.Second,
		Multiplier:  2,
		Max:         time.Minute,
		Jitter:      "full",
		OnExhausted: "escalate",
	}
}

// defaultInspection polls a running operation once a minute for an hour: a job the tool
// reports as running is not a failure, and jobs of minutes to tens of minutes (backtests,
// builds) should finish before anyone is called.
func defaultInspection() Inspection { return Inspection{Interval: time.Minute, Max: 60} }

// defaultSubagents is off (probability 0); a `subagents` block that omits count spawns one
// child and one that omits max_depth allows one level.
func defaultSubagents() Subagents {
	return Subagents{Probability: 0, Count: Dist{Kind: DistConstant, Value: 1}, MaxDepth: 1}
}

// defaultTool: no latency, unlimited servers, no timeout, and idempotency none, the safe
// assumption about a tool nobody described.
func defaultTool(name string) Tool {
	return Tool{
		Name:        name,
		Latency:     Dist{Kind: DistConstant, Value: 0},
		Idempotency: None,
		Compute:     1.0,
	}
}

// defaultMix weighs every tool equally, in file order.
func defaultMix(tools []Tool) []Weight {
	mix := make([]Weight, len(tools))
	for i, t := range tools {
		mix[i] = Weight{Tool: t.Name, Weight: 1}
	}
	return mix
}

// defaultRespawn is on_failure: respawn, or {action: respawn} without the rest: one
// replacement per parent, then the parent goes on with a reduced scope.
func defaultRespawn() SubagentFailure {
	return SubagentFailure{Action: SubagentRespawn, Max: 1, Then: SubagentReduceScope}
}

// The blocks below are off when absent; a present block fills the keys it omits from these.

func defaultRetryBudget() RetryBudget { return RetryBudget{Ratio: 0.1, MinPerSecond: 1} }

func defaultBreaker() Breaker {
	return Breaker{Window: time.Minute, FailureRatio: 0.5, MinCalls: 20, Cooldown: 2 * time.Minute}
}

func defaultNonProgress() NonProgress { return NonProgress{Repeats: 3} }

// defaultHumans: reviewers and (with reviewers > 0) review_time are required; a human
// approves unless told otherwise.
func defaultHumans() Humans {
	return Humans{ReviewTime: Dist{Kind: DistConstant, Value: 0}, Approve: 1}
}
