package patterns

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
)

func readLines(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// benchDefs builds n signatures from the variant corpus: the real lines
// first, then variants of them with some words replaced, the way a large
// knowledge base holds many similar signatures (benchgen.SyntheticSignatures).
func benchDefs(tb testing.TB, n int) []Def {
	texts := benchgen.SyntheticSignatures(variantLines(tb), n)
	defs := make([]Def, 0, n)
	for i, text := range texts {
		defs = append(defs, Def{ID: fmt.Sprintf("s%d", i), Group: fmt.Sprintf("inc-%d", i/3), Text: text})
	}
	return defs
}

func benchSet(b *testing.B, n int) *Set {
	s, err := Compile(benchDefs(b, n), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func corpusBytes(lines []string) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}

// benchMatch matches lines in turn, one op a line, and reports CPU time
// per line beside wall time.
func benchMatch(b *testing.B, s *Set, lines []string) { benchMatchTop(b, s, lines, 0) }

// benchMatchTop is benchMatch asking for the best top incidents (0: all).
func benchMatchTop(b *testing.B, s *Set, lines []string, top int) {
	b.SetBytes(corpusBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	dst := make([]Match, 0, 8)
	i := 0
	start := cpuTime()
	for b.Loop() {
		dst = s.MatchTop(lines[i%len(lines)], Stream, 0, top, dst[:0])
		i++
	}
	reportCPU(b, start, i)
}

// BenchmarkMatchNoMatch: healthy-cluster lines against 1,000 signatures,
// the common case of a live stream. One op is one line.
func BenchmarkMatchNoMatch(b *testing.B) {
	s := benchSet(b, 1000)
	lines := readLines(b, "../testdata/corpus/healthy.log")
	benchMatch(b, s, lines)
}

// BenchmarkMatchNothing: the healthy lines that match none of the 1,000
// signatures. The synthetic signatures are made from real lines, so 69 of
// the 2,200 healthy lines do match one; MatchNoMatch keeps them, this
// leaves them out: it is the cost of a line that matches nothing.
func BenchmarkMatchNothing(b *testing.B) {
	s := benchSet(b, 1000)
	var lines []string
	for _, l := range readLines(b, "../testdata/corpus/healthy.log") {
		if len(s.Match(l, nil)) == 0 {
			lines = append(lines, l)
		}
	}
	benchMatch(b, s, lines)
}

// BenchmarkMatchMatching: known-error lines against 1,000 signatures, all
// incidents above the threshold (the adversarial set gives 13 per line).
func BenchmarkMatchMatching(b *testing.B) {
	benchMatchTop(b, benchSet(b, 1000), variantLines(b), 0)
}

// BenchmarkMatchMatchingTop1: the best incident only, what the webhook
// records and `incidex match --quiet` counts.
func BenchmarkMatchMatchingTop1(b *testing.B) {
	benchMatchTop(b, benchSet(b, 1000), variantLines(b), 1)
}

// BenchmarkMatchMatchingTop3: the best three, `incidex match`'s default.
func BenchmarkMatchMatchingTop3(b *testing.B) {
	benchMatchTop(b, benchSet(b, 1000), variantLines(b), 3)
}

func variantLines(tb testing.TB) []string {
	var lines []string
	for _, l := range readLines(tb, "../testdata/corpus/variants.tsv") {
		if _, line, ok := strings.Cut(l, "\t"); ok {
			lines = append(lines, line)
		}
	}
	return lines
}

// BenchmarkTokenize: the tokenizer alone over healthy lines.
func BenchmarkTokenize(b *testing.B) {
	lines := readLines(b, "../testdata/corpus/healthy.log")
	b.SetBytes(corpusBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	buf := make([]Token, 0, maxTokens)
	i := 0
	start := cpuTime()
	for b.Loop() {
		p := Prepare(lines[i%len(lines)])
		buf = Tokenize(p.Text, buf[:0])
		i++
	}
	reportCPU(b, start, i)
}

// BenchmarkCompile10k: compiling 10,000 signatures.
func BenchmarkCompile10k(b *testing.B) {
	defs := benchDefs(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(defs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
