-- Telic ledger, SQLite schema 4: the run's topology (beyond Telic 1.0) and how often it
-- escalated. A run that never asked for a topology has none (NULL: it follows Telic 1.0, as
-- standard) and no escalation, so rows written before this schema read as what they were; the
-- run-row seal covers a topology that is set and an escalation count that is not 0.

ALTER TABLE runs ADD COLUMN topology TEXT
    CHECK (topology IS NULL OR topology IN ('micro', 'standard', 'forensic'));
ALTER TABLE runs ADD COLUMN escalation_count INTEGER NOT NULL DEFAULT 0
    CHECK (escalation_count >= 0);
