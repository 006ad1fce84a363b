package patterns

import "sort"

// scratch holds per-call buffers so that matching a line allocates nothing.
type scratch struct {
	toks    []Token
	acc     []float32
	touched []int32
	dp      []float32
	credit  []float32
	known   []Token   // the line's tokens that some signature could match
	lw      []float32 // their weights
	lineW   float32   // the weight of the whole line
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
	sc.toks = Tokenize(p.Text, sc.toks[:0])
	start := len(dst)
	dst = s.candidates(p.Text, mode, min, sc, dst)
	if len(dst) > start {
		dst = s.bestPerGroup(dst, start, sc)
		sortMatches(dst[start:])
	}
	return dst
}

// candidates scores the signatures that could reach min. One pass over the
// line's tokens weighs them and adds each anchor's weight to the signatures
// that have it. A signature is then scored only if one of two upper bounds
// reaches min: the stream bound (its anchors the line has, plus all its
// other weight) or the fragment bound (the line's weight that the
// signature could cover: the anchors they share plus the line's masks and
// minor words; words no signature has can never be covered).
func (s *Set) candidates(text string, mode Mode, min float32, sc *scratch, dst []Match) []Match {
	sc.touched = sc.touched[:0]
	sc.lw = sc.lw[:0]
	sc.known = sc.known[:0]
	var lineW, lineFree, unknown float32
	var lineErr errMask
	for _, t := range sc.toks {
		var w float32
		if t.Kind != KindWord {
			w = maskWeight(t.Kind)
			lineFree += w
			sc.known = append(sc.known, t)
			sc.lw = append(sc.lw, w)
			lineW += w
			continue
		}
		e := s.vocab.get(t.Hash)
		switch {
		case e == nil || !e.known:
			w = s.unknownWeight(t, e)
			unknown += w
			lineW += w
			continue // no signature has it: it takes no part in any alignment
		default:
			w = e.weight
			if e.isErr {
				lineErr.set(e.errBit)
			}
			if !e.anchor {
				lineFree += w
				break
			}
			for _, p := range s.vocab.postings(e) {
				if sc.acc[p.sig] == 0 {
					sc.touched = append(sc.touched, p.sig)
				}
				sc.acc[p.sig] += p.weight
			}
		}
		sc.known = append(sc.known, t)
		sc.lw = append(sc.lw, w)
		lineW += w
	}
	sc.lineW = lineW
	fragMin := float32(streamFragMinInfo)
	if mode == Query {
		fragMin = 0
	}
	fragPossible := lineW > 0 && (lineW-unknown)/lineW*fragmentCap >= min && lineW-unknown >= fragMin
	for _, i := range sc.touched {
		c := &s.pats[i]
		acc := sc.acc[i]
		sc.acc[i] = 0
		upper := (acc + c.free) / c.total
		if fragPossible && acc+lineFree >= fragMin {
			upper = max(upper, (acc+lineFree)/lineW*fragmentCap)
		}
		if upper*c.boost < min || (c.hasErr && !c.errMask.intersects(&lineErr)) {
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
		}
	}
	return dst
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
	seen := make(map[string]int, len(dst)-start)
	out := dst[:start]
	for _, m := range dst[start:] {
		g := s.defs[m.Sig].Group
		if k, ok := seen[g]; ok {
			if m.Score > out[k].Score {
				out[k] = m
			}
			continue
		}
		seen[g] = len(out)
		out = append(out, m)
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
	toks := sc.known
	n, m := len(c.toks), len(toks)
	if n == 0 || m == 0 {
		return 0, 0
	}
	w := m + 1
	if cap(sc.dp) < (n+1)*w {
		sc.dp = make([]float32, (n+1)*w)
	}
	dp := sc.dp[:(n+1)*w]
	for j := 0; j <= m; j++ {
		dp[j] = 0
	}
	for i := 1; i <= n; i++ {
		st := c.toks[i-1]
		tw := c.types[st.typ].weight
		row, prev := dp[i*w:(i+1)*w], dp[(i-1)*w:i*w]
		row[0] = 0
		for j := 1; j <= m; j++ {
			best := prev[j]
			if row[j-1] > best {
				best = row[j-1]
			}
			if cr := credit(st, toks[j-1]); cr > 0 {
				if v := prev[j-1] + cr*tw; v > best {
					best = v
				}
			}
			row[j] = best
		}
	}
	// Trace back: per signature type the best credit, per line token its credit.
	if cap(sc.credit) < len(c.types) {
		sc.credit = make([]float32, len(c.types))
	}
	cr := sc.credit[:len(c.types)]
	for k := range cr {
		cr[k] = 0
	}
	var lineCovered float32
	for i, j := n, m; i > 0 && j > 0; {
		v := dp[i*w+j]
		switch {
		case v == dp[(i-1)*w+j]:
			i--
		case v == dp[i*w+j-1]:
			j--
		default:
			st := c.toks[i-1]
			x := credit(st, toks[j-1])
			if x > cr[st.typ] {
				cr[st.typ] = x
			}
			lineCovered += x * sc.lw[j-1]
			i--
			j--
		}
	}
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
