package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// base is a small valid scenario; cases append lines to it, so their line numbers start at 5.
const base = `name: t
tools:
  search: {latency: {dist: constant, value: 1s}, timeout: 30s}
  notify: {}
`

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		sets []string
		want []string // every error, in order, as Error() prints it
	}{
		{"unknown key with suggestion", base + "workload:\n  arival: {poisson: 50/m}\n",
			nil, []string{`t.yaml:6: workload.arival: unknown key "arival" (did you mean arrival?); want one of investigations, arrival, steps, think, tokens, model, tools, subagents, behaviour, workers, priority`}},
		{"unknown key without a close one", base + "colour: red\n",
			nil, []string{`t.yaml:5: colour: unknown key "colour"; want one of name, description, seed, horizon, workload, tools, faults, recovery, validation, redact, expect, tolerances, sweep, model, prices`}},
		{"duplicate key", base + "name: u\n",
			nil, []string{`t.yaml:5: name: duplicate key; it is first given at line 1`}},
		{"wrong type: text for a number", base + "workload:\n  investigations: many\n",
			nil, []string{`t.yaml:6: workload.investigations: "many" is not a number; want a whole number >= 1`}},
		{"wrong type: quoted number", base + "workload:\n  investigations: \"100\"\n",
			nil, []string{`t.yaml:6: workload.investigations: "100" is quoted text; want a whole number >= 1, without quotes`}},
		{"wrong type: fraction for a count", base + "workload:\n  investigations: 2.5\n",
			nil, []string{`t.yaml:6: workload.investigations: "2.5" is not a whole number; want a whole number >= 1`}},
		{"wrong type: mapping for a mapping-less key", base + "recovery:\n  lease: {a: 1}\n",
			nil, []string{`t.yaml:6: recovery.lease: a mapping is not a single value; want a duration > 0, such as 30s`}},
		{"wrong type: list for a mapping", base + "recovery: [1]\n",
			nil, []string{`t.yaml:5: recovery: a list is not a mapping; want a mapping such as {retry: {max_attempts: 5}, breaker: {}}`}},
		{"wrong type: boolean", base + "recovery:\n  inspect_before_retry: yes please\n",
			nil, []string{`t.yaml:6: recovery.inspect_before_retry: "yes please" is not a boolean; want true or false`}},
		{"negative duration", base + "horizon: -5m\n",
			nil, []string{`t.yaml:5: horizon: "-5m" is a negative duration; want a duration > 0, such as 30s`}},
		{"negative tool timeout, reported once", "name: t\ntools:\n  x: {timeout: -1s}\nfaults: [{kind: hang, tool: x, for: 1m}]\n",
			nil, []string{`t.yaml:3: tools.x.timeout: "-1s" is a negative duration; want a duration >= 0, such as 30s`}},
		{"bad tool name", "name: t\ntools:\n  Big.Tool: {}\nworkload: {tools: {Big.Tool: 1}}\n",
			nil, []string{`t.yaml:3: tools.Big.Tool: "Big.Tool" is not a valid tool name; want lowercase letters, digits, _ and - ([a-z0-9_-]+)`}},
		{"malformed duration", base + "horizon: 5 minutes\n",
			nil, []string{`t.yaml:5: horizon: "5 minutes" is not a duration; want Go syntax plus d, such as 90s, 2h30m, 3d`}},
		{"duration without unit", base + "horizon: 30\n",
			nil, []string{`t.yaml:5: horizon: 30 has no unit; want a duration > 0, such as 30s`}},
		{"zero where positive is needed", base + "recovery:\n  lease: 0s\n",
			nil, []string{`t.yaml:6: recovery.lease: "0s" is zero; want a duration > 0, such as 30s`}},
		{"malformed rate", base + "workload:\n  arrival: {poisson: 50/x}\n",
			nil, []string{`t.yaml:6: workload.arrival.poisson: "50/x" is not a rate; want N/unit such as 50/m, 100/h, 1/24h`}},
		{"rate without unit", base + "faults:\n  - {kind: worker_crash, rate: 3}\n",
			nil, []string{`t.yaml:6: faults[0].rate: "3" is not a rate; want N/unit such as 50/m, 100/h, 1/24h`}},
		{"two arrival processes", base + "workload:\n  arrival: {poisson: 50/m, uniform: 2h}\n",
			nil, []string{`t.yaml:6: workload.arrival: poisson and uniform given together; want exactly one of {poisson: 200/h}, {at_once: true} or {uniform: 2h}`}},
		{"probability above 1", base + "workload:\n  behaviour: {stuck: 1.5}\n",
			nil, []string{`t.yaml:6: workload.behaviour.stuck: 1.5 is not a probability; want a number in [0, 1]`}},
		{"negative probability", base + "faults:\n  - {kind: transient, tool: search, probability: -0.1}\n",
			nil, []string{`t.yaml:6: faults[0].probability: -0.1 is not a probability; want a number in [0, 1]`}},
		{"unknown tool in the mix", base + "workload:\n  tools: {serch: 1}\n",
			nil, []string{`t.yaml:6: workload.tools.serch: unknown tool "serch" (did you mean search?); want one of search, notify`}},
		{"unknown tool in a fault", base + "faults:\n  - {kind: transient, tool: notfy, probability: 0.1}\n",
			nil, []string{`t.yaml:6: faults[0].tool: unknown tool "notfy" (did you mean notify?); want one of search, notify`}},
		{"zero and negative weights", base + "workload:\n  tools: {search: 0, notify: -1}\n",
			nil, []string{
				`t.yaml:6: workload.tools.search: weight 0 is not positive; want a number > 0 (leave the tool out to never use it)`,
				`t.yaml:6: workload.tools.notify: weight -1 is not positive; want a number > 0 (leave the tool out to never use it)`,
			}},
		{"distribution missing a parameter", base + "workload:\n  steps: {dist: lognormal, median: 12}\n",
			nil, []string{`t.yaml:6: workload.steps: lognormal needs median and p95; missing p95`}},
		{"distribution with an extra parameter", base + "workload:\n  steps: {dist: lognormal, median: 12, p95: 40, mean: 3}\n",
			nil, []string{`t.yaml:6: workload.steps.mean: lognormal takes median and p95, not mean`}},
		{"distribution without dist", base + "workload:\n  think: {mean: 30s}\n",
			nil, []string{`t.yaml:6: workload.think: missing dist; want dist: constant, exponential, uniform, lognormal or pareto`}},
		{"unknown distribution", base + "workload:\n  steps: {dist: normal, mean: 3}\n",
			nil, []string{`t.yaml:6: workload.steps.dist: "normal" is not a distribution (did you mean lognormal?); want constant, exponential, uniform, lognormal or pareto`}},
		{"lognormal p95 not above median", base + "workload:\n  steps: {dist: lognormal, median: 12, p95: 10}\n",
			nil, []string{`t.yaml:6: workload.steps.p95: p95 10 is not above median 12; want p95 > median`}},
		{"lognormal p95 equal to median", base + "recovery:\n  humans: {reviewers: 1, review_time: {dist: lognormal, median: 20m, p95: 20m}}\n",
			nil, []string{`t.yaml:6: recovery.humans.review_time.p95: p95 20m is not above median 20m; want p95 > median`}},
		{"duration distribution given a number", base + "workload:\n  think: {dist: exponential, mean: 30}\n",
			nil, []string{`t.yaml:6: workload.think.mean: 30 has no unit; want a duration >= 0, such as 30s`}},
		{"uniform max below min", base + "workload:\n  steps: {dist: uniform, min: 5, max: 2}\n",
			nil, []string{`t.yaml:6: workload.steps.max: max 2 is below min 5; want max >= min`}},
		{"constant steps below one", base + "workload:\n  steps: 0\n",
			nil, []string{`t.yaml:6: workload.steps: constant 0 is below 1; want a value >= 1`}},
		{"bad name", "name: Research_Fleet\ntools: {a: {}}\n",
			nil, []string{`t.yaml:1: name: "Research_Fleet" is not a valid name; want lowercase letters, digits and dashes ([a-z0-9-]+), such as research-fleet`}},
		{"missing name and tools", "horizon: 1h\n",
			nil, []string{
				`t.yaml:1: name: missing; want a name of lowercase letters, digits and dashes, such as research-fleet`,
				`t.yaml:1: tools: missing; want at least one tool, such as tools: {search: {latency: {dist: exponential, mean: 2s}, timeout: 30s}}`,
			}},
		{"lost_response on a tool without timeout", base + "faults:\n  - {kind: lost_response, tool: notify, probability: 0.1}\n",
			nil, []string{`t.yaml:6: faults[0]: lost_response on tool notify, which has no timeout: the caller would wait forever; set tools.notify.timeout (such as 1h)`}},
		{"hang on every tool, one without timeout", base + "faults:\n  - {kind: hang, at: 1h, for: 10m}\n",
			nil, []string{`t.yaml:6: faults[0]: hang on tool notify, which has no timeout: the caller would wait forever; set tools.notify.timeout (such as 1h)`}},
		{"fault key its kind does not take", base + "faults:\n  - {kind: transient, tool: search, probability: 0.1, for: 1h}\n",
			nil, []string{`t.yaml:6: faults[0].for: a transient fault takes no for; it takes id, kind, tool and probability`}},
		{"fault missing a required key", base + "faults:\n  - {kind: outage, tool: search, at: 1h}\n",
			nil, []string{`t.yaml:6: faults[0]: an outage fault needs for`}},
		{"unknown fault kind", base + "faults:\n  - {kind: transent, probability: 0.1}\n",
			nil, []string{`t.yaml:6: faults[0].kind: "transent" is not a fault kind (did you mean transient?); want transient, lost_response, outage, brownout, hang, worker_crash, invalid_config, budget_spike or zone_crash`}},
		{"duplicate fault ids", base + "faults:\n  - {id: x, kind: invalid_config, probability: 0.1}\n  - {id: x, kind: invalid_config, probability: 0.2}\n",
			nil, []string{`t.yaml:7: faults[1]: id "x" is already used by the fault at line 6; want unique ids`}},
		{"bad expectations", base + "expect:\n  completion_rate: \">= abc\"\n  events: 5\n  retry_amplification: \"between 2 and 1\"\n",
			nil, []string{
				`t.yaml:6: expect.completion_rate: ">= abc" is not an expectation; want ">= 0.95", "<= 1.5", "== 0", "> x", "< x" or "between A and B"`,
				`t.yaml:7: expect.events: 5 is a bare number; want a comparison such as ">= 5" or "== 5"`,
				`t.yaml:8: expect.retry_amplification: "between 2 and 1" has its bounds reversed; want between A and B with A <= B`,
			}},
		{"unknown metric", base + "expect:\n  completion: \">= 1\"\n",
			nil, []string{`t.yaml:6: expect.completion: unknown metric "completion" (did you mean completion_rate?); want one of completion_rate, correct_completion_rate, validation_pass_rate, retry_amplification, duplicate_side_effects, discarded_results, median_recovery_time, p95_recovery_time, goodput_recovery_time, full_scope_completion_rate, human_intervention_rate, terminated_rate, tokens_per_completion, compute_per_completion, wasted_compute_ratio, wasted_token_ratio, correlated_failure_share, makespan, events, median_pending_time, backlog_growth, peak_backlog, cost_per_completion, wasted_cost_ratio`}},
		{"unknown metric in tolerances", base + "tolerances:\n  makespan: 1\n  latency: 2\n",
			nil, []string{`t.yaml:7: tolerances.latency: unknown metric "latency"; want one of completion_rate, correct_completion_rate, validation_pass_rate, retry_amplification, duplicate_side_effects, discarded_results, median_recovery_time, p95_recovery_time, goodput_recovery_time, full_scope_completion_rate, human_intervention_rate, terminated_rate, tokens_per_completion, compute_per_completion, wasted_compute_ratio, wasted_token_ratio, correlated_failure_share, makespan, events, median_pending_time, backlog_growth, peak_backlog, cost_per_completion, wasted_cost_ratio`}},
		{"enum with suggestion and retry max below initial", base + "recovery:\n  retry: {jitter: ful, max: 1s, initial: 5s}\n",
			nil, []string{
				`t.yaml:6: recovery.retry.jitter: "ful" is not a jitter (did you mean full?); want none, full, equal or decorrelated`,
				`t.yaml:6: recovery.retry.max: max 1s is below initial 5s; want max >= initial`,
			}},
		{"inspection: unknown key, negative interval, max below one", base + "recovery:\n  inspection: {intervall: 1m, interval: -30s, max: 0}\n",
			nil, []string{
				`t.yaml:6: recovery.inspection.intervall: unknown key "intervall" (did you mean interval?); want one of interval, max`,
				`t.yaml:6: recovery.inspection.interval: "-30s" is a negative duration; want a duration > 0, such as 30s`,
				`t.yaml:6: recovery.inspection.max: 0 is too small; want a whole number of lookups >= 1`,
			}},
		{"inspection: zero interval, too many lookups", base + "recovery:\n  inspection:\n    interval: 0s\n    max: 1000000\n",
			nil, []string{
				`t.yaml:7: recovery.inspection.interval: "0s" is zero; want a duration > 0, such as 30s`,
				`t.yaml:8: recovery.inspection.max: 1000000 is too many; want at most 100000`,
			}},
		{"inspection: bad override", base,
			[]string{"recovery.inspection.max=-2"}, []string{
				`t.yaml: --set recovery.inspection.max=-2: recovery.inspection.max: -2 is too small; want a whole number of lookups >= 1`,
			}},
		{"rules supervisor given a model key", base + "recovery:\n  supervisor: {kind: rules, accuracy: 0.9}\n",
			nil, []string{`t.yaml:6: recovery.supervisor.accuracy: only a model supervisor takes accuracy; this one is kind rules`}},
		{"model supervisor without accuracy", base + "recovery:\n  supervisor: {kind: model}\n",
			nil, []string{`t.yaml:6: recovery.supervisor: a model supervisor needs accuracy; want accuracy: a probability such as 0.9`}},
		{"block that is not a mapping, reported once", base + "recovery:\n  humans: 5\n",
			nil, []string{`t.yaml:6: recovery.humans: "5" is not a mapping; want a mapping such as {reviewers: 5, review_time: {dist: lognormal, median: 20m, p95: 2h}, approve: 0.8}`}},
		{"humans without reviewers", base + "recovery:\n  humans: {approve: 0.5}\n",
			nil, []string{`t.yaml:6: recovery.humans: missing reviewers; want reviewers: N (0 = escalations terminate)`}},
		{"bad sweep values and paths", base + "sweep:\n  recovery.retry.max_attempts: [1, 0, x]\n  tools.serch.concurrency: [1]\n  faults[3].for: [1m]\n  horizon: 1h\n",
			nil, []string{
				`t.yaml:6: sweep recovery.retry.max_attempts=0: recovery.retry.max_attempts: 0 is too small; want a whole number >= 1 (1 = never retry)`,
				`t.yaml:6: sweep recovery.retry.max_attempts=x: recovery.retry.max_attempts: "x" is not a number; want a whole number >= 1 (1 = never retry)`,
				`t.yaml:7: sweep: tools.serch: no tool "serch" in the file (did you mean search?); want one of search, notify`,
				`t.yaml:8: sweep: faults[3]: no such item: faults has no items in the file`,
				`t.yaml:9: sweep.horizon: want a non-empty list of values, such as [1, 3, 5]`,
			}},
		{"sweep errors beside file errors", base + "horizon: 1x\nsweep:\n  recovery.lease: [1m, 0s]\n",
			nil, []string{
				`t.yaml:5: horizon: "1x" is not a duration; want Go syntax plus d, such as 90s, 2h30m, 3d`,
				`t.yaml:7: sweep recovery.lease=0s: recovery.lease: "0s" is zero; want a duration > 0, such as 30s`,
			}},
		{"several errors in file order", base + "horizon: 1x\nworkload:\n  investigations: 0\n  behaviour: {stuck: 2}\n",
			nil, []string{
				`t.yaml:5: horizon: "1x" is not a duration; want Go syntax plus d, such as 90s, 2h30m, 3d`,
				`t.yaml:7: workload.investigations: 0 is too small; want a whole number >= 1`,
				`t.yaml:8: workload.behaviour.stuck: 2 is not a probability; want a number in [0, 1]`,
			}},
		{"not a mapping", "- a\n- b\n",
			nil, []string{`t.yaml:1: the file holds a list; want a mapping with at least name and tools`}},
		{"empty file", "",
			nil, []string{`t.yaml: the file is empty; want a mapping with at least name and tools`}},
		{"invalid YAML", "name: [\n",
			nil, []string{`t.yaml:1: invalid YAML: did not find expected node content`}},
		{"two documents", "name: t\n---\nname: u\n",
			nil, []string{`t.yaml:2: a second YAML document; want one scenario per file`}},
		{"merge keys", base + "workload:\n  <<: {investigations: 5}\n",
			nil, []string{`t.yaml:6: workload.<<: merge keys (<<) are not supported; write the keys out`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(c.yaml), c.sets)
			if err == nil {
				t.Fatalf("no error; scenario %s", s.JSON())
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not an ErrorList: %v", err, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			// The typed error carries the same place as the text.
			var first *Error
			if !errors.As(err, &first) || first != list[0] {
				t.Errorf("errors.As(*Error) = %v, want the first of the list", first)
			}
		})
	}
}
