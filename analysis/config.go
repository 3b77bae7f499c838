package analysis

import "encoding/json"

// runConfig is what the database layer reads of runs.config, the resolved scenario as JSON
// (docs/traces.md): the model and each tool's name and idempotency. Everything else in the
// column is left to whoever parsed the scenario.
type runConfig struct {
	Workload struct {
		Model string `json:"model"`
	} `json:"workload"`
	Tools []struct {
		Name        string `json:"name"`
		Idempotency string `json:"idempotency"`
	} `json:"tools"`
}

// naturalIdempotency is the idempotency of a tool that is safe to repeat: no side effect.
const naturalIdempotency = "natural"

// parseRunConfig reads runs.config; ok is false when it is not a scenario's JSON.
func parseRunConfig(config string) (c runConfig, ok bool) {
	return c, json.Unmarshal([]byte(config), &c) == nil
}
