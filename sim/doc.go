// Package sim is mayday's discrete-event simulator: it drives simulated research agents
// through the real recovery engine (package recovery) while it injects the faults of a
// scenario, and emits every operation as plain records (package sim/record).
//
// # Contract
//
// Run(ctx, scenario, seed, sink, options) is deterministic: the same scenario, seed and
// binary give the same records in the same order (the same record.Digest), whatever
// GOMAXPROCS is. A run is single-threaded: virtual time is int64 nanoseconds, events are
// small values in a typed binary heap ordered by (time, scheduling sequence), and there is
// no goroutine per agent. Every entity (investigation, tool, fault, the reviewer pool, the
// arrival process) draws from its own PCG stream derived from (seed, a stable id), and
// decisions taken once per (fault, investigation) pair are stateless hashes, so adding an
// entity shifts no other entity's draws. Records are reused between emissions: a sink must
// copy what it keeps.
//
// Records come in this order: one Fault record per configured fault first; then spans,
// transitions, executions and samples as they happen; an Investigation record (and the
// investigation's invoke_agent span) when an investigation ends, or at the end of the run
// for those still open, which are then in flight (Ended=false). Cancelling ctx stops the
// run (it is looked at every few thousand events); the records stay consistent and the
// Result is Partial.
//
// # Model
//
// Root investigations arrive by the workload's arrival process. Each one starts with a
// configuration change (a `plan` span; an invalid_config fault makes it permanently bad),
// then works through its steps: a model turn (think time, tokens: a `plan` span), possibly
// subagents (which share its configuration), then one logical tool operation whose attempts
// go to the tool. The recovery engine of the investigation (recovery.Engine, one per
// investigation, with the fleet guards per tool shared by all) is told of every lifecycle
// change through Observe and decides what happens next; the simulator executes the decision
// (send, retry at, park, inspect, validate, revise, replan, consult the supervisor,
// escalate to a human, pause, reduce scope, complete, terminate). The engine's journal
// becomes the `transitions` rows and is kept while the investigation is open: after a
// worker crash and its lease, a new worker rebuilds the engine with recovery.Replay.
//
// Tools are servers with a FIFO queue in front of `concurrency` servers (0 = unlimited).
// A fast failure (transient, outage, brownout error) answers at once without queueing;
// a lost reply or a hang leaves the caller to its timeout, while the tool may still finish
// the work (its result is then discarded unless a lookup or a repeat takes it). Tools keep
// ground truth of every execution (record.Execution): a `keyed` tool executes a key once
// and answers repeats and lookups from its record; `natural` and `none` tools execute every
// attempt that reaches them, and keep no record (a lookup finds nothing at a natural tool
// and is impossible at a none tool).
//
// Each fault kind is one faultKind in its own file (fault_<kind>.go) with the hooks the
// simulator calls: per attempt at a tool, per model call, per investigation, per worker,
// at a window's edges. Faults are filed under their kinds' hooks at start, so the event loop
// calls plain functions from fixed tables (docs/architecture.md, "Faults").
//
// Simplifications: validation, inspection and the answer from a keyed record take no
// simulated time; a hang swallows the attempts sent during its window without executing
// them; a pause renews the exhausted budget when it ends; budgets are checked at the end of
// each model turn and before every spend that would grow them (a model call, a
// consultation, a tool attempt), counting the whole compute of executions still queued or
// running, committed when their attempts were sent (compute is billed when an execution
// ends or is cancelled); a worker is immune to crashes while it has nothing to lose (pending,
// awaiting a human, or waiting for its subagents), and an investigation that gave its worker
// back for a wait (workload.hold_worker) has none to lose; a parent finishes only after its
// subagents ended, and a subagent's wrong result makes its parent's result wrong; a model
// call in flight when the model goes down learns it only when its answer was due.
//
// # Invariants
//
// With Options.Check (always on in tests) a run checks, and reports in Result.Violations:
// root investigations are conserved (started = completed + terminated + awaiting human +
// in flight, one record each); every journal record follows a legal edge of the documented
// lifecycle (checked against a table written from docs/architecture.md, not the engine's), starts
// where the previous one ended, and none follows a final state; an engine rebuilt by
// Replay equals the one it replaces; a keyed tool never executes a key twice to its end (an
// execution cancelled at its caller's timeout did not complete); a blocked
// operation is never sent; the engine never refuses an event the simulator sends.
package sim
