package patterns

import "strings"

// The miner works on fields: the whitespace-separated words of a prepared
// line. A field holds one or more tokens of the shared tokenizer ("uid=0" is
// the tokens uid and 0), and it is a variable when any of its tokens is: a
// masked kind, or (miner-only) a word with a digit in it that is not in the
// lexicon (test9, ssh2, awdl0). Fields made only of punctuation ("-", "->")
// are not fields; they print as part of the separator before the next one.
const (
	// minerMaxFields bounds the fields taken from one line; the rest of a
	// longer line is not looked at.
	minerMaxFields = 128
	// minerMaxField is the longest field kept as text; a longer one (a
	// base64 blob, a minified document) is a variable.
	minerMaxField = 256
	// minerMaxSep bounds the separator text kept between two fields.
	minerMaxSep = 32
)

// Hash salts: a variable token inside a field's skeleton, and the
// first-field keys of index buckets.
const (
	saltVar  = 0x9e3779b97f4a7c15
	keyVar   = 0x165667b19e3779f9 // bucket of lines whose first field is a variable
	keyWild  = 0x27d4eb2f165667c5 // bucket of templates that start with <*>
	saltBlob = 0x85ebca77c2b2ae63
)

// mix folds v into the running hash h.
func mix(h, v uint64) uint64 {
	h ^= v
	h *= fnvPrime
	return h ^ h>>31
}

// mfield is one field of a scanned line.
type mfield struct {
	start, end int32  // byte range in the text, from its first token to its last
	from, to   uint16 // its tokens, toks[from:to]
	// key identifies the field for grouping: for a literal, the hash of its
	// words; for a variable, the hash of its skeleton, in which every
	// variable token is one slot whatever its kind ("uid=<slot>").
	key uint64
	// shape is key with the kinds of the variable tokens folded in
	// ("uid=<num>"); lines with equal shapes print the same template.
	shape uint64
	vari  bool
	wild  bool   // the field is a lone <*> (templates only)
	path  bool   // a literal path or domain name: these vary more than words
	last  uint64 // hash of its last token: the value of key=value
}

// mline is a scanned line. Miners keep a pool of them: scanning allocates
// nothing once the buffers have grown.
type mline struct {
	text   string
	toks   []Token
	wild   []bool // templates only: toks[i] is a <*> placeholder
	fields []mfield
	key    uint64 // hash of every field's shape: the cache key
	lits   int    // literal fields
	cut    bool   // fields past minerMaxFields were dropped

	// scratch for alignments
	dp   []int32
	ok   []bool
	prs  []pair
	nits []item
}

// scan prepares and tokenizes line and splits it into fields.
func (l *mline) scan(line string) {
	l.text = Prepare(line).Text
	l.toks = Tokenize(l.text, l.toks[:0])
	l.wild = l.wild[:0]
	l.split()
}

// scanTemplate reads a template such as "dial tcp <ip>:443: <*>": <*> and
// the mask names (<ip>, <num>, ...) become variable tokens of their kind;
// any other <text> is text. It does not fail: Seed checks its templates
// with Parse first, and Restore takes back what the miner printed.
func (l *mline) scanTemplate(src string) {
	l.text = src
	l.toks = l.toks[:0]
	l.wild = l.wild[:0]
	if strings.TrimSpace(src) == blankTemplate {
		l.split()
		return
	}
	last := 0
	for i := 0; i < len(src); i++ {
		if src[i] != '<' {
			continue
		}
		end := strings.IndexByte(src[i:], '>')
		if end < 0 {
			break
		}
		kind, ok := placeholderKind(src[i+1 : i+end])
		if !ok {
			continue
		}
		l.addText(last, i)
		l.toks = append(l.toks, Token{Start: int32(i), End: int32(i + end + 1), Kind: kind})
		l.wild = append(l.wild, kind == KindWildcard)
		last = i + end + 1
		i = last - 1
	}
	l.addText(last, len(src))
	l.split()
}

func placeholderKind(name string) (Kind, bool) {
	if name == "*" {
		return KindWildcard, true
	}
	if k, ok := kindByName(strings.ToLower(name)); ok && k != KindWildcard {
		return k, true
	}
	return 0, false
}

// addText tokenizes text[from:to] of a template.
func (l *mline) addText(from, to int) {
	if from >= to || len(l.toks) >= maxTokens {
		return
	}
	n := len(l.toks)
	l.toks = Tokenize(l.text[from:to], l.toks)
	for i := n; i < len(l.toks); i++ {
		l.toks[i].Start += int32(from)
		l.toks[i].End += int32(from)
		l.wild = append(l.wild, false)
	}
}

// blankTemplate is the template of lines that hold only white space.
const blankTemplate = "<blank>"

// split groups the tokens into fields.
func (l *mline) split() {
	l.fields = l.fields[:0]
	l.lits, l.cut = 0, false
	var cur mfield
	open := false
	for i, t := range l.toks {
		if open && spaceBetween(l.text, int(cur.end), int(t.Start)) {
			l.close(&cur)
			open = false
			if len(l.fields) == minerMaxFields {
				l.cut = true
				break
			}
		}
		if !open {
			cur = mfield{start: t.Start, from: uint16(i), key: fnvOffset, shape: fnvOffset}
			open = true
		}
		cur.end, cur.to = t.End, uint16(i+1)
		l.addToken(&cur, i)
	}
	if open {
		l.close(&cur)
	}
	l.dates()
	l.key = uint64(fnvOffset)
	for _, f := range l.fields {
		l.key = mix(l.key, f.shape)
	}
	l.key = mix(l.key, uint64(len(l.fields)))
	if len(l.fields) == 0 {
		l.key = hashLower(l.noTokenTemplate())
	}
}

func (l *mline) addToken(f *mfield, i int) {
	t := l.toks[i]
	if l.isWild(i) {
		f.vari = true
		f.key = mix(f.key, saltVar)
		f.shape = mix(mix(f.shape, saltVar), uint64(KindWildcard))
		return
	}
	if t.Kind != KindWord || numbered(t.Text(l.text), t.Hash) {
		f.vari = true
		if t.Kind != KindWord {
			f.key = mix(f.key, saltVar)
			f.shape = mix(mix(f.shape, saltVar), uint64(t.Kind))
			return
		}
		w := t.Text(l.text)
		if allDigits(w) { // a well-known port prints as itself
			f.key = mix(f.key, saltVar)
			f.shape = mix(mix(mix(f.shape, saltVar), uint64(KindWord)), t.Hash)
			return
		}
		if n := leader(w); n > 0 {
			// The label, hashed as the word it is in the printed template.
			h := hashLower(w[:n])
			f.key, f.shape = mix(f.key, h), mix(f.shape, h)
		}
		// It prints as <*>, which a restored template reads back as such.
		f.key = mix(f.key, saltVar)
		f.shape = mix(mix(f.shape, saltVar), uint64(KindWildcard))
		return
	}
	f.key = mix(f.key, t.Hash)
	f.shape = mix(f.shape, t.Hash)
	f.last = t.Hash
}

func (l *mline) isWild(i int) bool { return i < len(l.wild) && l.wild[i] }

func (l *mline) close(f *mfield) {
	if l.unit(f) {
		return
	}
	if f.end-f.start > minerMaxField {
		f.vari = true
		f.key, f.shape = saltBlob, saltBlob
	}
	if f.to-f.from == 1 && l.isWild(int(f.from)) {
		f.wild = true
	}
	if !f.vari {
		l.lits++
		f.path = l.isPath(f) || isDomain(l.text[f.start:f.end])
	}
	l.fields = append(l.fields, *f)
}

// dates makes variables of the month and weekday names of dates written
// out ("Sat Jul  9 12:59:44 2005", "Mon Dec 05"): a month followed by a
// number, and a weekday followed by such a month.
func (l *mline) dates() {
	for i := len(l.fields) - 2; i >= 0; i-- {
		f, next := &l.fields[i], &l.fields[i+1]
		if f.vari || f.to-f.from != 1 || !next.vari {
			continue
		}
		h := l.toks[f.from].Hash
		month := monthNames[h] && l.toks[next.from].Kind == KindNum
		if !month && !(dayNames[h] && monthNames[l.toks[next.from].Hash]) {
			continue
		}
		f.vari = true
		f.key = mix(fnvOffset, saltVar)
		f.shape = mix(mix(fnvOffset, saltVar), uint64(KindTime))
		l.lits--
	}
}

var (
	monthNames = hashSet("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
	dayNames   = hashSet("mon", "tue", "wed", "thu", "fri", "sat", "sun")
)

// unit joins a unit ("KB", "ms", "sec") to the number in the field before
// it, so that "18.4 KB" and "93 B" are one variable field each. The unit
// counts in the field's shape, not in its key.
func (l *mline) unit(f *mfield) bool {
	if f.to-f.from != 1 || len(l.fields) == 0 || !units[l.toks[f.from].Hash] {
		return false
	}
	p := &l.fields[len(l.fields)-1]
	if !p.vari || l.toks[p.to-1].Kind != KindNum || strings.TrimLeft(l.text[p.end:f.start], " ") != "" {
		return false
	}
	p.end, p.to = f.end, f.to
	p.key = mix(p.key, saltVar)
	p.shape = mix(p.shape, l.toks[f.from].Hash)
	return true
}

// units follow numbers: the two are one value.
var units = hashSet("b", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "k", "m", "g",
	"ns", "us", "µs", "ms", "s", "sec", "secs", "min", "mins", "h", "hr", "hrs")

// numbered reports whether a word that the tokenizer left literal is a
// variable for the miner: it has digits, it is not in the lexicon (x509,
// sha256), and it is not a name with one trailing digit, which is usually
// fixed (eth0, en0, ssh2, wl0, v1). Well-known ports (443), which the
// tokenizer keeps literal, are variables too, but print as themselves
// while a template's lines agree on them.
func numbered(s string, hash uint64) bool {
	if !hasDigit(s) || lexicon[hash] {
		return false
	}
	n := len(s)
	return !(n >= 2 && isDigit(s[n-1]) && !hasDigit(s[:n-1]) && isLetter(s[n-2]))
}

// leader returns the length of the label of a word that pads a label
// with dots up to its value ("instruction......0", "space......0x1f"), or
// 0. The label is part of the variable's skeleton: two such words with
// other labels are other fields.
func leader(w string) int {
	i := strings.Index(w, "..")
	if i <= 0 || !isLetter(w[i-1]) {
		return 0
	}
	return i
}

// isPath reports whether the white-space-separated word around field f has
// a '/' after its first byte and before its last: /ws/*, a/b, not /ws or
// i/o (which the tokenizer keeps as one word).
func (l *mline) isPath(f *mfield) bool {
	i, j := int(f.start), int(f.end)
	for i > 0 && !isSpace(l.text[i-1]) {
		i--
	}
	for j < len(l.text) && !isSpace(l.text[j]) {
		j++
	}
	w := strings.Trim(l.text[i:j], "/")
	k := strings.IndexByte(w, '/')
	return k >= 0 && !(f.to-f.from == 1 && f.end-f.start == int32(len(w)))
}

// isDomain reports whether s is a host name under a common top-level
// domain: api.example.com, db.shop.svc.cluster.local.
func isDomain(s string) bool {
	d := strings.LastIndexByte(s, '.')
	if d <= 0 || strings.IndexByte(s[:d], '.') < 0 || !tlds[hashLower(s[d+1:])] {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || isDigit(b) || b == '-' || b == '.') {
			return false
		}
	}
	return true
}

var tlds = hashSet("com", "net", "org", "io", "dev", "app", "cloud", "local", "internal", "svc", "lan",
	"edu", "gov", "cn", "de", "uk", "fr", "jp", "ru", "info", "biz", "co")

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// spaceBetween reports whether s[i:j] holds white space or an escaped
// newline or tab (JSON-escaped text), which end a field.
func spaceBetween(s string, i, j int) bool {
	for k := i; k < j; k++ {
		switch s[k] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		case '\\':
			if k+1 < j && (s[k+1] == 'n' || s[k+1] == 't' || s[k+1] == 'r') {
				return true
			}
		}
	}
	return false
}

// firstKey is the index bucket of a line: its first field's key, or keyVar
// when that field is a variable.
func (l *mline) firstKey() uint64 {
	if len(l.fields) == 0 {
		return l.key
	}
	if f := l.fields[0]; !f.vari {
		return f.key
	}
	return keyVar
}

// fieldText prints field f: literal text as it is, variable tokens as
// their mask ("uid=<num>"), words with digits as <*>.
func (l *mline) fieldText(f mfield) string {
	if f.key == saltBlob {
		return "<*>"
	}
	s := l.text[f.start:f.end]
	if !f.vari {
		return s
	}
	var b strings.Builder
	last := int(f.start)
	for i := int(f.from); i < int(f.to); i++ {
		t := l.toks[i]
		b.WriteString(l.text[last:t.Start])
		switch {
		case l.isWild(i) || t.Kind == KindWildcard:
			b.WriteString(l.text[t.Start:t.End])
		case t.Kind != KindWord:
			b.WriteString(t.Kind.Mask())
		case allDigits(t.Text(l.text)): // a well-known port, which the tokenizer keeps
			b.WriteString(t.Text(l.text))
		case numbered(t.Text(l.text), t.Hash):
			w := t.Text(l.text)
			if n := leader(w); n > 0 {
				b.WriteString(w[:n+strings.IndexFunc(w[n:], func(r rune) bool { return r != '.' })])
			}
			b.WriteString("<*>")
		default:
			b.WriteString(t.Text(l.text))
		}
		last = int(t.End)
	}
	b.WriteString(l.text[last:f.end])
	return b.String()
}

// noTokenTemplate is the template of a line without tokens: its text, or
// blankTemplate when it is only white space.
func (l *mline) noTokenTemplate() string {
	s := strings.TrimSpace(l.text)
	if s == "" {
		return blankTemplate
	}
	return clipUTF8(s, minerMaxField)
}

// clipUTF8 shortens s to at most n bytes, at a UTF-8 boundary.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}
