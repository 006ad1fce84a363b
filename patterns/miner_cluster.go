package patterns

import "strings"

// itemKind says what a template item matches.
type itemKind uint8

const (
	itemLit itemKind = iota // a literal field with the same key
	itemVar                 // one variable field
	itemAny                 // any one field; prints as <*>
	itemGap                 // any run of fields, also none (variadic templates); prints as <*>
)

// item is one field of a template.
type item struct {
	key   uint64 // itemLit: the field key; itemVar: its skeleton
	shape uint64 // itemVar: the shape of its first field
	kind  itemKind
	mixed bool   // itemVar: members differ in shape, so it prints as <*>
	path  bool   // itemLit: a path or domain name
	last  uint64 // itemLit: the hash of its last token
	sep   string // the text before it: white space and punctuation
	text  string // how it prints
}

func (it *item) generalize() {
	it.kind, it.text, it.mixed = itemAny, "<*>", false
}

// cluster is a template and the count of lines it took.
type cluster struct {
	id       string
	items    []item
	tail     string // text after the last item
	template string
	size     int64
	seeded   bool
	variadic bool // has gaps: matched by alignment, not position by position
	lits     int  // literal items
	noTokens bool // the template of lines without tokens; matched by key

	key        uint64   // noTokens: the key of its lines
	dead       bool     // evicted, or merged into into
	into       *cluster // the cluster it was merged into
	prev, next *cluster // least recently used list
}

// view is the exported form of c.
func (c *cluster) view() Cluster {
	return Cluster{ID: c.id, Template: c.template, Size: c.size, Seeded: c.seeded, Variadic: c.variadic}
}

// live follows merges to the cluster that holds c's lines now, or nil if
// that cluster was evicted.
func (c *cluster) live() *cluster {
	for c != nil && c.dead {
		c = c.into
	}
	return c
}

// firstKey is the index bucket of c (see mline.firstKey).
func (c *cluster) firstKey() uint64 {
	if c.noTokens {
		return c.key
	}
	switch c.items[0].kind {
	case itemLit:
		return c.items[0].key
	case itemVar:
		return keyVar
	}
	return keyWild
}

// newCluster makes the template of one line. Its strings are copies, so
// the cluster does not keep the line alive.
func newCluster(l *mline) *cluster {
	c := &cluster{size: 0}
	if len(l.fields) == 0 {
		c.noTokens, c.key = true, l.key
		c.template = strings.Clone(l.noTokenTemplate())
		return c
	}
	c.items = make([]item, len(l.fields))
	prev := 0
	for i, f := range l.fields {
		it := item{key: f.key, shape: f.shape, path: f.path, last: f.last, sep: clipSep(l.text[prev:f.start])}
		switch {
		case f.wild:
			it.kind, it.text = itemAny, "<*>"
		case f.vari:
			it.kind, it.text = itemVar, strings.Clone(l.fieldText(f))
		default:
			it.kind, it.text = itemLit, strings.Clone(l.text[f.start:f.end])
			c.lits++
		}
		c.items[i] = it
		prev = int(f.end)
	}
	if !l.cut {
		c.tail = clipSep(l.text[prev:])
	}
	c.render()
	return c
}

func clipSep(s string) string {
	if len(s) > minerMaxSep {
		s = strings.TrimSpace(clipUTF8(s, minerMaxSep))
		if s == "" {
			s = " "
		}
		s += " "
	}
	return strings.Clone(s)
}

// render rebuilds c.template from the items.
func (c *cluster) render() {
	if c.noTokens {
		return
	}
	var b strings.Builder
	for i, it := range c.items {
		sep := it.sep
		if i == 0 {
			sep = strings.TrimLeft(sep, " \t")
		}
		b.WriteString(sep)
		b.WriteString(it.text)
	}
	b.WriteString(strings.TrimRight(c.tail, " \t"))
	c.template = b.String()
	c.lits = 0
	for _, it := range c.items {
		if it.kind == itemLit {
			c.lits++
		}
	}
}

// fits reports whether field f satisfies item it without changing it.
func fits(it *item, f *mfield) bool {
	switch it.kind {
	case itemLit:
		return !f.vari && f.key == it.key
	case itemVar:
		return f.vari
	}
	return true
}

// compare scores a line against a template of the same length, position by
// position, in half points of cost. Two different literals cost 2 and are
// counted in cc, the first two of them in pos, except two paths or domain
// names, which cost 1: those vary. A literal against a variable costs 1,
// and so do two variables of different skeletons. It stops once cost
// passes limit.
func compare(items []item, fields []mfield, limit int) (cost, cc int, pos [2]int) {
	for i := range items {
		it, f := &items[i], &fields[i]
		switch it.kind {
		case itemLit:
			switch {
			case f.vari:
				cost++
			case f.key == it.key:
			case f.path && it.path:
				cost++
			default:
				cost += 2
				if cc < 2 {
					pos[cc] = i
				}
				cc++
			}
		case itemVar:
			if !f.vari || f.key != it.key {
				cost++
			}
		}
		if cost > limit {
			return cost, cc, pos
		}
	}
	return cost, cc, pos
}

// agreement counts the positions where the line's field is what the
// template has there: the same literal, or a variable of the same
// skeleton. A <*> agrees with nothing: a template whose positions turned
// to <*> one line at a time must not end up taking any line of its length.
func agreement(items []item, fields []mfield) (all, lits int) {
	for i := range items {
		it, f := &items[i], &fields[i]
		switch it.kind {
		case itemLit:
			if !f.vari && f.key == it.key {
				all++
				lits++
			}
		case itemVar:
			if f.vari && f.key == it.key {
				all++
			}
		}
	}
	return all, lits
}

// covers reports whether template a takes every line template b takes
// (both of the same length).
func covers(a, b []item) bool {
	for i := range a {
		x, y := &a[i], &b[i]
		switch x.kind {
		case itemLit:
			if y.kind != itemLit || y.key != x.key {
				return false
			}
		case itemVar:
			if y.kind != itemVar || y.key != x.key {
				return false
			}
		}
	}
	return true
}

// absorb widens c's template, position by position, so that it takes the
// line. It reports whether the template changed.
func (c *cluster) absorb(l *mline) bool {
	changed := false
	for i := range c.items {
		it, f := &c.items[i], &l.fields[i]
		switch it.kind {
		case itemLit:
			if f.vari || f.key != it.key {
				it.generalize()
				changed = true
			}
		case itemVar:
			if !f.vari {
				it.generalize()
				changed = true
			} else if f.shape != it.shape && !it.mixed {
				it.mixed, it.text = true, "<*>"
				changed = true
			}
		}
	}
	if changed {
		c.render()
	}
	return changed
}

// merge widens c's template to cover d's, which has the same length.
func (c *cluster) merge(d *cluster) {
	for i := range c.items {
		it, o := &c.items[i], &d.items[i]
		switch {
		case it.kind == itemAny:
		case o.kind == itemAny, it.kind != o.kind, it.key != o.key:
			it.generalize()
		case it.kind == itemVar && (it.shape != o.shape || o.mixed) && !it.mixed:
			it.mixed, it.text = true, "<*>"
		}
	}
	c.render()
}

// glob reports whether the line matches the template as it is: literals
// equal, one field for each variable and <*>, any run of fields for each
// gap. It runs in O(items × fields) time with l's scratch.
func glob(items []item, l *mline) bool {
	a, b := len(items), len(l.fields)
	w := b + 1
	ok := grow(l.ok, (a+1)*w)
	l.ok = ok
	// ok[i*w+j]: items[i:] matches fields[j:].
	for j := 0; j <= b; j++ {
		ok[a*w+j] = j == b
	}
	for i := a - 1; i >= 0; i-- {
		it := &items[i]
		for j := b; j >= 0; j-- {
			var v bool
			if it.kind == itemGap {
				v = ok[(i+1)*w+j] || (j < b && ok[i*w+j+1])
			} else {
				v = j < b && fits(it, &l.fields[j]) && ok[(i+1)*w+j+1]
			}
			ok[i*w+j] = v
		}
	}
	return ok[0]
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// pair is an aligned template item and line field.
type pair struct{ i, j int }

// alignWeight is what aligning item it with field f is worth: equal
// literals 2, two variables 1, anything else cannot be aligned.
func alignWeight(it *item, f *mfield) int32 {
	switch {
	case it.kind == itemLit && !f.vari && f.key == it.key:
		return 2
	case it.kind == itemVar && f.vari:
		return 1
	}
	return 0
}

// align finds the heaviest common subsequence of the template items and the
// line's fields (see alignWeight) and returns its pairs in order, in l's
// scratch.
func align(items []item, l *mline) []pair {
	a, b := len(items), len(l.fields)
	w := b + 1
	dp := grow(l.dp, (a+1)*w)
	l.dp = dp
	for j := 0; j <= b; j++ {
		dp[j] = 0
	}
	for i := 1; i <= a; i++ {
		dp[i*w] = 0
		for j := 1; j <= b; j++ {
			best := dp[(i-1)*w+j]
			if v := dp[i*w+j-1]; v > best {
				best = v
			}
			if x := alignWeight(&items[i-1], &l.fields[j-1]); x > 0 {
				if v := dp[(i-1)*w+j-1] + x; v > best {
					best = v
				}
			}
			dp[i*w+j] = best
		}
	}
	prs := l.prs[:0]
	for i, j := a, b; i > 0 && j > 0; {
		x := alignWeight(&items[i-1], &l.fields[j-1])
		switch {
		case x > 0 && dp[i*w+j] == dp[(i-1)*w+j-1]+x:
			prs = append(prs, pair{i - 1, j - 1})
			i, j = i-1, j-1
		case dp[(i-1)*w+j] >= dp[i*w+j-1]:
			i--
		default:
			j--
		}
	}
	for x, y := 0, len(prs)-1; x < y; x, y = x+1, y-1 {
		prs[x], prs[y] = prs[y], prs[x]
	}
	l.prs = prs
	return prs
}

// alignMinShare is the share of literal fields that a line and a template
// of another length must have in common, in order, for the line to join.
const alignMinShare = 0.8

// alignment is the verdict on a line against a template of another length.
type alignment struct {
	ok    bool
	share float64 // common literals over all literals
}

// judge decides whether the line can join c by alignment: the first fields
// correspond, enough literals are common, and every stretch between two
// aligned fields where the two differ has a variable on one side, so that
// it can become a <*>.
func judge(c *cluster, l *mline, prs []pair) alignment {
	if len(prs) == 0 || prs[0] != (pair{0, 0}) {
		return alignment{}
	}
	common, uT, uF := 0, 0, 0
	pi, pj := -1, -1
	for k := 0; k <= len(prs); k++ {
		ni, nj := len(c.items), len(l.fields)
		if k < len(prs) {
			ni, nj = prs[k].i, prs[k].j
			if c.items[ni].kind == itemLit {
				common++
			}
		}
		tr, fr := c.items[pi+1:ni], l.fields[pj+1:nj]
		gap, tvar, tlits := false, false, 0
		for i := range tr {
			switch tr[i].kind {
			case itemLit:
				uT++
				tlits++
			case itemGap:
				gap = true
			default:
				tvar = true
			}
		}
		fvar, flits := false, 0
		for i := range fr {
			if fr[i].vari {
				fvar = true
			} else {
				flits++
			}
		}
		if !gap {
			uF += flits
			if (len(tr) > 0 || len(fr) > 0) && !tvar && !fvar {
				return alignment{}
			}
			if (flits > 0) != (tlits > 0) {
				return alignment{} // words on one side only: another message
			}
		}
		pi, pj = ni, nj
	}
	total := common + max(uT, uF)
	if total < 2 || float64(common) < alignMinShare*float64(total) {
		return alignment{}
	}
	return alignment{ok: true, share: float64(common) / float64(total)}
}

// widen rebuilds c's template so that it takes the line, given their
// alignment: aligned items stay, and each stretch in between becomes one
// <*> gap, or, where both sides have the same number of fields, <*> or a
// variable position by position.
func (c *cluster) widen(l *mline, prs []pair) {
	out := l.nits[:0]
	pi, pj := -1, -1
	for k := 0; k <= len(prs); k++ {
		ni, nj := len(c.items), len(l.fields)
		if k < len(prs) {
			ni, nj = prs[k].i, prs[k].j
		}
		tr, fr := c.items[pi+1:ni], l.fields[pj+1:nj]
		switch {
		case len(tr) == len(fr):
			for x := range tr {
				it := tr[x]
				if !fits(&it, &fr[x]) {
					it.generalize()
				}
				out = append(out, it)
			}
		case len(tr) == 1 && tr[0].kind == itemGap:
			out = append(out, tr[0])
		default:
			sep := " "
			if len(tr) > 0 {
				sep = tr[0].sep
			}
			out = append(out, item{kind: itemGap, sep: sep, text: "<*>"})
		}
		if k < len(prs) {
			it := c.items[ni]
			if it.kind == itemVar && l.fields[nj].shape != it.shape && !it.mixed {
				it.mixed, it.text = true, "<*>"
			}
			out = append(out, it)
		}
		pi, pj = ni, nj
	}
	c.items = append(c.items[:0:0], out...)
	l.nits = out[:0]
	c.variadic = false
	for i := range c.items {
		if c.items[i].kind == itemAny || c.items[i].kind == itemGap {
			if hasGap(c.items) {
				c.items[i].kind = itemGap
			}
		}
	}
	c.variadic = hasGap(c.items)
	c.render()
}

func hasGap(items []item) bool {
	for i := range items {
		if items[i].kind == itemGap {
			return true
		}
	}
	return false
}
