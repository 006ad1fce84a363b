-- Front-matter dialects: the organisation gets its own column (search
-- facets and filters), and fields a write-up gives that have no place of
-- their own are kept as key/value rows, in their order. The JSON doc stays
-- the whole incident; these are copies for queries, like incident_tags.
ALTER TABLE incidents ADD COLUMN organisation TEXT NOT NULL DEFAULT '';
UPDATE incidents SET organisation = COALESCE(json_extract(doc, '$.organisation'), '');
CREATE INDEX incidents_organisation ON incidents(organisation);

CREATE TABLE incident_fields (
    incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (incident_id, position)
);
CREATE INDEX incident_fields_key ON incident_fields(key);
