package patterns

import "testing"

func BenchmarkDbgPrepare(b *testing.B) {
	lines := readLines(b, "../testdata/corpus/healthy.log")
	i := 0
	start := cpuTime()
	for b.Loop() {
		_ = Prepare(lines[i%len(lines)])
		i++
	}
	reportCPU(b, start, i)
}

func BenchmarkDbgTokenizeOnly(b *testing.B) {
	lines := readLines(b, "../testdata/corpus/healthy.log")
	var texts []string
	for _, l := range lines {
		texts = append(texts, Prepare(l).Text)
	}
	buf := make([]Token, 0, maxTokens)
	i := 0
	start := cpuTime()
	for b.Loop() {
		buf = Tokenize(texts[i%len(texts)], buf[:0])
		i++
	}
	reportCPU(b, start, i)
}

func BenchmarkDbgCandidatesOnly(b *testing.B) {
	s := benchSet(b, 1000)
	lines := readLines(b, "../testdata/corpus/healthy.log")
	var texts []string
	var toks [][]Token
	for _, l := range lines {
		t := Prepare(l).Text
		texts = append(texts, t)
		toks = append(toks, Tokenize(t, nil))
	}
	sc := s.getScratch()
	i := 0
	start := cpuTime()
	for b.Loop() {
		k := i % len(lines)
		sc.toks = toks[k]
		_ = s.candidates(texts[k], Stream, s.minScore, sc, nil)
		i++
	}
	reportCPU(b, start, i)
}
