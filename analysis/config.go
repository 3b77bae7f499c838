package analysis

import "encoding/json"

// runConfig is what the database layer reads of runs.config, the resolved scenario as JSON
// (docs/traces.md): the model and each tool's name and idempotency, for the export. Everything else in the
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

// parseRunConfig reads runs.config; ok is false when it is not a scenario's JSON.
func parseRunConfig(config string) (c runConfig, ok bool) {
	return c, json.Unmarshal([]byte(config), &c) == nil
}
