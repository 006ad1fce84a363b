package starter_test

import (
	"strings"
	"testing"

	"github.com/incidex/incidex/patterns"
)

// BenchmarkStarterMatching: real-world-style failure lines against the
// starter knowledge base (44 incidents, ~320 signatures). One op is one line.
func BenchmarkStarterMatching(b *testing.B) {
	var in []string
	for _, l := range lines(b, "../testdata/corpus/variants.tsv") {
		_, line, _ := strings.Cut(l, "\t")
		in = append(in, line)
	}
	benchStarter(b, in)
}

// BenchmarkStarterNoMatch: healthy-cluster lines against the starter.
func BenchmarkStarterNoMatch(b *testing.B) {
	benchStarter(b, lines(b, "../testdata/corpus/healthy.log"))
}

// benchStarter matches in against the starter, one op a line.
func benchStarter(b *testing.B, in []string) {
	set := starterMatcher(b, starterIncidents(b)).Set()
	dst := make([]patterns.Match, 0, 8)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = set.Match(in[i%len(in)], dst[:0])
		i++
	}
}
