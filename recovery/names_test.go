package recovery

import "testing"

// TestNamesPastTheEnd: a value one past the last name, or below 0, is "unknown", not a
// panic or a neighbour's name.
func TestNamesPastTheEnd(t *testing.T) {
	for _, c := range []struct {
		what string
		got  func(int) string
		n    int
	}{
		{"State", func(i int) string { return State(i).String() }, len(stateNames)},
		{"Class", func(i int) string { return Class(i).String() }, len(classNames)},
		{"EventKind", func(i int) string { return EventKind(i).String() }, len(eventNames)},
		{"Action", func(i int) string { return Action(i).String() }, len(actionNames)},
		{"Decider", func(i int) string { return Decider(i).String() }, len(deciderNames)},
		{"Lookup", func(i int) string { return Lookup(i).String() }, len(lookupNames)},
		{"Resource", func(i int) string { return Resource(i).String() }, len(resourceNames)},
		{"Point", func(i int) string { return Point(i).String() }, len(pointNames)},
		{"Jitter", func(i int) string { return Jitter(i).String() }, len(jitterNames)},
		{"BreakerState", func(i int) string { return BreakerState(i).String() }, len(breakerNames)},
	} {
		if s := c.got(c.n - 1); s == "unknown" || s == "" && c.n > 1 {
			t.Errorf("%s(%d), the last, = %q, want its name", c.what, c.n-1, s)
		}
		for _, i := range []int{c.n, -1} {
			if s := c.got(i); s != "unknown" {
				t.Errorf("%s(%d) = %q, want unknown", c.what, i, s)
			}
		}
	}
}
