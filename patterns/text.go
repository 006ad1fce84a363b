package patterns

import (
	_ "embed"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The text tier: evidence from a write-up's own words.
//
// A team pastes an error once; other occurrences of the failure often
// print it in other words (another client, another version) that the
// write-up's prose still uses: its title, its symptoms, its cause. The
// text tier ranks incidents by the words a failure line shares with each
// write-up's text. What a word is worth comes from two counts: how many
// write-ups have it (the knowledge base's IDF) and how many messages of a
// large generic background have it (background.tsv, built by
// bench/background from log and error messages of open-source
// infrastructure code and public log samples). So "connection", "failed"
// or "type" say little even in a knowledge base of five write-ups, and
// "altnames" or "watermark" say a lot.
//
// It is a second tier: it is asked only when no signature matched confidently, and only
// for lines that read as failures. It is strict, because its evidence is a
// bag of words: a match needs the write-up to hold a good part of the line's
// weight (textCover) and a clear lead over the next write-up; a confident
// one needs three distinctive words in common (background weight at least
// textStrongBg, in at most a tenth of the write-ups). One or two make a
// possible match: on held-out sets, two distinctive words were right about
// as often as they were false matches.

//go:embed background.tsv
var backgroundTSV string

// Thresholds of the text tier.
const (
	// textCover is the share of the line's weight the write-up
	// must hold for any text match.
	textCover = 0.4
	// textStrongConfident and textStrongPossible are the distinctive
	// words in common a confident and a possible text match need.
	textStrongConfident = 3
	textStrongPossible  = 1
	// textStrongBg is the background weight of a distinctive word.
	textStrongBg = 0.6
	// textMargin is the lead the best write-up needs over the next, as a
	// share of its score.
	textMargin = 0.3
	// textMaxWords bounds the words of a line the tier looks at.
	textMaxWords = 128
)

// background holds the generic corpus' document frequencies as weights:
// 1 for a word at most 0.03% of background messages have, falling to
// 0.02 for one in 3% or more.
type background struct {
	weight map[uint64]float32
}

var loadBackground = sync.OnceValue(func() *background {
	b := &background{weight: map[uint64]float32{}}
	n := 0.0
	for line := range strings.SplitSeq(backgroundTSV, "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		c, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		if k == "#N" {
			n = float64(c)
			continue
		}
		if n > 0 {
			b.weight[hashLower(k)] = bgWeight(float64(c), n)
		}
	}
	return b
})

func bgWeight(df, n float64) float32 {
	x := (-math.Log10((df+1)/n) - 1.5) / 2.5
	return float32(min(1, max(0.02, x)))
}

// bg returns a word's background weight (1 for a word the background does
// not have).
func (b *background) bg(h uint64) float32 {
	if w, ok := b.weight[h]; ok {
		return w
	}
	return 1
}

// textStop are words the text tier never counts: the stop words and the
// function words of prose.
var textStop = hashSet(
	"no", "yes", "not", "been", "being", "having", "me", "us", "could", "would", "should",
	"shall", "may", "might", "must", "very", "each", "why", "same", "own", "too", "once",
	"under", "between", "through", "via", "per", "done", "whom",
	// A line's frame, not its message: levels, time zones, months, days.
	"emerg", "alert", "crit", "notice", "info", "debug", "trace", "warn", "warning", "error", "err",
	"fatal", "utc", "gmt", "cst", "cet", "cest", "pst", "pdt", "est", "edt", "bst", "ist", "jst",
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
	"mon", "tue", "wed", "thu", "fri", "sat", "sun",
)

// TextIndex is the text tier over a set of write-ups. It is immutable and
// safe for concurrent use.
type TextIndex struct {
	groups []string
	// look is textLook with each word's entry + 1 in its low 24 bits:
	// one lookup per word of a line.
	look    map[uint64]uint32
	entries []textEntry
	hashes  []uint64 // per entry, its word's hash
	posts   []int32
	n       float64
	bg      *background
	// unknownIDF is the IDF of a word no write-up has.
	unknownIDF float32
	// bloom holds the distinctive words: a line with none of them cannot
	// match, and most lines are told so by one hash and bit test a word.
	bloom   []uint64
	scratch sync.Pool
}

type textEntry struct {
	df             int32
	postOff, postN int32
	weight         float32 // what the word is worth in a line (see weight)
	strong         bool    // it is distinctive
}

// TextMatch is the text tier's answer for a line: the best write-up, its
// score (0.5 and up confident, PossibleMinScore up to 0.5 possible), the
// share of the line's weight it holds and how many distinctive words the
// two share.
type TextMatch struct {
	Group     int
	Score     float64
	Coverage  float64
	Strong    int
	Confident bool
}

type textScratch struct {
	acc     []float32
	strong  []uint8
	touched []int32
	words   []uint64
	vals    []uint32 // per word, its entry + 1 (0: no write-up has it)
	info    []textWord
}

// textWord is a word of a line that some write-up has.
type textWord struct {
	entry  int32
	weight float32
	strong bool
}

// TextHashes returns the words of a write-up's text (given in parts) the
// text tier counts, once each, as hashes: what NewTextIndex takes.
func TextHashes(parts ...string) []uint64 {
	var out []uint64
	for _, text := range parts {
		textWords(text, false, textLook, func(h uint64, _ string, _ bool, _ uint32) {
			if h != 0 {
				out = append(out, h)
			}
		})
	}
	slices.Sort(out)
	return slices.Clone(slices.Compact(out)) // not the array of repeats
}

// NewTextIndex indexes write-ups: groups[i] (an incident id) has the words
// words[i] (TextHashes of its text).
func NewTextIndex(groups []string, words [][]uint64) *TextIndex {
	vocab := map[uint64]int32{} // word → entry
	x := &TextIndex{groups: groups, n: float64(len(groups)), bg: loadBackground()}
	for _, hs := range words {
		for _, h := range hs {
			e, ok := vocab[h]
			if !ok {
				e = int32(len(x.entries))
				vocab[h] = e
				x.entries = append(x.entries, textEntry{})
				x.hashes = append(x.hashes, h)
			}
			x.entries[e].df++
		}
	}
	off := int32(0)
	for i := range x.entries {
		x.entries[i].postOff = off
		off += x.entries[i].df
	}
	x.posts = make([]int32, off)
	for g, hs := range words {
		for _, h := range hs {
			e := &x.entries[vocab[h]]
			x.posts[e.postOff+e.postN] = int32(g)
			e.postN++
		}
	}
	for i := range x.entries {
		e, h := &x.entries[i], x.hashes[i]
		e.weight = x.bg.bg(h) * float32(1+math.Log((x.n+1)/(float64(e.df)+1)))
		e.strong = x.bg.bg(h) >= textStrongBg && float64(e.df) <= max(1, x.n/10)
	}
	x.unknownIDF = float32(1 + math.Log(x.n+1))
	nStrong := 0
	for i := range x.entries {
		if x.entries[i].strong {
			nStrong++
		}
	}
	bits := 1 << 12
	for bits < 16*nStrong {
		bits <<= 1
	}
	x.bloom = make([]uint64, bits/64)
	for i, h := range x.hashes {
		if x.entries[i].strong {
			x.bloomAdd(h)
		}
	}
	x.look = maps.Clone(textLook)
	for h, e := range vocab {
		x.look[h] |= uint32(e + 1)
	}
	return x
}

func (x *TextIndex) bloomBits(h uint64) (uint64, uint64) {
	mask := uint64(len(x.bloom)*64 - 1) // a power of two
	return (h * goldenMul >> 32) & mask, (h>>32 ^ h*0xff51afd7ed558ccd) & mask
}

func (x *TextIndex) bloomAdd(h uint64) {
	a, b := x.bloomBits(h)
	x.bloom[a/64] |= 1 << (a % 64)
	x.bloom[b/64] |= 1 << (b % 64)
}

// mayHaveStrong reports whether a word of text may be a distinctive word
// of the index. Its words are the runs of letters and digits, a superset
// of what textWords counts, so it never says no to a line that has one.
func (x *TextIndex) mayHaveStrong(text string) bool {
	for i, j := alnumRun(text, 0); i < j; i, j = alnumRun(text, j) {
		a, b := x.bloomBits(hashLower(text[i:j]))
		if x.bloom[a/64]&(1<<(a%64)) != 0 && x.bloom[b/64]&(1<<(b%64)) != 0 {
			return true
		}
	}
	return false
}

// entry returns the entry of word h, if a write-up has it.
func (x *TextIndex) entry(h uint64) (int32, bool) {
	e := int32(x.look[h] & textEntryMask)
	return e - 1, e > 0
}

// Words returns each write-up's words, as NewTextIndex was given them (in
// another order): what a snapshot of the index keeps.
func (x *TextIndex) Words() [][]uint64 {
	out := make([][]uint64, len(x.groups))
	for e, en := range x.entries {
		for _, g := range x.posts[en.postOff : en.postOff+en.postN] {
			out[g] = append(out[g], x.hashes[e])
		}
	}
	return out
}

// Len returns the number of write-ups.
func (x *TextIndex) Len() int { return len(x.groups) }

// Group returns the group (incident id) of write-up g.
func (x *TextIndex) Group(g int) string { return x.groups[g] }

// weight is what word h of a line is worth: its background weight times
// 1 + ln((N+1)/(df+1)) over the write-ups.
func (x *TextIndex) weight(h uint64) (w float32, df int32) {
	if e, ok := x.entry(h); ok {
		return x.entries[e].weight, x.entries[e].df
	}
	return x.bg.bg(h) * x.unknownIDF, 0
}

func (x *TextIndex) strong(h uint64) bool {
	e, ok := x.entry(h)
	return ok && x.entries[e].strong
}

// Match returns the text tier's best write-up for line, if it reaches the
// possible band. It does not allocate.
func (x *TextIndex) Match(line string) (TextMatch, bool) {
	if x == nil || len(x.groups) == 0 {
		return TextMatch{}, false
	}
	return x.MatchPrepared(Prepare(line))
}

// MatchPrepared is Match for a line Prepare has prepared.
func (x *TextIndex) MatchPrepared(p Prepared) (TextMatch, bool) {
	if !x.mayHaveStrong(p.Text) {
		return TextMatch{}, false
	}
	sc, _ := x.scratch.Get().(*textScratch)
	if sc == nil {
		sc = &textScratch{acc: make([]float32, len(x.groups)), strong: make([]uint8, len(x.groups))}
	}
	defer x.scratch.Put(sc)
	fail := p.Level >= LevelWarn
	sc.words, sc.vals = sc.words[:0], sc.vals[:0]
	known := false
	textWords(p.Text, true, x.look, func(h uint64, _ string, f bool, val uint32) {
		fail = fail || f
		if h != 0 && len(sc.words) < textMaxWords && !containsHash(sc.words, h) {
			sc.words = append(sc.words, h)
			sc.vals = append(sc.vals, val&textEntryMask)
			known = known || val&textEntryMask != 0
		}
	})
	if !fail || !known {
		return TextMatch{}, false
	}
	// Each word once: its weight, its entry, whether it is distinctive.
	var tot, rest float32
	strong := 0
	sc.info = sc.info[:0]
	for k, h := range sc.words {
		if sc.vals[k] == 0 {
			tot += x.bg.bg(h) * x.unknownIDF
			continue
		}
		id := int32(sc.vals[k] - 1)
		e := &x.entries[id]
		tot += e.weight
		if e.strong {
			strong++
		} else {
			rest += e.weight
		}
		sc.info = append(sc.info, textWord{entry: id, weight: e.weight, strong: e.strong})
	}
	// A match needs a distinctive word in common, so only the write-ups
	// that have one of the line's are candidates: their postings are
	// short (a distinctive word is in at most a tenth of the write-ups).
	if strong == 0 {
		return TextMatch{}, false
	}
	m, ok := x.rank(sc, tot, rest)
	for _, g := range sc.touched {
		sc.acc[g], sc.strong[g] = 0, 0
	}
	return m, ok
}

// rank scores the candidates of the words in sc.info and decides. Another
// write-up can hold at most rest, the weight of the line's other words the
// write-ups have; when that bound could come near the best candidate, every
// write-up is scored (all), so the answer is the one of scoring them all.
func (x *TextIndex) rank(sc *textScratch, tot, rest float32) (TextMatch, bool) {
	sc.touched = sc.touched[:0]
	for _, wi := range sc.info {
		if !wi.strong {
			continue
		}
		for _, g := range x.postings(wi.entry) {
			if sc.strong[g] == 0 {
				sc.touched = append(sc.touched, g)
			}
			sc.acc[g] += wi.weight
			sc.strong[g]++
		}
	}
	for _, wi := range sc.info {
		if wi.strong {
			continue
		}
		ps := x.postings(wi.entry)
		if len(ps) <= 8*len(sc.touched) {
			for _, g := range ps {
				if sc.strong[g] > 0 {
					sc.acc[g] += wi.weight
				}
			}
			continue
		}
		for _, g := range sc.touched {
			if _, found := slices.BinarySearch(ps, g); found {
				sc.acc[g] += wi.weight
			}
		}
	}
	best, second := sc.best()
	a := sc.acc[best]
	if a/tot < textCover {
		return TextMatch{}, false // the best write-up of all holds no more
	}
	if a-rest < textMargin*a {
		// A write-up without a distinctive word of the line could be
		// near: score them all.
		for _, wi := range sc.info {
			if wi.strong {
				continue
			}
			for _, g := range x.postings(wi.entry) {
				if sc.strong[g] == 0 {
					if sc.acc[g] == 0 {
						sc.touched = append(sc.touched, g)
					}
					sc.acc[g] += wi.weight
				}
			}
		}
		best, second = sc.best()
		a = sc.acc[best]
	}
	m := TextMatch{Group: int(best), Coverage: float64(a / tot), Strong: int(sc.strong[best])}
	if m.Coverage < textCover || a-second < textMargin*a || m.Strong < textStrongPossible {
		return m, false
	}
	// The score rises with the share of the line the write-up holds:
	// 0.5–0.7 confident, 0.3–0.45 possible.
	r := (m.Coverage - textCover) / (1 - textCover)
	if m.Strong >= textStrongConfident {
		m.Confident, m.Score = true, 0.5+0.2*r
	} else {
		m.Score = 0.3 + 0.15*r
	}
	return m, true
}

// best returns the touched write-up with the highest score (the lowest
// index among equals) and the next highest score.
func (sc *textScratch) best() (int32, float32) {
	best, second := int32(-1), float32(0)
	for _, g := range sc.touched {
		if best < 0 || sc.acc[g] > sc.acc[best] || (sc.acc[g] == sc.acc[best] && g < best) {
			if best >= 0 {
				second = max(second, sc.acc[best])
			}
			best = g
		} else {
			second = max(second, sc.acc[g])
		}
	}
	return best, second
}

func (x *TextIndex) postings(e int32) []int32 {
	en := x.entries[e]
	return x.posts[en.postOff : en.postOff+en.postN]
}

// TextTerm is a word a line shares with a write-up, with its weight and
// whether it is distinctive.
type TextTerm struct {
	Word     string  `json:"word"`
	Weight   float64 `json:"weight"`
	Distinct bool    `json:"distinctive"`
}

// Terms returns the words of line that write-up g has, heaviest first: the
// evidence of a text match.
func (x *TextIndex) Terms(line string, g int) []TextTerm {
	p := Prepare(line)
	var out []TextTerm
	var seen []uint64
	textWords(p.Text, true, x.look, func(h uint64, word string, _ bool, _ uint32) {
		if h == 0 || containsHash(seen, h) {
			return
		}
		seen = append(seen, h)
		e, ok := x.entry(h)
		if !ok {
			return
		}
		en := x.entries[e]
		for _, gg := range x.posts[en.postOff : en.postOff+en.postN] {
			if int(gg) == g {
				w, _ := x.weight(h)
				out = append(out, TextTerm{Word: strings.ToLower(word), Weight: float64(int(w*100+0.5)) / 100, Distinct: x.strong(h)})
				return
			}
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Weight > out[j].Weight })
	return out
}

// TextWords returns the words of s the text tier counts, lower-cased, in
// order (repeats kept): what bench/background counts in its corpus.
func TextWords(s string) []string {
	var out []string
	textWords(s, false, textLook, func(h uint64, w string, _ bool, _ uint32) {
		if h != 0 {
			out = append(out, strings.ToLower(w))
		}
	})
	return out
}

func containsHash(hs []uint64, h uint64) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// textWords calls fn for each word of s the text tier counts, with whether
// the word is evidence of a failure. Words are runs of letters and digits
// split at '.', '_', '\”, '-' and '/', lower-cased; words with digits,
// single letters and stop words are left out. For a log line (structural)
// the structure of the line is left out too: a key (`level=`, `"type":`),
// the directories of a path (/usr/bin/sh is sh), and the package of a
// qualified name (java.lang.OutOfMemoryError is OutOfMemoryError).
func textWords(s string, structural bool, look map[uint64]uint32, fn func(h uint64, word string, failure bool, val uint32)) {
	prevNotNo := false
	i := 0
	for i < len(s) {
		if !chunkByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && chunkByte(s[j]) {
			j++
		}
		chunk := s[i:j]
		start := i
		i = j
		if structural {
			if j < len(s) && s[j] == '=' {
				continue
			}
			if start > 0 && s[start-1] == '"' && j+1 < len(s) && s[j] == '"' && s[j+1] == ':' {
				continue
			}
			// The key of a field list in a tail: nginx's ", client: …,
			// server: …, upstream: …".
			if start >= 2 && s[start-2] == ',' && s[start-1] == ' ' && j+1 < len(s) && s[j] == ':' && s[j+1] == ' ' {
				continue
			}
			if k := strings.LastIndexByte(strings.TrimRight(chunk, "/"), '/'); k >= 0 {
				chunk = chunk[k+1:]
			}
			if strings.Count(strings.TrimRight(chunk, "."), ".") >= 2 && chunk[0] >= 'a' && chunk[0] <= 'z' {
				chunk = chunk[strings.LastIndexByte(strings.TrimRight(chunk, "."), '.')+1:]
			}
		}
		for k, e := alnumRun(chunk, 0); k < e; k, e = alnumRun(chunk, e) {
			w := chunk[k:e]
			h := hashLower(w)
			val := look[h]
			f := uint8(val >> 24)
			failure := f&flagFailure != 0 || prevNotNo || len(w) >= 5 && failureShape(w)
			prevNotNo = f&flagNotNo != 0
			if f&flagStop != 0 || len(w) < 2 || hasDigit(w) {
				if failure {
					fn(0, "", true, 0) // evidence, but not a word to count
				}
				continue
			}
			fn(h, w, failure, val)
		}
	}
}

func chunkByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '/' || c == '\''
}

// alnumRun returns the bounds of the first run of letters and digits of s
// from i on (start == end when there is none).
func alnumRun(s string, i int) (start, end int) {
	for i < len(s) && !alnum(s[i]) {
		i++
	}
	end = i
	for end < len(s) && alnum(s[end]) {
		end++
	}
	return i, end
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// textLook says in one lookup what the word lists say about a word: its
// flags, shifted by 24 bits. A text index adds its words' entries (index
// + 1) in the low 24 bits of a copy (TextIndex.look).
var textLook = func() map[uint64]uint32 {
	m := map[uint64]uint32{}
	add := func(h uint64, f uint32) { m[h] |= f << 24 }
	for _, set := range []map[uint64]bool{stopWords, textStop} {
		for h := range set {
			add(h, flagStop)
		}
	}
	for h := range errorWords {
		if textFailure(h) {
			add(h, flagFailure)
		}
	}
	add(hashNot, flagNotNo)
	add(hashNo, flagNotNo)
	return m
}()

const textEntryMask = 1<<24 - 1

const (
	flagStop = 1 << iota
	flagFailure
	flagNotNo
)

// textFailure reports an error word that says on its own that a line
// reports a failure: the error words but the weak ones, less those of
// textWeakFailure.
func textFailure(h uint64) bool {
	return errorWords[h] && (!weakErrorWords[h] || textWeakFailure[h])
}

// textWeakFailure are the weak error words (see weakErrorWords) that the
// text tier takes as evidence of a failure on their own: "blocked by
// process", "Lost connection", "Connection reset by peer".
var textWeakFailure = hashSet("blocked", "lost", "reset", "kill", "dropped", "conflict", "wrong",
	"bad", "stale", "terminated", "evict", "crit", "critical")

// errnoName reports a POSIX errno name as runtimes print it: EADDRINUSE,
// ECONNREFUSED, ENOSPC.
func errnoName(s string) bool {
	if len(s) < 5 || s[0] != 'E' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// QuietLevel reports a line whose level says it is no failure report:
// debug from its prefix, or, where the prefix was not read (a kubectl
// --prefix'ed container line: "pod container 2022-07-21T10:51:54Z debug
// envoy upstream ..."), "debug" or "trace" among its first words. Such a
// line may name a failure ("upstream timeout" at debug), but the text
// tier, the weakest evidence, does not answer it; signatures still do.
// Info is not quiet: the kernel reports hung tasks as "INFO: task ...
// blocked for more than 120 seconds".
func QuietLevel(p Prepared) bool {
	switch p.Level {
	case LevelDebug:
		return true
	case LevelUnknown:
	default:
		return false
	}
	t := p.Text
	for n := 0; n < quietLevelWords && t != ""; n++ {
		for t != "" && (t[0] == ' ' || t[0] == '\t') {
			t = t[1:]
		}
		i := 0
		for i < len(t) && t[i] != ' ' && t[i] != '\t' {
			i++
		}
		switch w := strings.Trim(t[:i], "[]:"); {
		case strings.EqualFold(w, "debug"), strings.EqualFold(w, "trace"):
			return true
		}
		t = t[i:]
	}
	return false
}

// quietLevelWords is how many first words of a line QuietLevel looks at.
const quietLevelWords = 6
