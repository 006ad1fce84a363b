-- Incidents are stored whole as JSON (doc), with the columns lists and
-- filters need beside it.
CREATE TABLE incidents (
    id                TEXT PRIMARY KEY,
    title             TEXT NOT NULL,
    source            TEXT NOT NULL DEFAULT '',
    format            TEXT NOT NULL DEFAULT '',
    date              TEXT NOT NULL DEFAULT '',
    root_cause_status TEXT NOT NULL DEFAULT 'known',
    doc               TEXT NOT NULL,
    hash              TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);

CREATE TABLE incident_tags (
    incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    tag         TEXT NOT NULL,
    PRIMARY KEY (incident_id, tag)
);
CREATE INDEX incident_tags_tag ON incident_tags(tag);

CREATE TABLE signatures (
    id          TEXT PRIMARY KEY,
    incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    text        TEXT NOT NULL,
    template    TEXT NOT NULL,
    is_template INTEGER NOT NULL DEFAULT 0,
    section     TEXT NOT NULL DEFAULT '',
    position    INTEGER NOT NULL
);
CREATE INDEX signatures_incident ON signatures(incident_id);

-- Files ingested, so an unchanged file is skipped and a changed one
-- replaces exactly the incidents it produced.
CREATE TABLE sources (
    path         TEXT PRIMARY KEY,
    hash         TEXT NOT NULL,
    incident_ids TEXT NOT NULL,
    ingested_at  TEXT NOT NULL
);

-- Incidents written to SQLite whose index entry may not be durable yet.
-- A row is removed only after the index has persisted the change it was
-- written for (seq is the write's generation); Open replays the rest.
CREATE TABLE index_pending (
    incident_id TEXT PRIMARY KEY,
    seq         INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('generation', '0');
