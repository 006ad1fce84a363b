package patterns

import (
	"path/filepath"
	"testing"
)

// minerCorpus is the labelled miner corpora and the healthy-cluster corpus:
// kubelet, containerd, application, syslog and nginx lines.
func minerCorpus(b *testing.B) []string {
	files, _ := filepath.Glob("testdata/miner/*.log")
	files = append(files, "../testdata/corpus/healthy.log")
	var lines []string
	for _, f := range files {
		lines = append(lines, readLines(b, f)...)
	}
	return lines
}

// warmMiner returns a miner that has seen lines once.
func warmMiner(lines []string) *Miner {
	m := NewMiner(MinerOptions{})
	for _, l := range lines {
		m.Add(l)
	}
	return m
}

// BenchmarkMinerAdd: one op is one line added to a miner that has seen the
// corpus once, the steady state of a stream whose patterns recur.
func BenchmarkMinerAdd(b *testing.B) {
	n := benchWarmMiner(b, func(m *Miner, line string) { m.Add(line) })
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
}

// benchWarmMiner runs op on a miner that has seen the corpus once, one
// corpus line an op, and returns how many ops ran.
func benchWarmMiner(b *testing.B, op func(m *Miner, line string)) int {
	lines := minerCorpus(b)
	m := warmMiner(lines)
	b.SetBytes(corpusBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		op(m, lines[i%len(lines)])
		i++
	}
	return i
}

// BenchmarkMinerAddCold: a new miner per pass over the corpus, so every
// template is created, widened and merged as the lines come.
func BenchmarkMinerAddCold(b *testing.B) {
	lines := minerCorpus(b)
	b.SetBytes(corpusBytes(lines))
	b.ReportAllocs()
	for b.Loop() {
		m := NewMiner(MinerOptions{})
		for _, l := range lines {
			m.Add(l)
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkMinerAddParallel: Add from GOMAXPROCS goroutines; lines are
// scanned in parallel and assigned under the miner's lock.
func BenchmarkMinerAddParallel(b *testing.B) {
	lines := minerCorpus(b)
	m := warmMiner(lines)
	b.SetBytes(corpusBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.Add(lines[i%len(lines)])
			i++
		}
	})
}

// BenchmarkMinerMatch: looking lines up without adding them.
func BenchmarkMinerMatch(b *testing.B) {
	benchWarmMiner(b, func(m *Miner, line string) { m.Match(line) })
}
