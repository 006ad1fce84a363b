package writeup

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/kb"
)

// genWriteups writes n generated write-ups into dir (see benchgen.Writeups).
func genWriteups(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	logs, err := benchgen.VariantLines("../../testdata/corpus/variants.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	files, _, err := benchgen.Writeups(dir, n, logs)
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// BenchmarkIngest10k ingests 10,000 generated write-ups into a real
// knowledge base (SQLite and bleve on disk) and reports write-ups/s.
func BenchmarkIngest10k(b *testing.B) {
	src := b.TempDir()
	files := genWriteups(b, src, 10000)
	ctx := context.Background()
	for b.Loop() {
		k, err := kb.Open(ctx, kb.Options{Dir: filepath.Join(b.TempDir(), "data")})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rep, err := Load(ctx, k, files, LoadOptions{Batch: 500})
		if err != nil || len(rep.Failed) > 0 || len(rep.Incidents) != len(files) {
			b.Fatalf("Load: %v, %d failed, %d incidents", err, len(rep.Failed), len(rep.Incidents))
		}
		b.ReportMetric(float64(len(files))/time.Since(start).Seconds(), "writeups/s")
		_ = k.Close()
	}
}

// BenchmarkSearch10k runs plain-text searches over a 10,000-incident
// knowledge base and reports latency percentiles.
func BenchmarkSearch10k(b *testing.B) {
	src := b.TempDir()
	files := genWriteups(b, src, 10000)
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "data")
	k, err := kb.Open(ctx, kb.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Load(ctx, k, files, LoadOptions{Batch: 500}); err != nil {
		b.Fatal(err)
	}
	// Measure a settled index, as a running server has: reopen it.
	if err := k.Close(); err != nil {
		b.Fatal(err)
	}
	if k, err = kb.Open(ctx, kb.Options{Dir: dir}); err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	queries := []string{"subnet.env", "10.43.0.1", "i/o timeout", "no space left on device", "etcdserver: request timed out",
		"x509 certificate has expired", "FailedCreatePodSandBox flannel", "eviction ephemeral-storage", "ImagePullBackOff", "kubelet certificate rotation"}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := k.Search(ctx, kb.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
