// Package traces turns the records of a simulation (package sim/record) into Apache Arrow
// record batches, one schema per trace table of docs/traces.md.
//
// Its contract:
//   - Schema(t) is the single definition of every table's columns (testdata/schema.golden
//     keeps changes reviewable); package analysis creates matching DuckDB tables. Every table
//     has run_id. Times are timestamp[ns, UTC] with simulated time 0 at record.Epoch
//     (2026-01-01T00:00:00Z); durations are float64 seconds; op_key is
//     "<investigation>/<step>/<revision>"; an absent optional value is null, never "" or 0.
//   - Writer is a record.Sink. It keeps one reusable builder per table, emits a table's rows
//     in arrival order in batches of Options.BatchRows through an EmitFunc (which owns and
//     releases each batch), never holds a whole run, and keeps its first error for Close.
//   - Redaction happens before any value reaches Arrow: span attributes under secret-looking
//     keys (key, token, secret, password, credential, plus Options.Redact), secret-looking
//     key=value pairs in free text (reasons, refs), secret members of JSON (fault parameters,
//     the run's config, its sweep axes over a secret key), credential-shaped values under any
//     key (package secret: AWS key ids, sk-… keys, JWTs, GitHub and Slack tokens, private-key
//     blocks, a URL's password) and known secret values anywhere become
//     "redacted:hmac-sha256:<16 hex>", an HMAC keyed by Options.RedactKey, so equal secrets
//     stay joinable but unreadable.
//   - ScenarioOptions gives the Options a scenario asks for (its redact patterns, its secret
//     tool arguments and sweep values as known secrets); ParamRedactor redacts
//     the grid values of a sweep before they are stored or printed.
//   - Writer.Digest is record.Digest over the redacted records in the order received: the
//     same inputs give the same digest, whatever the batch size or the consumer's timing.
//
// Only this package and analysis import Arrow.
package traces
