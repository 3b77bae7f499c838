package sim

import "fmt"

// Error is a scenario the simulator cannot run: Key is the path of the offending field
// (as `mayday run --set` spells it) and Msg says what is wrong and what would be valid.
// The scenario parser rejects these first; the simulator checks again because scenarios
// may also be built in Go.
type Error struct {
	Scenario string
	Key      string
	Msg      string
}

func (e *Error) Error() string {
	if e.Scenario != "" {
		return fmt.Sprintf("sim: scenario %s: %s: %s", e.Scenario, e.Key, e.Msg)
	}
	return fmt.Sprintf("sim: %s: %s", e.Key, e.Msg)
}
