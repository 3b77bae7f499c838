package scenarios

import "testing"

// A whole number may be written as a float (1e3, 2.0); a fraction, or a float beyond 2^53
// where floats skip whole numbers, is refused at its line.
func TestWholeNumberWrittenAsFloat(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{{"1e3", 1000}, {"2.0", 2}, {"1.5e2", 150}} {
		s, err := Parse("t.yaml", []byte("name: t\nworkload: {investigations: "+c.text+"}\ntools: {a: {}}\n"), nil)
		if err != nil || s.Workload.Investigations != c.want {
			t.Errorf("investigations: %s: %v; want %d", c.text, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"2.5", "t.yaml:2: workload.investigations: \"2.5\" is not a whole number; want a whole number >= 1"},
		{"1e16", "t.yaml:2: workload.investigations: \"1e16\" is not a whole number; want a whole number >= 1"},
		{"!!float many", `t.yaml:2: workload.investigations: "many" is not a whole number; want a whole number >= 1`},
	} {
		_, err := Parse("t.yaml", []byte("name: t\nworkload: {investigations: "+c.text+"}\ntools: {a: {}}\n"), nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("investigations: %s: %v; want %s", c.text, err, c.want)
		}
	}
}

// A respawn's max may be 1000 replacements, its bound; 1001 is refused
// (testdata/parse_recovery.txt).
func TestRespawnMaxAtItsBound(t *testing.T) {
	s, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\nrecovery: {subagents: {on_failure: {action: respawn, max: 1000}}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Recovery.Subagents.OnFailure; got.Action != SubagentRespawn || got.Max != 1000 {
		t.Errorf("on_failure = %+v; want respawn, max 1000", got)
	}
}

// Floats hold every whole number up to 2^53 exactly, so 2^53 written as a float is that
// number; 2^54 is refused, its neighbours being out of reach (tune.initial has no bound of
// its own).
func TestWholeNumberAtTwoToThe53(t *testing.T) {
	s, err := Parse("t.yaml", []byte(tuneFile+"  initial: 9.007199254740992e15\n"), nil)
	if err != nil || s.Tune.Initial != 1<<53 {
		t.Errorf("initial: 2^53 as a float: %v; want %d", err, 1<<53)
	}
	_, err = Parse("t.yaml", []byte(tuneFile+"  initial: 1.8014398509481984e16\n"), nil)
	const want = `t.yaml:17: tune.initial: "1.8014398509481984e16" is not a whole number; want a whole number >= 1`
	if err == nil || err.Error() != want {
		t.Errorf("initial: 2^54 as a float: %v; want %s", err, want)
	}
}

// A sweep axis with no value is refused at its own line, not the sweep's.
func TestSweepAxisWithoutValues(t *testing.T) {
	_, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\nsweep:\n  recovery.retry.max_attempts: [1, 2]\n  recovery.revisions:\n"), nil)
	const want = "t.yaml:5: sweep.recovery.revisions: want a non-empty list of values, such as [1, 3, 5]"
	if err == nil || err.Error() != want {
		t.Errorf("an axis without values: %v; want %s", err, want)
	}
}
