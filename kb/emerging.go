package kb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/incidex/incidex/patterns"
)

// EmergingPattern is a template mined from error lines that no signature
// matched: an error the knowledge base does not know yet.
type EmergingPattern struct {
	ID        string              `json:"id"`
	Template  string              `json:"template"`
	Count     int64               `json:"count"`
	FirstSeen time.Time           `json:"first_seen"`
	LastSeen  time.Time           `json:"last_seen"`
	Samples   []string            `json:"samples"`
	Labels    map[string][]string `json:"labels"` // a few values per label
	// Recent is the count of the last 15 minutes; Growth compares it with
	// the 45 minutes before (1 = steady, above 1 = growing).
	Recent int64   `json:"recent"`
	Growth float64 `json:"growth"`
	// Seeded patterns are known signatures' templates: their lines came
	// close to a known incident without matching it.
	Seeded   bool   `json:"seeded,omitempty"`
	Muted    bool   `json:"muted,omitempty"`
	Promoted string `json:"promoted,omitempty"` // the incident it was promoted into
}

// UnmatchedLine is an error line that matched no signature.
type UnmatchedLine struct {
	Time    time.Time
	Message string
	Labels  map[string]string
	// Count is the number of identical lines it stands for (0 means 1): a
	// scaled-out worker sends its unmatched lines deduplicated.
	Count int64
}

// EmergingOptions configure the emerging-pattern store.
type EmergingOptions struct {
	// MaxClusters bounds the miner (default 10000); Samples the example
	// lines kept per pattern (default 5).
	MaxClusters, Samples int
	FlushEvery           time.Duration // default 2s
	Logger               *slog.Logger
	Now                  func() time.Time
}

// Emerging mines unmatched error lines into templates and keeps, per
// template, count, first and last seen, examples and labels. It persists
// both its statistics and the miner's clusters.
type Emerging struct {
	db    *sql.DB
	miner *patterns.Miner
	opts  EmergingOptions
	log   *slog.Logger

	mu     sync.Mutex
	stats  map[string]*patternStats
	merged []string // patterns folded into others, to delete at the next flush
}

type patternStats struct {
	p       EmergingPattern
	buckets map[int64]int64 // 5-minute bucket (unix/300) → count, last hour only
	dirty   bool
}

const bucketSecs = 300

// Emerging opens the emerging-pattern store with its miner restored.
func (k *KB) Emerging(ctx context.Context, opts EmergingOptions) (*Emerging, error) {
	if opts.Samples <= 0 {
		opts.Samples = 5
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Emerging{db: k.db, miner: patterns.NewMiner(patterns.MinerOptions{MaxClusters: opts.MaxClusters}), opts: opts,
		log: log.With("component", "emerging"), stats: map[string]*patternStats{}}
	var snap string
	err := k.db.QueryRowContext(ctx, "SELECT snapshot FROM miner_state WHERE id = 1").Scan(&snap)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		var cs []patterns.Cluster
		if json.Unmarshal([]byte(snap), &cs) == nil {
			if err := e.miner.Restore(cs); err != nil {
				e.log.Warn("miner snapshot not restored; starting afresh", "err", err)
			}
		}
	}
	if err := e.load(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Emerging) load(ctx context.Context) error {
	rows, err := e.db.QueryContext(ctx, "SELECT id, template, count, first_seen, last_seen, samples, labels, buckets, seeded, muted, promoted FROM emerging_patterns")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		st, err := scanPattern(rows)
		if err != nil {
			return err
		}
		e.stats[st.p.ID] = st
	}
	return rows.Err()
}

func scanPattern(rows *sql.Rows) (*patternStats, error) {
	var p EmergingPattern
	var first, last, samples, labels, buckets string
	if err := rows.Scan(&p.ID, &p.Template, &p.Count, &first, &last, &samples, &labels, &buckets, &p.Seeded, &p.Muted, &p.Promoted); err != nil {
		return nil, err
	}
	p.FirstSeen, _ = time.Parse(timeFormat, first)
	p.LastSeen, _ = time.Parse(timeFormat, last)
	_ = json.Unmarshal([]byte(samples), &p.Samples)
	_ = json.Unmarshal([]byte(labels), &p.Labels)
	st := &patternStats{p: p, buckets: map[int64]int64{}}
	var b map[string]int64
	_ = json.Unmarshal([]byte(buckets), &b)
	for k, v := range b {
		var n int64
		if _, err := fmt.Sscan(k, &n); err == nil {
			st.buckets[n] = v
		}
	}
	return st, nil
}

// Seed makes the miner recognise the knowledge base's signatures at once:
// lines close to a known signature fall into its cluster instead of making
// a new emerging pattern.
func (e *Emerging) Seed(sigs []Signature) {
	for _, s := range sigs {
		if err := e.miner.Seed("sig-"+s.ID, s.Template); err != nil {
			e.log.Debug("signature not seeded", "signature", s.ID, "err", err)
		}
	}
}

// Observe mines unmatched error lines.
func (e *Emerging) Observe(lines []UnmatchedLine) {
	type hit struct {
		c patterns.Cluster
		l UnmatchedLine
	}
	hits := make([]hit, 0, len(lines))
	for _, l := range lines {
		c, _ := e.miner.Add(l.Message)
		hits = append(hits, hit{c, l})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range hits {
		t := h.l.Time
		if t.IsZero() {
			t = e.opts.Now()
		}
		st := e.stats[h.c.ID]
		if st == nil {
			st = &patternStats{buckets: map[int64]int64{}, p: EmergingPattern{ID: h.c.ID, FirstSeen: t, LastSeen: t,
				Seeded: h.c.Seeded, Samples: []string{}, Labels: map[string][]string{}}}
			e.stats[h.c.ID] = st
		}
		st.p.Template = patterns.Escape(h.c.Template)
		n := max(h.l.Count, 1)
		st.p.Count += n
		st.p.FirstSeen = minTime(st.p.FirstSeen, t)
		st.p.LastSeen = maxTime(st.p.LastSeen, t)
		st.buckets[t.Unix()/bucketSecs] += n
		if len(st.p.Samples) < e.opts.Samples {
			st.p.Samples = append(st.p.Samples, clipLine(h.l.Message, 2000))
		}
		addLabels(st.p.Labels, h.l.Labels)
		st.dirty = true
	}
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// addLabels keeps up to five distinct values of each resource label.
func addLabels(dst map[string][]string, labels map[string]string) {
	for _, k := range []string{"cluster", "namespace", "pod", "container", "node", "host", "app"} {
		v := labels[k]
		if v == "" || len(dst[k]) >= 5 || containsString(dst[k], v) {
			continue
		}
		dst[k] = append(dst[k], v)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Run flushes every FlushEvery until ctx is done, then once more.
func (e *Emerging) Run(ctx context.Context) error {
	t := time.NewTicker(e.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return e.Flush(context.WithoutCancel(ctx))
		case <-t.C:
			if err := e.Flush(ctx); err != nil {
				e.log.Warn("flush emerging patterns", "err", err)
			}
		}
	}
}

// Flush writes changed patterns and the miner's clusters. Statistics of
// clusters the miner merged are folded into the cluster they joined.
func (e *Emerging) Flush(ctx context.Context) error {
	e.mu.Lock()
	e.fold()
	var todo []EmergingPattern
	var bks []map[int64]int64
	cut := e.opts.Now().Add(-time.Hour).Unix() / bucketSecs
	for _, st := range e.stats {
		for b := range st.buckets {
			if b < cut {
				delete(st.buckets, b)
			}
		}
		if st.dirty {
			p := st.p
			p.Samples = append([]string(nil), p.Samples...)
			todo = append(todo, p)
			bks = append(bks, copyBuckets(st.buckets))
			st.dirty = false
		}
	}
	e.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	snap, err := json.Marshal(e.miner.Snapshot())
	if err != nil {
		return err
	}
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for i, p := range todo {
		samples, _ := json.Marshal(p.Samples)
		labels, _ := json.Marshal(p.Labels)
		b := map[string]int64{}
		for k, v := range bks[i] {
			b[fmt.Sprint(k)] = v
		}
		buckets, _ := json.Marshal(b)
		_, err := tx.ExecContext(ctx, `INSERT INTO emerging_patterns (id, template, count, first_seen, last_seen, samples, labels, buckets, seeded)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET template = excluded.template, count = excluded.count, first_seen = excluded.first_seen,
				last_seen = excluded.last_seen, samples = excluded.samples, labels = excluded.labels, buckets = excluded.buckets`,
			p.ID, p.Template, p.Count, fmtTime(p.FirstSeen), fmtTime(p.LastSeen), string(samples), string(labels), string(buckets), p.Seeded)
		if err != nil {
			return fmt.Errorf("write emerging pattern: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO miner_state (id, snapshot) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET snapshot = excluded.snapshot`, string(snap)); err != nil {
		return err
	}
	if err := e.deleteMerged(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func copyBuckets(m map[int64]int64) map[int64]int64 {
	out := make(map[int64]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fold moves the statistics of clusters that the miner merged into the
// cluster they resolve to.
func (e *Emerging) fold() {
	for id, st := range e.stats {
		c, ok := e.miner.Resolve(id)
		if !ok || c.ID == id {
			continue
		}
		into := e.stats[c.ID]
		if into == nil {
			into = &patternStats{buckets: map[int64]int64{}, p: EmergingPattern{ID: c.ID, FirstSeen: st.p.FirstSeen, Samples: []string{}, Labels: map[string][]string{}}}
			e.stats[c.ID] = into
		}
		into.p.Template = patterns.Escape(c.Template)
		into.p.Count += st.p.Count
		into.p.FirstSeen = minTime(into.p.FirstSeen, st.p.FirstSeen)
		into.p.LastSeen = maxTime(into.p.LastSeen, st.p.LastSeen)
		for _, s := range st.p.Samples {
			if len(into.p.Samples) < e.opts.Samples {
				into.p.Samples = append(into.p.Samples, s)
			}
		}
		for k, vs := range st.p.Labels {
			for _, v := range vs {
				addLabels(into.p.Labels, map[string]string{k: v})
			}
		}
		for b, n := range st.buckets {
			into.buckets[b] += n
		}
		into.p.Muted = into.p.Muted || st.p.Muted
		into.dirty = true
		delete(e.stats, id)
		e.merged = append(e.merged, id)
	}
}

func (e *Emerging) deleteMerged(ctx context.Context, tx *sql.Tx) error {
	e.mu.Lock()
	ids := e.merged
	e.merged = nil
	e.mu.Unlock()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "DELETE FROM emerging_patterns WHERE id = ?", id); err != nil {
			return err
		}
	}
	return nil
}

// PatternFilter selects emerging patterns.
type PatternFilter struct {
	Sort          string // "count" (default) or "growth"
	Limit         int    // default 50
	IncludeMuted  bool
	IncludeSeeded bool
}

// List returns emerging patterns with their growth, as of the last
// Flush plus what is counted in memory.
func (e *Emerging) List(_ context.Context, f PatternFilter) []EmergingPattern {
	now := e.opts.Now().Unix() / bucketSecs
	e.mu.Lock()
	e.fold()
	out := make([]EmergingPattern, 0, len(e.stats))
	for _, st := range e.stats {
		p := st.p
		if (p.Muted && !f.IncludeMuted) || (p.Seeded && !f.IncludeSeeded) {
			continue
		}
		var recent, before int64
		for b, n := range st.buckets {
			switch {
			case now-b < 3:
				recent += n
			case now-b < 12:
				before += n
			}
		}
		p.Recent = recent
		p.Growth = float64(recent) / (float64(before)/3 + 1)
		p.Samples = append([]string(nil), p.Samples...)
		out = append(out, p)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if f.Sort == "growth" && a.Growth != b.Growth {
			return a.Growth > b.Growth
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.ID < b.ID
	})
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Get returns one emerging pattern.
func (e *Emerging) Get(_ context.Context, id string) (EmergingPattern, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fold()
	if c, ok := e.miner.Resolve(id); ok {
		id = c.ID
	}
	st := e.stats[id]
	if st == nil {
		return EmergingPattern{}, fmt.Errorf("pattern %q: %w", id, ErrNotFound)
	}
	p := st.p
	p.Samples = append([]string(nil), p.Samples...)
	return p, nil
}

// SetMuted mutes (or unmutes) a pattern that is noise.
func (e *Emerging) SetMuted(ctx context.Context, id string, muted bool) error {
	return e.update(ctx, id, func(p *EmergingPattern) { p.Muted = muted }, "UPDATE emerging_patterns SET muted = ? WHERE id = ?", muted)
}

// MarkPromoted records that a pattern became (part of) an incident.
func (e *Emerging) MarkPromoted(ctx context.Context, id, incident string) error {
	return e.update(ctx, id, func(p *EmergingPattern) { p.Promoted = incident }, "UPDATE emerging_patterns SET promoted = ? WHERE id = ?", incident)
}

func (e *Emerging) update(ctx context.Context, id string, f func(*EmergingPattern), q string, v any) error {
	p, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := e.Flush(ctx); err != nil {
		return err
	}
	if _, err := e.db.ExecContext(ctx, q, v, p.ID); err != nil {
		return err
	}
	e.mu.Lock()
	if st := e.stats[p.ID]; st != nil {
		f(&st.p)
	}
	e.mu.Unlock()
	return nil
}

// Draft writes a write-up for a pattern: the template as a curated
// signature, the samples as symptoms, where and when it was seen, and
// empty Root Cause and Fix sections for the author to fill in.
func Draft(p EmergingPattern) string {
	var b strings.Builder
	id := draftID(p.Template)
	fmt.Fprintf(&b, "---\nid: %s\ntitle: %s\ntags: [draft]\nsignatures:\n  - %s\n---\n\n", id, yamlQuote(draftTitle(p.Template)), yamlQuote(p.Template))
	fmt.Fprintf(&b, "# %s\n\n", draftTitle(p.Template))
	fmt.Fprintf(&b, "Drafted from an emerging pattern (%s): %d lines between %s and %s.\n\n", p.ID, p.Count,
		p.FirstSeen.UTC().Format(time.RFC3339), p.LastSeen.UTC().Format(time.RFC3339))
	b.WriteString("## Symptoms\n\n")
	if len(p.Labels) > 0 {
		b.WriteString("Seen on:\n\n")
		keys := make([]string, 0, len(p.Labels))
		for k := range p.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %s\n", k, strings.Join(p.Labels[k], ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("```log\n")
	for _, s := range p.Samples {
		b.WriteString(strings.ReplaceAll(s, "```", "'''") + "\n")
	}
	b.WriteString("```\n\n## Root Cause\n\nTBD: what goes wrong, and why.\n\n## How to confirm\n\n```bash\n# commands that show this is the cause\n```\n\n## Fix\n\nTBD: what to do.\n")
	return b.String()
}

// draftID makes an id from the template's first words.
func draftID(tmpl string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(tmpl), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if len(w) > 2 && w != "err" && w != "the" {
			words = append(words, w)
		}
		if len(words) == 5 {
			break
		}
	}
	if len(words) == 0 {
		return "draft-pattern"
	}
	return "draft-" + strings.Join(words, "-")
}

func draftTitle(tmpl string) string {
	t := strings.Join(strings.Fields(strings.NewReplacer("<*>", "…", `\<`, "<").Replace(tmpl)), " ")
	if len(t) > 90 {
		t = t[:90] + "…"
	}
	return t
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
