package traces

import (
	"strings"

	"github.com/mayday-sim/mayday/scenarios"
)

// ScenarioOptions returns the writer options a run of s needs: the scenario's extra redact
// patterns, its tool arguments under secret-looking keys and the values of its sweep axes
// over a secret-looking key as known secrets.
func ScenarioOptions(s *scenarios.Scenario) Options {
	opts := Options{Redact: s.Redact}
	red := NewRedactor(nil, s.Redact, nil)
	for _, t := range s.Tools {
		for _, a := range t.Arguments {
			if a.Value != "" && red.SecretKey(a.Key) {
				opts.Secrets = append(opts.Secrets, a.Value)
			}
		}
	}
	for _, a := range s.Sweep {
		last := a.Path[strings.LastIndexByte(a.Path, '.')+1:]
		if !red.SecretKey(last) {
			continue
		}
		for _, v := range a.Values {
			if v != "" {
				opts.Secrets = append(opts.Secrets, v)
			}
		}
	}
	return opts
}

// ParamRedactor redacts the values a sweep varies before they are stored (sweep_params,
// sweep.json) or printed: a value whose path ends in a secret-looking key (such as
// tools.fetch.arguments.api_key) is replaced by its keyed hash, and every other value is
// redacted as free text, with the scenario's known secrets, so a secret pasted into a grid
// value (or a flow mapping {api_key: ...}) never appears in plain text.
func ParamRedactor(s *scenarios.Scenario) func(path, value string) string {
	opts := ScenarioOptions(s)
	red := NewRedactor(nil, opts.Redact, opts.Secrets)
	return func(path, value string) string {
		last := path
		if i := strings.LastIndexByte(path, '.'); i >= 0 {
			last = path[i+1:]
		}
		if red.SecretKey(last) {
			return red.Hash(value)
		}
		return red.Text(value)
	}
}
