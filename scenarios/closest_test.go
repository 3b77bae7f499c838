package scenarios

import "testing"

// TestClosestTies: of several candidates at the same edit distance the first is suggested,
// so a suggestion follows the order the keys are declared in, not the last one tried.
func TestClosestTies(t *testing.T) {
	for _, c := range []struct {
		s     string
		cands []string
		want  string
	}{
		{"rat", []string{"rate", "rats", "brat"}, "rate"},
		{"rat", []string{"rats", "rate"}, "rats"},
		{"rate", []string{"rats", "rate"}, "rate"},
		{"latncy", []string{"latency", "latencys"}, "latency"},
		// A key in the wrong case is suggested in its own spelling, even before others.
		{"Rate", []string{"rate", "rats"}, "rate"},
	} {
		if got := closest(c.s, c.cands); got != c.want {
			t.Errorf("closest(%q, %q) = %q, want %q", c.s, c.cands, got, c.want)
		}
	}
}
