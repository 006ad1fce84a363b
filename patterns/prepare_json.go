package patterns

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonFields are the top-level string fields of a JSON log record that
// Prepare reads, found by a scanner that validates the record as
// encoding/json does but builds nothing: a record costs one pass and no
// allocation unless its message must be unescaped.
type jsonFields struct {
	s    string
	vals [len(jsonKeys)]string
	has  [len(jsonKeys)]bool
}

// jsonKeys are the record keys Prepare reads: messageKeys, then the error
// keys, then the level keys.
var jsonKeys = [...]string{
	"log", "msg", "message", "MESSAGE", "short_message", "Message", "body",
	"error", "err", "Error", "reason",
	"level", "severity", "lvl", "levelname", "PRIORITY",
}

const (
	jsonFirstError = 7
	jsonFirstLevel = 11
	jsonMaxDepth   = 10000 // encoding/json's limit
)

// scan validates r.s, a whole JSON document, and collects the string values
// of jsonKeys at the top level of its object. It reports false for anything
// encoding/json would reject, and slow when a key or value needs a decoding
// it does not do (the caller then decodes with encoding/json).
func (r *jsonFields) scan() (ok, slow bool) {
	i := skipSpace(r.s, 0)
	if i >= len(r.s) || r.s[i] != '{' {
		return false, false
	}
	i, ok, slow = r.object(i, 1, true)
	if !ok || slow {
		return ok, slow
	}
	return skipSpace(r.s, i) == len(r.s), false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// object scans an object starting at s[i] == '{' and returns the index
// after it. At the top level it records the wanted fields.
func (r *jsonFields) object(i, depth int, top bool) (int, bool, bool) {
	if depth > jsonMaxDepth {
		return 0, false, false
	}
	s := r.s
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true, false
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return 0, false, false
		}
		ks := i
		j, esc, ok := scanString(s, i)
		if !ok {
			return 0, false, false
		}
		key := s[ks+1 : j-1]
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return 0, false, false
		}
		i = skipSpace(s, i+1)
		vs := i
		var slow bool
		i, ok, slow = r.value(i, depth)
		if !ok {
			return 0, false, false
		}
		if top && !slow {
			if esc || !utf8.ValidString(key) {
				slow = true // a key that decodes to something else
			} else if k := jsonKeyIndex(key); k >= 0 {
				r.has[k] = s[vs] == '"'
				if r.has[k] {
					r.vals[k] = s[vs+1 : i-1]
					if strings.IndexByte(r.vals[k], '\\') >= 0 || !utf8.ValidString(r.vals[k]) {
						r.vals[k] = jsonUnquote(r.vals[k])
					}
				}
			}
		}
		if slow {
			return 0, true, true // encoding/json decodes it, and validates it
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, true, false
		}
		return 0, false, false
	}
}

// value scans any JSON value starting at s[i].
func (r *jsonFields) value(i, depth int) (int, bool, bool) {
	s := r.s
	if i >= len(s) {
		return 0, false, false
	}
	switch c := s[i]; {
	case c == '"':
		j, _, ok := scanString(s, i)
		return j, ok, false
	case c == '{':
		j, ok, _ := r.object(i, depth+1, false)
		return j, ok, false
	case c == '[':
		return r.array(i, depth+1)
	case c == 't':
		return literal(s, i, "true")
	case c == 'f':
		return literal(s, i, "false")
	case c == 'n':
		return literal(s, i, "null")
	case c == '-' || isDigit(c):
		j, ok := scanNumber(s, i)
		return j, ok, false
	}
	return 0, false, false
}

func (r *jsonFields) array(i, depth int) (int, bool, bool) {
	if depth > jsonMaxDepth {
		return 0, false, false
	}
	s := r.s
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true, false
	}
	for {
		var ok bool
		if i, ok, _ = r.value(i, depth); !ok {
			return 0, false, false
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return i + 1, true, false
		}
		return 0, false, false
	}
}

func literal(s string, i int, lit string) (int, bool, bool) {
	if strings.HasPrefix(s[i:], lit) {
		return i + len(lit), true, false
	}
	return 0, false, false
}

// scanString scans a string starting at s[i] == '"' and returns the index
// after its closing quote and whether it has escapes.
func scanString(s string, i int) (int, bool, bool) {
	esc := false
	for j := i + 1; j < len(s); j++ {
		for j < len(s) && !strStop[s[j]] {
			j++
		}
		if j == len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, esc, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			esc = true
			if j+1 >= len(s) {
				return 0, false, false
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(s) {
					return 0, false, false
				}
				for k := j + 2; k < j+6; k++ {
					if !isHex(s[k]) {
						return 0, false, false
					}
				}
				j += 5
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// strStop marks the bytes a JSON string scan stops at: '"', '\\' and
// control characters.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digitsAt(s, i)
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		j := digitsAt(s, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsAt(s, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// jsonUnquote decodes the inside of a JSON string that scanString
// accepted, as encoding/json does: escapes, surrogate pairs, and U+FFFD for
// bad surrogates and invalid UTF-8.
// plainRun returns the length of the prefix of s without a backslash or a
// byte of a multi-byte rune.
func plainRun(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

func jsonUnquote(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for r := 0; r < len(s); {
		// Copy the run up to the next escape or multi-byte rune at once.
		if e := plainRun(s[r:]); e > 0 {
			b.WriteString(s[r : r+e])
			r += e
			continue
		}
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := getu4(s[r-1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if rr1 := getu4(s[r:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
							r += 6
							b.WriteRune(dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b.WriteRune(rr)
				continue
			default: // " \ /
				b.WriteByte(s[r])
			}
			r++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(s[r:])
			b.WriteRune(rr)
			r += size
		}
	}
	return b.String()
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func jsonKeyIndex(k string) int {
	for i, w := range jsonKeys {
		if k == w {
			return i
		}
	}
	return -1
}

// jsonMessage decodes a JSON log record and returns its message, adding the
// record's error field when it is separate ({"msg":"...","error":"..."}).
func jsonMessage(s string) (string, Level, bool) {
	r := jsonFields{s: s}
	ok, slow := r.scan()
	if !ok {
		return "", 0, false
	}
	if slow {
		return jsonMessageDecoded(s)
	}
	return r.message()
}

func (r *jsonFields) message() (string, Level, bool) {
	var msg string
	for k := 0; k < jsonFirstError; k++ {
		if r.has[k] {
			msg = r.vals[k]
			break
		}
	}
	if msg == "" {
		return "", 0, false
	}
	for k := jsonFirstError; k < jsonFirstLevel; k++ {
		if v := r.vals[k]; r.has[k] && v != "" && !strings.Contains(msg, v) {
			msg += ": " + v
		}
	}
	var lvl Level
	for k := jsonFirstLevel; k < len(jsonKeys); k++ {
		if r.has[k] {
			lvl = ParseLevel(r.vals[k])
			break
		}
	}
	return strings.TrimRight(msg, "\r\n "), lvl, true
}

// jsonMessageDecoded is jsonMessage through encoding/json, for records
// whose keys or values need unescaping.
func jsonMessageDecoded(s string) (string, Level, bool) {
	var rec map[string]any
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return "", 0, false
	}
	r := jsonFields{s: s}
	for k, key := range jsonKeys {
		if v, ok := rec[key].(string); ok {
			r.vals[k], r.has[k] = v, true
		}
	}
	return r.message()
}
