package patterns

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

// Def defines one signature to compile into a Set.
type Def struct {
	// ID is the signature's stable id.
	ID string
	// Group is what a match points at: the incident id.
	Group string
	// Text is an example log line, or a template when Template is set.
	Text string
	// Template marks Text as a template with placeholders (see Parse).
	Template bool
	// Pins are tokens that are never masked.
	Pins []string
	// Boost multiplies the score of this signature's matches; 0 means 1.
	// It orders incidents that explain the same line (likelihood).
	Boost float64
	// Clause marks a part of the example line of the def before it (see
	// Clauses), of the same group: a signature of its own for scoring that
	// shares the prefilter's postings of that def, and is left out of the
	// set when it is too generic to stand alone (Info.Generic).
	Clause bool
	// Whole makes the signature match only a line that has every word of
	// it but stop words, as it is or as another inflection: for wordings that
	// stand in for the signature's own (see Equivalents), where part of
	// the wording is no evidence ("413 Content Too Large" is not "Data
	// too large").
	Whole bool
}

// Options tune a Set. The zero value gives the defaults.
type Options struct {
	// MinScore is the score below which a line does not match. Default 0.5.
	MinScore float64
}

// DefaultMinScore separates a confident match from the possible band
// (see the README, How matching works, for the figures behind it).
const DefaultMinScore = 0.5

// Mode says which way a line is compared with signatures.
type Mode uint8

const (
	// Stream treats the line as a log line that should contain a signature,
	// possibly with extra words around it.
	Stream Mode = iota
	// Query also accepts a line that is a fragment of a signature, as typed
	// by a person ("subnet.env: no such file").
	Query
)

// Match is one signature that explains a line.
type Match struct {
	// Sig is the index of the signature in the Set (see Set.Def).
	Sig int
	// Score is in 0..1: the share of the signature's weight the line carries
	// (Stream), or of the line's weight the signature carries (Query
	// fragments), times the signature's boost.
	Score float64
	// Fragment is set when the score came from the fragment direction.
	Fragment bool
	// Negated is set when the line says the opposite of the signature
	// and the score was halved for it.
	Negated bool
	// OtherMessage is set when the line names the signature's exception
	// class with another message, and the score was halved for it.
	OtherMessage bool
	// OtherClass is set when the line names another exception class where
	// the signature's was the last of it to match, and the score was
	// halved for it.
	OtherClass bool
	// OtherTail is set when the line has the signature's wrapper without
	// the negation of its message (see compiled.plainTail), and the score
	// was halved for it.
	OtherTail bool
	// Scattered is set when the line has three or more of the signature's
	// words with other words between every two of them, and the score was
	// halved for it.
	Scattered bool
}

// Set is an immutable, compiled set of signatures. It is safe for
// concurrent use.
type Set struct {
	defs     []Def
	pats     []compiled
	toks     []sigToken       // the tokens of every signature, each signature's in one run (see compiled)
	types    []typeInfo       // the types of every signature, likewise
	maskPos  []int16          // the positions of every signature's masked tokens, likewise
	bags     []bagLit         // the literal types of every signature as bagBound reads them, likewise
	pre      []preSig         // what the prefilter reads of each signature, packed
	errMasks []errMask        // each signature's error words, packed (zero: none)
	famLen   []uint8          // at the first signature of a family (a def and its clauses): its size
	single   bool             // every family has one signature: no clauses
	vocab    *vocab           // every literal word of every signature, plus stop and common words
	df       map[uint64]int32 // literal hash → number of groups with it
	groups   int
	idfMax   float32 // the IDF of a word no signature has
	// unStems maps the stem of a signature's "un" word to the word
	// ("tolerate" → "untolerated"): a line that says "didn't tolerate"
	// or "not authorized" has it (see unNegate). Nil when none has one.
	unStems map[uint64]uint64
	// classParts are the class names of the signatures' qualified
	// exception classes ("OperationalError" of
	// "django.db.utils.OperationalError"): a line's class under another
	// package is that class (see unqualify). Nil when none has one.
	classParts map[uint64]bool
	minScore   float32
	scratch    sync.Pool
}

// posting is an anchor word of a family of signatures (a def and the
// clauses after it): ref is the family's first signature, the famBits bits
// above it say which of the family's signatures have the word, and the top
// bit (postAllErr) that each of those has error words: a line without any
// error word cannot match them (see score's error gate).
type posting struct {
	ref    uint32
	weight float32
}

const (
	famBits    = 7
	famShift   = 31 - famBits
	famMax     = famBits         // most signatures in a family
	maxSigs    = 1<<famShift - 1 // most signatures in a set
	famFirst   = 1<<famShift - 1 // ref's mask of the first signature
	famMembers = 1<<famBits - 1  // ref>>famShift's mask of the members
	postAllErr = 1 << 31         // every member has error words
)

// preSig is what the prefilter reads of every signature a line touches,
// packed four to a cache line.
type preSig struct {
	freeLit, freeMask float32 // Σ weights of its non-anchor literal types, of its mask types
	invTotal, boost   float32
}

// compiled is a signature ready for scoring. Its tokens, types, masked
// positions and bag entries are runs of the set's slices of them (Set.toks,
// Set.types, Set.maskPos, Set.bags), given by offsets: 33,000 signatures
// and clauses would otherwise keep seven slice headers and seven small
// allocations each (see view).
type compiled struct {
	tok, tokEnd  int32   // its tokens are Set.toks[tok:tokEnd]
	typ, typEnd  int32   // its types are Set.types[typ:typEnd]; a token's typ indexes them
	bag, bagEnd  int32   // its literal types are Set.bags[bag:bagEnd]
	mask         int32   // its masked positions start at Set.maskPos[mask] (see maskOff)
	total        float32 // Σ type weights
	boost        float32
	group        int32  // index of its group (incident)
	needDistinct int16  // distinctive words a match must have exactly: two, or one when it has one
	maskKinds    uint16 // bit k: the signature has a mask of kind k
	coverKinds   uint16 // maskKinds plus the kinds that stand in for them (pod ↔ instance name)
	hasErr       bool
	hasNeg       bool // it has a negation word (no, not, never)
	whole        bool // Def.Whole
	// levelFail: it reads as a failure only by its level ("FATAL:  the
	// database system is starting up"), so a line must have a warning or
	// error level, or an error word.
	levelFail bool
	// levelWord is the lowest level one of its words names ("ERROR:  out
	// of shared memory": LevelError), or LevelUnknown. A line of that
	// level or above has that error word even where its prefix took it
	// ("... UTC [114824] ERROR:  out of shared memory" reads "out of
	// shared memory" at level error).
	levelWord Level
	// otherErr: it has an error word besides those that name a level
	// ("Error 1213: Deadlock found ..."). Such a line must have one of its
	// error words, whatever its level: a lock wait timeout at level error
	// is no deadlock.
	otherErr bool
	// classTok is 1 + the position among its tokens of the last exception
	// or error class it names with a message after it ("…OutOfMemoryError:
	// Direct buffer memory"), or 0. See otherMessage.
	classTok int16
	// lastClass is 1 + the position among its tokens of the last
	// exception or error class it names, message or not, or 0. See
	// otherClass.
	lastClass int16
	// plainTail is 1 + the position among its tokens where the message
	// after its wrapper starts, when all its distinctive words are in the
	// wrapper and the message is a negation and plain words ("Error
	// response from daemon: No such container: <id>"), or 0. See
	// plainTailMissed.
	plainTail int16
	maskOff   [numKinds + 1]uint16 // kind k's positions are the masked positions [maskOff[k]:maskOff[k+1]]
	maskTypes [numKinds]uint16     // number of mask types of each kind
}

// sigView is a compiled signature with its runs of the set's slices, as
// scoring and explaining read them.
type sigView struct {
	*compiled
	toks    []sigToken
	types   []typeInfo
	maskPos []int16 // positions of its masked tokens, by kind (see masks)
	bag     []bagLit
}

// view returns signature c with its runs of the set's slices.
func (s *Set) view(c *compiled) sigView {
	return sigView{
		compiled: c,
		toks:     s.toks[c.tok:c.tokEnd],
		types:    s.types[c.typ:c.typEnd],
		maskPos:  s.maskPos[c.mask : c.mask+int32(c.maskOff[numKinds])],
		bag:      s.bags[c.bag:c.bagEnd],
	}
}

// masks returns the positions of the signature's masked tokens of kind k.
func (v *sigView) masks(k Kind) []int16 { return v.maskPos[v.maskOff[k]:v.maskOff[k+1]] }

// bagLit is a literal type of a signature as bagBound reads it.
type bagLit struct {
	word   int32 // vocabulary index
	weight float32
	flags  uint8 // bagErr, bagDistinct
	first  int16 // the position where the word first appears in the signature
}

const (
	bagErr uint8 = 1 << iota
	bagDistinct
)

type sigToken struct {
	hash        uint64
	typ         int16 // index of its type in the signature's types
	pos         int16 // the token's index in the pattern
	next        int16 // next position with the same literal word, -1 at the last and for masks
	kind        Kind
	placeholder bool
}

type typeInfo struct {
	weight   float32
	isErr    bool
	literal  bool
	distinct bool // a word that is not a stop or common word: evidence on its own
	anchor   bool // distinct and weighty: in the prefilter index
}

// Weights. Literal words weigh their prior times an IDF over the knowledge
// base's groups; masks weigh little, IP addresses more because their value
// can match exactly.
const (
	anchorMin       = 0.9 // literal types at or above this weight go into the prefilter index
	ipWeight        = 1.2
	maskCredit      = 0.5 // share of an IP's weight that a different address earns
	relatedKind     = 0.8 // credit for a related kind (pod name vs instance name)
	fragmentMinInfo = 2.5 // weight a fragment must carry to stand on its own
)

func maskWeight(k Kind) float32 {
	switch k {
	case KindIPv4, KindIPv6:
		return ipWeight
	case KindPort, KindHex, KindUUID, KindPod, KindID:
		return 0.3
	case KindNum, KindDuration, KindSize:
		return 0.2
	case KindTime:
		return 0.1
	}
	return 0
}

// Compile builds a Set. A def with an invalid template or without any token
// fails the whole set, naming the def.
func Compile(defs []Def, opts Options) (*Set, error) {
	s := &Set{defs: defs, minScore: float32(opts.MinScore)}
	if s.minScore <= 0 {
		s.minScore = DefaultMinScore
	}
	if len(defs) > maxSigs {
		return nil, fmt.Errorf("%d signatures, more than %d", len(defs), maxSigs)
	}
	// No parsed pattern outlives its use: the words are counted from
	// one parse and compiled from another, as 33,000 parsed patterns held
	// at once (about 15 MB) would be most of the peak of building a large
	// set.
	sizes, shapes, err := s.countDF()
	if err != nil {
		return nil, err
	}
	words, drop := s.compileAll(sizes, true)
	words = s.dropGenericClauses(drop, words)
	groupIdx := map[string]int32{}
	for i := range s.defs {
		g, ok := groupIdx[s.defs[i].Group]
		if !ok {
			g = int32(len(groupIdx))
			groupIdx[s.defs[i].Group] = g
		}
		s.pats[i].group = g
	}
	s.families()
	s.errMasks = s.buildVocab(words, shapes)
	for stem := range s.unStems {
		if s.df[stem] > 0 {
			delete(s.unStems, stem) // a signature has the stem itself: "Name or service not known"
		}
	}
	if len(s.unStems) == 0 {
		s.unStems = nil
	}
	s.pre = make([]preSig, len(s.pats))
	for i := range s.pats {
		c := &s.pats[i]
		s.pre[i] = preSig{invTotal: 1 / c.total, boost: c.boost}
		if !c.hasErr && !s.defs[i].Template {
			c.levelFail = Prepare(s.defs[i].Text).Level >= LevelWarn
		}
		for _, ti := range s.types[c.typ:c.typEnd] {
			switch {
			case !ti.literal:
				s.pre[i].freeMask += ti.weight
			case !ti.anchor:
				s.pre[i].freeLit += ti.weight
			}
		}
	}
	s.scratch.New = func() any { return new(scratch) }
	return s, nil
}

// patternSizes bound what the set's slices hold for a set's patterns: a
// signature has at most one token and one type per token of its pattern
// (wildcards aside), and one masked position per mask.
type patternSizes struct{ toks, masks int }

// compileAll parses and compiles the set's defs with the IDF of s.df
// (see countDF for sizes). It returns each literal word's type info, as
// every signature without a factor of its own (quotedValue) weighs it:
// the weight the prefilter adds. With generic set, it also marks the
// clauses too generic to stand alone (Info.Generic), or returns nil when
// there are none.
func (s *Set) compileAll(sizes patternSizes, generic bool) (map[uint64]typeInfo, []bool) {
	s.idfMax = float32(1 + math.Log(float64(s.groups+1)))
	s.pats = make([]compiled, len(s.defs))
	s.toks = make([]sigToken, 0, sizes.toks)
	s.types = make([]typeInfo, 0, sizes.toks)
	s.maskPos = make([]int16, 0, sizes.masks)
	words := make(map[uint64]typeInfo) // each literal word's type info, shared by all signatures
	var drop []bool
	var buf compileBuf
	for i, d := range s.defs {
		p, _ := patternOf(d) // countDF has seen it parse
		s.pats[i] = s.compile(p, d, words, &buf)
		if generic && d.Clause && s.info(i, p).Generic {
			if drop == nil {
				drop = make([]bool, len(s.defs))
			}
			drop[i] = true
		}
	}
	return words, drop
}

// dropGenericClauses leaves the clauses compileAll marked in drop, too
// generic to stand alone, out of the set (their weights are those of the
// set with them, as a clause's test is against the other signatures). The
// weights left are those of a set compiled from the defs left: when
// leaving the clauses out changes what the IDF counts (a clause with a
// word its line does not have as a word), the rest is compiled again.
// It returns the word type infos of the compilation that stands (see
// compileAll).
func (s *Set) dropGenericClauses(drop []bool, words map[uint64]typeInfo) map[uint64]typeInfo {
	if drop == nil {
		return words
	}
	defs := make([]Def, 0, len(s.defs))
	n := 0
	for i := range s.defs {
		if !drop[i] {
			defs = append(defs, s.defs[i])
			s.pats[n] = s.pats[i]
			n++
		}
	}
	clear(s.pats[n:])
	s.pats = slices.Clip(s.pats[:n])
	oldDF, oldGroups := s.df, s.groups
	s.defs = defs
	sizes, _, _ := s.countDF() // the defs left parsed before
	if s.groups != oldGroups || !maps.Equal(s.df, oldDF) {
		words, _ = s.compileAll(sizes, false)
		return words
	}
	s.packKept()
	return words
}

// packKept moves the runs of the signatures left in s.pats together, in
// order, and leaves the set's slices of them at their exact sizes.
func (s *Set) packKept() {
	var nt, ny, nm int32
	for i := range s.pats {
		c := &s.pats[i]
		nt += int32(copy(s.toks[nt:], s.toks[c.tok:c.tokEnd]))
		c.tok, c.tokEnd = nt-(c.tokEnd-c.tok), nt
		ny += int32(copy(s.types[ny:], s.types[c.typ:c.typEnd]))
		c.typ, c.typEnd = ny-(c.typEnd-c.typ), ny
		nm += int32(copy(s.maskPos[nm:], s.maskPos[c.mask:c.mask+int32(c.maskOff[numKinds])]))
		c.mask = nm - int32(c.maskOff[numKinds])
	}
	s.toks = slices.Clone(s.toks[:nt])
	s.types = slices.Clone(s.types[:ny])
	s.maskPos = slices.Clone(s.maskPos[:nm])
}

// families records the families of the set: a def and the clauses that
// follow it, famMax at most, share their postings.
func (s *Set) families() {
	s.famLen = make([]uint8, len(s.defs))
	start := 0
	for i := range s.defs {
		d := &s.defs[i]
		if i == 0 || !d.Clause || d.Group != s.defs[start].Group || i-start >= famMax {
			start = i
		}
		s.famLen[start]++
	}
	s.single = !slices.ContainsFunc(s.famLen, func(n uint8) bool { return n > 1 })
}

func patternOf(d Def) (*Pattern, error) {
	var p *Pattern
	if d.Template {
		var err error
		if p, err = Parse(d.Text); err != nil {
			return nil, err
		}
	} else {
		p = FromExample(d.Text, d.Pins)
	}
	switch {
	case len(p.Tokens) == 0:
		return nil, &SyntaxError{Msg: "example has no tokens"}
	case len(p.Tokens) > maxSigTokens:
		return nil, &SyntaxError{Msg: fmt.Sprintf("signature has %d tokens, more than %d", len(p.Tokens), maxSigTokens)}
	}
	return p, nil
}

// maxSigTokens bounds a signature's tokens (sigToken.pos, typ and next,
// bagLit.first and the masked positions are int16s).
const maxSigTokens = math.MaxInt16

// buildVocab fills the vocabulary table: every literal word with its
// weight and postings (the signatures that have it as an anchor), then the
// stop and common words no signature has, weighed as unknown words. words
// are the word type infos compileAll returned.
func (s *Set) buildVocab(words map[uint64]typeInfo, shapes wordShapes) []errMask {
	posts := map[uint64][]posting{}
	type word struct {
		hash uint64
		e    vocabEntry
	}
	var vwords []word
	seen := map[uint64]int{} // word → its index in vwords
	fam := 0
	for i := range s.pats {
		c := &s.pats[i]
		if s.famLen[i] > 0 {
			fam = i
		}
		types := s.types[c.typ:c.typEnd]
		for _, t := range s.toks[c.tok:c.tokEnd] {
			ti := types[t.typ]
			if t.kind != KindWord {
				continue
			}
			if k, ok := seen[t.hash]; ok {
				// A quoted name weighs less than the same word elsewhere
				// (see quotedValue): the line side counts its most, so
				// bounds stay bounds.
				vwords[k].e.weight = max(vwords[k].e.weight, ti.weight)
				continue
			}
			seen[t.hash] = len(vwords)
			vwords = append(vwords, word{t.hash, vocabEntry{weight: ti.weight, known: true, anchor: ti.anchor, isErr: ti.isErr}})
		}
		for _, a := range s.anchors(c, words) {
			// One posting per family and word: the prefilter adds its
			// weight to each signature of the family that has the word.
			ps := posts[a.hash]
			bit := uint32(1) << (famShift + i - fam)
			if k := len(ps) - 1; k >= 0 && int(ps[k].ref&famFirst) == fam && ps[k].weight == a.weight {
				ps[k].ref |= bit
				if !c.hasErr {
					ps[k].ref &^= postAllErr
				}
				continue
			}
			p := posting{ref: uint32(fam) | bit, weight: a.weight}
			if c.hasErr {
				p.ref |= postAllErr
			}
			posts[a.hash] = append(ps, p)
		}
	}
	for _, set := range []map[uint64]bool{stopWords, commonWords} {
		for h := range set {
			if _, ok := seen[h]; !ok {
				seen[h] = len(vwords)
				prior := float32(0.4)
				if stopWords[h] {
					prior = 0.15
				}
				vwords = append(vwords, word{h, vocabEntry{weight: prior * s.idfMax}})
			}
		}
	}
	// Failure words too (see textFailure), so that one probe per token
	// also says whether a line reads as a failure; a word no signature
	// has weighs what unknownWeight gives it.
	for i := range vwords {
		vwords[i].e.shaped = shapes.failing[vwords[i].hash]
		vwords[i].e.failure = textFailure(vwords[i].hash) || vwords[i].e.shaped
	}
	for h := range errorWords {
		if _, ok := seen[h]; !ok && textFailure(h) {
			seen[h] = len(vwords)
			vwords = append(vwords, word{h, vocabEntry{weight: s.idfMax, failure: true}})
		}
	}
	// Another inflection of a signature's word is that word, where no
	// signature has it as a word of its own: "endpoint" finds "endpoints",
	// "Kill" finds "Killed" (see inflect), for inflectionCredit of its
	// weight. A failure word no signature has ("kill" beside a
	// signature's "Killed") becomes the alias too; stop and common words
	// keep their own entries (their other forms are as common: "errors",
	// "nodes").
	var aliases [][2]uint64
	aliased := map[uint64]bool{}
	for form, w := range shapes.forms {
		k, ok := seen[form]
		if ok && (vwords[k].e.known || stopWords[form] || commonWords[form]) {
			continue
		}
		if k, ok := seen[w]; ok && vwords[k].e.known {
			aliases = append(aliases, [2]uint64{form, w})
			aliased[form] = true
		}
	}
	slices.SortFunc(aliases, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	v := newVocab(len(vwords) + len(aliases) - len(aliased))
	nposts := 0
	for _, ps := range posts {
		nposts += len(ps)
	}
	v.posts = make([]posting, 0, nposts) // exact: it is kept for good
	errBits := map[uint64]uint8{}
	for _, w := range vwords {
		e := w.e
		if aliased[w.hash] {
			continue
		}
		if e.isErr {
			if _, ok := errBits[w.hash]; !ok {
				errBits[w.hash] = uint8(len(errBits) % 256)
			}
			e.errBit = errBits[w.hash]
		}
		if ps := posts[w.hash]; len(ps) > 0 {
			e.postOff, e.postN = int32(len(v.posts)), int32(len(ps))
			v.posts = append(v.posts, ps...)
		}
		v.put(w.hash, e)
	}
	for _, a := range aliases {
		v.alias(a[0], v.index(a[1]))
	}
	s.vocab = v
	errMasks := make([]errMask, len(s.pats))
	// One bag entry per literal type: an exact size.
	nbag := 0
	for _, ti := range s.types {
		if ti.literal {
			nbag++
		}
	}
	s.bags = make([]bagLit, 0, nbag)
	for i := range s.pats {
		c := &s.pats[i]
		toks, types := s.toks[c.tok:c.tokEnd], s.types[c.typ:c.typEnd]
		c.bag = int32(len(s.bags))
		last := map[int32]int{}
		for k, t := range toks {
			toks[k].next = -1
			if t.kind != KindWord {
				continue
			}
			ti := types[t.typ]
			if ti.isErr {
				errMasks[i].set(errBits[t.hash])
			}
			id := v.index(t.hash)
			p, seen := last[id]
			last[id] = k
			if seen {
				toks[p].next = int16(k)
				continue
			}
			// A literal type is one word: its first position stands for it.
			b := bagLit{word: id, weight: ti.weight, first: int16(k)}
			if ti.isErr {
				b.flags |= bagErr
			}
			if ti.distinct {
				b.flags |= bagDistinct
			}
			s.bags = append(s.bags, b)
		}
		c.bagEnd = int32(len(s.bags))
	}
	return errMasks
}

// wordShapes are what countDF learns of the signatures' words for
// buildVocab.
type wordShapes struct {
	// forms maps other inflections of the words to the words (see
	// inflect); buildVocab makes them aliases.
	forms map[uint64]uint64
	// failing are the words that read as failures by their shape
	// (failureShape: OutOfMemoryError, EADDRINUSE): their entries say so,
	// and the prefilter judges the shape only of words the vocabulary
	// does not have.
	failing map[uint64]bool
}

// countDF parses the set's defs and counts, for each literal, the groups
// whose signatures contain it. It returns the sizes compileAll needs and
// the words' shapes buildVocab needs, or the defs that do not parse, each
// named.
func (s *Set) countDF() (patternSizes, wordShapes, error) {
	var sizes patternSizes
	var shapes wordShapes
	var errs []error
	s.df = make(map[uint64]int32)
	seen := make(map[string]map[uint64]bool)
	for _, d := range s.defs {
		p, err := patternOf(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("signature %s: %w", d.ID, err))
			continue
		}
		g := d.Group
		if seen[g] == nil {
			seen[g] = make(map[uint64]bool)
		}
		for _, t := range p.Tokens {
			if t.Kind == KindWord && !seen[g][t.Hash] {
				seen[g][t.Hash] = true
				if s.df[t.Hash] == 0 && !t.Placeholder {
					w := p.Text[t.Start:t.End]
					shapes.forms = inflect(w, t.Hash, shapes.forms)
					s.unStems = unStems(w, t.Hash, s.unStems)
					shapes.forms, s.classParts = classForm(w, t.Hash, shapes.forms, s.classParts)
					if failureShape(w) {
						if shapes.failing == nil {
							shapes.failing = map[uint64]bool{}
						}
						shapes.failing[t.Hash] = true
					}
				}
				s.df[t.Hash]++
			}
			if t.Kind != KindWildcard {
				sizes.toks++
				if t.Kind != KindWord {
					sizes.masks++
				}
			}
		}
	}
	s.groups = len(seen)
	return sizes, shapes, errors.Join(errs...)
}

// wordWeight is a literal's weight: its prior times 1 + ln((N+1)/(df+1)).
func (s *Set) wordWeight(text string, hash uint64) float32 {
	df := s.df[hash]
	idf := 1 + math.Log(float64(s.groups+1)/float64(df+1))
	if idf < 0.5 {
		idf = 0.5
	}
	return wordPrior(text, hash) * float32(idf)
}

// compileBuf is compile's scratch, reused from one signature to the next.
type compileBuf struct {
	typ, next []int32
	pos       []int16
	rep       []bool
	types     []typeInfo
}

func (s *Set) compile(p *Pattern, d Def, words map[uint64]typeInfo, buf *compileBuf) compiled {
	c := compiled{boost: float32(d.Boost), whole: d.Whole}
	if c.boost <= 0 {
		c.boost = 1
	}
	typeOf := make(map[[2]uint64]int32, len(p.Tokens))
	typ, pos, types := buf.typ[:0], buf.pos[:0], buf.types[:0]
	for i, t := range p.Tokens {
		if t.Kind == KindWildcard {
			continue
		}
		key := [2]uint64{uint64(t.Kind), t.Hash}
		if t.Placeholder {
			key[1] = uint64(i) + 1 // each placeholder is its own type
		}
		ti, ok := typeOf[key]
		if !ok {
			ti = int32(len(types))
			typeOf[key] = ti
			ti := s.typeInfoOf(p, i, words)
			if ti.literal && !d.Template && (quotedValue(p, i) || keyedName(p, i) || classedName(p, i)) {
				// A name in quotes (volume "certs", user "app") is what this
				// one occurrence was about, not what the failure is: it
				// weighs little and is not evidence on its own. (The
				// prefilter adds the word's weight elsewhere: see anchors.)
				ti.weight *= quotedFactor
				ti.distinct = false
			}
			types = append(types, ti)
		}
		typ = append(typ, ti)
		pos = append(pos, int16(i))
	}
	buf.typ, buf.pos, buf.types = typ, pos, types
	repeat := buf.repeatedRuns(len(types))
	c.tok = int32(len(s.toks))
	var levelTypes []int32 // the types of the error words that name a level
	for k, ti := range typ {
		if repeat[k] {
			continue
		}
		t := p.Tokens[pos[k]]
		s.toks = append(s.toks, sigToken{kind: t.Kind, hash: t.Hash, typ: int16(ti), pos: pos[k], next: -1, placeholder: t.Placeholder})
		c.hasNeg = c.hasNeg || t.Kind == KindWord && isNegation(t.Hash)
		if t.Kind == KindWord && !t.Placeholder && classWithMessage(p.Text, t) {
			c.classTok = int16(len(s.toks) - int(c.tok))
		}
		if t.Kind == KindWord && !t.Placeholder && errorClassName(p.Text[t.Start:t.End]) {
			c.lastClass = int16(len(s.toks) - int(c.tok))
		}
		if t.Kind == KindWord && !t.Placeholder && errorWords[t.Hash] && levelMarker(p, int(pos[k])) {
			if l := ParseLevel(p.Text[t.Start:t.End]); l >= LevelWarn {
				if c.levelWord == LevelUnknown || l < c.levelWord {
					c.levelWord = l
				}
				levelTypes = append(levelTypes, ti)
			}
		}
	}
	c.tokEnd = int32(len(s.toks))
	c.typ = int32(len(s.types))
	s.types = append(s.types, types...)
	c.typEnd = int32(len(s.types))
	toks := s.toks[c.tok:c.tokEnd]
	var perKind [numKinds]uint16
	seenType := make([]bool, len(types))
	for _, t := range toks {
		if t.kind == KindWord {
			continue
		}
		perKind[t.kind]++
		c.maskKinds |= 1 << t.kind
		if !seenType[t.typ] {
			seenType[t.typ] = true
			c.maskTypes[t.kind]++
		}
	}
	for k := range numKinds {
		c.maskOff[k+1] = c.maskOff[k] + perKind[k]
	}
	c.coverKinds = c.maskKinds
	if c.coverKinds&(1<<KindPod|1<<KindID) != 0 {
		c.coverKinds |= 1<<KindPod | 1<<KindID
	}
	c.mask = int32(len(s.maskPos))
	s.maskPos = append(s.maskPos, make([]int16, c.maskOff[numKinds])...)
	maskPos := s.maskPos[c.mask:]
	next := c.maskOff
	for i, t := range toks {
		if t.kind != KindWord {
			maskPos[next[t.kind]] = int16(i)
			next[t.kind]++
		}
	}
	nd := int16(0)
	for k, ti := range types {
		c.total += ti.weight
		c.hasErr = c.hasErr || ti.isErr
		if ti.isErr && !slices.Contains(levelTypes, int32(k)) {
			c.otherErr = true
		}
		if ti.distinct {
			nd++
		}
	}
	c.plainTail = plainTail(p, toks, types)
	c.needDistinct = min(nd, minDistinctMatched)
	if c.needDistinct == 0 {
		c.needDistinct = 1 // a signature without one can never match, as before
	}
	return c
}

// repeatedRuns marks the copies of a run of two or more tokens that
// follow it straight away: "manifest unknown: manifest unknown" is aligned
// as "manifest unknown". A score counts each word once, so with the copy
// kept a line with "Unknown desc = reading manifest" (the two words the
// other way round) would match the middle of the pair and score 1. It
// reads b.typ (the tokens' types, ntypes of them) and returns b.rep; a
// run is looked for only where a token's type comes again.
func (b *compileBuf) repeatedRuns(ntypes int) []bool {
	typ := b.typ
	n := len(typ)
	b.rep = slices.Grow(b.rep[:0], n)[:n]
	clear(b.rep)
	if ntypes == n {
		return b.rep // no type twice
	}
	// next[k]: the next token of the same type, or -1.
	b.next = slices.Grow(b.next[:0], n+ntypes)[:n+ntypes]
	next, last := b.next[:n], b.next[n:]
	for k := range last {
		last[k] = -1
	}
	for k := n - 1; k >= 0; k-- {
		next[k], last[typ[k]] = last[typ[k]], int32(k)
	}
	for s := 0; s < n; {
		run := 0
		for q := int(next[s]); q >= 0 && q-s <= (n-s)/2; q = int(next[q]) {
			if l := q - s; l >= 2 && slices.Equal(typ[s:q], typ[q:q+l]) {
				run = l // the longest: q grows
			}
		}
		if run == 0 {
			s++
			continue
		}
		e := s + run
		for e+run <= n && slices.Equal(typ[s:s+run], typ[e:e+run]) {
			for k := e; k < e+run; k++ {
				b.rep[k] = true
			}
			e += run
		}
		s = e
	}
	return b.rep
}

func (s *Set) typeInfoOf(p *Pattern, i int, words map[uint64]typeInfo) typeInfo {
	t := p.Tokens[i]
	if t.Kind != KindWord {
		return typeInfo{weight: maskWeight(t.Kind)}
	}
	// A word weighs the same in every signature, whatever its case in
	// each ("FailedMount" and "failedMount" have one hash but not the same
	// shape): the prefilter's bounds add one weight per word.
	if ti, ok := words[t.Hash]; ok {
		return ti
	}
	text := p.TokenText(i)
	w := s.wordWeight(text, t.Hash)
	distinct := wordPrior(text, t.Hash) >= 1
	ti := typeInfo{weight: w, isErr: errorWords[t.Hash], literal: true, distinct: distinct, anchor: distinct && w >= anchorMin}
	words[t.Hash] = ti
	return ti
}

// plainTail finds where the message after a signature's wrapper starts
// (the token after its first ": "), when every distinctive word is before
// it and the message says what it says with a negation and plain words
// only: Docker's "Error response from daemon: No such container: <id>" is
// its daemon's wrapper and the words "No such container". It returns 1 +
// that token's position among toks, or 0.
func plainTail(p *Pattern, toks []sigToken, types []typeInfo) int16 {
	start := -1
	for i := 1; i < len(toks); i++ {
		prev, t := p.Tokens[toks[i-1].pos], p.Tokens[toks[i].pos]
		if gap := p.Text[prev.End:t.Start]; strings.Contains(gap, ": ") {
			start = i
			break
		}
	}
	if start < 0 {
		return 0
	}
	head, neg := false, false
	for i, t := range toks {
		ti := types[t.typ]
		switch {
		case i < start:
			head = head || ti.distinct
		case ti.distinct:
			return 0
		case t.kind == KindWord && isNegation(t.hash):
			neg = true
		}
	}
	if !head || !neg {
		return 0
	}
	return int16(start + 1)
}

// minDistinctMatched is how many distinctive words (see typeInfo.distinct)
// a line must share exactly with a signature that has that many: one word
// in common ("secret", "slow") is a coincidence more often than a match.
const minDistinctMatched = 2

// quotedFactor scales the weight of a quoted single-token value of an
// example line (see quotedValue).
const quotedFactor = 0.3

// classWithMessage reports whether token t of text is an exception or
// error class name followed by ':' and a message of plain words.
func classWithMessage(text string, t PatternToken) bool {
	if !errorClassName(text[t.Start:t.End]) || int(t.End) >= len(text) || text[t.End] != ':' {
		return false
	}
	return plainWords(text[t.End+1:]) >= 2
}

// plainWords counts the words of s made of letters only (a trailing
// '.', ',' or ';' aside): "Direct buffer memory" has three, a class path
// ("groep3/Mail/Mail") or a name none. A message has two or more.
func plainWords(s string) int {
	n := 0
	for f := range strings.FieldsSeq(s) {
		f = strings.TrimRight(f, ".,;")
		ok := f != ""
		for i := 0; i < len(f) && ok; i++ {
			ok = isLetter(f[i])
		}
		if ok {
			n++
		}
	}
	return n
}

// levelMarker reports whether token i of a pattern stands where a level
// does: first, or in capitals before ':' or ']' ("... failed: ERROR: out
// of shared memory", "[FATAL]"). "rpc error: code = Unknown" is no level.
func levelMarker(p *Pattern, i int) bool {
	if i == 0 {
		return true
	}
	t := p.Tokens[i]
	w := p.Text[t.Start:t.End]
	if strings.ToUpper(w) != w || int(t.End) >= len(p.Text) {
		return false
	}
	return p.Text[t.End] == ':' || p.Text[t.End] == ']'
}

// quotedValue reports whether token i of an example is the name of an
// object, alone in quotes after the word for its kind: secret "coturn",
// for user \"dev\", table 'orders'. Log lines quote the names of the
// objects one occurrence is about; other quoted words ('subnet.env',
// type="flannel") are constants of the message and keep their weight.
func quotedValue(p *Pattern, i int) bool {
	t := p.Tokens[i]
	st, en := int(t.Start), int(t.End)
	if i == 0 || st == 0 || en >= len(p.Text) || !objectNounAt(p, i-1) {
		return false
	}
	q := p.Text[st-1]
	if q != '"' && q != '\'' {
		return false
	}
	if p.Text[en] == '\\' && en+1 < len(p.Text) {
		en++
	}
	return p.Text[en] == q
}

// keyedName reports whether token i of an example is an object's name
// given without quotes, the way drivers and databases print them: as a
// key's value ("collection: virtool.indexes", "index: version_1",
// "db=maasdb": an object noun (objectNouns) right before ": " or "=", and
// one token shaped like a name, with a dot, an underscore or a digit), or
// as the last word after a preposition and the noun ("permission denied
// for table authorities"). Not an error or stop word. Like a quoted name,
// it is what one occurrence was about.
func keyedName(p *Pattern, i int) bool {
	if i == 0 || p.Tokens[i-1].Kind != KindWord || !objectNouns[p.Tokens[i-1].Hash] {
		return false
	}
	t := p.Tokens[i]
	w := p.Text[t.Start:t.End]
	if errorWords[t.Hash] || stopWords[t.Hash] {
		return false
	}
	switch gap := p.Text[p.Tokens[i-1].End:t.Start]; gap {
	case ": ", "=", ":":
		if t.End < int32(len(p.Text)) && p.Text[t.End] != ' ' && p.Text[t.End] != ',' {
			return false
		}
		return strings.ContainsAny(w, "._0123456789")
	case " ":
		// "permission denied for table authorities", "for user postgres":
		// after "for", "in", "on" or "of" and the noun, the last word
		// of the message (or of its part before its context).
		if i < 2 || !namePrepositions[p.Tokens[i-2].Hash] {
			return false
		}
		rest := strings.TrimLeft(p.Text[t.End:], ".;,")
		return rest == "" || contextStarts(" "+rest)
	}
	return false
}

// classedName reports whether token i of an example is part of a message
// that only names things after an exception class: the method of
// "java.lang.NoSuchMethodError: com.google.common.collect.ImmutableList.toImmutableList()L…",
// the class of "NoClassDefFoundError: com/acme/mail/Sender". The class is
// the failure; what it names is this occurrence's (see quotedValue).
func classedName(p *Pattern, i int) bool {
	t := p.Tokens[i]
	if t.Kind != KindWord || errorWords[t.Hash] || stopWords[t.Hash] {
		return false
	}
	for k := i - 1; k >= 0; k-- {
		c := p.Tokens[k]
		if c.Kind != KindWord || !errorClassName(p.Text[c.Start:c.End]) {
			continue
		}
		if int(c.End) >= len(p.Text) || p.Text[c.End] != ':' {
			return false
		}
		msg := p.Text[c.End+1:]
		return strings.TrimSpace(msg) != "" && plainWords(msg) == 0
	}
	return false
}

// objectNounAt reports whether token i of an example is the word for a
// kind of object (objectNouns), or "type" after "resource" (kubectl's
// `resource type "servicemonitors"`); "type" alone is a key of constants
// (`type="flannel"`).
func objectNounAt(p *Pattern, i int) bool {
	t := p.Tokens[i]
	if t.Kind != KindWord {
		return false
	}
	return objectNouns[t.Hash] || t.Hash == hashType && i > 0 && p.Tokens[i-1].Hash == hashResource
}

var hashType, hashResource = hashLower("type"), hashLower("resource")

// namePrepositions come before an object noun and its name.
var namePrepositions = hashSet("for", "in", "on", "of")

// objectNouns name kinds of objects whose names log lines quote.
var objectNouns = hashSet(
	"volume", "secret", "secrets", "configmap", "configmaps", "user", "role", "database", "db",
	"table", "index", "pod", "pods", "service", "namespace", "node", "container", "deployment",
	"statefulset", "daemonset", "job", "image", "host", "hostname", "key", "bucket", "topic",
	"queue", "group", "account", "serviceaccount", "claim", "persistentvolumeclaim", "pvc",
	"storageclass", "ingress", "release", "chart", "cluster", "schema", "relation", "column",
	"module", "package", "class", "thread", "task", "unit", "process", "file", "directory",
	"certificate", "domain", "repository", "tag", "branch", "field", "resource", "object",
	"endpoint", "endpoints", "lease", "mount", "disk", "device", "interface", "network", "plugin",
	"driver", "provisioner", "controller", "webhook", "collection", "shard", "partition", "consumer",
)

type anchor struct {
	hash   uint64
	weight float32
}

// anchors are the weighty literal types of signature c: a line that has
// none of them cannot reach the threshold (see Set.candidates). words are
// the word type infos compileAll returned.
func (s *Set) anchors(c *compiled, words map[uint64]typeInfo) []anchor {
	var out []anchor
	done := make(map[int16]bool)
	types := s.types[c.typ:c.typEnd]
	for _, t := range s.toks[c.tok:c.tokEnd] {
		if types[t.typ].anchor && !done[t.typ] {
			done[t.typ] = true
			// The word's own weight, also where this signature weighs it
			// less (quotedValue): the prefilter's sums serve both
			// directions, and the fragment's counts the line's weight of
			// the word.
			out = append(out, anchor{hash: t.hash, weight: words[t.hash].weight})
		}
	}
	return out
}

// pairsFor appends the pairs line token t (at line position j, with
// vocabulary index word, or -1) makes with the signature's tokens, in
// signature order. stamp/head map a word to its first position in this
// signature (see markWords).
func (c *sigView) pairsFor(t Token, j, word int32, stamp []uint32, head []int32, epoch uint32, dst []alignPair) []alignPair {
	start := len(dst)
	if word >= 0 && stamp[word] == epoch {
		for i := head[word]; i >= 0; i = int32(c.toks[i].next) {
			dst = c.addPair(dst, i, j, t)
		}
	}
	if t.Kind == KindWord || t.Kind >= numKinds {
		return dst
	}
	lits := len(dst) - start
	for _, i := range c.masks(t.Kind) {
		dst = c.addPair(dst, int32(i), j, t)
	}
	switch t.Kind {
	case KindPod:
		for _, i := range c.masks(KindID) {
			dst = c.addPair(dst, int32(i), j, t)
		}
	case KindID:
		for _, i := range c.masks(KindPod) {
			dst = c.addPair(dst, int32(i), j, t)
		}
	}
	if len(dst)-start > 1 && (lits > 0 || t.Kind == KindPod || t.Kind == KindID) {
		slices.SortFunc(dst[start:], func(a, b alignPair) int { return cmp.Compare(a.i, b.i) })
	}
	return dst
}

// markWords stamps the signature's literal words with epoch and records
// their first positions, so pairsFor finds them in O(1).
func (c *sigView) markWords(stamp []uint32, head []int32, epoch uint32) {
	for _, b := range c.bag {
		stamp[b.word], head[b.word] = epoch, int32(b.first)
	}
}

func (c *sigView) addPair(dst []alignPair, i, j int32, t Token) []alignPair {
	st := c.toks[i]
	x := credit(st, t)
	if x == 0 && st.kind == KindWord && t.Kind == KindWord {
		x = inflectionCredit // paired by its word's entry: another inflection of it
	}
	if x > 0 {
		dst = append(dst, alignPair{i: i, j: j, w: x * c.types[st.typ].weight, cr: x})
	}
	return dst
}

// Len returns the number of signatures.
func (s *Set) Len() int { return len(s.defs) }

// Def returns the definition of signature i.
func (s *Set) Def(i int) Def { return s.defs[i] }

// Pattern returns the parsed pattern of signature i. No pattern is kept
// once compiled: what matching needs is in the compiled records, and 10,000
// example lines with their 23,000 clauses would hold about 8 MB of parsed
// tokens. Parsed again, a signature's text gives the pattern it was
// compiled from; explanations and captures, which only matches need, ask
// for it.
func (s *Set) Pattern(i int) *Pattern {
	// No pattern is kept (see Compile): parsed again, a signature's text
	// gives the one it was compiled from.
	p, _ := patternOf(s.defs[i])
	return p
}

// Template returns the template of signature i.
func (s *Set) Template(i int) string { return s.Pattern(i).Template() }

// MinScore returns the set's default threshold.
func (s *Set) MinScore() float64 { return float64(s.minScore) }

// Info describes how specific a compiled signature is.
type Info struct {
	// Anchors is the number of distinct literal words in the prefilter
	// index; a signature without any can never match.
	Anchors int
	// Distinct is the number of literal words weighty enough to be evidence.
	Distinct int
	// DistinctWeight is the weight of those words.
	DistinctWeight float64
	// VagueShare is the share of the signature's weight in masks and
	// common words.
	VagueShare float64
	// Generic is set when the signature says too little to be trusted.
	Generic bool
}

// Info returns how specific signature i is.
func (s *Set) Info(i int) Info { return s.info(i, s.Pattern(i)) }

// info is Info with signature i's parsed pattern.
func (s *Set) info(i int, pat *Pattern) Info {
	c := s.view(&s.pats[i])
	var info Info
	var vague float32
	for k, ti := range c.types {
		if ti.anchor {
			info.Anchors++
		}
		if ti.distinct {
			info.Distinct++
			info.DistinctWeight += float64(ti.weight)
		}
		if !ti.literal || priorOf(&c, pat, k) < 1 {
			vague += ti.weight
		}
	}
	if c.total > 0 {
		info.VagueShare = float64(vague / c.total)
	}
	info.Generic = info.DistinctWeight < MinDistinctWeight || info.VagueShare > 0.8
	return info
}

// MinDistinctWeight is the least weight of distinctive words a signature
// needs not to be too generic: one rare word ("OOMKilled") or a few
// ordinary ones.
const MinDistinctWeight = 2.5

// priorOf returns the word prior of type k of signature c, of pattern pat.
func priorOf(c *sigView, pat *Pattern, k int) float32 {
	for i, t := range c.toks {
		if int(t.typ) == k && t.kind == KindWord {
			return wordPrior(sigTokenText(c, pat, i), t.hash)
		}
	}
	return 0
}
