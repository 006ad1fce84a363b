package kb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const timeFormat = time.RFC3339Nano

// Source is the file (or API upload) a set of incidents was parsed from.
type Source struct {
	Path string
	Hash string
}

// Write is one source and the incidents it produced now.
type Write struct {
	Source    Source
	Incidents []*Incident
	// Replace allows taking over incident ids that another source produced.
	Replace bool
}

// storeWrites writes ws in one transaction: incidents upserted, incidents
// the sources no longer produce deleted, every touched id queued in
// index_pending. It returns the touched ids.
func storeWrites(ctx context.Context, db *sql.DB, ws []Write, now time.Time) ([]string, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var touched []string
	for _, w := range ws {
		ids, err := storeWrite(ctx, tx, w, now)
		if err != nil {
			return nil, err
		}
		touched = append(touched, ids...)
	}
	if err := bumpGeneration(ctx, tx); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return touched, nil
}

func storeWrite(ctx context.Context, tx *sql.Tx, w Write, now time.Time) ([]string, error) {
	var touched []string
	keep := make(map[string]bool, len(w.Incidents))
	for _, inc := range w.Incidents {
		if w.Source.Path != "" {
			inc.Source = w.Source.Path
		}
		if err := inc.Validate(); err != nil {
			return nil, fmt.Errorf("incident %q from %s: %w", inc.ID, w.Source.Path, err)
		}
		if keep[inc.ID] {
			return nil, fmt.Errorf("incident %q appears twice in %s: %w", inc.ID, w.Source.Path, ErrConflict)
		}
		keep[inc.ID] = true
		if !w.Replace {
			if err := checkOwner(ctx, tx, inc.ID, w.Source.Path); err != nil {
				return nil, err
			}
		}
		if err := putIncident(ctx, tx, inc, now); err != nil {
			return nil, fmt.Errorf("store incident %s: %w", inc.ID, err)
		}
		touched = append(touched, inc.ID)
	}
	if w.Source.Path == "" {
		return touched, nil
	}
	gone, err := replaceSource(ctx, tx, w, keep, now)
	if err != nil {
		return nil, err
	}
	return append(touched, gone...), nil
}

// checkOwner refuses an id that another, still-known source file produced.
func checkOwner(ctx context.Context, tx *sql.Tx, id, source string) error {
	var owner string
	err := tx.QueryRowContext(ctx, "SELECT source FROM incidents WHERE id = ?", id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || owner == source || source == "" {
		return nil
	}
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sources WHERE path = ?", owner).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("incident %q from %s is already defined by %s: %w", id, source, owner, ErrConflict)
	}
	return nil
}

// replaceSource records the source's incidents and deletes those it
// produced before but not now. It returns the deleted ids.
func replaceSource(ctx context.Context, tx *sql.Tx, w Write, keep map[string]bool, now time.Time) ([]string, error) {
	var prev string
	err := tx.QueryRowContext(ctx, "SELECT incident_ids FROM sources WHERE path = ?", w.Source.Path).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	var gone []string
	for _, id := range splitIDs(prev) {
		if keep[id] {
			continue
		}
		if err := deleteIncident(ctx, tx, id, w.Source.Path); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		gone = append(gone, id)
	}
	ids := make([]string, 0, len(keep))
	for _, inc := range w.Incidents {
		ids = append(ids, inc.ID)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sources (path, hash, incident_ids, ingested_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, incident_ids = excluded.incident_ids, ingested_at = excluded.ingested_at`,
		w.Source.Path, w.Source.Hash, strings.Join(ids, "\n"), now.Format(timeFormat))
	return gone, err
}

func splitIDs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func putIncident(ctx context.Context, tx *sql.Tx, inc *Incident, now time.Time) error {
	doc := *inc
	doc.Signatures = nil
	doc.UpdatedAt = now
	var created string
	err := tx.QueryRowContext(ctx, "SELECT created_at FROM incidents WHERE id = ?", inc.ID).Scan(&created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		doc.CreatedAt = now
	case err != nil:
		return err
	default:
		doc.CreatedAt, _ = time.Parse(timeFormat, created)
	}
	inc.CreatedAt, inc.UpdatedAt = doc.CreatedAt, doc.UpdatedAt
	js, err := json.Marshal(&doc)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO incidents (id, title, source, format, date, organisation, root_cause_status, doc, hash, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET title = excluded.title, source = excluded.source, format = excluded.format,
			date = excluded.date, organisation = excluded.organisation, root_cause_status = excluded.root_cause_status,
			doc = excluded.doc, hash = excluded.hash, updated_at = excluded.updated_at`,
		inc.ID, inc.Title, inc.Source, inc.Format, inc.Date, inc.Organisation, inc.CauseStatus, string(js), inc.Hash,
		doc.CreatedAt.Format(timeFormat), now.Format(timeFormat))
	if err != nil {
		return err
	}
	if err := putTags(ctx, tx, inc); err != nil {
		return err
	}
	if err := putFields(ctx, tx, inc); err != nil {
		return err
	}
	if err := putSignatures(ctx, tx, inc); err != nil {
		return err
	}
	return markPending(ctx, tx, inc.ID)
}

// markPending queues an incident for the index, stamped with the
// generation of the write in progress.
func markPending(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO index_pending (incident_id, seq)
		VALUES (?, (SELECT CAST(value AS INTEGER) + 1 FROM meta WHERE key = 'generation'))
		ON CONFLICT(incident_id) DO UPDATE SET seq = excluded.seq`, id)
	return err
}

func putTags(ctx context.Context, tx *sql.Tx, inc *Incident) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM incident_tags WHERE incident_id = ?", inc.ID); err != nil {
		return err
	}
	for _, t := range inc.Tags {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO incident_tags (incident_id, tag) VALUES (?, ?)", inc.ID, t); err != nil {
			return err
		}
	}
	return nil
}

func putFields(ctx context.Context, tx *sql.Tx, inc *Incident) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM incident_fields WHERE incident_id = ?", inc.ID); err != nil {
		return err
	}
	for i, f := range inc.Extra {
		if _, err := tx.ExecContext(ctx, "INSERT INTO incident_fields (incident_id, position, key, value) VALUES (?, ?, ?, ?)",
			inc.ID, i, f.Key, f.Value); err != nil {
			return err
		}
	}
	return nil
}

func putSignatures(ctx context.Context, tx *sql.Tx, inc *Incident) error {
	// Signatures promoted from emerging patterns belong to the knowledge
	// base, not to the write-up's file: re-ingesting the file keeps them.
	if _, err := tx.ExecContext(ctx, "DELETE FROM signatures WHERE incident_id = ? AND kind != 'promoted'", inc.ID); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO signatures (id, incident_id, kind, text, template, is_template, section, position)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, s := range inc.Signatures {
		if _, err := stmt.ExecContext(ctx, s.ID, inc.ID, s.Kind, s.Text, s.Template, s.IsTemplate, s.Section, i); err != nil {
			return err
		}
	}
	return nil
}

func deleteIncident(ctx context.Context, tx *sql.Tx, id, source string) error {
	q, args := "DELETE FROM incidents WHERE id = ?", []any{id}
	if source != "" {
		q, args = q+" AND source = ?", append(args, source)
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return markPending(ctx, tx, id)
}

func bumpGeneration(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
	return err
}

// generation returns the write counter: it changes whenever incidents do.
func generation(ctx context.Context, db *sql.DB) (int64, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'generation'").Scan(&v); err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

func getIncident(ctx context.Context, q querier, id string) (*Incident, error) {
	var doc string
	err := q.QueryRowContext(ctx, "SELECT doc FROM incidents WHERE id = ?", id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("incident %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	inc, err := decodeDoc(doc)
	if err != nil {
		return nil, fmt.Errorf("decode incident %s: %w", id, err)
	}
	sigs, err := listSignatures(ctx, q, id)
	if err != nil {
		return nil, err
	}
	inc.Signatures = sigs
	return inc, nil
}

func decodeDoc(doc string) (*Incident, error) {
	var inc Incident
	if err := json.Unmarshal([]byte(doc), &inc); err != nil {
		return nil, err
	}
	return &inc, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// listSignatures returns the signatures of one incident, or of all when id is "".
func listSignatures(ctx context.Context, q querier, id string) ([]Signature, error) {
	query := "SELECT id, incident_id, kind, text, template, is_template, section FROM signatures"
	var args []any
	if id != "" {
		query += " WHERE incident_id = ?"
		args = append(args, id)
	}
	rows, err := q.QueryContext(ctx, query+" ORDER BY incident_id, position", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Signature
	for rows.Next() {
		var s Signature
		if err := rows.Scan(&s.ID, &s.IncidentID, &s.Kind, &s.Text, &s.Template, &s.IsTemplate, &s.Section); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func listSummaries(ctx context.Context, q querier, tag string) ([]Summary, error) {
	query := `SELECT i.id, i.doc, (SELECT count(*) FROM signatures s WHERE s.incident_id = i.id) FROM incidents i`
	var args []any
	if tag != "" {
		query += " WHERE EXISTS (SELECT 1 FROM incident_tags t WHERE t.incident_id = i.id AND t.tag = ?)"
		args = append(args, tag)
	}
	rows, err := q.QueryContext(ctx, query+" ORDER BY i.id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var id, doc string
		var n int
		if err := rows.Scan(&id, &doc, &n); err != nil {
			return nil, err
		}
		var inc Incident
		if err := json.Unmarshal([]byte(doc), &inc); err != nil {
			return nil, fmt.Errorf("decode incident %s: %w", id, err)
		}
		out = append(out, inc.ListView(n))
	}
	return out, rows.Err()
}

// ListView returns the list view of the incident.
func (inc *Incident) ListView(signatures int) Summary {
	return Summary{
		ID: inc.ID, Title: inc.Title, Date: inc.Date, Org: inc.Organisation, Tags: nonNil(inc.Tags), Services: nonNil(inc.Services),
		RootCause: inc.RootCause, CauseStatus: inc.CauseStatus, CauseFrom: inc.CauseFrom, Source: inc.Source, Signatures: signatures,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sourceHash(ctx context.Context, db *sql.DB, path string) (string, error) {
	var h string
	err := db.QueryRowContext(ctx, "SELECT hash FROM sources WHERE path = ?", path).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return h, err
}
