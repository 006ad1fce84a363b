package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/incidex/incidex/patterns"
)

// Feedback is a person's verdict on a match: the signature was right (up)
// or wrong (down) for a line. Lines "like this one" share the line's
// template (its masked form).
type Feedback struct {
	ID          int64     `json:"id"`
	SignatureID string    `json:"signature_id"`
	IncidentID  string    `json:"incident_id"`
	Line        string    `json:"line"`
	Template    string    `json:"template"`
	Verdict     string    `json:"verdict"` // "up" or "down"
	Note        string    `json:"note,omitempty"`
	By          string    `json:"by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// LineTemplate is the masked form of a line that feedback is keyed on.
func LineTemplate(line string) string { return patterns.FromExample(line, nil).Template() }

// AddFeedback stores a verdict. The next matcher built from the knowledge
// base weighs it (see Matcher).
func (k *KB) AddFeedback(ctx context.Context, fb Feedback) (Feedback, error) {
	switch {
	case fb.Verdict != "up" && fb.Verdict != "down":
		return fb, &ValidationError{Field: "verdict", Msg: fmt.Sprintf("%q: want up or down", fb.Verdict)}
	case strings.TrimSpace(fb.Line) == "":
		return fb, &ValidationError{Field: "line", Msg: "is empty"}
	case len(fb.Line) > 64<<10:
		return fb, &ValidationError{Field: "line", Msg: "is longer than 64 KiB"}
	}
	var inc string
	if err := k.db.QueryRowContext(ctx, "SELECT incident_id FROM signatures WHERE id = ?", fb.SignatureID).Scan(&inc); err != nil {
		return fb, fmt.Errorf("signature %q: %w", fb.SignatureID, ErrNotFound)
	}
	fb.IncidentID = inc
	fb.Template = LineTemplate(fb.Line)
	fb.CreatedAt = k.now().UTC()
	tx, err := k.db.BeginTx(ctx, nil)
	if err != nil {
		return fb, err
	}
	defer func() { _ = tx.Rollback() }()
	err = tx.QueryRowContext(ctx, `INSERT INTO feedback (signature_id, incident_id, line, template, verdict, note, by_whom, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, fb.SignatureID, fb.IncidentID, fb.Line, fb.Template, fb.Verdict, fb.Note, fb.By,
		fb.CreatedAt.Format(timeFormat)).Scan(&fb.ID)
	if err != nil {
		return fb, err
	}
	if err := bumpGeneration(ctx, tx); err != nil {
		return fb, err
	}
	return fb, tx.Commit()
}

// ListFeedback returns feedback, newest first, optionally for one signature.
func (k *KB) ListFeedback(ctx context.Context, signatureID string, limit int) ([]Feedback, error) {
	q := "SELECT id, signature_id, incident_id, line, template, verdict, note, by_whom, created_at FROM feedback"
	var args []any
	if signatureID != "" {
		q += " WHERE signature_id = ?"
		args = append(args, signatureID)
	}
	if limit <= 0 {
		limit = 100
	}
	rows, err := k.db.QueryContext(ctx, q+fmt.Sprintf(" ORDER BY id DESC LIMIT %d", limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Feedback{}
	for rows.Next() {
		var fb Feedback
		var created string
		if err := rows.Scan(&fb.ID, &fb.SignatureID, &fb.IncidentID, &fb.Line, &fb.Template, &fb.Verdict, &fb.Note, &fb.By, &created); err != nil {
			return nil, err
		}
		fb.CreatedAt, _ = time.Parse(timeFormat, created)
		out = append(out, fb)
	}
	return out, rows.Err()
}

// verdicts counts feedback per signature and line template: downs minus ups.
func (k *KB) verdicts(ctx context.Context) (map[string]map[string]int, error) {
	rows, err := k.db.QueryContext(ctx, `SELECT signature_id, template, SUM(CASE verdict WHEN 'down' THEN 1 ELSE -1 END) FROM feedback GROUP BY signature_id, template`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var sig, tmpl string
		var net int
		if err := rows.Scan(&sig, &tmpl, &net); err != nil {
			return nil, err
		}
		if net == 0 {
			continue
		}
		if out[sig] == nil {
			out[sig] = map[string]int{}
		}
		out[sig][tmpl] = net
	}
	return out, rows.Err()
}

// feedbackFactor is what net "wrong" verdicts do to a score: each halves it
// (down to an eighth); net "right" verdicts restore up to 1.
func feedbackFactor(net int) float64 {
	if net <= 0 {
		return 1
	}
	return math.Max(math.Pow(0.5, float64(net)), 0.125)
}

// SignatureID is the stable id of a signature of an incident: derived from
// the incident and the template, so re-ingesting a write-up keeps it.
func SignatureID(incidentID, template string) string {
	h := sha256.Sum256([]byte(incidentID + "\x00" + template))
	return "s-" + hex.EncodeToString(h[:6])
}

// AddSignature adds a signature to an incident (promoted from an emerging
// pattern). It survives re-ingesting the incident's file.
func (k *KB) AddSignature(ctx context.Context, incidentID, template string) (Signature, error) {
	p, err := patterns.Parse(template)
	if err != nil {
		return Signature{}, &ValidationError{Field: "template", Msg: err.Error()}
	}
	tmpl := p.Template()
	sig := Signature{IncidentID: incidentID, Kind: SigPromoted, Text: template, Template: tmpl, IsTemplate: true, Section: "promoted"}
	sig.ID = SignatureID(incidentID, tmpl)
	tx, err := k.db.BeginTx(ctx, nil)
	if err != nil {
		return sig, err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM incidents WHERE id = ?", incidentID).Scan(&n); err != nil {
		return sig, err
	}
	if n == 0 {
		return sig, fmt.Errorf("incident %q: %w", incidentID, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO signatures (id, incident_id, kind, text, template, is_template, section, position)
		VALUES (?, ?, ?, ?, ?, 1, ?, (SELECT coalesce(max(position), 0) + 1 FROM signatures WHERE incident_id = ?))`,
		sig.ID, incidentID, sig.Kind, sig.Text, sig.Template, sig.Section, incidentID); err != nil {
		return sig, err
	}
	if err := markPending(ctx, tx, incidentID); err != nil {
		return sig, err
	}
	if err := bumpGeneration(ctx, tx); err != nil {
		return sig, err
	}
	if err := tx.Commit(); err != nil {
		return sig, err
	}
	return sig, k.indexIDs(ctx, []string{incidentID})
}
