package patterns

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// The miner groups log lines that no signature explains into templates
// ("emerging patterns"), online, in the spirit of Drain (He et al., 2017),
// written for incidex. A line is prepared and tokenized by the same code
// as the matcher and split into fields, its white-space-separated words
// (see mline). A field is a variable when one of its tokens is a masked
// kind, or, for the miner only, a word with digits (except lexicon words
// and names with one trailing digit such as eth0 or ssh2), a month or
// weekday of a written-out date, or a unit after a number ("18.4 KB" is one
// value). A word that pads a label with dots to its value
// ("instruction......0") is a variable whose label stays fixed. Then, in
// order:
//
//  1. A cache keyed by the line's shape (every field's words and variable
//     kinds) answers lines seen before in one map lookup.
//  2. Seeded templates are tried as written, <*> spanning any fields.
//  3. Templates with as many fields are compared position by position. A
//     line joins the closest one when at least Similarity of its fields
//     agree and no two literal words differ (two paths or domain names may:
//     they count as half a difference); a variable where the template has a
//     literal, or the other way round, turns that position into <*>. A <*>
//     costs nothing but agrees with nothing: at least half the fields must
//     be the template's own literal or variable there, and one literal must
//     be common when either side has any, so that a template that widened
//     one position at a time never becomes one that takes any line.
//  4. Templates of another length whose first field agrees are aligned with
//     the line (a heaviest common subsequence). The line joins when most
//     literals are common, in order, and each stretch where they differ has
//     a variable on one side and words on both sides or on neither (a line
//     that adds "user=test" after a value is another message); the
//     stretches become <*> gaps, which match any number of fields from
//     then on.
//  5. Two literals that differ at one position are not enough to call that
//     position a variable ("bytes" and "values", "Started" and "Paused",
//     GET and POST are different events): the line starts a template of its
//     own. Once Siblings templates differ only there, each by another word,
//     they are merged into one with <*> at that position ("user cyrus",
//     "user news", "user test"), unless one of them holds most of their
//     lines: a word nearly every line has is a constant, and the rare ones
//     beside it are other events. A name that the line repeats (for "api"
//     ... container=api) is a variable as soon as a second one shows up.
//  6. Otherwise the line starts a new template.
//
// When a template widens, the templates of its length that it now covers
// are merged into it. A merged cluster's ID then resolves (Resolve) to the
// cluster that took its lines.
//
// Variable parts print as the tokenizer's masks (<ip>, <num>, <hex>, ...;
// "uid=<num>"), and as <*> where lines differ in kind, where a literal
// turned out to vary, or where a gap spans fields. Templates are in the
// syntax of Parse, so an emerging pattern can become a signature.
//
// The miner keeps at most MaxClusters templates besides seeded ones; when
// a new one would pass that, the least recently used one is evicted. Each
// template keeps at most 128 fields of at most 256 bytes, so memory is
// bounded too.

// Defaults of MinerOptions.
const (
	DefaultMaxClusters = 10000
	DefaultSimilarity  = 0.75
	DefaultSiblings    = 3
)

// MinerOptions configure a Miner. The zero value means the defaults.
type MinerOptions struct {
	// MaxClusters bounds the templates kept, seeded ones aside; past it the
	// least recently used one is evicted. Default DefaultMaxClusters.
	MaxClusters int
	// Similarity is the share of fields, 0..1, that must agree for a line to
	// join a template of its length. Default DefaultSimilarity.
	Similarity float64
	// Siblings is how many templates that differ only by one word, at the
	// same position, are merged with <*> there. Default DefaultSiblings.
	Siblings int
}

// Cluster is one template and how many lines it took.
type Cluster struct {
	// ID is derived from the template as first created, so a miner that
	// sees the same lines again gives the same IDs. Two live clusters never
	// share one. Seeded clusters have the ID they were seeded with.
	ID string `json:"id"`
	// Template is the lines' common text with variable parts as <*> or
	// masks such as <ip>, in the template syntax of Parse.
	Template string `json:"template"`
	Size     int64  `json:"size"`
	// Seeded clusters come from Seed: known patterns, whose template does
	// not change. They are never evicted.
	Seeded bool `json:"seeded,omitempty"`
	// Variadic templates have <*> that span any number of fields.
	Variadic bool `json:"variadic,omitempty"`
}

// Miner clusters log lines into templates. It is safe for concurrent use:
// lines are scanned in parallel, and assigned under a lock.
type Miner struct {
	opts   MinerOptions
	budget int // cost allowed per field, in 1/1000 half points (see compare)
	pool   sync.Pool

	mu sync.RWMutex
	st *mstate
}

// NewMiner makes a Miner.
func NewMiner(opts MinerOptions) *Miner {
	if opts.MaxClusters <= 0 {
		opts.MaxClusters = DefaultMaxClusters
	}
	if opts.Similarity <= 0 || opts.Similarity > 1 {
		opts.Similarity = DefaultSimilarity
	}
	if opts.Siblings < 2 {
		opts.Siblings = DefaultSiblings
	}
	m := &Miner{opts: opts, st: newState()}
	m.budget = int(2000*(1-opts.Similarity) + 0.5)
	m.pool.New = func() any { return new(mline) }
	return m
}

// allowed is the cost a line of n fields may have against a template of
// its length, in half points (see compare).
func (m *Miner) allowed(n int) int {
	if n < 4 {
		return 0 // in short lines every field counts
	}
	return n * m.budget / 1000
}

// Add assigns line to a cluster, creating one if no template takes it, and
// returns the cluster as it is after the line, and whether it is new.
func (m *Miner) Add(line string) (Cluster, bool) {
	l := m.pool.Get().(*mline)
	l.scan(line)
	m.mu.Lock()
	c, isNew := m.add(l)
	v := c.view()
	m.mu.Unlock()
	m.pool.Put(l)
	return v, isNew
}

// Match returns the cluster that line would join, without changing
// anything: no count, no new template, no widened one.
func (m *Miner) Match(line string) (Cluster, bool) {
	l := m.pool.Get().(*mline)
	l.scan(line)
	m.mu.RLock()
	c, _, _ := m.find(l)
	var v Cluster
	if c != nil {
		v = c.view()
	}
	m.mu.RUnlock()
	m.pool.Put(l)
	return v, c != nil
}

// Resolve returns the cluster with this ID, following merges: a cluster
// whose template was merged into another one answers with that one.
func (m *Miner) Resolve(id string) (Cluster, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c := m.st.ids[id]
	if c == nil {
		c = m.st.aliases[id].live()
	}
	if c == nil {
		return Cluster{}, false
	}
	return c.view(), true
}

// Len returns the number of clusters.
func (m *Miner) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.st.ids)
}

// Clusters returns every cluster, largest first.
func (m *Miner) Clusters() []Cluster {
	m.mu.RLock()
	out := make([]Cluster, 0, len(m.st.ids))
	for _, c := range m.st.ids {
		out = append(out, c.view())
	}
	m.mu.RUnlock()
	sortClusters(out)
	return out
}

func sortClusters(cs []Cluster) {
	slices.SortFunc(cs, func(a, b Cluster) int {
		if a.Size != b.Size {
			return cmp.Compare(b.Size, a.Size)
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// Snapshot returns the clusters in the form Restore takes back, largest
// first.
func (m *Miner) Snapshot() []Cluster { return m.Clusters() }

// Restore replaces the miner's clusters with a snapshot. Templates are read
// as Parse reads them, except that <text> that is no placeholder is text.
// Of more than MaxClusters unseeded clusters, the largest are kept. On
// error nothing changes.
func (m *Miner) Restore(cs []Cluster) error {
	sorted := slices.Clone(cs)
	sortClusters(sorted)
	seen := map[string]bool{}
	keep := sorted[:0]
	unseeded := 0
	for _, v := range sorted {
		switch {
		case v.ID == "":
			return errors.New("restore: cluster without id")
		case seen[v.ID]:
			return fmt.Errorf("restore: duplicate cluster id %q", v.ID)
		case v.Size < 0:
			return fmt.Errorf("restore cluster %s: negative size %d", v.ID, v.Size)
		case v.Template == "":
			return fmt.Errorf("restore cluster %s: empty template", v.ID)
		}
		seen[v.ID] = true
		if !v.Seeded {
			if unseeded == m.opts.MaxClusters {
				continue
			}
			unseeded++
		}
		keep = append(keep, v)
	}
	st := newState()
	l := new(mline)
	// Smallest first, so that the largest are the most recently used.
	for i := len(keep) - 1; i >= 0; i-- {
		v := keep[i]
		l.scanTemplate(v.Template)
		c := fromTemplate(l, v.Seeded || v.Variadic)
		c.id, c.size, c.seeded = v.ID, v.Size, v.Seeded
		m.insert(st, c)
	}
	m.mu.Lock()
	m.st = st
	m.mu.Unlock()
	return nil
}

// Seed adds a known template, such as "dial tcp <ip>:443: i/o timeout",
// as a cluster with this ID, so that lines it explains are grouped under
// it from the first one. In seeded templates <*> spans any number of
// fields. The template does not change and the cluster is never evicted.
func (m *Miner) Seed(id, template string) error {
	if id == "" {
		return errors.New("seed: empty id")
	}
	if _, err := Parse(template); err != nil {
		return fmt.Errorf("seed %s: %w", id, err)
	}
	l := new(mline)
	l.scanTemplate(template)
	c := fromTemplate(l, true)
	c.id, c.seeded = id, true
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st.ids[id] != nil || m.st.aliases[id] != nil {
		return fmt.Errorf("seed %s: id in use", id)
	}
	m.insert(m.st, c)
	clear(m.st.cache) // lines cached under other clusters may belong to the seed
	return nil
}

// fromTemplate makes the cluster of a template read by scanTemplate. With
// gaps, a lone <*> is a gap that spans any fields, otherwise one field.
func fromTemplate(l *mline, gaps bool) *cluster {
	c := newCluster(l)
	if !c.noTokens && gaps {
		for i := range c.items {
			if c.items[i].kind == itemAny {
				c.items[i].kind = itemGap
			}
		}
		c.variadic = hasGap(c.items)
	}
	c.template = l.text
	return c
}

// How find found a cluster.
const (
	foundCache = iota + 1
	foundSeed
	foundPosition
	foundAlign
)

// add assigns a scanned line under the write lock.
func (m *Miner) add(l *mline) (*cluster, bool) {
	st := m.st
	c, how, prs := m.find(l)
	isNew := false
	switch {
	case c == nil:
		if c = m.siblings(l); c == nil {
			c = newCluster(l)
			c.id = st.newID(c.template)
			m.insert(st, c)
			isNew = true
		}
	case how == foundPosition:
		first := c.firstKey()
		if c.absorb(l) {
			if c.firstKey() != first {
				st.unindex(c, first)
				st.index(c)
			}
			st.subsume(c, m.opts.MaxClusters)
		}
	case how == foundAlign && prs != nil:
		first := c.firstKey()
		st.unindex(c, first)
		c.widen(l, align(c.items, l))
		st.index(c)
	}
	c.size++
	st.touch(c)
	if len(st.cache) >= 8*m.opts.MaxClusters {
		clear(st.cache)
	}
	st.cache[l.key] = c
	return c, isNew
}

// find looks the line up (see the steps at the top of this file) and
// returns the cluster, how it was found, and, when the line joins by
// alignment and the template must widen, the alignment. It only reads.
func (m *Miner) find(l *mline) (*cluster, int, []pair) {
	st := m.st
	if c := st.cache[l.key].live(); c != nil {
		return c, foundCache, nil
	}
	if len(l.fields) == 0 {
		for _, c := range st.byFirst[l.key] {
			if c.noTokens && c.key == l.key {
				return c, foundCache, nil
			}
		}
		return nil, 0, nil
	}
	if c := st.seeded(l); c != nil {
		return c, foundSeed, nil
	}
	if c := m.positional(l); c != nil {
		return c, foundPosition, nil
	}
	c, prs := st.aligned(l)
	return c, foundAlign, prs
}

// seeded tries the seeds whose first literal is among the line's fields.
func (st *mstate) seeded(l *mline) *cluster {
	if len(st.seeds) == 0 {
		return nil
	}
	for _, c := range st.seedIdx[keyWild] {
		if glob(c.items, l) {
			return c
		}
	}
	for i := range l.fields {
		f := &l.fields[i]
		if f.vari {
			continue
		}
		for _, c := range st.seedIdx[f.key] {
			if glob(c.items, l) {
				return c
			}
		}
	}
	return nil
}

// positional returns the closest template of the line's length that takes
// it: least cost, then most lines.
func (m *Miner) positional(l *mline) *cluster {
	n := len(l.fields)
	limit := m.allowed(n)
	var best *cluster
	bestCost := limit + 1
	for _, c := range m.st.byLen[n] {
		cost, cc, _ := compare(c.items, l.fields, limit)
		if cc > 0 || cost > limit {
			continue
		}
		// Half the fields agree, and one literal if either side has any.
		if all, lits := agreement(c.items, l.fields); 2*all < n || (lits == 0 && (l.lits > 0 || c.lits > 0)) {
			continue
		}
		if cost < bestCost || (cost == bestCost && c.size > best.size) {
			best, bestCost = c, cost
		}
	}
	return best
}

// aligned returns the best template of another length that takes the line
// by alignment, and the alignment when the template must widen.
func (st *mstate) aligned(l *mline) (*cluster, []pair) {
	if len(l.fields) > alignMaxFields {
		return nil, nil
	}
	var best *cluster
	bestShare := 0.0
	n, tried := len(l.fields), 0
	for _, key := range [2]uint64{l.firstKey(), keyWild} {
		for _, c := range st.byFirst[key] {
			if c.noTokens || len(c.items) > alignMaxFields || (!c.variadic && len(c.items) == n) {
				continue
			}
			if d := len(c.items) - n; !c.variadic && (d > alignMaxDiff || -d > alignMaxDiff) {
				continue
			}
			if tried++; tried > alignMaxTries {
				break
			}
			if c.variadic && glob(c.items, l) {
				return c, nil
			}
			a := judge(c, l, align(c.items, l))
			if a.ok && (a.share > bestShare || (a.share == bestShare && c.size > best.size)) {
				best, bestShare = c, a.share
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, []pair{}
}

// Bounds of the alignment step: lines and templates of more than
// alignMaxFields fields are only compared position by position; a line is
// aligned with templates of at most alignMaxDiff fields more or fewer (a
// variadic template with any), and with at most alignMaxTries of them, so
// that a line costs bounded time however many templates there are.
const (
	alignMaxFields = 64
	alignMaxDiff   = 8
	alignMaxTries  = 256
)

// siblings merges the templates that differ from the line by one literal
// at the same position, once there are Siblings of them with the line (two
// more in lines of two fields), or by two literals that repeat one word (a
// name mentioned twice: for "api" ... container=api), once there are two.
// Elsewhere they must agree (in lines of at least 6 fields, up to the usual
// cost). HTTP methods never count as siblings. It returns the merged
// cluster, or nil.
func (m *Miner) siblings(l *mline) *cluster {
	n := len(l.fields)
	if n < 2 {
		return nil
	}
	rest := 0
	if n >= 6 {
		rest = m.allowed(n)
	}
	type group struct {
		pos     [2]int
		members []*cluster
		words   map[[2]uint64]bool
	}
	var groups []*group
	for _, c := range m.st.byLen[n] {
		if c.seeded {
			continue
		}
		cost, cc, pos := compare(c.items, l.fields, rest+4)
		if cc == 0 || cc > 2 || cost-2*cc > rest || (pos[0] == 0 && n < 5) {
			continue
		}
		if httpMethods[c.items[pos[0]].last] && httpMethods[l.fields[pos[0]].last] {
			continue // GET and POST are different requests, not a variable
		}
		word := [2]uint64{c.items[pos[0]].key}
		if cc == 1 {
			pos[1] = -1
		} else {
			a, b := &c.items[pos[0]], &c.items[pos[1]]
			if a.last != b.last || l.fields[pos[0]].last != l.fields[pos[1]].last {
				continue // two different words changed: another event
			}
			word[1] = b.key
		}
		var g *group
		for _, x := range groups {
			if x.pos == pos {
				g = x
			}
		}
		if g == nil {
			w := [2]uint64{l.fields[pos[0]].key}
			if pos[1] >= 0 {
				w[1] = l.fields[pos[1]].key
			}
			g = &group{pos: pos, words: map[[2]uint64]bool{w: true}}
			groups = append(groups, g)
		}
		g.members = append(g.members, c)
		g.words[word] = true
	}
	for _, g := range groups {
		need := m.opts.Siblings
		switch {
		case g.pos[1] >= 0:
			need = 2
		case n == 2:
			// One word agrees: "shouldBlockLocation running", "... ret:false"
			// and "... ret:true" are three events; "removing <name>" is one.
			need += 2
		}
		if len(g.words) >= need && !dominated(g.members, len(g.words) >= 2*need) {
			return m.st.mergeGroup(g.members, g.pos, l, m.opts.MaxClusters)
		}
	}
	return nil
}

// dominated reports whether one of the siblings holds most of their lines
// (siblingDominance), unless they are many: a word that nearly every line
// has is a constant of its own event, and the rare words beside it are
// other events ("user=root" and, now and then, "user=guest"), while a
// variable spreads its lines over its values.
func dominated(group []*cluster, many bool) bool {
	if many {
		return false
	}
	var total, top int64
	for _, c := range group {
		total += c.size
		top = max(top, c.size)
	}
	return float64(top) > siblingDominance*float64(total+1)
}

const siblingDominance = 0.8

// httpMethods never make a variable by standing where another one stood.
var httpMethods = hashSet("get", "head", "post", "put", "patch", "delete", "options", "connect", "trace")
