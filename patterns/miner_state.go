package patterns

import (
	"cmp"
	"fmt"
	"slices"
)

// mstate is what a Miner knows; Restore builds a new one and swaps it in.
type mstate struct {
	ids     map[string]*cluster
	aliases map[string]*cluster // IDs of clusters merged into others
	byLen   map[int][]*cluster  // fixed-length templates by field count
	byFirst map[uint64][]*cluster
	seeds   []*cluster
	seedIdx map[uint64][]*cluster // seeds by their first literal
	cache   map[uint64]*cluster   // line shape -> cluster
	n       int                   // unseeded clusters
	lru     cluster               // sentinel of the least recently used list
}

func newState() *mstate {
	st := &mstate{
		ids:     map[string]*cluster{},
		aliases: map[string]*cluster{},
		byLen:   map[int][]*cluster{},
		byFirst: map[uint64][]*cluster{},
		seedIdx: map[uint64][]*cluster{},
		cache:   map[uint64]*cluster{},
	}
	st.lru.prev, st.lru.next = &st.lru, &st.lru
	return st
}

// mergeGroup merges the group into its largest member, with <*> at the
// positions pos (-1: none), and widens it to take the line.
func (st *mstate) mergeGroup(group []*cluster, pos [2]int, l *mline, maxAliases int) *cluster {
	slices.SortStableFunc(group, func(a, b *cluster) int { return cmp.Compare(b.size, a.size) })
	c := group[0]
	st.unindex(c, c.firstKey())
	for _, p := range pos {
		if p >= 0 {
			c.items[p].generalize()
		}
	}
	for _, d := range group[1:] {
		c.merge(d)
		st.absorbInto(c, d, maxAliases)
	}
	c.absorb(l)
	st.index(c)
	st.subsume(c, maxAliases)
	return c
}

// absorbInto moves d's lines to c and retires d, whose ID then resolves to c.
func (st *mstate) absorbInto(c, d *cluster, maxAliases int) {
	c.size += d.size
	st.remove(d)
	d.dead, d.into = true, c
	if len(st.aliases) >= maxAliases {
		clear(st.aliases)
	}
	st.aliases[d.id] = d
}

// subsume merges into c the templates of its length that c now covers:
// once a position turned out to vary, templates that differ from c only
// there are the same event.
func (st *mstate) subsume(c *cluster, maxAliases int) {
	if c.variadic || c.noTokens || c.seeded {
		return
	}
	for i := 0; i < len(st.byLen[len(c.items)]); {
		d := st.byLen[len(c.items)][i]
		if d == c || d.seeded || !covers(c.items, d.items) {
			i++
			continue
		}
		st.absorbInto(c, d, maxAliases) // removes d from the slice
	}
}

// newID derives a cluster ID from its template: 12 hex digits of its hash,
// salted while another live cluster has it.
func (st *mstate) newID(template string) string {
	h := hashLower(template)
	for salt := uint64(0); ; salt++ {
		id := fmt.Sprintf("%012x", mix(h, salt)>>16)
		if st.ids[id] == nil && st.aliases[id] == nil {
			return id
		}
	}
}

// insert adds a cluster, evicting the least recently used one when the
// miner is full.
func (m *Miner) insert(st *mstate, c *cluster) {
	if !c.seeded {
		if st.n >= m.opts.MaxClusters && st.lru.prev != &st.lru {
			d := st.lru.prev
			st.remove(d)
			d.dead = true
		}
		st.n++
		st.pushFront(c)
	}
	st.ids[c.id] = c
	st.index(c)
}

// remove takes c out of every index.
func (st *mstate) remove(c *cluster) {
	st.unindex(c, c.firstKey())
	delete(st.ids, c.id)
	if !c.seeded {
		st.n--
		c.prev.next, c.next.prev = c.next, c.prev
		c.prev, c.next = nil, nil
	}
}

func (st *mstate) index(c *cluster) {
	switch {
	case c.noTokens:
		st.byFirst[c.key] = append(st.byFirst[c.key], c)
	case c.seeded:
		st.seeds = append(st.seeds, c)
		k := seedKey(c)
		st.seedIdx[k] = append(st.seedIdx[k], c)
	default:
		if !c.variadic {
			st.byLen[len(c.items)] = append(st.byLen[len(c.items)], c)
		}
		k := c.firstKey()
		st.byFirst[k] = append(st.byFirst[k], c)
	}
}

// unindex undoes index; first is c's first key when it was indexed.
func (st *mstate) unindex(c *cluster, first uint64) {
	switch {
	case c.noTokens:
		st.byFirst[c.key] = del(st.byFirst[c.key], c)
	case c.seeded:
		st.seeds = del(st.seeds, c)
		k := seedKey(c)
		st.seedIdx[k] = del(st.seedIdx[k], c)
	default:
		if !c.variadic {
			st.byLen[len(c.items)] = del(st.byLen[len(c.items)], c)
		}
		st.byFirst[first] = del(st.byFirst[first], c)
	}
}

// seedKey is the index key of a seed: its first literal, or keyWild.
func seedKey(c *cluster) uint64 {
	for _, it := range c.items {
		if it.kind == itemLit {
			return it.key
		}
	}
	return keyWild
}

// del removes c from s, not keeping the order.
func del(s []*cluster, c *cluster) []*cluster {
	for i, x := range s {
		if x == c {
			s[i] = s[len(s)-1]
			s[len(s)-1] = nil
			return s[:len(s)-1]
		}
	}
	return s
}

func (st *mstate) pushFront(c *cluster) {
	c.prev, c.next = &st.lru, st.lru.next
	st.lru.next.prev = c
	st.lru.next = c
}

// touch marks c as just used.
func (st *mstate) touch(c *cluster) {
	if c.seeded || st.lru.next == c {
		return
	}
	c.prev.next, c.next.prev = c.next, c.prev
	st.pushFront(c)
}
