package kb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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
	Format      string
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
	// OnCheckpoint, when set, is called after a flush with the queue
	// position that flush made durable (see Observe).
	OnCheckpoint func(pos uint64)
	Logger       *slog.Logger
	Now          func() time.Time
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
	pos    uint64               // queue position the counts include

	// flushMu lets one Flush run at a time (Run's ticker, shutdown and
	// callers that want the database current): two at once could write
	// queue positions out of order.
	flushMu sync.Mutex
	saved   uint64 // position last written (under flushMu)
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

// resourceLabels are the labels that say where a line came from; the
// others (stream, file, job) do not make a resource.
var resourceLabels = []string{"cluster", "namespace", "workload", "container", "node"}

// ResourceKey names the resource a record's labels describe: cluster,
// namespace, workload (the app label, else the pod name without its
// ReplicaSet and random suffixes), container and node. Pods of one
// Deployment are one resource, so a restart does not split an occurrence.
func ResourceKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range resourceLabels {
		v := labels[k]
		if k == "workload" {
			v = workload(labels)
		}
		if k == "node" && v == "" {
			v = labels["host"]
		}
		if v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + v)
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

func workload(labels map[string]string) string {
	for _, k := range []string{"app", "app.kubernetes.io/name", "k8s-app", "service", "job"} {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return podBase(labels["pod"])
}

// podBase strips generated suffixes: web-7d9f8b6c4-x2kq9 → web,
// calico-node-x7k2p → calico-node, valkey-0 → valkey.
func podBase(pod string) string {
	parts := strings.Split(pod, "-")
	for len(parts) > 1 {
		last := parts[len(parts)-1]
		if !generatedPart(last) {
			break
		}
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "-")
}

func generatedPart(s string) bool {
	if s == "" {
		return false
	}
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			if strings.IndexByte("aeiou", c) >= 0 && len(s) != 5 {
				return false
			}
		default:
			return false
		}
	}
	return digit && (len(s) == 5 || len(s) >= 8 || allDigits(s))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Observe implements ingest.Sink: matches are counted in memory; Flush
// (run every FlushEvery by Run) writes them together with pos, the queue
// position they bring the counts to (0: no durable queue), so that after a
// crash a durable queue replays exactly what was not counted.
func (o *Occurrences) Observe(_ context.Context, obs []Observation, pos uint64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if pos > o.pos {
		o.pos = pos
	}
	for _, ob := range obs {
		t := ob.Time
		if t.IsZero() {
			t = o.opts.Now()
		}
		key := occKey{ob.SignatureID, ResourceKey(ob.Labels)}
		st := o.open[key]
		if st != nil && t.Sub(st.occ.LastSeen) > o.opts.QuietPeriod && st.occ.ID != 0 {
			// The quiet period passed: this match opens a new occurrence.
			// The old one is closed by the next expiry sweep.
			st = nil
		}
		if st == nil {
			st = &occState{isNew: true, occ: Occurrence{
				IncidentID: ob.IncidentID, SignatureID: ob.SignatureID, Resource: key.resource,
				Labels: resourceOnly(ob.Labels), FirstSeen: t, LastSeen: t, Status: "open", Samples: []string{},
			}}
			if old := o.open[key]; old != nil {
				o.closeLocked(old)
			}
			o.open[key] = st
		}
		st.occ.Count++
		if t.After(st.occ.LastSeen) {
			st.occ.LastSeen = t
		}
		if t.Before(st.occ.FirstSeen) {
			st.occ.FirstSeen = t
		}
		if len(st.occ.Samples) < o.opts.Samples {
			st.occ.Samples = append(st.occ.Samples, clipLine(ob.Message, 2000))
		}
		st.dirty = true
	}
	return nil
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
	pos := o.pos
	o.mu.Unlock()
	if len(snap) == 0 && pos == o.saved {
		return nil
	}
	ids, err := o.write(ctx, snap, pos)
	if err != nil {
		o.mu.Lock()
		for _, st := range todo {
			st.dirty = true // write again next time
		}
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
	o.saved = pos
	if o.opts.OnCheckpoint != nil && pos > 0 {
		o.opts.OnCheckpoint(pos)
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

func (o *Occurrences) write(ctx context.Context, snap []occState, pos uint64) ([]int64, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	if pos > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('queue_position', ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, fmt.Sprint(pos)); err != nil {
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

// QueuePosition returns the durable queue position the stored occurrences
// include: a spool resumes from it.
func (k *KB) QueuePosition(ctx context.Context) (uint64, error) {
	var v string
	err := k.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'queue_position'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(v, 10, 64)
}

// OpenCount returns the number of open occurrences.
func (o *Occurrences) OpenCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.open)
}
