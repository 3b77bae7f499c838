package recovery_test

import (
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// Jitter and Exhausted marshal to their scenario spellings and back; a value without a
// name (one past the last, or negative) is an error, not an empty or made-up word.
func TestTextRoundTrip(t *testing.T) {
	for _, j := range []recovery.Jitter{recovery.JitterNone, recovery.JitterFull, recovery.JitterEqual, recovery.JitterDecorrelated} {
		b, err := j.MarshalText()
		var back recovery.Jitter
		if err != nil || back.UnmarshalText(b) != nil || back != j || string(b) != j.String() {
			t.Errorf("jitter %d: %q, %v; back %v", j, b, err, back)
		}
	}
	for _, e := range []recovery.Exhausted{recovery.ExhaustedEscalate, recovery.ExhaustedTerminate, recovery.ExhaustedReduceScope} {
		b, err := e.MarshalText()
		var back recovery.Exhausted
		if err != nil || back.UnmarshalText(b) != nil || back != e || string(b) != e.String() {
			t.Errorf("exhausted %d: %q, %v; back %v", e, b, err, back)
		}
	}
	for _, j := range []recovery.Jitter{recovery.JitterDecorrelated + 1, 255} {
		if b, err := j.MarshalText(); err == nil {
			t.Errorf("jitter %d marshals to %q", j, b)
		}
	}
	for _, e := range []recovery.Exhausted{recovery.ExhaustedReduceScope + 1, 255} {
		if b, err := e.MarshalText(); err == nil {
			t.Errorf("exhausted %d marshals to %q", e, b)
		}
	}
	var j recovery.Jitter
	if j.UnmarshalText([]byte("")) == nil || j.UnmarshalText([]byte("Full")) == nil {
		t.Error("an empty or misspelt jitter is read")
	}
}
