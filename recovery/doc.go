// Package recovery is the recovery engine of a long-running agent investigation: a pure,
// durable state machine that classifies failures and decides what to do about them, plus the
// fleet guards (retry budget and circuit breaker per tool) that all investigations share.
//
// # Contract
//
// The engine never reads a clock, draws from global randomness, starts a goroutine or does
// I/O. The caller passes the virtual time (int64 ns), the investigation's own seeded
// *rand.Rand and the shared *Guards into Observe with each Event; the engine answers with a
// Decision and hands every state change, as a JournalRecord, to its Journal before Observe
// returns. The same events with the same time, random stream and guard state give the same
// decisions and records. An Engine and the Guards are driven by one caller at a time, in
// time order.
//
// The record given to Journal.Append is reused by the engine: a journal copies what it keeps.
// The records of one Observe call belong together (one event may take two edges, e.g.
// waiting → recovering → waiting for a retry after a backoff) and should be persisted as one
// unit. Replay(records) rebuilds an engine whose State, Attempt, Op, Escalations, Revisions,
// Refusals and later decisions equal the original's: every field of an engine changes only
// by applying a record, in Observe and in Replay alike. Guards are not in the journal; they
// are fleet state the caller keeps (the engine keeps them consistent: an engine rebuilt while
// parked on a breaker still counts as parked).
//
// A refused event returns an error and changes nothing: ErrFinal once the investigation has
// ended; a *TransitionError (errors.Is ErrIllegalTransition) when the edge the event stands
// for does not exist from the current state (EvStart or EvSucceeded while running,
// EvFinished while waiting, EvHuman while running, an outcome while pending);
// ErrUnexpectedEvent when the edge exists but the engine is not waiting for this event
// (EvSucceeded during a backoff, EvStart while waiting); ErrUnknownTool for a tool index the
// guards do not have; ErrClock for a time before the engine's last record.
//
// # Lifecycle
//
// Seven durable states; Completed and Terminated are final. The legal edges (drawn in
// docs/architecture.md; the recovery decisions are taken while recovering, in the same
// Observe call unless the engine consults the supervisor; escalation is awaiting_human, or
// terminated when no human is available):
//
//	from            to              taken on
//	pending         running         EvStart
//	running         waiting         EvSend admitted (ActSend), or parked on an open breaker or
//	                                a spent retry budget (ActPark)
//	running         recovering      EvInvalid, EvPolicyViolation, EvBudgetExceeded, EvCrashed,
//	                                EvSend with the operation's attempts already spent,
//	                                EvSubagentFailed when the subagent policy fails it
//	running         completed       EvFinished (after a valid last step, a reduced scope, or
//	                                a dropped last step)
//	waiting         running         EvSucceeded (ActValidate); EvSend/EvTimer when a backoff or
//	                                parking ends (then at once running → waiting, ActSend);
//	                                EvTimer ending a pause (ActRetry or ActValidate)
//	waiting         recovering      EvFailed, EvTimedOut, EvInspected, EvCrashed,
//	                                EvBudgetExceeded, EvTimer ending a pause that left an
//	                                attempt uncertain, EvSubagentFailed (policy fail)
//	recovering      running         retry without delay (ActRetry), ActRevise, ActReplan,
//	                                inspection found it completed (ActValidate), ActReduceScope,
//	                                a crashed worker that had nothing out (ActRetry, resumed)
//	recovering      waiting         backoff (ActRetry), inspection (ActInspect), parked again
//	                                after a crash (ActPark), ActPause
//	recovering      awaiting_human  ActEscalate
//	recovering      terminated      ActTerminate (also an escalation with no human available)
//	awaiting_human  running         EvHuman approved: ActRetry (resend the same operation)
//	                                or ActRevise (a new revision); see Humans below
//	awaiting_human  terminated      EvHuman rejected, EvSubagentFailed (policy fail)
//
// Notes (JournalRecord.Note, From == To) change no state but are journaled because replay
// needs them or an audit wants them: the move to the next step (EvValid), the block of a
// forbidden operation (ActBlock), a consultation (ActConsult), a re-parking, and every
// supervisor suggestion the guardrails refused. A dropped step is no note: it moves
// recovering → running (ActReduceScope; see Dropped steps).
//
// Besides the state, a record carries what replay needs in typed fields (Wake, Gen,
// Fingerprint, Point, Lookup, Resource, Breaker, Backoff, Resumed, RaiseBudget, LiftBlock;
// see JournalRecord). Reason is audit text for the `transitions` table: replay never reads
// it, so renaming a reason cannot change what a replay rebuilds.
//
// # Protocol
//
// What the caller does for each action, and the events the engine then expects:
//
//	ActNextStep, ActRevise, ActReplan   work on the (new) operation: EvSend when it is ready
//	                                    (EvPolicyViolation if the agent tries a forbidden one)
//	ActSend       send the attempt now: EvSucceeded, EvFailed or EvTimedOut, on Event.Tool
//	ActValidate   validate the result: EvValid, EvInvalid, or EvFinished for the last step
//	ActRetry, ActPark   at Decision.At send EvTimer (or EvSend); the engine admits the attempt
//	                    through the guards (ActSend) or parks it again (ActPark). Early
//	                    events get the same answer back and change nothing. A human's
//	                    ActRetry is due at once (Decision.At is now).
//	ActInspect    at Decision.At look the operation up by its key: EvInspected
//	ActPause      at Decision.At: EvTimer
//	ActConsult    ask the supervisor: EvSupervisor
//	ActEscalate   queue a human review: EvHuman
//	ActReduceScope   class resource_exhaustion: drop the remaining optional steps: EvFinished,
//	                 or go on (EvSend). Any other class (retries exhausted): the step was
//	                 dropped and the next began (a new operation): work on it (EvSend), or
//	                 EvFinished when the dropped step was the last
//	ActComplete, ActTerminate   nothing: the investigation ended
//
// EvSubagentFailed (a subagent ended without delivering) is taken in every live state but
// pending: see Subagents below.
//
// EvBudgetExceeded is taken while running or waiting; EvCrashed (a new worker took over
// after the lease) in every live state but pending: while consulting, the engine asks the
// same question again; awaiting a human, nothing changes (ActNone). Outcomes of attempts the engine no longer
// waits for (their worker crashed, a pause or a reduced scope abandoned them) are the
// caller's to drop.
//
// # Failure classes
//
//	transient             EvFailed. Retry after a backoff while attempts < max_attempts,
//	                      through the tool's guards: an open breaker parks the operation
//	                      (ActPark, no attempt spent) until a probe may go; a spent retry
//	                      budget parks it until the budget's floor refills a token (at least
//	                      the nominal backoff, with equal jitter). Then on_exhausted:
//	                      escalate, terminate, or reduce_scope (the supervisor's judgement
//	                      point when there is one). See Dropped steps below.
//	uncertain_completion  EvTimedOut, or EvCrashed while an attempt was out or a result
//	                      awaited validation. With InspectBeforeRetry: ActInspect, then
//	                      EvInspected: completed → ActValidate (take the stored result);
//	                      running → look again after InspectEvery, up to MaxInspections
//	                      lookups, then escalate (the state is unknown); not_found →
//	                      retry as above; failed → escalate. Without: retry.
//	invalid_output        EvInvalid. ActRevise (a new logical operation) while the revision
//	                      budget lasts; then the supervisor if configured, else escalate.
//	resource_exhaustion   EvBudgetExceeded. The ladder pause (PauseFor, default 1h, then
//	                      resume what was held) → reduce scope → terminate, starting at
//	                      OnExhaustion's rung.
//	policy_violation      EvPolicyViolation. ActBlock is recorded, then escalate (terminate
//	                      without humans). No supervisor is asked; the operation is never
//	                      sent: a human's approval continues with a new revision.
//	non_progress          NonProgressRepeats consecutive failing operations with the same
//	                      Event.Fingerprint. A revised plan once (ActReplan: supervisor
//	                      consulted if configured), terminate if it happens again.
//
// # Inspection
//
// A lookup that answers running says the tool has the operation in hand: that is not a
// failure, so it spends no attempt and is not backed off. The engine looks again after a
// fixed InspectEvery, without jitter (no draw; lookups are cheap reads). Only when the
// operation has had MaxInspections lookups (counted from its start, or from a human's
// approval of a resend) and the last still says running does the engine call the state
// unknown and escalate (inspection_unresolved). Defaults (zero fields): DefaultInspectEvery
// 1m and DefaultMaxInspections 60, an hour of polling, like a cloud SDK's waiter (a fixed
// delay and a bounded number of polls), long enough for jobs that take minutes to tens of
// minutes. A tool whose jobs run longer needs a longer interval or more lookups.
//
// # History
//
// The same failure does not always get the same answer. What the engine remembers:
//   - per operation: attempts sent (retry, or exhausted), the attempts sent before a
//     human last approved a resend (where its allotment starts), the previous backoff
//     delay (decorrelated jitter), lookups made (poll again, or escalate as unknown),
//     whether it was blocked;
//   - per investigation: revisions spent (revise, or judgement), the fingerprint of the last
//     failing operations and how many in a row failed with it (non-progress), whether a
//     replan was already tried (replan, or terminate), the highest rung of the exhaustion
//     ladder reached (pause, then reduce scope, then terminate), escalations and refusals.
//
// Fingerprints count once per logical operation (the retries of one operation naturally
// repeat its approach) and 0 means none; a valid step or a replan clears the run.
//
// # Backoff
//
// Before attempt n+1 (n ≥ 1 attempts sent), with d = min(max, initial·multiplier^(n−1))
// and integer nanoseconds, both ends of a range included, one Int64N draw per jittered delay:
//
//	none          d
//	full          uniform[0, d]
//	equal         ⌈d/2⌉ + uniform[0, ⌊d/2⌋]
//	decorrelated  min(max, uniform[initial, 3·previous]); previous = initial before the
//	              first retry
//
// RetryPolicy.Max 0 means no cap. A nil Env.Rand answers the middle of each range.
//
// # Idempotency
//
// The logical operation is (investigation, step, revision) (Op). All attempts of one
// operation, retries after a timeout and resends a human approved included, share it as
// their idempotency key, which the receiving tool enforces. ActNextStep, ActRevise and
// ActReplan start a new operation.
//
// # Supervisor
//
// At a judgement point (PointInvalidOutput once revisions are spent, PointNonProgress,
// PointRetriesExhausted) with Policy.Supervisor set, the engine answers ActConsult with a
// Judgement whose Allowed actions are static slices, and whose Trajectory summarises the
// investigation as the journal knows it (steps done, attempts of the operation and in all,
// revisions, escalations, failures handled per class): what a real supervisor would be
// shown, and nothing a real platform could not know. The suggestion that comes back with
// EvSupervisor is refused, and recorded as a note with the guardrail's reason, if it asks to
// lift a block, to raise a budget, to retry or send (the operation's retries are spent, or
// the point forbids it), or for an action outside Allowed; the engine then takes its own
// default (on_exhausted; escalate; replan). Without a supervisor the engine takes that
// default at once. A supervisor that gives no answer (Suggestion.Unavailable: the model it
// runs on refused the call) leaves the decision to that same default, recorded as a note
// with reason supervisor_unavailable and JournalRecord.Unavailable; it is not a refusal.
//
// # Humans
//
// A human may authorise what a supervisor may not; what an approval (EvHuman, Approved)
// authorises depends on what was escalated:
//
//   - retries exhausted, lookup failed, inspection unresolved (class transient or
//     uncertain_completion): ActRetry, DecidedBy ByHuman, a resend of the SAME logical
//     operation under the same key (step and revision). Its completion was never
//     established, so it is the same work: a keyed tool answers the resend from its record
//     of the key, and a tool without one executes it again, a duplicate of the same
//     operation. The approval grants a fresh allotment: max_attempts more attempts (attempt
//     numbers go on counting, so no attempt of a key shares a number), lookups from zero
//     and the backoff again from initial. Attempts of one key exceed max_attempts only
//     this way, by at most max_attempts per approval.
//   - invalid output (revisions exhausted): ActRevise, a new revision outside the revision
//     budget: the rejected result is not sent again, new work is done.
//   - a policy block: ActRevise as well; even a human cannot have a blocked operation
//     sent, since its key is never current again.
//
// A rejection terminates.
//
// # Dropped steps
//
// With on_exhausted reduce_scope, an operation whose attempts are spent (a transient
// failure's, or an uncertain one's retried after inspection found nothing) drops its step:
// recovering → running with ActReduceScope, reason retries_exhausted, DecidedBy ByPolicy,
// and the next step's key (step + 1, revision 0, attempt 0), so the record tells the new
// operation apart as ActNextStep does. The investigation goes on without the dropped
// step's result; Dropped counts such steps and LostWork reports them, so it can complete,
// never at full scope. The caller finishes with EvFinished when the dropped step was its
// last: the engine takes EvFinished while working, before anything is done of the step
// that followed a drop. No human is asked (the policy goes on by itself), though humans
// still review what else escalates. With a supervisor the judgement point is taken as
// always; Allowed then also offers ActReduceScope (only under this policy), and a refused
// or missing answer drops the step. A subagent that drops a step completes reduced, which
// reduces its parent's tree as any reduced subagent does (the caller's part); the parent's
// own engine is not told. The ladder's ActReduceScope (class resource_exhaustion) is
// another thing: it drops the remaining steps, not the one in hand.
//
// # Subagents
//
// A subagent's work is part of its parent's: the parent's tree delivers only if every
// subagent does. When one fails (terminated), the caller sends EvSubagentFailed to the
// parent's engine, and Policy.Subagents decides:
//
//	respawn        ActRespawn, a note: start a replacement subagent for the lost work. At most
//	               MaxRespawns per investigation; the failure after that takes Then
//	               (reason respawns_spent).
//	reduce_scope   ActReduceScope, a note: the parent goes on without that work; LostWork
//	               reports it, and the parent can complete, never at full scope. The default
//	               (the zero SubagentPolicy).
//	fail           ActTerminate (reason subagent_failed): running or waiting → recovering →
//	               terminated; recovering (consulting) or awaiting_human → terminated.
//
// Respawns and LostWork are rebuilt from the notes like everything else.
//
// # Guards
//
// Per tool, shared by every investigation (NewGuards). First attempts are never throttled;
// the budget is asked for retries only, the breaker for every attempt. The retry budget is
// a token bucket:
// it starts full at MaxTokens, every first attempt earns Ratio tokens, every retry spends
// one and is allowed only with a whole token in hand, and a floor refills MinPerSecond tokens
// a second (capped at MaxTokens) so a trickle of retries always goes. Recommended values
// (DefaultBudget): ratio 0.1, min_per_second 1, max_tokens 10. Compared with gRPC retry
// throttling (maxTokens 10, tokenRatio 0.1: failures cost 1, successes earn 0.1, retries stop
// at half the bucket) this earns on first attempts rather than successes, so a total outage
// still allows ratio·(new operations) retries plus the floor and never starves for good;
// compared with Finagle's RetryBudget (20% of requests, 10 retries/s floor, deposits live
// 10 s) it is stricter, because an agent fleet's operations last seconds to hours: 10% of
// first attempts and one retry a second per tool bound the retry amplification to about
// 1.1 plus the floor. The cap plays the part of Finagle's ttl: savings from a quiet hour
// cannot fund a storm.
//
// The breaker is closed → open when, over the sliding window (ten fixed buckets of
// Window/10, no allocation), calls ≥ MinCalls and failures ≥ FailureRatio·calls; open →
// half-open after Cooldown; half-open lets exactly one probe through (another after a
// further Cooldown if the probe's outcome never comes), closes on its success and re-opens
// on its failure. Outcomes of attempts admitted before the breaker last changed state are
// ignored. Defaults for zero fields (DefaultBreaker): window 1m, failure ratio 0.5; its
// recommended min calls 20 and cooldown 2m apply only when a caller copies DefaultBreaker.
// Tokens, Breaker and Parked read the guards without changing them, for charts; Clone copies
// them for a what-if run.
//
// # Performance
//
// A decision allocates nothing in steady state and takes well under 200 ns (BenchmarkDecision:
// send, succeeded, valid with both guards on and a journal); errors, which allocate, are off
// the hot path. Judgement.Allowed points at static slices that callers must not modify.
package recovery
