-- Emerging patterns: templates mined from error lines no signature matched.
CREATE TABLE emerging_patterns (
    id         TEXT PRIMARY KEY,
    template   TEXT NOT NULL,
    count      INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    samples    TEXT NOT NULL,
    labels     TEXT NOT NULL,
    buckets    TEXT NOT NULL DEFAULT '{}',
    seeded     INTEGER NOT NULL DEFAULT 0,
    muted      INTEGER NOT NULL DEFAULT 0,
    promoted   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX emerging_patterns_count ON emerging_patterns(count);

-- The miner's clusters, so a restart does not forget them.
CREATE TABLE miner_state (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    snapshot TEXT NOT NULL
);

-- Feedback on matches: a person says a signature was right or wrong for a
-- line. template_hash identifies "lines like this one".
CREATE TABLE feedback (
    id            INTEGER PRIMARY KEY,
    signature_id  TEXT NOT NULL,
    incident_id   TEXT NOT NULL,
    line          TEXT NOT NULL,
    template      TEXT NOT NULL,
    verdict       TEXT NOT NULL CHECK (verdict IN ('up', 'down')),
    note          TEXT NOT NULL DEFAULT '',
    by_whom       TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
CREATE INDEX feedback_signature ON feedback(signature_id);
