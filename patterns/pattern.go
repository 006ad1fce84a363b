package patterns

import (
	"fmt"
	"strings"
)

// Pattern is a parsed signature: the tokens of an example line, or of a
// template written with placeholders.
type Pattern struct {
	// Text is the prepared example line, or the template source.
	Text   string
	Tokens []PatternToken
}

// PatternToken is one token of a Pattern.
type PatternToken struct {
	// Hash is the hash of the lower-cased text; for a masked example token,
	// of its example value, so an exact value can score above its mask.
	Hash uint64
	// Start and End locate the token in Pattern.Text (int32: a knowledge
	// base of 10,000 signatures holds about 400,000 of these).
	Start, End int32
	Kind       Kind
	// Placeholder is set for tokens written as <ip>, <*>, ...: they have no value.
	Placeholder bool
}

// SyntaxError reports a malformed template.
type SyntaxError struct {
	Pos int // byte offset in the template
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("template: %s at offset %d", e.Msg, e.Pos) }

// literalAngles are Go's printed forms of empty values, which appear in real
// errors and are not placeholders.
var literalAngles = map[string]bool{"nil": true, "none": true, "unknown": true, "invalid": true, "nil>": true}

// Parse parses a template such as "dial tcp <ip>:443: i/o timeout". The
// placeholders are <*> and the mask names (<ip>, <num>, <hex>, ...); a
// backslash makes angle brackets literal: "lease \<held>".
func Parse(src string) (*Pattern, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &SyntaxError{Pos: 0, Msg: "empty template"}
	}
	p := &Pattern{Text: src}
	var buf []Token
	last := 0
	for i := 0; i < len(src); i++ {
		if src[i] != '<' || i > 0 && src[i-1] == '\\' {
			continue
		}
		end := strings.IndexByte(src[i:], '>')
		if end < 0 {
			break // a lone '<' is text
		}
		name := src[i+1 : i+end]
		if name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		var kind Kind
		switch k, ok := kindByName(strings.ToLower(name)); {
		case name == "*":
			kind = KindWildcard
		case ok:
			kind = k
		case literalAngles[strings.ToLower(name)]:
			continue
		default:
			return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unknown placeholder <%s> (known: <*> %s; write \\<%s> for literal text)", name, knownMasks(), name)}
		}
		buf = p.addText(src, last, i, buf)
		p.Tokens = append(p.Tokens, PatternToken{Start: int32(i), End: int32(i + end + 1), Kind: kind, Placeholder: true})
		last = i + end + 1
		i = last - 1
	}
	p.addText(src, last, len(src), buf)
	if len(p.Tokens) == 0 {
		return nil, &SyntaxError{Pos: 0, Msg: "template has no tokens"}
	}
	return p, nil
}

// Escape makes template text taken from log lines parseable: every <name>
// that Parse would reject as an unknown placeholder gets a backslash, so
// "lease <held> by <ip>" becomes "lease \<held> by <ip>".
func Escape(tmpl string) string {
	var b strings.Builder
	last, changed := 0, false
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '<' || i > 0 && tmpl[i-1] == '\\' {
			continue
		}
		end := strings.IndexByte(tmpl[i:], '>')
		if end < 0 {
			break
		}
		name := tmpl[i+1 : i+end]
		if name == "" || name == "*" || strings.ContainsAny(name, " \t") || literalAngles[strings.ToLower(name)] {
			continue
		}
		if _, ok := kindByName(strings.ToLower(name)); ok {
			continue
		}
		b.WriteString(tmpl[last:i])
		b.WriteByte('\\')
		last, changed = i, true
	}
	if !changed {
		return tmpl
	}
	b.WriteString(tmpl[last:])
	return b.String()
}

func knownMasks() string {
	var b strings.Builder
	for k := KindIPv4; k < KindWildcard; k++ {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k.Mask())
	}
	return b.String()
}

// addText tokenises src[from:to] and appends its tokens.
func (p *Pattern) addText(src string, from, to int, buf []Token) []Token {
	if from >= to {
		return buf
	}
	buf = Tokenize(src[from:to], buf[:0])
	for _, t := range buf {
		p.Tokens = append(p.Tokens, PatternToken{Start: int32(from) + int32(t.Start), End: int32(from) + int32(t.End), Kind: t.Kind, Hash: t.Hash})
	}
	return buf
}

// FromExample makes a pattern from an example log line: the line is prepared
// (prefixes stripped) and tokenised, and its variable parts become masks
// that remember their example value. Tokens equal to a pin stay literal.
func FromExample(line string, pins []string) *Pattern {
	text := Prepare(line).Text
	p := &Pattern{Text: text}
	pinned := make(map[uint64]bool, len(pins))
	for _, pin := range pins {
		pinned[hashLower(strings.TrimSpace(pin))] = true
	}
	toks := Tokenize(text, nil)
	p.Tokens = make([]PatternToken, 0, len(toks))
	for _, t := range toks {
		k := t.Kind
		if pinned[t.Hash] {
			k = KindWord
		}
		p.Tokens = append(p.Tokens, PatternToken{Start: int32(t.Start), End: int32(t.End), Kind: k, Hash: t.Hash})
	}
	return p
}

// Template renders the pattern with its masked parts replaced by their
// placeholders: "dial tcp <ip>:443: i/o timeout".
func (p *Pattern) Template() string {
	var b strings.Builder
	last := int32(0)
	for _, t := range p.Tokens {
		if t.Kind == KindWord {
			continue
		}
		b.WriteString(p.Text[last:t.Start])
		b.WriteString(t.Kind.Mask())
		last = t.End
	}
	b.WriteString(p.Text[last:])
	return Escape(strings.Join(strings.Fields(b.String()), " "))
}

// Literals returns the literal runs of the template, longest first: the text
// a literal scanner such as grep -F could look for.
func (p *Pattern) Literals() []string {
	var out []string
	runStart, runEnd := int32(-1), int32(-1)
	flush := func() {
		if runStart >= 0 {
			out = append(out, strings.TrimSpace(p.Text[runStart:runEnd]))
		}
		runStart = -1
	}
	for _, t := range p.Tokens {
		if t.Kind != KindWord {
			flush()
			continue
		}
		if runStart < 0 {
			runStart = t.Start
		}
		runEnd = t.End
	}
	flush()
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TokenText returns the text of token i as written.
func (p *Pattern) TokenText(i int) string { return p.Text[p.Tokens[i].Start:p.Tokens[i].End] }
