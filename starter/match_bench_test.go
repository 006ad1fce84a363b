package starter_test

import (
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// BenchmarkStarterMatching: real-world-style failure lines against the
// starter knowledge base (44 incidents, ~320 signatures). One op is one line.
func BenchmarkStarterMatching(b *testing.B) {
	benchStarter(b, variantInput(b), 0)
}

// BenchmarkStarterMatchingTop1: the same, asking for the best incident
// only, as the webhook does.
func BenchmarkStarterMatchingTop1(b *testing.B) {
	benchStarter(b, variantInput(b), 1)
}

func variantInput(b *testing.B) []string {
	in, err := benchgen.VariantLines("../testdata/corpus/variants.tsv")
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkStarterMatchHit: the webhook's whole path for a failure line:
// the best incident, then the hit it records (incident, signature,
// captures).
func BenchmarkStarterMatchHit(b *testing.B) {
	in := variantInput(b)
	m := starterMatcher(b, starterIncidents(b))
	dst := make([]patterns.Match, 0, 8)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		line := in[i%len(in)]
		dst = m.Best(line, patterns.Stream, 0, 1, dst[:0])
		for _, pm := range dst {
			_ = m.Hit(line, pm, kb.MatchOptions{})
		}
		i++
	}
}

// BenchmarkStarterNoMatch: healthy-cluster lines against the starter.
func BenchmarkStarterNoMatch(b *testing.B) {
	benchStarter(b, lines(b, "../testdata/corpus/healthy.log"), 0)
}

// benchStarter matches in against the starter, one op a line, asking for
// the best top incidents (0: all) the way the webhook and `incidex match
// -` do (Matcher.Best: signatures, feedback, then the text tier).
func benchStarter(b *testing.B, in []string, top int) {
	m := starterMatcher(b, starterIncidents(b))
	dst := make([]patterns.Match, 0, 8)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = m.Best(in[i%len(in)], patterns.Stream, 0, top, dst[:0])
		i++
	}
}
