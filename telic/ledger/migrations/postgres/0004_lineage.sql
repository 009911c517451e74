-- Telic ledger, PostgreSQL schema 4: run lineage. A run started with prior_run_id records the
-- terminal run it follows; the column is set when the row is inserted and never updated. The
-- run_hash seal covers it whenever it is set, so rows sealed before keep their hash.

ALTER TABLE runs ADD COLUMN prior_run_id TEXT;
