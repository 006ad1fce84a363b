package patterns

import "sort"

// scratch holds per-call buffers so that matching a line allocates nothing.
type scratch struct {
	toks      []Token
	acc       []float32
	touched   []int32
	pass      []int32 // signatures whose bounds reach the threshold
	pairs     []alignPair
	kword     []int32  // vocabulary index of each known token, -1 when none
	stamp     []uint32 // per vocabulary word: the epoch of the signature being aligned
	head      []int32  // per vocabulary word: its first position in that signature
	epoch     uint32
	best      []float32
	pred      []int32
	fen       []fenNode
	bound     []float32 // their bounds
	groupBest []float32 // per group, the best score so far (zero between lines)
	groupAt   []int32   // per group, 1 + its index in the output of bestPerGroup (zero between lines)
	dp        []float32
	credit    []float32
	known     []Token   // the line's tokens that some signature could match
	lw        []float32 // their weights
	lineW     float32   // the weight of the whole line
}

func (s *Set) getScratch() *scratch {
	sc := s.scratch.Get().(*scratch)
	if len(sc.acc) < len(s.pats) {
		sc.acc = make([]float32, len(s.pats))
	}
	return sc
}

// Match appends to dst the signatures that explain line in Stream mode at
// the set's threshold, best first, at most one per group, and returns dst.
// It does not allocate when the line matches nothing.
func (s *Set) Match(line string, dst []Match) []Match {
	return s.MatchMode(line, Stream, 0, dst)
}

// MatchMode is Match with an explicit mode and threshold (0 means the set's).
func (s *Set) MatchMode(line string, mode Mode, minScore float64, dst []Match) []Match {
	min := float32(minScore)
	if min <= 0 {
		min = s.minScore
	}
	p := Prepare(line)
	sc := s.getScratch()
	defer s.scratch.Put(sc)
	sc.toks = tokenizeLazy(p.Text, sc.toks[:0])
	start := len(dst)
	dst = s.candidates(p.Text, mode, min, sc, dst)
	if len(dst) > start {
		dst = s.bestPerGroup(dst, start, sc)
		sortMatches(dst[start:])
	}
	return dst
}

// candidates scores the signatures that could reach min. One pass over the
// line's tokens looks each up once and adds each anchor's weight to the
// signatures that have it. A signature is then scored only if one of two
// upper bounds reaches min: the stream bound (its anchors the line has,
// plus all its other weight) or the fragment bound (the line's weight that
// the signature could cover: the anchors they share plus the line's masks
// and minor words; words no signature has can never be covered). Tokens
// with digits are classified only when a signature gets that far.
func (s *Set) candidates(text string, mode Mode, min float32, sc *scratch, dst []Match) []Match {
	sc.touched = sc.touched[:0]
	var lineW, lineFree, unknown, pendHi, pendLo float32
	var lineErr errMask
	pending := false
	for i := range sc.toks {
		t := &sc.toks[i]
		e := s.vocab.get(t.Hash)
		if t.Kind == kindPending {
			if e == nil || !e.known {
				// A mask or an unknown word: weigh it within bounds for now.
				pending = true
				pendHi += ipWeight
				pendLo += maskWeight(KindTime)
				continue
			}
			t.Kind = resolveKind(text, *t)
		}
		if t.Kind != KindWord {
			w := maskWeight(t.Kind)
			lineFree += w
			lineW += w
			continue
		}
		if e == nil || !e.known {
			w := s.unknownWeight(*t, e)
			unknown += w
			lineW += w
			continue
		}
		lineW += e.weight
		if e.isErr {
			lineErr.set(e.errBit)
		}
		if !e.anchor {
			lineFree += e.weight
			continue
		}
		for _, p := range s.vocab.postings(e) {
			if sc.acc[p.sig] == 0 {
				sc.touched = append(sc.touched, p.sig)
			}
			sc.acc[p.sig] += p.weight
		}
	}
	fragMin := float32(streamFragMinInfo)
	if mode == Query {
		fragMin = 0
	}
	wHi, wLo, freeHi := lineW+pendHi, lineW+pendLo, lineFree+pendHi
	fragPossible := wLo > 0 && (wHi-unknown)/wHi*fragmentCap >= min && wHi-unknown >= fragMin
	sc.pass, sc.bound = sc.pass[:0], sc.bound[:0]
	for _, i := range sc.touched {
		c := &s.pats[i]
		acc := sc.acc[i]
		sc.acc[i] = 0
		upper := (acc + c.free) / c.total
		if fragPossible && acc+freeHi >= fragMin {
			upper = max(upper, (acc+freeHi)/wLo*fragmentCap)
		}
		if upper*c.boost < min || (c.hasErr && !c.errMask.intersects(&lineErr)) {
			continue
		}
		sc.pass = append(sc.pass, i)
		sc.bound = append(sc.bound, upper*c.boost)
	}
	if len(sc.pass) == 0 {
		return dst
	}
	if pending {
		for i := range sc.toks {
			if sc.toks[i].Kind == kindPending {
				sc.toks[i].Kind = resolveKind(text, sc.toks[i])
			}
		}
	}
	s.weighLine(text, sc)
	// Best bound first; a signature whose bound cannot beat its incident's
	// best score so far is not aligned at all.
	if len(sc.pass) > 1 {
		sort.Sort(byBound{sc.pass, sc.bound})
	}
	if cap(sc.groupBest) < s.groups {
		sc.groupBest = make([]float32, s.groups)
	}
	gb := sc.groupBest[:s.groups]
	for k, i := range sc.pass {
		c := &s.pats[i]
		if gb[c.group] >= sc.bound[k] {
			continue
		}
		stream, frag := s.score(c, text, sc, mode)
		m := Match{Sig: int(i), Score: float64(stream * c.boost)}
		if f := frag * c.boost; f > stream*c.boost {
			m.Score, m.Fragment = float64(f), true
		}
		if m.Score > 1 {
			m.Score = 1
		}
		if float32(m.Score) >= min {
			dst = append(dst, m)
			gb[c.group] = max(gb[c.group], float32(m.Score))
		}
	}
	for _, i := range sc.pass {
		gb[s.pats[i].group] = 0
	}
	return dst
}

// byBound sorts candidates by their bound, highest first.
type byBound struct {
	sig   []int32
	bound []float32
}

func (b byBound) Len() int           { return len(b.sig) }
func (b byBound) Less(i, j int) bool { return b.bound[i] > b.bound[j] }
func (b byBound) Swap(i, j int) {
	b.sig[i], b.sig[j] = b.sig[j], b.sig[i]
	b.bound[i], b.bound[j] = b.bound[j], b.bound[i]
}

// weighLine fills the scratch's known tokens (those a signature could
// match) with their weights, and the weight of the whole line.
func (s *Set) weighLine(text string, sc *scratch) {
	sc.known, sc.lw, sc.kword, sc.lineW = sc.known[:0], sc.lw[:0], sc.kword[:0], 0
	for _, t := range sc.toks {
		var w float32
		id := s.vocab.index(t.Hash)
		var e *vocabEntry
		if id >= 0 {
			e = &s.vocab.entries[id]
			if !e.known {
				id = -1
			}
		}
		switch {
		case t.Kind != KindWord:
			w = maskWeight(t.Kind)
		case id >= 0:
			w = e.weight
		default:
			sc.lineW += s.unknownWeight(t, e)
			continue // no signature has it: it takes no part in any alignment
		}
		sc.known = append(sc.known, t)
		sc.lw = append(sc.lw, w)
		sc.kword = append(sc.kword, id)
		sc.lineW += w
	}
}

// unknownWeight weighs a word that no signature has: its prior (stop and
// common words carry theirs in the vocabulary; single letters 0.1; others
// 1) times the IDF of a word no incident has.
func (s *Set) unknownWeight(t Token, e *vocabEntry) float32 {
	switch {
	case e != nil:
		return e.weight
	case t.End-t.Start == 1:
		return 0.1 * s.idfMax
	}
	return s.idfMax
}

// bestPerGroup keeps the best match of each group in dst[start:].
func (s *Set) bestPerGroup(dst []Match, start int, sc *scratch) []Match {
	if len(dst)-start < 2 {
		return dst
	}
	if len(sc.groupAt) < s.groups {
		sc.groupAt = make([]int32, s.groups)
	}
	out := dst[:start]
	for _, m := range dst[start:] {
		g := s.pats[m.Sig].group
		if k := sc.groupAt[g]; k > 0 {
			if m.Score > out[k-1].Score {
				out[k-1] = m
			}
			continue
		}
		out = append(out, m)
		sc.groupAt[g] = int32(len(out))
	}
	for _, m := range out[start:] {
		sc.groupAt[s.pats[m.Sig].group] = 0
	}
	return out
}

func sortMatches(ms []Match) {
	sort.SliceStable(ms, func(a, b int) bool {
		if ms[a].Score != ms[b].Score {
			return ms[a].Score > ms[b].Score
		}
		return ms[a].Sig < ms[b].Sig
	})
}

// credit is what line token t earns against signature token st, as a share
// of st's type weight (0 = no match).
func credit(st sigToken, t Token) float32 {
	if st.kind == KindWord {
		if st.hash == t.Hash {
			return 1
		}
		return 0
	}
	if st.kind == t.Kind {
		if st.placeholder || st.hash == t.Hash {
			return 1
		}
		if st.kind == KindIPv4 || st.kind == KindIPv6 {
			return maskCredit
		}
		return 1
	}
	if (st.kind == KindPod && t.Kind == KindID) || (st.kind == KindID && t.Kind == KindPod) {
		return relatedKind
	}
	return 0
}

// score aligns the signature with the line (a weighted longest common
// subsequence, so order matters) and returns the stream score (share of the
// signature's type weight matched) and, when frag is set, the fragment score
// (share of the line's own weight matched).
func (s *Set) score(c *compiled, text string, sc *scratch, mode Mode) (float32, float32) {
	if cap(sc.credit) < len(c.types) {
		sc.credit = make([]float32, len(c.types))
	}
	cr := sc.credit[:len(c.types)]
	for k := range cr {
		cr[k] = 0
	}
	lineCovered := s.alignSparse(c, sc, cr)
	var got float32
	errOK, distinct := !c.hasErr, false
	for k, ti := range c.types {
		if cr[k] == 0 {
			continue
		}
		got += cr[k] * ti.weight
		errOK = errOK || ti.isErr
		distinct = distinct || (ti.distinct && cr[k] == 1)
	}
	if !errOK || !distinct {
		return 0, 0
	}
	stream := got / c.total
	if sc.lineW <= 0 {
		return stream, 0
	}
	f := lineCovered / sc.lineW
	switch {
	case mode == Query && lineCovered < fragmentMinInfo:
		f *= lineCovered / fragmentMinInfo
	case mode == Stream && lineCovered < streamFragMinInfo:
		f = 0
	}
	return stream, f * fragmentCap
}

// alignPair is a signature token i and a line token j that can match, with
// what the match earns.
type alignPair struct {
	i, j int32
	w    float32 // credit × the signature type's weight
	cr   float32 // credit
}

// alignSparse finds the best in-order alignment of signature c with the
// line's known tokens: the heaviest chain of matching pairs increasing in
// both the signature and the line (a weighted longest common subsequence
// over the few pairs that match, with a Fenwick tree of prefix maxima, in
// O(pairs log n) rather than O(n·m)). It fills cr with each signature
// type's best credit on the chain and returns the line weight it covers.
func (s *Set) alignSparse(c *compiled, sc *scratch, cr []float32) float32 {
	sc.pairs = sc.pairs[:0]
	if len(sc.stamp) < len(s.vocab.entries) {
		sc.stamp = make([]uint32, len(s.vocab.entries))
		sc.head = make([]int32, len(s.vocab.entries))
	}
	sc.epoch++
	c.markWords(sc.stamp, sc.head, sc.epoch)
	for j, t := range sc.known {
		sc.pairs = c.pairsFor(t, int32(j), sc.kword[j], sc.stamp, sc.head, sc.epoch, sc.pairs)
	}
	if len(sc.pairs) == 0 {
		return 0
	}
	n := len(c.toks)
	if cap(sc.fen) < n+1 {
		sc.fen = make([]fenNode, n+1)
	}
	fen := sc.fen[:n+1]
	for k := range fen {
		fen[k] = fenNode{idx: -1}
	}
	if cap(sc.best) < len(sc.pairs) {
		sc.best = make([]float32, len(sc.pairs))
		sc.pred = make([]int32, len(sc.pairs))
	}
	best, pred := sc.best[:len(sc.pairs)], sc.pred[:len(sc.pairs)]
	top, topIdx := float32(0), int32(-1)
	for g := 0; g < len(sc.pairs); {
		// All pairs of one line token first, then the tree updates, so a
		// chain never uses a line token twice.
		h := g
		for h < len(sc.pairs) && sc.pairs[h].j == sc.pairs[g].j {
			p := sc.pairs[h]
			v, from := fenQuery(fen, int(p.i)) // best chain over signature tokens < i
			best[h], pred[h] = v+p.w, from
			h++
		}
		for k := g; k < h; k++ {
			fenUpdate(fen, int(sc.pairs[k].i)+1, best[k], int32(k))
			if best[k] > top {
				top, topIdx = best[k], int32(k)
			}
		}
		g = h
	}
	var covered float32
	for k := topIdx; k >= 0; k = pred[k] {
		p := sc.pairs[k]
		t := c.toks[p.i].typ
		if p.cr > cr[t] {
			cr[t] = p.cr
		}
		covered += p.cr * sc.lw[p.j]
	}
	return covered
}

// fenNode is a Fenwick tree node: the best chain value over a range of
// signature positions and the alignPair that ends it.
type fenNode struct {
	val float32
	idx int32
}

// fenQuery returns the best value (and its alignPair) over positions < i.
func fenQuery(fen []fenNode, i int) (float32, int32) {
	v, idx := float32(0), int32(-1)
	for ; i > 0; i -= i & -i {
		if fen[i].val > v {
			v, idx = fen[i].val, fen[i].idx
		}
	}
	return v, idx
}

// fenUpdate records value v for 1-based position i.
func fenUpdate(fen []fenNode, i int, v float32, idx int32) {
	for ; i < len(fen); i += i & -i {
		if v > fen[i].val {
			fen[i] = fenNode{val: v, idx: idx}
		}
	}
}

// fragmentCap keeps a fragment's score just below what the whole line earns.
const fragmentCap = 0.95

// streamFragMinInfo is the weight a stream line must carry for the fragment
// direction to apply to it: a stream line that is only part of a signature
// ("open /run/flannel/subnet.env: no such file or directory" inside a long
// event) matches when it says a lot, not when it is "connection refused".
const streamFragMinInfo = 5.0

// lineWeights weighs the tokens of a line the way candidates does.
func (s *Set) lineWeights(text string, toks []Token, dst []float32) []float32 {
	for _, t := range toks {
		if t.Kind != KindWord {
			dst = append(dst, maskWeight(t.Kind))
			continue
		}
		if e := s.vocab.get(t.Hash); e != nil && e.known {
			dst = append(dst, e.weight)
			continue
		}
		dst = append(dst, s.unknownWeight(t, s.vocab.get(t.Hash)))
	}
	return dst
}
