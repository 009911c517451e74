-- Telic ledger, SQLite schema 2: bodies move into the database.
-- Each body is stored once, under the sha256 digest of its canonical JSON, in the same
-- transaction as the artifact row that refers to it, so a committed step is one durable commit.
-- A store created at schema 1 keeps its older bodies in blobs/sha256/<2 hex>/<62 hex>; a body
-- that is not in this table is read from there.

CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 71 AND substr(sha256, 1, 7) = 'sha256:'),
    data BLOB NOT NULL
) STRICT;
