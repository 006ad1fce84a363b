// Package patterns is incidex's pure matching logic: it tokenises log lines,
// masks their variable parts, compiles signatures into an immutable Set that
// goroutines share, scores lines against it and explains every match. It has
// no I/O and uses only the standard library.
package patterns

import "strings"

// Kind classifies a token. KindWord is a literal; every other kind is a mask
// for a variable part of a line.
type Kind uint8

// Token kinds.
const (
	KindWord     Kind = iota // literal text
	KindIPv4                 // 10.43.0.1
	KindIPv6                 // fd00::1
	KindPort                 // a port that is not well known (the ones that are stay literal)
	KindNum                  // 42, 3.5, 85%
	KindHex                  // container ids, hashes, 0x7f3a...
	KindUUID                 // pod UIDs
	KindTime                 // timestamps, dates and clock times
	KindDuration             // 1m30s, 250ms
	KindSize                 // 512Mi, 1.5GB
	KindPod                  // coredns-5dd5756b68-gt7xt, kube-proxy-7xk2p
	KindID                   // other instance names: node01, ip-10-0-1-23, valkey-0
	KindWildcard             // <*> in a template: any run of tokens
	numKinds
)

var kindNames = [numKinds]string{"word", "ip", "ipv6", "port", "num", "hex", "uuid", "time", "duration", "size", "pod", "id", "*"}

// String returns the kind's name as used in templates: "ip" for <ip>.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind?"
}

// Mask returns the template placeholder of a masked kind, such as "<ip>".
func (k Kind) Mask() string {
	if k == KindWord {
		return ""
	}
	return "<" + k.String() + ">"
}

// kindByName maps placeholder names to kinds (for Parse).
func kindByName(name string) (Kind, bool) {
	for k := KindIPv4; k < numKinds; k++ {
		if kindNames[k] == name {
			return k, true
		}
	}
	switch name {
	case "ipv4":
		return KindIPv4, true
	case "dur":
		return KindDuration, true
	}
	return 0, false
}

// Token is one token of a line: a byte range, its kind and the hash of its
// lower-cased text.
type Token struct {
	Start, End int32
	Hash       uint64
	Kind       Kind
	// shape is what the tokenizer saw of the token's bytes (shapeKnown,
	// and fUpper and fJoin among them): a plain lower-case word needs no
	// look at its shape (see failureShape). Zero when it was not noted.
	shape uint8
}

// shapeKnown marks a Token.shape the tokenizer noted.
const shapeKnown uint8 = 1 << 7

// Text returns the token's text in line.
func (t Token) Text(line string) string { return line[t.Start:t.End] }

// separator reports whether b ends a token. Everything else, including all
// bytes of multi-byte UTF-8 sequences, belongs to tokens.
var separator = func() (s [256]bool) {
	for _, c := range " \t\r\n\v\f\"'`()[]{}<>,;=|\\&?!*^$~" {
		s[c] = true
	}
	return s
}()

// lower maps ASCII upper case to lower case and leaves other bytes alone.
var lower = func() (l [256]byte) {
	for i := range l {
		l[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			l[i] = byte(i) + 'a' - 'A'
		}
	}
	return l
}()

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashLower hashes s with ASCII letters folded to lower case, eight bytes
// at a time: OR-ing 0x20 into every byte lower-cases letters and leaves
// digits and the punctuation tokens hold as they are.
func hashLower(s string) uint64 {
	h := uint64(fnvOffset) ^ uint64(len(s))*hashMul2
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		h = (h ^ (w | 0x2020202020202020)) * hashMul1
		h ^= h >> 31
	}
	if i < len(s) {
		var w uint64
		for k := 0; i+k < len(s); k++ {
			w |= uint64(s[i+k]|0x20) << (8 * k)
		}
		h = (h ^ w) * hashMul1
		h ^= h >> 31
	}
	h *= hashMul2
	return h ^ h>>29
}

const (
	hashMul1 = 0x9E3779B97F4A7C15
	hashMul2 = 0xBF58476D1CE4E5B9
)

// HashWord returns the hash a literal token with this text gets, so callers
// can look tokens up without tokenising.
func HashWord(s string) uint64 { return hashLower(s) }

// maxTokens bounds the tokens taken from one line; the rest of a very long
// line is ignored, which keeps matching time bounded.
const maxTokens = 512

// Tokenize appends the tokens of line to dst and returns it. It does not
// allocate when dst has room.
func Tokenize(line string, dst []Token) []Token {
	start := len(dst)
	dst = tokenizeLazy(line, dst)
	for i := start; i < len(dst); i++ {
		if dst[i].Kind == kindPending {
			dst[i].Kind = resolveKind(line, dst[i])
		}
	}
	return dst
}

// kindPending marks a token with digits whose kind tokenizeLazy left for
// later: most tokens of most lines never need it.
const kindPending = numKinds

// resolveKind classifies a pending token.
func resolveKind(line string, t Token) Kind {
	return classifyHashed(t.Text(line), t.Hash)
}

// tokenizeLazy is Tokenize without classifying plain pieces that hold
// digits (they are kindPending).
func tokenizeLazy(line string, dst []Token) []Token {
	n := len(line)
	for i := 0; i < n && len(dst) < maxTokens; {
		c := line[i]
		f := byteFlags[c]
		if f&fSep != 0 {
			// Escaped control characters inside JSON-escaped text (\n, \t)
			// separate tokens; skip the letter so it does not glue onto the next word.
			if c == '\\' && i+1 < n && (line[i+1] == 'n' || line[i+1] == 't' || line[i+1] == 'r') {
				i += 2
				continue
			}
			i++
			continue
		}
		// One pass to the end of the piece, collecting which kinds of bytes
		// it holds and where its trailing punctuation starts.
		var acc uint8
		j := i
		for ; j < n; j++ {
			f := byteFlags[line[j]]
			if f&fSep != 0 {
				break
			}
			acc |= f
		}
		jGood := j
		if acc&fTrail != 0 {
			for jGood > i && byteFlags[line[jGood-1]]&fTrail != 0 {
				jGood--
			}
		}
		switch {
		case f&fLead != 0 || acc&fColonSlash != 0 && hasColonSlash(line[i:jGood]):
			dst = piece(line, i, j, dst)
		case jGood > i:
			t := Token{Start: int32(i), End: int32(jGood), Hash: hashLower(line[i:jGood]), shape: acc&(fUpper|fJoin) | shapeKnown}
			if acc&fDigit != 0 {
				t.Kind = kindPending
			}
			if jGood-i == 3 && t.Hash == hashCan {
				if k := cantEnd(line, jGood); k > 0 {
					// "can't" is "cannot": Node's "Can't set headers" became
					// "Cannot set headers", MySQL's clients print both.
					t.End, t.Hash, j = int32(k), hashCannot, k
				}
			}
			dst = append(dst, t)
		}
		i = j
	}
	return dst
}

var hashCan, hashCannot = hashLower("can"), hashLower("cannot")

// cantEnd returns the end of the "'t" (or "’t") that follows "can" at i, or
// 0 when something else does.
func cantEnd(line string, i int) int {
	k := i
	switch {
	case strings.HasPrefix(line[i:], "'"):
		k++
	case strings.HasPrefix(line[i:], "’"):
		k += len("’")
	default:
		return 0
	}
	if k >= len(line) || line[k] != 't' && line[k] != 'T' || k+1 < len(line) && isLetter(line[k+1]) {
		return 0
	}
	return k + 1
}

func hasColonSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' || s[i] == '/' {
			return true
		}
	}
	return false
}

// Byte flags for the tokenizer's pass.
const (
	fSep        uint8 = 1 << iota // ends a token
	fDigit                        // 0-9
	fColonSlash                   // ':' or '/': the piece may be composite
	fTrail                        // trimmed from the end of a piece
	fLead                         // trimmed from the start of a piece
	fUpper                        // A-Z
	fJoin                         // '_' or '-', which join an error code's words
)

var byteFlags = func() (t [256]uint8) {
	for c := range 256 {
		if separator[c] {
			t[c] |= fSep
		}
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= fDigit
	}
	t[':'] |= fColonSlash
	t['/'] |= fColonSlash
	for _, c := range ".:-/#@" {
		t[c] |= fTrail
	}
	for _, c := range ".:-#+@/%_" {
		t[c] |= fLead
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= fUpper
	}
	t['_'] |= fJoin
	t['-'] |= fJoin
	return t
}()

// trimPiece drops punctuation that surrounds a word but is not part of it:
// "error:", "directory.", "(add):", "--flag".
func trimPiece(line string, i, j int) (int, int) {
	for i < j {
		switch line[i] {
		case '.', ':', '-', '#', '+', '@', '/', '%', '_':
			i++
			continue
		}
		break
	}
	for j > i {
		switch line[j-1] {
		case '.', ':', '-', '/', '#', '@':
			j--
			continue
		}
		break
	}
	return i, j
}

// piece tokenizes line[i:j], a run of non-separator bytes, splitting it
// into sub-tokens where it is a composite (paths, URLs, key:value). Like
// tokenizeLazy it leaves tokens with digits kindPending; it walks a
// composite left to right, so a long path costs one pass, not one per part.
func piece(line string, i, j int, dst []Token) []Token {
	lastColon := j // absolute, the last ':' before j (or -1); remainders share it
	for len(dst) < maxTokens {
		// ":53" after "->" or a placeholder: a bare port.
		if line[i] == ':' {
			e := j
			for e > i+1 && (line[e-1] == ':' || line[e-1] == '.') {
				e--
			}
			if e-i > 1 && e-i <= 6 && allDigits(line[i+1:e]) {
				return portToken(line, i+1, e, dst)
			}
		}
		i, j = trimPiece(line, i, j)
		if i >= j {
			return dst
		}
		if lastColon >= j {
			for lastColon = j - 1; lastColon >= i && line[lastColon] != ':'; lastColon-- {
			}
		}
		s := line[i:j]
		first := -1 // the first ':' or '/'
		for k := 0; k < len(s); k++ {
			if c := s[k]; c == ':' || c == '/' {
				first = k
				break
			}
		}
		if first < 0 {
			return append(dst, lazyToken(line, i, j))
		}
		if lastColon >= i {
			// Whole-piece classes that contain ':' and must not be split.
			if k, ok := classifyColon(s); ok {
				return append(dst, Token{Start: int32(i), End: int32(j), Kind: k, Hash: hashLower(s)})
			}
			if hp := hostPortAt(s, lastColon-i); hp > 0 {
				dst = piece(line, i, i+hp, dst)
				return portToken(line, i+hp+1, j, dst)
			}
		}
		sp := splitPointFrom(s, first)
		if sp < 0 {
			return append(dst, lazyToken(line, i, j))
		}
		dst = piece(line, i, i+sp, dst)
		if len(dst) >= maxTokens {
			return dst
		}
		// host:port/path (the authority of a URL): the port is a port.
		if s[sp] == ':' {
			if r := digitsAt(s, sp+1) - sp - 1; r > 0 && r <= 5 && (sp+1+r == len(s) || s[sp+1+r] == '/') && hostLike(s[:sp]) {
				dst = portToken(line, i+sp+1, i+sp+1+r, dst)
				if sp+1+r == len(s) {
					return dst
				}
				i += sp + 2 + r
				continue
			}
		}
		i += sp + 1
	}
	return dst
}

// lazyToken is the token of line[i:j], a part without ':' or '/', with its
// kind left pending when it has digits (see resolveKind).
func lazyToken(line string, i, j int) Token {
	s := line[i:j]
	t := Token{Start: int32(i), End: int32(j), Hash: hashLower(s)}
	for k := 0; k < len(s); k++ {
		if isDigit(s[k]) {
			t.Kind = kindPending
			break
		}
	}
	return t
}

// splitPointFrom returns the index of the first '/' or ':' at or after
// from at which s is split into parts, or -1. "i/o" and "TCP/UDP"-like
// short pairs stay whole.
func splitPointFrom(s string, from int) int {
	for k := from; k < len(s); k++ {
		c := s[k]
		if c != '/' && c != ':' {
			continue
		}
		if c == '/' && shortSlash(s, k) {
			continue
		}
		return k
	}
	return -1
}

// shortSlash reports whether the '/' at k joins two short letter runs, as in
// "i/o" or "r/w", which are words of their own.
func shortSlash(s string, k int) bool {
	a := k
	for a > 0 && isLetter(s[a-1]) {
		a--
	}
	b := k + 1
	for b < len(s) && isLetter(s[b]) {
		b++
	}
	left, right := k-a, b-k-1
	return left >= 1 && left <= 1 && right >= 1 && right <= 1 && a == 0 && b == len(s)
}

// hostPortAt returns c, the index of the last ':' in s, when s is a
// "host:port" form whose host is an IPv4 address or a host name and whose
// port is numeric, or 0.
func hostPortAt(s string, c int) int {
	if c <= 0 || c == len(s)-1 || !allDigits(s[c+1:]) || len(s)-c-1 > 5 {
		return 0
	}
	if !hostLike(s[:c]) {
		return 0
	}
	return c
}

// hostLike reports whether s can be a host name or an IPv4 address.
func hostLike(s string) bool {
	if s == "" {
		return false
	}
	for k := 0; k < len(s); k++ {
		if !hostByte[s[k]] {
			return false
		}
	}
	return true
}

// hostByte: letters, digits, '.', '-' and '_'.
var hostByte = func() (t [256]bool) {
	for c := range 256 {
		b := byte(c)
		t[c] = isLetter(b) || isDigit(b) || b == '.' || b == '-' || b == '_'
	}
	return t
}()

// wellKnownPorts stay literal after host:, because they carry meaning
// (":443" is the API server through its service VIP, ":53" is DNS).
var wellKnownPorts = map[string]bool{
	"22": true, "25": true, "53": true, "80": true, "111": true, "179": true, "443": true,
	"853": true, "2379": true, "2380": true, "3306": true, "4240": true, "4789": true,
	"5432": true, "5473": true, "6379": true, "6443": true, "8080": true, "8443": true,
	"8472": true, "9090": true, "9093": true, "9099": true, "9100": true, "9443": true,
	"10250": true, "10255": true, "10256": true, "10257": true, "10259": true,
	"11211": true, "27017": true, "9092": true, "2181": true, "5000": true, "5672": true,
}

// IsWellKnownPort reports whether a port number stays literal in templates.
func IsWellKnownPort(p string) bool { return wellKnownPorts[p] }

// wellKnownBits is wellKnownPorts as a bit set by port number.
var wellKnownBits = func() (b [65536 / 64]uint64) {
	for p := range wellKnownPorts {
		n := 0
		for i := 0; i < len(p); i++ {
			n = n*10 + int(p[i]-'0')
		}
		b[n/64] |= 1 << (n % 64)
	}
	return b
}()

// isWellKnown is wellKnownPorts[s] for the digits s, without hashing.
func isWellKnown(s string) bool {
	if len(s) == 0 || len(s) > 5 || s[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n < 65536 && wellKnownBits[n/64]&(1<<(n%64)) != 0
}

func portToken(line string, i, j int, dst []Token) []Token {
	s := line[i:j]
	k := KindPort
	if isWellKnown(s) {
		k = KindWord
	}
	return append(dst, Token{Start: int32(i), End: int32(j), Kind: k, Hash: hashLower(s)})
}

// classifyColon recognises whole pieces that contain ':' and must not be
// split there: clock times, RFC 3339 timestamps and IPv6 addresses.
func classifyColon(s string) (Kind, bool) {
	if strings.IndexByte(s, ':') < 0 {
		return 0, false
	}
	if isClock(s) || isTimestamp(s) {
		return KindTime, true
	}
	if isIPv6(s) {
		return KindIPv6, true
	}
	return 0, false
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isHex(b byte) bool    { return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f') }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
