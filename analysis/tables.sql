-- Trace tables (docs/traces.md). One database may hold many runs: every table has run_id.
-- Column order and names match the Arrow schemas of package traces (a test checks it); rows
-- are loaded with INSERT INTO ... BY NAME SELECT * FROM <registered Arrow view>.
--
-- Conventions, so queries need not guess:
--   * Timestamps are TIMESTAMP in UTC; simulated time 0 is 2026-01-01 00:00:00. DuckDB
--     keeps microseconds: the simulator's nanoseconds are truncated on load.
--   * Durations are DOUBLE seconds; compute is compute-unit seconds.
--   * An optional value that is absent is NULL, never '' or 0: parent_id of a root
--     investigation, parent_span_id of a root span, ended_at of an investigation still in
--     flight at the horizon, failure_class/fault_id of a successful span, op_key of a span
--     that is not a keyed operation, tool of a fault that hits every tool, and so on.
--   * "end" and "at" are SQL keywords: quote them ("end", "at") or qualify them (s.end).
--   * op_key is '<investigation>/<step>/<revision>', the operation's idempotency key.
--   * Secret-looking attribute values are already redacted ('redacted:hmac-sha256:<16 hex>').
--   * Storage only, invisible to queries (every such column is a VARCHAR): text columns of
--     few distinct values (run_id, names, states, classes, reasons) are stored as dictionaries
--     and the per-operation references (op_key, input_ref, output_ref) with FSST, named with
--     USING COMPRESSION so that DuckDB does not analyse every method at each checkpoint: a
--     traced run writes about 5% faster (docs/performance.md, "Text columns stored by
--     declared compression").
--   * Columns whose values are mayday's own closed vocabularies (span operations, statuses and
--     failure classes; transition states, failure classes, actions and deciders; execution
--     outcomes) are ENUMs of every value they can take, in byte order: they read, compare,
--     sort and concatenate as VARCHAR does, and DuckDB stores them as small integers, which
--     made the traced M/M/8 run about 8% faster (docs/performance.md, "Import: unread events
--     left out; closed vocabularies as ENUMs"). An import refuses a value outside them (an
--     export's rows). Transition events and reasons stay VARCHAR: tests and tools write
--     their own.

CREATE TABLE runs (
    run_id        VARCHAR NOT NULL,
    scenario      VARCHAR,
    seed          UBIGINT,
    config        VARCHAR,  -- JSON of the resolved scenario (redacted)
    config_hash   VARCHAR,
    version       VARCHAR,
    digest        VARCHAR,  -- SHA-256 over all trace rows of the run, in emission order
    events        BIGINT,   -- simulation events processed
    status        VARCHAR,  -- complete | partial
    wall_seconds  DOUBLE
);

CREATE TABLE investigations (
    run_id             VARCHAR USING COMPRESSION dictionary NOT NULL,
    investigation_id   BIGINT NOT NULL,
    parent_id          BIGINT,     -- NULL for a root investigation
    root_id            BIGINT,
    depth              INTEGER,    -- 0 for a root investigation
    arrived_at         TIMESTAMP,
    ended_at           TIMESTAMP,  -- NULL when still in flight at the horizon
    final_state        VARCHAR USING COMPRESSION dictionary,    -- completed | terminated | awaiting_human | running | ...
    termination_reason VARCHAR USING COMPRESSION dictionary,    -- NULL unless terminated
    steps              INTEGER,
    attempts           INTEGER,
    revisions          INTEGER,
    escalations        INTEGER,
    tokens             BIGINT,
    compute            DOUBLE,
    truly_valid        BOOLEAN,
    validated          BOOLEAN,
    crashes            INTEGER,
    scope              VARCHAR USING COMPRESSION dictionary     -- full | reduced (reduce_scope dropped the remaining optional steps)
);

CREATE TABLE spans (
    run_id           VARCHAR USING COMPRESSION dictionary NOT NULL,
    trace_id         BIGINT,       -- root investigation id
    span_id          BIGINT NOT NULL,
    parent_span_id   BIGINT,       -- NULL for a root span
    investigation_id BIGINT,
    agent_id         BIGINT,
    operation        ENUM('', 'execute_tool', 'human_review', 'inspect', 'invoke_agent', 'plan', 'supervise', 'takeover', 'validate'),      -- invoke_agent | execute_tool | inspect | supervise | human_review | validate | plan | takeover
    kind             VARCHAR USING COMPRESSION dictionary,      -- the kind attribute (plan: model_turn | config_change); NULL when absent
    tool             VARCHAR USING COMPRESSION dictionary,
    tool_version     VARCHAR USING COMPRESSION dictionary,
    model            VARCHAR USING COMPRESSION dictionary,
    op_key           VARCHAR USING COMPRESSION fsst,      -- '<investigation>/<step>/<revision>'; NULL when not keyed
    attempt          INTEGER,      -- 1 = first try; NULL when not an attempt
    "start"          TIMESTAMP,
    "end"            TIMESTAMP,
    queue_wait       DOUBLE,       -- seconds waited in the tool's queue
    status           ENUM('', 'blocked', 'error', 'invalid', 'ok', 'timeout', 'unset'),      -- ok | error | timeout | blocked | invalid
    failure_class    ENUM('', 'invalid_output', 'non_progress', 'policy_violation', 'resource_exhaustion', 'transient', 'uncertain_completion', 'unknown'),      -- NULL = none
    fault_id         VARCHAR USING COMPRESSION dictionary,      -- NULL = none
    input_tokens     BIGINT,
    output_tokens    BIGINT,
    compute          DOUBLE,
    input_ref        VARCHAR USING COMPRESSION fsst,
    output_ref       VARCHAR USING COMPRESSION fsst,
    caused_by        BIGINT[],     -- span ids whose output this operation used
    worker           BIGINT        -- the worker the investigation held (takeover: the one that died); NULL: none, or workers unlimited
);

-- Every other attribute of a span, one row each, in the span's order (redacted). A tool's
-- static arguments are in tool_args instead; an execute_tool span whose arguments differ from
-- its tool's set keeps its own here as arg.<name>. The view span_attributes gives back every
-- attribute of every span. value is stored uncompressed: an import writes a row for every
-- attribute of every span, and DuckDB's analysis and compression of short values cost a
-- third of inserting them; long values are stored the same either way (docs/performance.md,
-- "Attribute values stored uncompressed; request bodies read into reused buffers").
CREATE TABLE span_attrs (
    run_id   VARCHAR USING COMPRESSION dictionary NOT NULL,
    span_id  BIGINT NOT NULL,
    key      VARCHAR USING COMPRESSION dictionary NOT NULL,
    value    VARCHAR USING COMPRESSION uncompressed NOT NULL
);

-- A tool's static arguments, once per tool and run (key without the arg. prefix, value
-- redacted): taken from the tool's first execute_tool span that was not blocked, and the
-- arguments of every such span of that tool that has no arg.* row in span_attrs.
CREATE TABLE tool_args (
    run_id   VARCHAR USING COMPRESSION dictionary NOT NULL,
    tool     VARCHAR USING COMPRESSION dictionary NOT NULL,
    key      VARCHAR USING COMPRESSION dictionary NOT NULL,
    value    VARCHAR NOT NULL
);

CREATE TABLE transitions (
    run_id           VARCHAR USING COMPRESSION dictionary NOT NULL,
    investigation_id BIGINT,
    "at"             TIMESTAMP,
    from_state       ENUM('', 'awaiting_human', 'completed', 'pending', 'recovering', 'running', 'terminated', 'unknown', 'waiting'),      -- pending for an investigation's first transition
    to_state         ENUM('', 'awaiting_human', 'completed', 'pending', 'recovering', 'running', 'terminated', 'unknown', 'waiting'),
    event            VARCHAR USING COMPRESSION dictionary,
    failure_class    ENUM('', 'invalid_output', 'non_progress', 'policy_violation', 'resource_exhaustion', 'transient', 'uncertain_completion', 'unknown'),
    action           ENUM('', 'block', 'complete', 'consult', 'escalate', 'inspect', 'next_step', 'none', 'park', 'pause', 'reduce_scope', 'replan', 'respawn', 'retry', 'revise', 'send', 'start', 'terminate', 'unknown', 'validate'),
    decided_by       ENUM('', 'engine', 'human', 'policy', 'supervisor', 'unknown'),      -- engine | supervisor | human | policy
    reason           VARCHAR USING COMPRESSION dictionary,
    attempt          INTEGER
);

CREATE TABLE executions (
    run_id           VARCHAR USING COMPRESSION dictionary NOT NULL,
    tool             VARCHAR USING COMPRESSION dictionary,
    op_key           VARCHAR USING COMPRESSION fsst,
    investigation_id BIGINT,
    execution        INTEGER,      -- 1 = first execution of this key at this tool, 2 = a duplicate, ...
    "start"          TIMESTAMP,
    "end"            TIMESTAMP,
    outcome          ENUM('', 'cancelled', 'error', 'hung', 'lost', 'ok'),      -- ok | lost | cancelled | hung | error
    delivered        BOOLEAN,      -- the result reached the investigation
    compute          DOUBLE,
    side_effects     BOOLEAN       -- the tool has side effects (idempotency keyed or none)
);

CREATE TABLE faults (
    run_id      VARCHAR USING COMPRESSION dictionary NOT NULL,
    fault_id    VARCHAR USING COMPRESSION dictionary,
    kind        VARCHAR USING COMPRESSION dictionary,
    tool        VARCHAR USING COMPRESSION dictionary,           -- NULL = every tool
    "start"     TIMESTAMP,
    "end"       TIMESTAMP,
    parameters  VARCHAR,           -- JSON object (redacted)
    window_start TIMESTAMP,        -- a window's start; NULL = the kind acts over the whole run
    window_end   TIMESTAMP,        -- a window's end (exclusive); NULL likewise
    hits        VARCHAR USING COMPRESSION dictionary            -- calls | investigations | workers
);

CREATE TABLE tool_samples (
    run_id        VARCHAR USING COMPRESSION dictionary NOT NULL,
    tool          VARCHAR USING COMPRESSION dictionary,
    "at"          TIMESTAMP,
    queued        INTEGER,         -- waiting in the tool's FIFO queue
    in_service    INTEGER,
    parked        INTEGER,         -- operations waiting on an open breaker
    budget_tokens DOUBLE,          -- retry-budget tokens; NULL when the budget is off
    breaker_state VARCHAR USING COMPRESSION dictionary,         -- closed | open | half_open | off
    attempts      INTEGER,         -- attempts sent since the previous sample
    failures      INTEGER,         -- failed attempts since the previous sample
    retries       INTEGER          -- retries sent since the previous sample
);

-- The workers of a limited fleet (workload.workers), each once, when it is first needed, and
-- its zone (workload.zones; 'default' when it declares none). Join spans.worker to group
-- operations by zone.
CREATE TABLE workers (
    run_id   VARCHAR USING COMPRESSION dictionary NOT NULL,
    worker   BIGINT NOT NULL,
    zone     VARCHAR USING COMPRESSION dictionary NOT NULL
);
