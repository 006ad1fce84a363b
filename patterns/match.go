package patterns

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// scratch holds per-call buffers so that matching a line allocates nothing.
type scratch struct {
	// shapeKey and shapeVal cache failureShape by a word's hash (key:
	// hash|1; zero is empty): a stream repeats its capitalised words
	// (component names, "Started"), and judging their shape was a
	// twentieth of a no-match line's cost.
	shapeKey  [shapeSlots]uint64
	shapeVal  [shapeSlots]bool
	level     Level // what the line's prefix said
	fails     bool  // the line reads as a failure (see MatchFailure)
	lineErr   bool  // the line has an error word some signature has
	toks      []Token
	acc       []float32
	famSeen   []bool  // per family (its first signature): the line touched it
	anchorIDs []int32 // the vocabulary indices of the line's anchor tokens, in order
	touched   []int32 // the families the line touched, by first signature
	cands     []cand  // signatures whose bounds reach the threshold
	ref       []cand  // those of them the bag bound let through
	pairs     []alignPair
	kword     []int32  // vocabulary index of each known token, -1 when none
	stamp     []uint32 // per vocabulary word: the epoch of the signature being aligned
	head      []int32  // per vocabulary word: its first position in that signature
	epoch     uint32
	best      []float32
	pred      []int32
	chain     int32 // the last alignment's chain: its last pair in pairs, or -1
	fen       []fenNode
	groupBest []float32 // per group, the best score so far (zero between lines)
	groupAt   []int32   // per group, 1 + its index in the output of bestPerGroup (zero between lines)
	topScores []float32 // MatchTop: the best group scores so far, highest first
	lineStamp []uint32  // per vocabulary word: lineEpoch when the line has it
	lineEpoch uint32
	tword     []int32           // per token of toks: its vocabulary index, or -1
	wordW     []float32         // per vocabulary word the line has (lineStamp): the weight of its tokens
	kindW     [numKinds]float32 // the weight of the line's masks by kind
	pendW     float32           // the weight of its pending tokens (as IPs)
	pendN     int               // pending tokens among known (see weighLine)
	lineNeg   bool              // the line has a negation word (no, not, never)
	fragOK    bool              // the line carries enough known weight for the fragment direction
	lineKinds uint16            // bit k: the line has a mask of kind k
	credit    []float32
	known     []Token   // the line's tokens that some signature could match
	lw        []float32 // their weights
	lineW     float32   // the weight of the whole line
}

func (s *Set) getScratch() *scratch {
	sc := s.scratch.Get().(*scratch)
	if len(sc.acc) < len(s.pats) {
		sc.acc = make([]float32, len(s.pats))
		sc.famSeen = make([]bool, len(s.pats))
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
	return s.MatchTop(line, mode, minScore, 0, dst)
}

// MatchTop is MatchMode that returns only the top best groups (0: all).
// It returns exactly the first top matches MatchMode would, but stops
// scoring candidates as soon as none of the rest can enter them, so a line
// that many signatures half-match costs a few alignments, not all of them.
func (s *Set) MatchTop(line string, mode Mode, minScore float64, top int, dst []Match) []Match {
	return s.MatchPrepared(Prepare(line), mode, minScore, top, dst)
}

// MatchPrepared is MatchTop for a line Prepare has prepared, for callers
// that read the prepared line too (the text tier).
func (s *Set) MatchPrepared(p Prepared, mode Mode, minScore float64, top int, dst []Match) []Match {
	dst, _ = s.MatchFailure(p, mode, minScore, top, dst)
	return dst
}

// MatchFailure is MatchPrepared that also reports whether the line reads
// as a failure: a warning or error level, a failure word (an error word
// but the weak ones such as "closed" or "limit"; "lost", "reset",
// "blocked" count), "not" or "no" before a word, an exception's class
// name, an errno name (EADDRINUSE) or an error code with an error word in
// it (PRECONDITION_FAILED). The text tier asks only about such lines. It
// costs nothing more: the prefilter looks each token up anyway.
func (s *Set) MatchFailure(p Prepared, mode Mode, minScore float64, top int, dst []Match) ([]Match, bool) {
	min := float32(minScore)
	if min <= 0 {
		min = s.minScore
	}
	sc := s.getScratch()
	defer s.scratch.Put(sc)
	sc.toks = tokenizeLazy(p.Text, sc.toks[:0])
	s.unNegate(p.Text, sc.toks) // and unqualifyToken in the prefilter: see readAs
	sc.level, sc.fails = p.Level, false
	start := len(dst)
	dst = s.candidates(p.Text, mode, min, top, sc, dst)
	if len(dst) > start {
		dst = s.bestPerGroup(dst, start, sc)
		sortMatches(dst[start:])
		if top > 0 && len(dst)-start > top {
			dst = dst[:start+top]
		}
	}
	return dst, sc.fails || p.Level >= LevelWarn
}

// candidates scores the signatures that could reach min. One pass over the
// line's tokens looks each up once and adds each anchor's weight to the
// signatures that have it (prefilter). A signature goes on only if one of
// two upper bounds reaches min: the stream bound (its anchors the line has,
// plus what its other words and masks could get from the line's) or the
// fragment bound (the line's weight the signature could cover: the anchors
// they share plus the line's masks and minor words; words no signature has
// can never be covered). rank then takes them best bound first, tightens
// each with bagBound before aligning it, and, with top > 0, stops once the
// top-th best group's score beats every remaining bound. Tokens with digits
// are classified only when a signature gets as far as an alignment.
func (s *Set) candidates(text string, mode Mode, min float32, top int, sc *scratch, dst []Match) []Match {
	if !s.prefilter(text, mode, min, sc) {
		return dst
	}
	return s.rank(text, mode, min, top, sc, dst)
}

// prefilter fills sc.cands with the signatures whose first bound reaches
// min and prepares the line for the second bounds (weighLine, markLine).
// It reports false when there is none.
func (s *Set) prefilter(text string, mode Mode, min float32, sc *scratch) bool {
	sc.touched = sc.touched[:0]
	var lineW, lineLit, lineMask, unknown, pendHi, pendLo float32
	var lineErr errMask
	shaped := false // a word says the line is a failure by its shape
	sc.tword, sc.anchorIDs = sc.tword[:0], sc.anchorIDs[:0]
	for i := range sc.toks {
		t := &sc.toks[i]
		id := s.vocab.index(t.Hash)
		if id < 0 && s.classParts != nil && s.unqualifyToken(text, t) {
			id = s.vocab.index(t.Hash)
		}
		sc.tword = append(sc.tword, id)
		var e *vocabEntry
		if id >= 0 {
			e = &s.vocab.entries[id]
			sc.fails = sc.fails || e.failure || (t.Hash == hashNot || t.Hash == hashNo) && i+1 < len(sc.toks)
			shaped = shaped || e.shaped
		} else if !sc.fails && t.End-t.Start >= 5 && t.shape&(shapeKnown|fUpper|fJoin) != shapeKnown &&
			(t.Kind == KindWord || t.Kind == kindPending && qualifiedName(text[t.Start:t.End])) && sc.failureShaped(t.Hash, text[t.Start:t.End]) {
			// A word the vocabulary has had its shape judged when the
			// set was built (see wordShapes); the others are judged until
			// the line reads as a failure. Of the tokens with digits only
			// qualified names can be classes ("psycopg2.DataError"):
			// numbers, dates and addresses are not judged.
			sc.fails, shaped = true, true
		}
		if t.Kind == kindPending {
			if e == nil || !e.known {
				// A mask or an unknown word: weigh it within bounds for now.
				pendHi += ipWeight
				pendLo += maskWeight(KindTime)
				continue
			}
			t.Kind = resolveKind(text, *t)
		}
		if t.Kind != KindWord {
			w := maskWeight(t.Kind)
			lineMask += w
			lineW += w
			// A masked value whose text is also a signature's literal
			// ("6379" after "host:" stays a word in a signature, alone on
			// a line it is a number) matches that literal: it counts as
			// the word too.
			if e == nil || !e.known {
				continue
			}
		} else {
			if e == nil || !e.known {
				w := s.unknownWeight(*t, e)
				unknown += w
				lineW += w
				continue
			}
			lineW += e.weight
		}
		if e.isErr {
			lineErr.set(e.errBit)
		}
		if !e.anchor {
			lineLit += e.weight
			continue
		}
		sc.anchorIDs = append(sc.anchorIDs, id)
	}
	// The anchors' postings, in the line's order (a sum is added up the
	// same way each time). A line without error words skips the postings
	// whose signatures all have some: the error gate below would drop
	// them, and most signatures have error words. A line of warning level
	// or above reads them all: its prefix may have taken its error word
	// (see compiled.levelWord).
	// An exception's class or an errno name marks a failure as a level
	// does: "DatabaseError: out of shared memory" is the signature
	// "ERROR:  out of shared memory" printed through a client library,
	// and meets its error gate (see compiled.levelWord) as an error-level
	// line would.
	if shaped && sc.level < LevelError {
		sc.level = LevelError
	}
	noErr := lineErr == errMask{}
	sc.lineErr = !noErr
	skipErr := noErr && sc.level < LevelWarn
	for _, id := range sc.anchorIDs {
		ps := s.vocab.postings(&s.vocab.entries[id])
		if s.single {
			for _, p := range ps {
				if skipErr && p.ref&postAllErr != 0 {
					continue
				}
				i := p.ref & famFirst
				if sc.acc[i] == 0 {
					sc.touched = append(sc.touched, int32(i))
				}
				sc.acc[i] += p.weight
			}
			continue
		}
		for _, p := range ps {
			if skipErr && p.ref&postAllErr != 0 {
				continue
			}
			f := p.ref & famFirst
			if !sc.famSeen[f] {
				sc.famSeen[f] = true
				sc.touched = append(sc.touched, int32(f))
			}
			for m := p.ref >> famShift & famMembers; m != 0; m &= m - 1 {
				sc.acc[f+uint32(bits.TrailingZeros32(m))] += p.weight
			}
		}
	}
	fragMin := float32(streamFragMinInfo)
	if mode == Query {
		fragMin = 0
	}
	wHi, wLo, freeHi := lineW+pendHi, lineW+pendLo, lineLit+lineMask+pendHi
	maskHi := lineMask + pendHi // a pending token is at most an IP
	fragPossible := wLo > 0 && (wHi-unknown)/wHi*fragmentCap >= min && wHi-unknown >= fragMin
	sc.fragOK = fragPossible
	sc.cands = sc.cands[:0]
	invLo := 1 / wLo
	for _, f := range sc.touched {
		sc.famSeen[f] = false
		for i := f; i < f+int32(s.famLen[f]); i++ {
			acc := sc.acc[i]
			if acc == 0 {
				continue // no anchor of this one of the family
			}
			sc.acc[i] = 0
			c := &s.pre[i]
			// The anchors the line has, plus what of the rest of the signature
			// the line can hold: each of its types needs its own line token, and
			// a word weighs the same everywhere.
			upper := (acc + min32(c.freeLit, lineLit) + min32(c.freeMask, maskHi)) * c.invTotal
			if fragPossible && acc+freeHi >= fragMin {
				upper = max(upper, capOne((acc+freeHi)*invLo)*fragmentCap) // a fragment covers at most the whole line
			}
			if upper*c.boost < min {
				continue
			}
			if em := &s.errMasks[i]; em[0]|em[1]|em[2]|em[3] != 0 && !em.intersects(&lineErr) && !s.pats[i].levelMet(sc.level) {
				continue // it has error words and the line none of them
			}
			if s.pats[i].levelFail && noErr && sc.level < LevelWarn {
				continue // its failure was its level, and the line has neither
			}
			sc.cands = append(sc.cands, cand{sig: i, bound: capOne(upper * c.boost)}) // scores are capped at 1 too
		}
	}
	if len(sc.cands) == 0 {
		return false
	}
	// Tokens with digits stay unclassified until a candidate is aligned:
	// until then the bounds take them for whatever mask helps most.
	s.weighLine(sc)
	s.markLine(sc)
	return true
}

// rank scores the prefilter's candidates best bound first. A candidate's
// first bound comes from the prefilter; when it is the best left it gets
// the tighter bag bound (see bagBound) and stays; when it is the best
// again it is aligned. So only candidates that can still make the result
// pay for a bag bound, and fewer still for an alignment.
func (s *Set) rank(text string, mode Mode, min float32, top int, sc *scratch, dst []Match) []Match {
	if cap(sc.groupBest) < s.groups {
		sc.groupBest = make([]float32, s.groups)
	}
	gb := sc.groupBest[:s.groups]
	sc.topScores = sc.topScores[:0]
	start := len(dst)
	// Candidates in order of their prefilter bound: the first few picked by
	// a scan (a line that matches stops early), the rest sorted once when
	// many are tried (a line that matches nothing tries them all). Those
	// the bag bound lets through wait in ref, which stays small.
	cs := sc.cands
	sorted := len(cs) < 2
	ref := sc.ref[:0]
	perfect := int32(-1) // the lowest signature that scored 1
	for u := 0; u < len(cs) || len(ref) > 0; {
		b := -1 // the best refined candidate
		for k := range ref {
			if b < 0 || ref[k].before(ref[b]) {
				b = k
			}
		}
		if u < len(cs) && !sorted {
			if u == scanPicks {
				slices.SortFunc(cs[u:], func(a, b cand) int {
					if a.before(b) {
						return -1
					}
					return 1
				})
				sorted = true
			} else {
				k := u
				for i := u + 1; i < len(cs); i++ {
					if cs[i].before(cs[k]) {
						k = i
					}
				}
				cs[u], cs[k] = cs[k], cs[u]
			}
		}
		fromRef := b >= 0 && (u == len(cs) || !cs[u].before(ref[b]))
		var x cand
		if fromRef {
			x = ref[b]
			ref[b] = ref[len(ref)-1]
			ref = ref[:len(ref)-1]
		} else {
			x = cs[u]
			u++
		}
		// Bounds only fall from here: once the top-th best score beats
		// this one (by more than float rounding between the bound's sums
		// and the score's), nothing left can enter the top.
		if top > 0 && len(sc.topScores) == top && sc.topScores[top-1] > x.bound+boundSlack {
			break
		}
		// Asked for the best only and it is perfect: the rest can at best
		// tie, and a tie goes to the lower signature.
		if top == 1 && perfect >= 0 && x.sig > perfect {
			continue
		}
		c := &s.pats[x.sig]
		if gb[c.group] >= x.bound {
			continue // its incident already has a score this one cannot beat
		}
		if !fromRef {
			need := min
			if top > 0 && len(sc.topScores) == top {
				need = max(need, sc.topScores[top-1]-boundSlack)
			}
			if r := min32(x.bound, s.bagBound(c, sc, mode, need)*c.boost); r >= min {
				ref = append(ref, cand{sig: x.sig, bound: r})
			}
			continue
		}
		if sc.pendN > 0 {
			s.resolvePending(text, sc)
		}
		stream, frag := s.score(c, text, sc, mode)
		m := Match{Sig: int(x.sig), Score: float64(stream * c.boost)}
		if f := frag * c.boost; f > stream*c.boost {
			m.Score, m.Fragment = float64(f), true
		}
		if m.Score > 1 {
			m.Score = 1
		}
		if float32(m.Score) >= min && s.negatedChain(c, text, sc) {
			m.Score *= negationFactor
			m.Negated = true
		}
		if float32(m.Score) >= min && c.classTok > 0 && s.otherMessage(c, text, sc) {
			m.Score *= negationFactor
			m.OtherMessage = true
		}
		if float32(m.Score) >= min && c.lastClass > 0 && s.otherClass(c, text, sc) {
			m.Score *= negationFactor
			m.OtherClass = true
		}
		if float32(m.Score) >= min && c.plainTail > 0 && s.plainTailMissed(c, sc) {
			m.Score *= negationFactor
			m.OtherTail = true
		}
		if float32(m.Score) >= min && s.scattered(c, text, sc) {
			m.Score *= negationFactor
			m.Scattered = true
		}
		if f := float32(m.Score); f >= min {
			if f >= 1 && (perfect < 0 || x.sig < perfect) {
				perfect = x.sig
			}
			dst = append(dst, m)
			if top > 0 {
				sc.topScores = raiseTop(sc.topScores, top, gb[c.group], f)
			}
			gb[c.group] = max(gb[c.group], f)
		}
	}
	sc.ref = ref[:0]
	for _, m := range dst[start:] {
		gb[s.pats[m.Sig].group] = 0
	}
	return dst
}

// scanPicks is how many candidates are picked by a scan before the rest
// are sorted.
const scanPicks = 16

// cand is a signature that may reach the threshold, with a bound on its
// score: the prefilter's, or the bag bound once refined.
type cand struct {
	bound float32
	sig   int32
}

// before orders candidates: higher bound first, then the lower signature,
// as sortMatches orders equal scores.
func (a cand) before(b cand) bool {
	return a.bound > b.bound || a.bound == b.bound && a.sig < b.sig
}

// boundSlack covers float rounding: a bound and a score sum the same
// weights in different orders.
const boundSlack = 1e-4

func capOne(x float32) float32 {
	if x > 1 {
		return 1
	}
	return x
}

// raiseTop records that a group's best score rose from old (0: none yet) to
// v in scores, the best top group scores, highest first.
func raiseTop(scores []float32, top int, old, v float32) []float32 {
	if v <= old {
		return scores
	}
	if old > 0 {
		// The group is in scores if its old score made it: take it out.
		for k := len(scores) - 1; k >= 0; k-- {
			if scores[k] == old {
				scores = append(scores[:k], scores[k+1:]...)
				break
			}
		}
	}
	k := len(scores)
	for k > 0 && scores[k-1] < v {
		k--
	}
	if k >= top {
		return scores
	}
	if len(scores) < top {
		scores = append(scores, 0)
	}
	copy(scores[k+1:], scores[k:len(scores)-1])
	scores[k] = v
	return scores
}

func min32(a, b float32) float32 {
	if a < b {
		return a
	}
	return b
}

// markLine stamps the vocabulary words of the line's known tokens and
// records which kinds of masks it has, for bagBound.
func (s *Set) markLine(sc *scratch) {
	if len(sc.lineStamp) < len(s.vocab.entries) {
		sc.lineStamp = make([]uint32, len(s.vocab.entries))
		sc.wordW = make([]float32, len(s.vocab.entries))
		sc.stamp = make([]uint32, len(s.vocab.entries))
		sc.head = make([]int32, len(s.vocab.entries))
	}
	sc.lineEpoch++
	sc.lineKinds, sc.kindW, sc.pendW = 0, [numKinds]float32{}, 0
	for j, t := range sc.known {
		w := sc.lw[j]
		if id := sc.kword[j]; id >= 0 {
			if sc.lineStamp[id] != sc.lineEpoch {
				sc.lineStamp[id], sc.wordW[id] = sc.lineEpoch, 0
			}
			sc.wordW[id] += w
		}
		switch {
		case t.Kind == kindPending:
			sc.lineKinds |= pendKinds
			sc.pendW += w
		case t.Kind != KindWord:
			sc.lineKinds |= 1 << t.Kind
			sc.kindW[t.Kind] += w
		}
	}
}

// pendKinds are the kinds a pending token may turn out to be, as far as
// bounds care: any mask.
const pendKinds = 1<<numKinds - 1 - 1<<KindWord

// bagBound bounds what score can give the signature, from which of its
// types the line has at all and which of the line's tokens it could cover,
// ignoring order: an alignment is an in-order subset of these pairs, so it
// never earns more. It applies score's gates (an error word when the
// signature has one, a distinct word matched exactly) the same way. When
// even a fragment's best (fragmentCap × boost) falls short of need, the
// fragment direction cannot matter and is not bounded.
func (s *Set) bagBound(c *compiled, sc *scratch, mode Mode, need float32) float32 {
	var got, covered float32
	var fl uint8
	nd := int16(0)
	for _, b := range s.bags[c.bag:c.bagEnd] {
		if sc.lineStamp[b.word] == sc.lineEpoch {
			got += b.weight
			fl |= b.flags
			covered += sc.wordW[b.word] // the line's tokens of this word
			if b.flags&bagDistinct != 0 {
				nd++
			}
		}
	}
	if c.hasErr && fl&bagErr == 0 && !c.levelMet(sc.level) || nd == 0 {
		return 0 // (score may let one distinctive word do: see score)
	}
	lk := sc.lineKinds
	for mk := lk & c.maskKinds; mk != 0; mk &= mk - 1 {
		k := bits.TrailingZeros16(mk)
		got += float32(c.maskTypes[k]) * maskWeight(Kind(k))
	}
	// Pod and instance names stand in for each other at a discount.
	if lk&(1<<KindPod) == 0 && lk&(1<<KindID) != 0 {
		got += relatedKind * float32(c.maskTypes[KindPod]) * maskWeight(KindPod)
	}
	if lk&(1<<KindID) == 0 && lk&(1<<KindPod) != 0 {
		got += relatedKind * float32(c.maskTypes[KindID]) * maskWeight(KindID)
	}
	stream := got / c.total
	if !sc.fragOK || sc.lineW <= 0 || stream >= fragmentCap || fragmentCap*c.boost < need {
		return stream // no fragment of this line can reach the threshold (see candidates)
	}
	// The fragment direction: the line's weight the signature could cover.
	fragMin := float32(streamFragMinInfo)
	if mode == Query {
		fragMin = 0
	}
	for k := c.coverKinds; k != 0; k &= k - 1 {
		covered += sc.kindW[bits.TrailingZeros16(k)]
	}
	// A pending token the signature could cover counts at its most in
	// both the covered weight and the line's; one it cannot, at its least
	// (lineW has it so): the share is highest that way. (A masked token
	// whose text is also one of the signature's words may count twice
	// here, which only loosens the bound.)
	var extra float32
	if c.maskKinds != 0 {
		covered += sc.pendW
		extra = sc.pendW - float32(sc.pendN)*pendLoWeight
	}
	if covered < fragMin {
		return stream
	}
	return max(stream, covered/(sc.lineW+extra)*fragmentCap)
}

// weighLine fills the scratch's known tokens (those a signature could
// match) with their weights, and the weight of the whole line, from the
// vocabulary indices candidates recorded. A token still pending (digits,
// not a known word) is kept as known at the most a mask weighs (an IP's),
// and counts the least in lineW; bagBound takes both into account.
func (s *Set) weighLine(sc *scratch) {
	sc.known, sc.lw, sc.kword, sc.lineW, sc.pendN = sc.known[:0], sc.lw[:0], sc.kword[:0], 0, 0
	sc.lineNeg = false
	for i, t := range sc.toks {
		sc.lineNeg = sc.lineNeg || isNegation(t.Hash)
		var w float32
		id := sc.tword[i]
		var e *vocabEntry
		if id >= 0 {
			e = &s.vocab.entries[id]
			if !e.known {
				id = -1
			}
		}
		switch {
		case t.Kind == kindPending:
			w = ipWeight
			sc.lineW += pendLoWeight
			sc.pendN++
			sc.known = append(sc.known, t)
			sc.lw = append(sc.lw, w)
			sc.kword = append(sc.kword, -1)
			continue
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

// pendLoWeight is the least a pending token can weigh: a timestamp's.
const pendLoWeight = 0.1

// resolvePending classifies the line's pending tokens and weighs the line
// again, before the first alignment.
func (s *Set) resolvePending(text string, sc *scratch) {
	for i := range sc.toks {
		if sc.toks[i].Kind == kindPending {
			sc.toks[i].Kind = resolveKind(text, sc.toks[i])
		}
	}
	s.weighLine(sc)
	s.markLine(sc)
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
	slices.SortStableFunc(ms, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Sig, b.Sig)
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

// creditOf is credit, and inflectionCredit for a word of the line that is
// another inflection of the signature's (one vocabulary entry, see
// inflect).
func (s *Set) creditOf(st sigToken, t Token) float32 {
	if x := credit(st, t); x > 0 || st.kind != KindWord || t.Kind != KindWord {
		return x
	}
	if i := s.vocab.index(t.Hash); i >= 0 && i == s.vocab.index(st.hash) {
		return inflectionCredit
	}
	return 0
}

// levelMet reports whether a line of level l has the error word that
// names a level in the signature (see compiled.levelWord).
func (c *compiled) levelMet(l Level) bool {
	return c.levelWord != LevelUnknown && l >= c.levelWord && !c.otherErr
}

// inflectionCredit is what a line's word gets for another inflection of
// the signature's ("endpoint" for "endpoints", "Kill" for "Killed").
const inflectionCredit = 0.9

// score aligns the signature with the line (a weighted longest common
// subsequence, so order matters) and returns the stream score (share of the
// signature's type weight matched) and, when frag is set, the fragment score
// (share of the line's own weight matched).
func (s *Set) score(sig *compiled, text string, sc *scratch, mode Mode) (float32, float32) {
	if sig.levelFail && !sc.lineErr && sc.level < LevelWarn {
		return 0, 0 // its failure was its level, and the line has neither
	}
	c := s.view(sig)
	if cap(sc.credit) < len(c.types) {
		sc.credit = make([]float32, len(c.types))
	}
	cr := sc.credit[:len(c.types)]
	for k := range cr {
		cr[k] = 0
	}
	lineCovered := s.alignSparse(&c, sc, cr)
	var got float32
	// exact: distinctive words matched as they are; infl: as another
	// inflection (see inflect).
	errOK, exact, infl := !c.hasErr || sig.levelMet(sc.level), int16(0), int16(0)
	for k, ti := range c.types {
		if cr[k] == 0 {
			continue
		}
		got += cr[k] * ti.weight
		errOK = errOK || ti.isErr
		switch {
		case !ti.distinct:
		case cr[k] == 1:
			exact++
		case cr[k] >= inflectionCredit:
			infl++
		}
	}
	if !errOK || exact+infl == 0 {
		return 0, 0
	}
	if sig.whole {
		// Every word but stop words ("Got packet bigger than" is "Got a
		// packet bigger than"); a negation is no stop word here.
		for _, t := range c.toks {
			if t.kind == KindWord && !t.placeholder && (!stopWords[t.hash] || isNegation(t.hash)) && cr[t.typ] < inflectionCredit {
				return 0, 0
			}
		}
	}
	var f float32
	if sc.lineW > 0 {
		f = lineCovered / sc.lineW
	}
	// One distinctive word in common is a coincidence more often than a
	// match, unless the line is little more than the signature's words (a
	// typed fragment, a short line). Another inflection counts for the
	// line that holds the signature, not for a short line that is part of
	// it: "Too many connections" is no fragment of "many connection errors".
	if exact+infl < c.needDistinct && f < oneWordCover {
		return 0, 0
	}
	stream := got / c.total
	if sc.lineW <= 0 {
		return stream, 0
	}
	if exact < c.needDistinct && f < oneWordCover {
		f = 0
	}
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
// The chain stays in sc for negatedChain.
func (s *Set) alignSparse(c *sigView, sc *scratch, cr []float32) float32 {
	sc.chain = -1
	sc.pairs = sc.pairs[:0] // markLine has sized stamp and head
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
	sc.chain = topIdx
	return covered
}

// negatedChain reports whether the line says the opposite of signature c
// somewhere along the chain alignSparse last found (see negatedPair). Only
// a match that reaches the threshold pays for it.
func (s *Set) negatedChain(sig *compiled, text string, sc *scratch) bool {
	if !sc.lineNeg && !sig.hasNeg {
		return false // nothing to put in or leave out
	}
	c := s.view(sig)
	for k := sc.chain; k >= 0 && sc.pred[k] >= 0; k = sc.pred[k] {
		p, prev := sc.pairs[k], sc.pairs[sc.pred[k]]
		if t := sc.known[p.j]; s.unStems != nil && s.unStems[hashLower(text[t.Start:t.End])] == t.Hash {
			continue // its negation is the signature's "un" (see unNegate)
		}
		if c.negatedPair(prev.i, p.i, text[sc.known[prev.j].End:sc.known[p.j].Start]) {
			return true
		}
	}
	return false
}

// plainTailMissed reports whether the chain alignSparse last found leaves
// out the negation of the message after the signature's wrapper (see
// compiled.plainTail): with no distinctive word of its own, that message
// says what it says by it. "Error response from daemon: conflict: unable
// to delete … image is being used by running container …" has the
// daemon's wrapper and the word "container", not "No such container";
// "Error response from daemon: no such id: web-1" has it.
func (s *Set) plainTailMissed(c *compiled, sc *scratch) bool {
	v := s.view(c)
	from := int32(c.plainTail - 1)
	for i := from; i < int32(len(v.toks)); i++ {
		if t := v.toks[i]; t.kind != KindWord || !isNegation(t.hash) {
			continue
		}
		on := false
		for k := sc.chain; k >= 0 && !on; k = sc.pred[k] {
			on = sc.pairs[k].i == i
		}
		if !on {
			return true
		}
	}
	return false
}

// scattered reports whether the chain alignSparse last found pairs three
// words or more and no pair is next to the one before it in the line:
// the signature's words are there one by one, each among other words, as
// in a long line that happens to use them ("checking", "authorization"
// and "failed" across an ACME error against the signature "Checking
// authorization failed"). A message matched as a message has at least two
// of its words together.
func (s *Set) scattered(c *compiled, text string, sc *scratch) bool {
	v := s.view(c)
	n := 0
	for k := sc.chain; k >= 0; k = sc.pred[k] {
		pr := sc.pairs[k]
		if v.toks[pr.i].kind == KindWord {
			n++ // masks are what varies, not the message's words
		}
		if p := sc.pred[k]; p >= 0 && !hasWord(text[sc.known[sc.pairs[p].j].End:sc.known[pr.j].Start]) {
			return false
		}
		// Where a word repeats, the chain may have taken the other one:
		// the line still has the two words together ("on first connect
		// [MongoError: connect ECONNREFUSED").
		if pr.i > 0 && pr.j > 0 {
			prev, st := sc.known[pr.j-1], v.toks[pr.i-1]
			if st.kind == KindWord && prev.Hash == st.hash && !hasWord(text[prev.End:sc.known[pr.j].Start]) {
				return false
			}
		}
	}
	return n >= 3
}

// hasWord reports whether text has a letter or a digit.
func hasWord(text string) bool {
	for i := 0; i < len(text); i++ {
		if alnum(text[i]) {
			return true
		}
	}
	return false
}

// negatedPair reports whether the line says the opposite of the signature
// between two aligned tokens, signature tokens a < b, with gap the line's
// text between them: a negation the signature does not have between the
// two, or one it has that the line leaves out ("Node is ready" against
// "Node is not ready").
func (c *sigView) negatedPair(a, b int32, gap string) bool {
	if b == a+1 {
		return len(gap) >= len(" no ") && negates(gap)
	}
	if b-a > 6 || b-a > 3 && hasWord(gap) {
		return false
	}
	for k := a + 1; k < b; k++ {
		if t := c.toks[k]; t.kind == KindWord && isNegation(t.hash) {
			return !negates(gap) && len(gap) <= 24
		}
	}
	return false
}

var hashNo, hashNot, hashNever = hashLower("no"), hashLower("not"), hashLower("never")

// isNegation reports whether a token's hash is a negation word's.
func isNegation(h uint64) bool { return h == hashNo || h == hashNot || h == hashNever }

// otherMessage reports whether the line names the signature's exception
// class with a message of its own that the alignment did not match:
// "java.lang.OutOfMemoryError: GC overhead limit exceeded" against
// "Exception in thread "main" java.lang.OutOfMemoryError: Direct buffer
// memory" shares the wrapper and the class, not the failure. It reads the
// chain of the signature's alignment (score has just made it).
func (s *Set) otherMessage(c *compiled, text string, sc *scratch) bool {
	ct := int32(c.classTok - 1)
	for k := sc.chain; k >= 0; k = sc.pred[k] {
		if sc.pairs[k].i > ct {
			return false // some of its message is there
		}
	}
	h := s.toks[c.tok+ct].hash
	for _, t := range sc.toks {
		if t.Hash == h && int(t.End) < len(text) && text[t.End] == ':' && plainWords(text[t.End+1:]) >= 2 {
			return true
		}
	}
	return false
}

// otherClass reports whether the line names another exception class
// where the signature's last class stands, with nothing of the signature
// after it matched: "Exception in thread "main"
// java.lang.OutOfMemoryError: Java heap space" shares the JVM's header
// with "Exception in thread "main" java.lang.StackOverflowError", not the
// failure. Where the signature's message after the class matches
// ("MongoError: Authentication failed" in "MongoServerError: bad auth :
// Authentication failed"), the same server error came through another
// client, and the class does not count. It reads the chain of the
// signature's alignment (score has just made it).
func (s *Set) otherClass(c *compiled, text string, sc *scratch) bool {
	ct := int32(c.lastClass - 1)
	for k := sc.chain; k >= 0; k = sc.pred[k] {
		if sc.pairs[k].i >= ct {
			return false // the class or some of what follows it is there
		}
	}
	h := s.toks[c.tok+ct].hash
	for _, t := range sc.toks {
		if t.Kind == KindWord && t.Hash != h && errorClassName(text[t.Start:t.End]) {
			return true
		}
	}
	return false
}

// qualifiedName reports a token that may be a qualified class name: its
// last dot is followed by a capital ("psycopg2.errors.DataError"), not a
// host's or a file's lower-case part.
func qualifiedName(w string) bool {
	i := strings.LastIndexByte(w, '.')
	return i > 0 && i+1 < len(w) && w[i+1] >= 'A' && w[i+1] <= 'Z'
}

// negationFactor scales the score of a line that negates its signature.
const negationFactor = 0.49

// negates reports whether gap, the line's text between two tokens that
// are next to each other in the signature, is a negation put between
// them: "kubelet has no disk pressure" says the opposite of "kubelet has
// disk pressure" though it has every one of its words, in order. A gap of
// more than two words is a loose alignment, not an inserted negation.
func negates(gap string) bool {
	if len(gap) > 24 {
		return false
	}
	words, neg := 0, false
	for i := 0; i < len(gap); i++ {
		if !isLetter(gap[i]) && !isDigit(gap[i]) {
			continue
		}
		// A word runs on through '-', '_' and '.' as a token does ("no-op"
		// is not "no"), so a gap holds a negation only where the line has
		// a negation token (see scratch.lineNeg).
		e := i + 1
		for e < len(gap) && (isLetter(gap[e]) || isDigit(gap[e]) || gap[e] == '-' || gap[e] == '_' || gap[e] == '.') {
			e++
		}
		words++
		neg = neg || isNegation(hashLower(strings.TrimRight(gap[i:e], ".-")))
		i = e
	}
	return neg && words <= 2
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

// oneWordCover is the share of a line's weight a signature must cover for
// one distinctive word in common to be enough (see compiled.needDistinct).
const oneWordCover = 0.75

// fragmentCap keeps a fragment's score just below what the whole line earns.
const fragmentCap = 0.95

// streamFragMinInfo is the weight a stream line must carry for the fragment
// direction to apply to it: a stream line that is only part of a signature
// ("open /run/flannel/subnet.env: no such file or directory" inside a long
// event) matches when it says a lot, not when it is "connection refused".
const streamFragMinInfo = 5.0

// lineWeights weighs the tokens of a line the way candidates does.
func (s *Set) lineWeights(toks []Token, dst []float32) []float32 {
	for _, t := range toks {
		e := s.vocab.get(t.Hash)
		switch {
		case t.Kind != KindWord:
			dst = append(dst, maskWeight(t.Kind))
		case e != nil && e.known:
			dst = append(dst, e.weight)
		default:
			dst = append(dst, s.unknownWeight(t, e))
		}
	}
	return dst
}

// shapeSlots is the size of scratch's failureShape cache.
const shapeSlots = 512

// failureShaped is failureShape(w) for the word w of hash h, through the
// scratch's cache.
func (sc *scratch) failureShaped(h uint64, w string) bool {
	i := h & (shapeSlots - 1)
	if sc.shapeKey[i] == h|1 {
		return sc.shapeVal[i]
	}
	v := failureShape(w)
	sc.shapeKey[i], sc.shapeVal[i] = h|1, v
	return v
}
