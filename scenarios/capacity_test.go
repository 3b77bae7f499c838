package scenarios

import "testing"

// TestHumansSpellings: the scalar spellings of humans.approve and review_time still work,
// and mean the same for every class; a mapping with only a default resolves to the same
// scenario. (The error cases of these keys are in testdata/parse_capacity_and_money.txt.)
func TestHumansSpellings(t *testing.T) {
	const base = "name: t\ntools:\n  search: {latency: {dist: constant, value: 1s}, timeout: 30s}\n  notify: {}\n"
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
