// Package detect finds a tool's incidents (correlated failures: an outage, a brownout) and
// saturation (a burst of capacity refusals) in the calls of one run, and the time goodput
// takes to come back after the run's last fault window. It is pure: no database, no clock,
// no randomness, only the standard library, so the computation of derived tables (simulated
// or imported runs) calls it on its records and tests hold it to its definition cheaply.
//
// Incidents accumulate evidence over a tool's calls in order. Each call tested (every call
// but a capacity refusal) adds its log-likelihood ratio of "failing at p1" against "failing
// at the tool's baseline p0" to a walk X; an incident starts where X last stood at its
// running minimum before it rose h above it (the first failed call of that rise) with at
// least MinFailed failed calls in the rise, and ends at the last failed call at X's running
// maximum before X fell h below it (the calls succeed again at the baseline rate). h is set
// from the number of calls N and a false-alarm rate α per tool per run: h = ln(4N/α)
// (Ville's inequality, see Threshold). Capacity refusals run through the same test as
// events of their own and make saturation spans, never incidents.
//
// Time enters only through the calls' order and their instants, which the spans report
// unchanged: multiplying every instant by k multiplies every start and end by k exactly, and
// the goodput rule counts results rather than minutes (GoodputRecovery), so it scales the
// same way. Both run in O(n) (goodput O(n log n)) and allocate only what they return.
//
// docs/metrics.md (incidents, correlated_failure_share, goodput) describes the rules for a
// user.
package detect
