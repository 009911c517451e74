-- Telic ledger, SQLite schema 1.
-- Artifact ids are scoped to their run. Artifacts and trace events of a run share one hash chain
-- (chain_index, previous_hash, record_hash); the run row keeps the chain's length and head, and
-- the counters the quotas are checked against. Bodies live in blobs/sha256/<2 hex>/<62 hex>.

CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    schema_version TEXT NOT NULL,
    repository_root TEXT NOT NULL,
    requested_mode TEXT NOT NULL,
    status TEXT NOT NULL,
    phase TEXT NOT NULL,
    resume_phase TEXT,
    version INTEGER NOT NULL CHECK (version >= 1),
    prompt_revisions_remaining INTEGER NOT NULL CHECK (prompt_revisions_remaining >= 0),
    remediations_remaining INTEGER NOT NULL CHECK (remediations_remaining >= 0),
    outcome_hint TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    controller_state_json TEXT NOT NULL,
    artifact_count INTEGER NOT NULL CHECK (artifact_count >= 0),
    event_count INTEGER NOT NULL CHECK (event_count >= 0),
    chain_length INTEGER NOT NULL CHECK (chain_length >= 0),
    chain_head TEXT NOT NULL
) STRICT;

CREATE INDEX runs_by_recency ON runs (updated_at DESC, run_id ASC);

CREATE TABLE artifacts (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    artifact_id TEXT NOT NULL,
    type TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    producer TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    source_refs_json TEXT NOT NULL,
    redaction TEXT NOT NULL,
    quota_key TEXT,
    created_at TEXT NOT NULL,
    position INTEGER NOT NULL,
    chain_index INTEGER NOT NULL,
    previous_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    PRIMARY KEY (run_id, artifact_id),
    UNIQUE (run_id, position),
    UNIQUE (run_id, chain_index)
) STRICT;

CREATE INDEX artifacts_by_type ON artifacts (run_id, type, position);
CREATE INDEX artifacts_by_created ON artifacts (run_id, created_at);
CREATE UNIQUE INDEX artifacts_one_per_quota_key
    ON artifacts (run_id, type, quota_key) WHERE quota_key IS NOT NULL;

CREATE TABLE trace_events (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    event_id TEXT NOT NULL,
    sequence INTEGER NOT NULL CHECK (sequence >= 1),
    timestamp TEXT NOT NULL,
    actor TEXT NOT NULL,
    phase TEXT NOT NULL,
    event_type TEXT NOT NULL,
    input_refs_json TEXT NOT NULL,
    output_refs_json TEXT NOT NULL,
    permission_decision_json TEXT,
    decision_summary TEXT NOT NULL CHECK (length(decision_summary) <= 800),
    budget_snapshot_json TEXT NOT NULL,
    chain_index INTEGER NOT NULL,
    previous_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    PRIMARY KEY (run_id, event_id),
    UNIQUE (run_id, sequence),
    UNIQUE (run_id, chain_index)
) STRICT;
