-- Telic ledger, PostgreSQL schema 3: the run's topology (beyond Telic 1.0) and how often it
-- escalated. A run that never asked for a topology is 'standard' with no escalation, so rows
-- written before this schema read as what they were; the run-row seal covers both columns.

ALTER TABLE runs ADD COLUMN topology TEXT NOT NULL DEFAULT 'standard'
    CHECK (topology IN ('micro', 'standard', 'forensic'));
ALTER TABLE runs ADD COLUMN escalation_count INTEGER NOT NULL DEFAULT 0
    CHECK (escalation_count >= 0);
