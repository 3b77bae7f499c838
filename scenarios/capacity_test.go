package scenarios

import (
	"strings"
	"testing"
)

// Bad values of the capacity, model, money and judge keys are errors that say what and where.
func TestCapacityKeyErrors(t *testing.T) {
	for _, c := range []struct{ add, want string }{
		{"workload: {workers: -1}\n", "t.yaml:5: workload.workers: "},
		{"workload: {priority: newest}\n", "t.yaml:5: workload.priority: \"newest\" is not a worker priority"},
		{"workload: {tokens: {dist: constant, value: 10, growth: 0}}\n", "t.yaml:5: workload.tokens.growth: "},
		{"workload: {tokens: {dist: constant, value: 10, grwth: 2}}\n", "t.yaml:5: workload.tokens.grwth: unknown key \"grwth\" (did you mean growth?); want one of dist, value, mean, min, max, median, p95, alpha, growth"},
		{"faults:\n  - {kind: zone_crash, at: 1h, for: 10m}\n", "t.yaml:6: faults[0]: a zone_crash fault needs share"},
		{"faults:\n  - {kind: zone_crash, for: 10m, share: 0}\n", "t.yaml:6: faults[0].share: share 0 crashes nothing"},
		{"faults:\n  - {kind: zone_crash, for: 10m, share: 1.5}\n", "t.yaml:6: faults[0].share: 1.5 is not a probability"},
		{"faults:\n  - {kind: hang, tool: model, for: 10m}\n", "t.yaml:6: faults[0].tool: a hang fault cannot name the model"},
		{"model: {requests_per_minute: -5}\n", "t.yaml:5: model.requests_per_minute: "},
		{"model: {failure: 2}\n", "t.yaml:5: model.failure: 2 is not a probability"},
		{"model: {rpm: 5}\n", "t.yaml:5: model.rpm: unknown key"},
		{"recovery: {budgets: {cost: 5}}\n", "recovery.budgets.cost: a cost budget needs prices"},
		{"prices: {models: {other: {input: 1}}}\n", "t.yaml:5: prices.models.other: unknown model \"other\""},
		{"prices: {tools: {serch: {call: 1}}}\n", "t.yaml:5: prices.tools.serch: unknown tool \"serch\""},
		{"prices: {tools: {search: {call: -1}}}\n", "t.yaml:5: prices.tools.search.call: "},
		{"recovery: {humans: {reviewers: 1, review_time: 1m, approve: {default: 0.9, policy_violaton: 0.1}}}\n", "recovery.humans.approve.policy_violaton: unknown key"},
		{"recovery: {humans: {reviewers: 1, review_time: 1m, approve: {default: 1.2}}}\n", "recovery.humans.approve.default: 1.2 is not a probability"},
		{"recovery: {supervisor: {kind: model, accuracy: 0.9, difficulty: {floor: 2}}}\n", "recovery.supervisor.difficulty.floor: 2 is not a probability"},
	} {
		_, err := Parse("t.yaml", []byte(base+c.add), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.add, err, c.want)
		}
	}
	if _, err := Parse("t.yaml", []byte("name: t\ntools: {search: {concurrency: 2, queue_limit: -3}}\n"), nil); err == nil ||
		!strings.Contains(err.Error(), "t.yaml:2: tools.search.queue_limit: -3 is too small") {
		t.Errorf("negative queue_limit: %v", err)
	}
	// The scalar spellings of humans.approve and review_time still work, and mean the same
	// for every class; a mapping with only a default resolves to the same scenario.
	a, err := Parse("t.yaml", []byte(base+"recovery: {humans: {reviewers: 1, review_time: 1m, approve: 0.7}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("t.yaml", []byte(base+"recovery: {humans: {reviewers: 1, review_time: {default: 1m}, approve: {default: 0.7}}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || a.Recovery.Humans.Approve != 0.7 {
		t.Errorf("scalar and default-only spellings differ: %s vs %s", a.JSON(), b.JSON())
	}
}
