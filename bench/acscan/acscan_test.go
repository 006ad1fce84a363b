// Package acscan compares incidex's matcher with plain literal scans over
// the same lines, side by side in one process: the question the matcher's
// speed target asks ("a line that matches nothing should cost about a
// literal scan"). It is a separate module so that the Aho-Corasick
// libraries it measures do not become dependencies of incidex.
//
//	cd bench/acscan && go test -run '^$' -bench . -cpu 1 -count 6
package acscan

import (
	"fmt"
	"strings"
	"testing"

	cf "github.com/cloudflare/ahocorasick"
	pd "github.com/petar-dambovaliev/aho-corasick"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/patterns"
)

// setup returns the 1,000 synthetic signatures of patterns' benchmarks,
// compiled, their literal texts (each signature's longest literal run, as
// grep -F would need them), and the healthy lines that match none of them.
func setup(tb testing.TB) (*patterns.Set, []string, []string) {
	tb.Helper()
	variants, err := benchgen.VariantLines("../../testdata/corpus/variants.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	texts := benchgen.SyntheticSignatures(variants, 1000)
	defs := make([]patterns.Def, len(texts))
	seen := map[string]bool{}
	var lits []string
	for i, t := range texts {
		defs[i] = patterns.Def{ID: fmt.Sprintf("s%d", i), Group: fmt.Sprintf("inc-%d", i/3), Text: t}
		if l := patterns.FromExample(t, nil).Literals(); len(l) > 0 && len(l[0]) >= 4 && !seen[l[0]] {
			seen[l[0]] = true
			lits = append(lits, l[0])
		}
	}
	set, err := patterns.Compile(defs, patterns.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	healthy, err := benchgen.Lines("../../testdata/corpus/healthy.log", 0)
	if err != nil {
		tb.Fatal(err)
	}
	var lines []string
	for _, l := range healthy {
		if len(set.Match(l, nil)) == 0 {
			lines = append(lines, l)
		}
	}
	return set, lits, lines
}

// BenchmarkNothing: one op is one healthy line that matches none of the
// 1,000 signatures. incidex is the matcher (tolerant of wording drift);
// the others only answer whether any signature's longest literal run
// occurs in the line (lower-cased), which a drift-tolerant matcher cannot
// rely on. hit-rate is the share of lines a literal scan finds something
// in: those would still need matching.
func BenchmarkNothing(b *testing.B) {
	set, lits, lines := setup(b)
	lower := make([]string, len(lits))
	for i, l := range lits {
		lower[i] = strings.ToLower(l)
	}
	blines := make([][]byte, len(lines))
	for i, l := range lines {
		blines[i] = []byte(strings.ToLower(l))
	}
	b.Run("incidex", func(b *testing.B) {
		dst := make([]patterns.Match, 0, 8)
		i := 0
		for b.Loop() {
			dst = set.MatchTop(lines[i%len(lines)], patterns.Stream, 0, 1, dst[:0])
			i++
		}
	})
	scan := func(b *testing.B, contains func([]byte) bool) {
		hit, i := 0, 0
		for b.Loop() {
			if contains(blines[i%len(blines)]) {
				hit++
			}
			i++
		}
		b.ReportMetric(float64(hit)/float64(i), "hit-rate")
	}
	b.Run("ahocorasick-dfa", func(b *testing.B) {
		bld := pd.NewAhoCorasickBuilder(pd.Opts{MatchKind: pd.LeftMostFirstMatch, DFA: true})
		ac := bld.Build(lower)
		scan(b, func(l []byte) bool { return ac.IterByte(l).Next() != nil })
	})
	b.Run("cloudflare-ahocorasick", func(b *testing.B) {
		m := cf.NewStringMatcher(lower)
		scan(b, m.Contains)
	})
}
