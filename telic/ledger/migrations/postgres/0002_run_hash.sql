-- Telic ledger, PostgreSQL schema 2: the run row is sealed by a hash of its fields and chain
-- head. Every write stores run_hash beside the fields it covers; telic verify recomputes it, and
-- a write to a run whose row does not match it is refused. Rows written before this schema are
-- sealed once, by the code that applies this migration, in the same transaction.

ALTER TABLE runs ADD COLUMN run_hash TEXT;
