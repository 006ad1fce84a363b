package kb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Observation is one log record that matched an incident.
type Observation struct {
	Time        time.Time
	IncidentID  string
	SignatureID string
	Score       float64
	Message     string
	Labels      map[string]string
	// Resource names where the line came from (decode.ResourceKey): an
	// occurrence is one signature on one resource. Empty means "-".
	Resource string
	Format   string
	// Count is the number of lines the observation stands for (0 means
	// 1): a scaled-out worker sends its matches aggregated per signature,
	// resource and minute.
	Count int64
	// Last is the time of the last of those lines (zero means Time, the
	// first).
	Last time.Time
	// Samples are example lines of the aggregate (nil means Message).
	Samples []string
}

// Occurrence is a signature matching the lines of one resource: count,
// first and last seen, a few sample lines and the labels.
type Occurrence struct {
	ID          int64             `json:"id"`
	IncidentID  string            `json:"incident_id"`
	SignatureID string            `json:"signature_id"`
	Resource    string            `json:"resource"`
	Labels      map[string]string `json:"labels"`
	Count       int64             `json:"count"`
	FirstSeen   time.Time         `json:"first_seen"`
	LastSeen    time.Time         `json:"last_seen"`
	Samples     []string          `json:"samples"`
	Status      string            `json:"status"` // "open" or "closed"
	AckedAt     *time.Time        `json:"acked_at,omitempty"`
	AckedBy     string            `json:"acked_by,omitempty"`
}

// OccurrenceEvent is a change to an occurrence, for live views and
// notifications.
type OccurrenceEvent struct {
	Type       string     `json:"type"` // opened, updated, closed, acked
	Occurrence Occurrence `json:"occurrence"`
}

// OccurrenceOptions configure the occurrence store.
type OccurrenceOptions struct {
	// QuietPeriod closes an occurrence without matches for this long; the
	// next match opens a new one. Default 10 minutes.
	QuietPeriod time.Duration
	// Retention deletes closed occurrences last seen longer ago. Default 30 days.
	Retention time.Duration
	// FlushEvery is how often aggregated matches are written. Default 1s.
	FlushEvery time.Duration
	// Samples is how many sample lines an occurrence keeps. Default 5.
	Samples int
	// OnEvent, when set, is called after each flush for every change.
	OnEvent func(OccurrenceEvent)
	Logger  *slog.Logger
	Now     func() time.Time
}

// Occurrences aggregates observations into occurrences in memory and
// writes them to SQLite in batches. It implements ingest.Sink.
type Occurrences struct {
	db   *sql.DB
	opts OccurrenceOptions
	log  *slog.Logger

	mu     sync.Mutex
	open   map[occKey]*occState // open occurrences by signature and resource
	closed []*occState          // closed in memory, not yet written
	ckpt   string               // queue checkpoint the counts include
	// durable are the callbacks of the batches observed since the last
	// flush, called once it commits.
	durable []func()

	// flushMu lets one Flush run at a time (Run's ticker, shutdown and
	// callers that want the database current): two at once could write
	// checkpoints out of order.
	flushMu sync.Mutex
	saved   string // checkpoint last written (under flushMu)
}

type occKey struct{ sig, resource string }

type occState struct {
	occ   Occurrence
	dirty bool
	isNew bool
}

// Occurrences returns the occurrence store of the knowledge base, with the
// open occurrences loaded so a restart continues them.
func (k *KB) Occurrences(ctx context.Context, opts OccurrenceOptions) (*Occurrences, error) {
	if opts.QuietPeriod <= 0 {
		opts.QuietPeriod = 10 * time.Minute
	}
	if opts.Retention <= 0 {
		opts.Retention = 30 * 24 * time.Hour
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = time.Second
	}
	if opts.Samples <= 0 {
		opts.Samples = 5
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &Occurrences{db: k.db, opts: opts, log: log.With("component", "occurrences"), open: map[occKey]*occState{}}
	list, err := o.List(ctx, OccurrenceFilter{Status: "open", Limit: -1})
	if err != nil {
		return nil, err
	}
	for _, occ := range list {
		o.open[occKey{occ.SignatureID, occ.Resource}] = &occState{occ: occ}
	}
	return o, nil
}

// Observe implements ingest.Sink: matches are counted in memory; Flush
// (run every FlushEvery by Run) writes them together with checkpoint, the
// queue checkpoint they bring the counts to ("": the queue keeps none), so
// that after a crash a durable queue replays exactly what was not counted.
// durable (nil: none) is called once that write commits.
func (o *Occurrences) Observe(_ context.Context, obs []Observation, checkpoint string, durable func()) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if checkpoint != "" {
		o.ckpt = checkpoint
	}
	if durable != nil {
		o.durable = append(o.durable, durable)
	}
	for _, ob := range obs {
		t := ob.Time
		if t.IsZero() {
			t = o.opts.Now()
		}
		res := ob.Resource
		if res == "" {
			res = "-"
		}
		key := occKey{ob.SignatureID, res}
		st := o.open[key]
		if st != nil && t.Sub(st.occ.LastSeen) > o.opts.QuietPeriod && st.occ.ID != 0 {
			// The quiet period passed: this match opens a new occurrence.
			// The old one is closed by the next expiry sweep.
			st = nil
		}
		last := ob.Last
		if last.Before(t) {
			last = t
		}
		if st == nil {
			st = &occState{isNew: true, occ: Occurrence{
				IncidentID: ob.IncidentID, SignatureID: ob.SignatureID, Resource: key.resource,
				Labels: resourceOnly(ob.Labels), FirstSeen: t, LastSeen: last, Status: "open", Samples: []string{},
			}}
			if old := o.open[key]; old != nil {
				o.closeLocked(old)
			}
			o.open[key] = st
		}
		st.occ.Count += max(ob.Count, 1)
		if last.After(st.occ.LastSeen) {
			st.occ.LastSeen = last
		}
		if t.Before(st.occ.FirstSeen) {
			st.occ.FirstSeen = t
		}
		if ob.Samples == nil {
			o.addSample(st, ob.Message)
		}
		for _, s := range ob.Samples {
			o.addSample(st, s)
		}
		st.dirty = true
	}
	return nil
}

func (o *Occurrences) addSample(st *occState, line string) {
	if len(st.occ.Samples) < o.opts.Samples {
		st.occ.Samples = append(st.occ.Samples, clipLine(line, 2000))
	}
}

func (o *Occurrences) closeLocked(st *occState) {
	st.occ.Status = "closed"
	st.dirty = true
	o.closed = append(o.closed, st)
}

func resourceOnly(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k == "stream" || k == "file" || k == "filename" {
			continue
		}
		out[k] = v
	}
	return out
}

func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Run flushes every FlushEvery, closes occurrences past their quiet
// period and deletes closed ones past retention, until ctx is done; then
// it flushes once more.
func (o *Occurrences) Run(ctx context.Context) error {
	t := time.NewTicker(o.opts.FlushEvery)
	defer t.Stop()
	lastRetention := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return o.Flush(context.WithoutCancel(ctx))
		case <-t.C:
		}
		o.expire()
		if err := o.Flush(ctx); err != nil {
			o.log.Warn("flush occurrences", "err", err)
		}
		if now := o.opts.Now(); now.Sub(lastRetention) > time.Hour {
			lastRetention = now
			if err := o.purge(ctx, now.Add(-o.opts.Retention)); err != nil {
				o.log.Warn("purge old occurrences", "err", err)
			}
		}
	}
}

// expire closes open occurrences whose quiet period has passed.
func (o *Occurrences) expire() {
	now := o.opts.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for key, st := range o.open {
		if now.Sub(st.occ.LastSeen) > o.opts.QuietPeriod {
			o.closeLocked(st)
			delete(o.open, key)
		}
	}
}

// Flush writes every changed occurrence in one transaction.
func (o *Occurrences) Flush(ctx context.Context) error {
	o.flushMu.Lock()
	defer o.flushMu.Unlock()
	o.mu.Lock()
	var todo []*occState
	var snap []occState
	for _, st := range o.open {
		if st.dirty {
			todo = append(todo, st)
		}
	}
	todo = append(todo, o.closed...)
	o.closed = nil
	for _, st := range todo {
		snap = append(snap, occState{occ: copyOcc(st.occ), isNew: st.isNew && st.occ.ID == 0})
		st.dirty, st.isNew = false, false
	}
	ckpt, durable := o.ckpt, o.durable
	o.durable = nil
	o.mu.Unlock()
	if len(snap) == 0 && ckpt == o.saved {
		for _, f := range durable {
			f()
		}
		return nil
	}
	ids, err := o.write(ctx, snap, ckpt)
	if err != nil {
		o.mu.Lock()
		for _, st := range todo {
			st.dirty = true // write again next time
		}
		o.durable = append(durable, o.durable...)
		o.mu.Unlock()
		return err
	}
	o.mu.Lock()
	for i, st := range todo {
		if st.occ.ID == 0 {
			st.occ.ID = ids[i]
		}
		snap[i].occ.ID = ids[i]
	}
	o.mu.Unlock()
	o.saved = ckpt
	for _, f := range durable {
		f()
	}
	if o.opts.OnEvent != nil {
		for _, s := range snap {
			typ := "updated"
			switch {
			case s.occ.Status == "closed":
				typ = "closed"
			case s.isNew:
				typ = "opened"
			}
			o.opts.OnEvent(OccurrenceEvent{Type: typ, Occurrence: s.occ})
		}
	}
	return nil
}

func copyOcc(o Occurrence) Occurrence {
	o.Samples = append([]string(nil), o.Samples...)
	return o
}

func (o *Occurrences) write(ctx context.Context, snap []occState, ckpt string) ([]int64, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	if ckpt != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('queue_position', ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, ckpt); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(snap))
	for i, s := range snap {
		labels, _ := json.Marshal(s.occ.Labels)
		samples, _ := json.Marshal(s.occ.Samples)
		if s.occ.ID != 0 {
			ids[i] = s.occ.ID
			_, err = tx.ExecContext(ctx, `UPDATE occurrences SET count = ?, first_seen = ?, last_seen = ?, samples = ?, status = ? WHERE id = ?`,
				s.occ.Count, fmtTime(s.occ.FirstSeen), fmtTime(s.occ.LastSeen), string(samples), s.occ.Status, s.occ.ID)
		} else {
			err = tx.QueryRowContext(ctx, `INSERT INTO occurrences (incident_id, signature_id, resource, labels, count, first_seen, last_seen, samples, status)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				s.occ.IncidentID, s.occ.SignatureID, s.occ.Resource, string(labels), s.occ.Count,
				fmtTime(s.occ.FirstSeen), fmtTime(s.occ.LastSeen), string(samples), s.occ.Status).Scan(&ids[i])
		}
		if err != nil {
			return nil, fmt.Errorf("write occurrence: %w", err)
		}
	}
	return ids, tx.Commit()
}

func (o *Occurrences) purge(ctx context.Context, before time.Time) error {
	_, err := o.db.ExecContext(ctx, "DELETE FROM occurrences WHERE status = 'closed' AND last_seen < ?", fmtTime(before))
	return err
}

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// OccurrenceFilter selects occurrences for List.
type OccurrenceFilter struct {
	Incident, Signature, Namespace, Node string
	Status                               string // "open", "closed" or "" for both
	Since                                time.Time
	Limit                                int // default 100; -1 for no limit
}

// List returns occurrences, most recently seen first. Matches counted but
// not yet flushed are not included.
func (o *Occurrences) List(ctx context.Context, f OccurrenceFilter) ([]Occurrence, error) {
	q := "SELECT id, incident_id, signature_id, resource, labels, count, first_seen, last_seen, samples, status, acked_at, acked_by FROM occurrences WHERE 1=1"
	var args []any
	add := func(cond string, v any) {
		q += " AND " + cond
		args = append(args, v)
	}
	if f.Incident != "" {
		add("incident_id = ?", f.Incident)
	}
	if f.Signature != "" {
		add("signature_id = ?", f.Signature)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if !f.Since.IsZero() {
		add("last_seen >= ?", fmtTime(f.Since))
	}
	if f.Namespace != "" {
		add("json_extract(labels, '$.namespace') = ?", f.Namespace)
	}
	if f.Node != "" {
		add("(json_extract(labels, '$.node') = ? OR json_extract(labels, '$.host') = ?)", f.Node)
		args = append(args, f.Node)
	}
	q += " ORDER BY last_seen DESC, id DESC"
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := o.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Occurrence{}
	for rows.Next() {
		occ, err := scanOccurrence(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, occ)
	}
	return out, rows.Err()
}

func scanOccurrence(rows *sql.Rows) (Occurrence, error) {
	var occ Occurrence
	var labels, samples, first, last, acked string
	if err := rows.Scan(&occ.ID, &occ.IncidentID, &occ.SignatureID, &occ.Resource, &labels, &occ.Count, &first, &last, &samples, &occ.Status, &acked, &occ.AckedBy); err != nil {
		return occ, err
	}
	_ = json.Unmarshal([]byte(labels), &occ.Labels)
	_ = json.Unmarshal([]byte(samples), &occ.Samples)
	occ.FirstSeen, _ = time.Parse(timeFormat, first)
	occ.LastSeen, _ = time.Parse(timeFormat, last)
	if acked != "" {
		t, _ := time.Parse(timeFormat, acked)
		occ.AckedAt = &t
	}
	return occ, nil
}

// Ack acknowledges an occurrence: it stays silenced until it closes and a
// new match opens another.
func (o *Occurrences) Ack(ctx context.Context, id int64, by string) (Occurrence, error) {
	now := o.opts.Now()
	res, err := o.db.ExecContext(ctx, "UPDATE occurrences SET acked_at = ?, acked_by = ? WHERE id = ?", fmtTime(now), by, id)
	if err != nil {
		return Occurrence{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Occurrence{}, fmt.Errorf("occurrence %d: %w", id, ErrNotFound)
	}
	rows, err := o.db.QueryContext(ctx, "SELECT id, incident_id, signature_id, resource, labels, count, first_seen, last_seen, samples, status, acked_at, acked_by FROM occurrences WHERE id = ?", id)
	if err != nil {
		return Occurrence{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		return Occurrence{}, fmt.Errorf("occurrence %d: %w", id, ErrNotFound)
	}
	occ, err := scanOccurrence(rows)
	if err != nil {
		return occ, err
	}
	o.mu.Lock()
	if st := o.open[occKey{occ.SignatureID, occ.Resource}]; st != nil && st.occ.ID == id {
		st.occ.AckedAt, st.occ.AckedBy = occ.AckedAt, by
		occ.Count, occ.LastSeen = st.occ.Count, st.occ.LastSeen
	}
	o.mu.Unlock()
	if o.opts.OnEvent != nil {
		o.opts.OnEvent(OccurrenceEvent{Type: "acked", Occurrence: occ})
	}
	return occ, nil
}

// QueueCheckpoint returns the queue checkpoint the stored occurrences
// include ("" when none): the spool resumes after it. It is opaque here;
// the meta key keeps its old name, since the spool's checkpoints are the
// decimal positions stored there before.
func (k *KB) QueueCheckpoint(ctx context.Context) (string, error) {
	var v string
	err := k.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'queue_position'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// OpenCount returns the number of open occurrences.
func (o *Occurrences) OpenCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.open)
}
