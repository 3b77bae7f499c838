package scenarios_test

// The fault kinds register their scenario rules from package sim (sim/fault_<kind>.go),
// which every mayday binary links. Linking it into this test binary gives every test of the
// package, the internal ones included, the kinds a binary has.
import _ "github.com/mayday-sim/mayday/sim"
