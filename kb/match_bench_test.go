package kb_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// A knowledge base of 3,900 generated write-ups with three example lines
// each (about 11,000 signatures, each matching through its clauses too):
// what users' own write-ups add up to in a large team.
var big struct {
	once sync.Once
	sigs []kb.Signature
	refs map[string]*kb.IncidentRef
	err  error
}

func bigKB(b *testing.B) ([]kb.Signature, map[string]*kb.IncidentRef) {
	b.Helper()
	big.once.Do(func() {
		logs, err := benchgen.VariantLines("../testdata/corpus/variants.tsv")
		if err != nil {
			big.err = err
			return
		}
		dir, err := os.MkdirTemp("", "kb10k")
		if err != nil {
			big.err = err
			return
		}
		defer os.RemoveAll(dir)
		files, _, err := benchgen.Writeups(dir, 3900, logs)
		if err != nil {
			big.err = err
			return
		}
		big.refs = map[string]*kb.IncidentRef{}
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				big.err = err
				return
			}
			incs, err := writeup.ParseWriteup(filepath.Base(f), body)
			if err != nil {
				big.err = err
				return
			}
			for _, inc := range incs {
				big.refs[inc.ID] = inc.Ref()
				big.sigs = append(big.sigs, inc.Signatures...)
			}
		}
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.sigs, big.refs
}

// BenchmarkNewMatcherWriteups10k: building the matcher of the generated knowledge
// base, clauses included.
func BenchmarkNewMatcherWriteups10k(b *testing.B) {
	sigs, refs := bigKB(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kb.NewMatcher(sigs, refs, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch10kNoMatch: healthy lines against the generated knowledge
// base, best incident only, as `incidex match -` asks. One op is one line.
func BenchmarkMatch10kNoMatch(b *testing.B) {
	lines, err := benchgen.Lines("../testdata/corpus/healthy.log", 0)
	if err != nil {
		b.Fatal(err)
	}
	bench10k(b, lines)
}

// BenchmarkMatch10kMatching: failure lines against it.
func BenchmarkMatch10kMatching(b *testing.B) {
	lines, err := benchgen.VariantLines("../testdata/corpus/variants.tsv")
	if err != nil {
		b.Fatal(err)
	}
	bench10k(b, lines)
}

func bench10k(b *testing.B, lines []string) {
	sigs, refs := bigKB(b)
	m, err := kb.NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d signatures, %d compiled with their clauses", len(sigs), m.Len())
	dst := make([]patterns.Match, 0, 4)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = m.Best(lines[i%len(lines)], patterns.Stream, 0, 1, dst[:0])
		i++
	}
}
