package patterns

import (
	"strings"
	"unicode/utf8"
)

// jsonField is a string field of a JSON object: the raw (still escaped)
// bytes between its quotes.
type jsonField struct {
	key, raw string
	escaped  bool
}

// scanJSONObject reads the top-level fields of a JSON object whose values
// are strings, skipping other values, and calls f for each. It returns
// false when s is not a well-formed object.
func scanJSONObject(s string, f func(jsonField)) bool {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipWS(s, i+1) == len(s)
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return false
		}
		kEnd, kEsc, ok := scanString(s, i)
		if !ok {
			return false
		}
		key := s[i+1 : kEnd]
		if kEsc {
			key = unescapeJSON(key)
		}
		i = skipWS(s, kEnd+1)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipWS(s, i+1)
		if i >= len(s) {
			return false
		}
		if s[i] == '"' {
			end, esc, ok := scanString(s, i)
			if !ok {
				return false
			}
			f(jsonField{key: key, raw: s[i+1 : end], escaped: esc})
			i = end + 1
		} else {
			end, ok := skipValue(s, i)
			if !ok {
				return false
			}
			i = end
		}
		i = skipWS(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipWS(s, i+1)
		case '}':
			return skipWS(s, i+1) == len(s)
		default:
			return false
		}
	}
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index of the closing quote of the string that
// starts at s[i], and whether it has escapes.
func scanString(s string, i int) (int, bool, bool) {
	esc := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j, esc, true
		}
	}
	return 0, false, false
}

// skipValue skips a non-string value (number, literal, object, array).
func skipValue(s string, i int) (int, bool) {
	switch s[i] {
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				end, _, ok := scanString(s, j)
				if !ok {
					return 0, false
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	return j, j > i
}

// unescapeJSON decodes the escapes of a JSON string's contents.
func unescapeJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b', 'f':
			b.WriteByte(' ')
		case 'u':
			if i+4 < len(s) {
				if r, ok := hex4(s[i+1 : i+5]); ok {
					i += 4
					if r >= 0xD800 && r < 0xDC00 && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						if r2, ok := hex4(s[i+3 : i+7]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
							r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
							i += 6
						}
					}
					b.WriteRune(r)
					continue
				}
			}
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hex4(s string) (rune, bool) {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			r = r<<4 | rune(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
