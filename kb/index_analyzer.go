package kb

// This file is the search index's text analysis: the bleve tokenizers and
// analyzers for log text and queries, and the highlighter that marks matched
// terms. (The Analyze page is server/analyze_page.go.)

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search/highlight"
	simplefrag "github.com/blevesearch/bleve/v2/search/highlight/fragmenter/simple"
	simplehl "github.com/blevesearch/bleve/v2/search/highlight/highlighter/simple"
)

// Names registered with bleve.
const (
	logTokenizerName   = "incidex_log"
	logAnalyzerName    = "incidex_log"
	queryTokenizerName = "incidex_query"
	queryAnalyzerName  = "incidex_query"
	markHighlighter    = "incidex_mark"
)

// Highlight markers that fragments carry around matched terms. They are
// control characters that write-ups cannot contain (they are stripped at
// indexing), so a renderer can escape the fragment and then turn them into
// markup safely.
const (
	MarkStart = "\x02"
	MarkEnd   = "\x03"
)

func init() {
	if err := registry.RegisterTokenizer(logTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return logTokenizer{}, nil
	}); err != nil {
		panic("BUG: register tokenizer: " + err.Error())
	}
	if err := registry.RegisterTokenizer(queryTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return logTokenizer{whole: true}, nil
	}); err != nil {
		panic("BUG: register tokenizer: " + err.Error())
	}
	if err := registry.RegisterHighlighter(markHighlighter, func(map[string]any, *registry.Cache) (highlight.Highlighter, error) {
		return simplehl.NewHighlighter(simplefrag.NewFragmenter(160), markFormat{}, " … "), nil
	}); err != nil {
		panic("BUG: register highlighter: " + err.Error())
	}
}

// logTokenizer splits text the way people search logs. Each whitespace- or
// quote-separated piece is a token ("/run/flannel/subnet.env",
// "10.43.0.1:443", "i/o"), and so are its parts at the same position: path
// and URL segments, host and port, dotted parts, CamelCase words. So
// "subnet.env", "10.43.0.1", "clusterinformation" and "cluster information"
// all find the text they came from.
//
// Queries use it with whole set: every piece the index has is whole or a
// part, so a query term needs no parts of its own, and leaving them out
// keeps "FailedCreatePodSandBox" from also searching for "pod".
type logTokenizer struct{ whole bool }

func (lt logTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var out analysis.TokenStream
	pos := 0
	for i := 0; i < len(input); {
		r, n := utf8.DecodeRune(input[i:])
		if isSep(r) {
			i += n
			continue
		}
		j := i
		for j < len(input) {
			r, n := utf8.DecodeRune(input[j:])
			if isSep(r) {
				break
			}
			j += n
		}
		s, e := trimEdges(input, i, j)
		if s < e {
			pos++
			if lt.whole {
				out = append(out, &analysis.Token{Start: s, End: e, Term: input[s:e:e], Position: pos, Type: analysis.AlphaNumeric})
			} else {
				out = emitParts(out, input, s, e, pos)
			}
		}
		i = j
	}
	return out
}

func isSep(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case '"', '\'', '`', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', '=', '|', '\\', '!', '?', '*', '&', '^', '$', '~':
		return true
	}
	return r < 0x20
}

func trimEdges(b []byte, s, e int) (int, int) {
	for s < e && strings.IndexByte(".:-#+@/%_", b[s]) >= 0 {
		s++
	}
	for e > s && strings.IndexByte(".:-/#@", b[e-1]) >= 0 {
		e--
	}
	return s, e
}

func emitParts(out analysis.TokenStream, b []byte, s, e, pos int) analysis.TokenStream {
	add := func(s, e int) {
		s, e = trimEdges(b, s, e)
		if s >= e {
			return
		}
		out = append(out, &analysis.Token{Start: s, End: e, Term: b[s:e:e], Position: pos, Type: analysis.AlphaNumeric})
	}
	add(s, e)
	// Split on '/' and ':' (paths, URLs, host:port, key:value), then on '.',
	// '-' and '_' for non-numeric parts, then CamelCase.
	for _, part := range splitOn(b, s, e, "/:") {
		if part[0] != s || part[1] != e {
			add(part[0], part[1])
		}
		if numeric(b[part[0]:part[1]]) {
			continue
		}
		sub := splitOn(b, part[0], part[1], ".-_")
		if len(sub) > 1 {
			for _, p := range sub {
				add(p[0], p[1])
			}
		}
		for _, p := range sub {
			if camel := camelParts(b, p[0], p[1]); len(camel) > 1 {
				for _, c := range camel {
					add(c[0], c[1])
				}
			}
		}
	}
	return out
}

func splitOn(b []byte, s, e int, seps string) [][2]int {
	var out [][2]int
	start := s
	for k := s; k <= e; k++ {
		if k == e || strings.IndexByte(seps, b[k]) >= 0 {
			if k > start {
				out = append(out, [2]int{start, k})
			}
			start = k + 1
		}
	}
	return out
}

func numeric(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.') {
			return false
		}
	}
	return true
}

// camelParts splits "FailedCreatePodSandBox" into Failed, Create, Pod, Sand, Box.
func camelParts(b []byte, s, e int) [][2]int {
	var out [][2]int
	start := s
	for k := s + 1; k < e; k++ {
		if b[k] >= 'A' && b[k] <= 'Z' && b[k-1] >= 'a' && b[k-1] <= 'z' {
			out = append(out, [2]int{start, k})
			start = k
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, [2]int{start, e})
}

// markFormat formats highlight fragments as plain text with MarkStart and
// MarkEnd around matched terms. Escaping is the renderer's job.
type markFormat struct{}

func (markFormat) Format(f *highlight.Fragment, locs highlight.TermLocations) string {
	var b strings.Builder
	curr := f.Start
	for _, l := range locs {
		if l == nil || !l.ArrayPositions.Equals(f.ArrayPositions) || l.Start < curr {
			continue
		}
		if l.End > f.End {
			break
		}
		b.Write(f.Orig[curr:l.Start])
		b.WriteString(MarkStart)
		b.Write(f.Orig[l.Start:l.End])
		b.WriteString(MarkEnd)
		curr = l.End
	}
	b.Write(f.Orig[curr:f.End])
	return b.String()
}

// stripMarks removes highlight markers (and other C0 controls except tab
// and newline) from text before it is indexed.
func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
}
