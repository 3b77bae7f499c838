package sim

import "testing"

// An Error names its scenario when it has one.
func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Scenario: "s1", Key: "tools.a.timeout", Msg: "must be > 0"}, "sim: scenario s1: tools.a.timeout: must be > 0"},
		{Error{Key: "workload", Msg: "no tools"}, "sim: workload: no tools"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
