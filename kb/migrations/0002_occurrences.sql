-- An occurrence is a signature matching lines of one resource: it opens at
-- the first match, counts the next ones, and closes after a quiet period.
CREATE TABLE occurrences (
    id           INTEGER PRIMARY KEY,
    incident_id  TEXT NOT NULL,
    signature_id TEXT NOT NULL,
    resource     TEXT NOT NULL,
    labels       TEXT NOT NULL,
    count        INTEGER NOT NULL,
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    samples      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'open',
    acked_at     TEXT NOT NULL DEFAULT '',
    acked_by     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX occurrences_open ON occurrences(signature_id, resource) WHERE status = 'open';
CREATE INDEX occurrences_incident ON occurrences(incident_id, last_seen);
CREATE INDEX occurrences_last_seen ON occurrences(last_seen);
