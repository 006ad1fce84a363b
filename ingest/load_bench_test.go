package ingest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
)

// genWriteups writes n generated Markdown write-ups into dir: front matter,
// prose, a log block built from the variant corpus with fresh values, and a
// runbook block, about 2 KB each.
func genWriteups(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	f, err := os.Open("../testdata/corpus/variants.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	var logs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if _, l, ok := strings.Cut(sc.Text(), "\t"); ok {
			logs = append(logs, l)
		}
	}
	_ = f.Close()
	// Prose words follow a Zipf distribution over a 5,000-word vocabulary,
	// as topic words in real write-ups do: a few words in most documents,
	// most words in few.
	words := strings.Fields("the a to of and in node pod kubelet network storage timeout certificate latency queue broker cache replica " +
		"leader shard volume mount sandbox registry image quota memory disk rollout deploy ingress gateway dns " +
		"upstream resolver etcd raft snapshot compaction eviction scheduler taint toleration secret configmap")
	for len(words) < 5000 {
		words = append(words, fmt.Sprintf("%s%s%d", []string{"svc", "kafka", "pg", "auth", "billing", "edge", "batch", "ml"}[len(words)%8], []string{"lag", "shard", "pool", "queue", "lease", "quota"}[len(words)%6], len(words)))
	}
	r := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(words)-1))
	sentence := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = words[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	files := make([]string, n)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\nid: gen-%05d\ntitle: %s incident %d\ntags: [%s, %s]\n---\n", i, sentence(3), i, words[zipf.Uint64()], words[zipf.Uint64()])
		fmt.Fprintf(&b, "# %s\n\n## Summary\n\n%s.\n\n## Symptoms\n\n```log\n", sentence(4), sentence(40))
		for k := 0; k < 3; k++ {
			l := logs[r.IntN(len(logs))]
			fmt.Fprintf(&b, "%s component%d-%d\n", strings.ReplaceAll(l, "10.", fmt.Sprintf("10.%d.", r.IntN(200))), i, k)
		}
		fmt.Fprintf(&b, "```\n\n## Root Cause\n\n%s.\n\n## How to confirm\n\n```bash\nkubectl -n <namespace> describe pod <pod>\njournalctl -u kubelet --since -1h | grep %s\n```\n\n## Fix\n\n%s.\n", sentence(30), words[zipf.Uint64()], sentence(25))
		files[i] = filepath.Join(dir, fmt.Sprintf("gen-%05d.md", i))
		if err := os.WriteFile(files[i], []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
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
