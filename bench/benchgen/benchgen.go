// Package benchgen generates the knowledge bases the benchmarks load: many
// Markdown write-ups in the style of real ones, with log lines taken from
// the labelled variant corpus.
package benchgen

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Lines returns the non-blank lines of a file, at most max of them (0: all).
func Lines(path string, max int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && (max <= 0 || len(out) < max) {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out, sc.Err()
}

// VariantLines returns the log lines of a variants.tsv (label<TAB>line).
func VariantLines(path string) ([]string, error) {
	rows, err := Lines(path, 0)
	for i, r := range rows {
		_, rows[i], _ = strings.Cut(r, "\t")
	}
	return rows, err
}

// SyntheticSignatures returns n signature texts made from real error
// lines: the lines first, then variants of them with 40% of their words
// (at least two) replaced by made-up component names, the way a large
// knowledge base holds many similar signatures that share vocabulary but
// not messages. The same lines and n give the same texts.
func SyntheticSignatures(lines []string, n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		text := lines[i%len(lines)]
		if i >= len(lines) {
			words := strings.Fields(text)
			for k := 0; k < max(2, len(words)*2/5); k++ {
				j := r.IntN(len(words))
				words[j] = fmt.Sprintf("component%dx%d", i, k)
			}
			text = strings.Join(words, " ")
		}
		out = append(out, text)
	}
	return out
}

// Writeups writes n generated write-ups into dir, about 2 KB each: front
// matter, prose, a log block of three lines from logs with fresh addresses,
// a root cause, a runbook block and a fix. Prose words follow a Zipf
// distribution over a 5,000-word vocabulary, as topic words in real
// write-ups do: a few words in most documents, most words in few. The same
// n gives the same files. It returns the paths and the incident ids.
func Writeups(dir string, n int, logs []string) (files, ids []string, err error) {
	if len(logs) == 0 {
		return nil, nil, fmt.Errorf("benchgen: no log lines")
	}
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
	for i := range n {
		var b strings.Builder
		id := fmt.Sprintf("gen-%05d", i)
		fmt.Fprintf(&b, "---\nid: %s\ntitle: %s incident %d\ntags: [%s, %s]\n---\n", id, sentence(3), i, words[zipf.Uint64()], words[zipf.Uint64()])
		fmt.Fprintf(&b, "# %s\n\n## Summary\n\n%s.\n\n## Symptoms\n\n```log\n", sentence(4), sentence(40))
		for k := 0; k < 3; k++ {
			l := logs[r.IntN(len(logs))]
			fmt.Fprintf(&b, "%s component%d-%d\n", strings.ReplaceAll(l, "10.", fmt.Sprintf("10.%d.", r.IntN(200))), i, k)
		}
		fmt.Fprintf(&b, "```\n\n## Root Cause\n\n%s.\n\n## How to confirm\n\n```bash\nkubectl -n <namespace> describe pod <pod>\njournalctl -u kubelet --since -1h | grep %s\n```\n\n## Fix\n\n%s.\n", sentence(30), words[zipf.Uint64()], sentence(25))
		p := filepath.Join(dir, id+".md")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return nil, nil, err
		}
		files, ids = append(files, p), append(ids, id)
	}
	return files, ids, nil
}
