// Command gencorpus writes a realistic Kubernetes-style log corpus for the
// benchmarks: healthy lines of kubelet, containerd, CNI plugins, etcd,
// ingress and applications (from testdata/corpus/healthy.log) with a
// controlled fraction of known-error lines (from variants.tsv), every line
// with fresh numbers, ids and addresses so no two runs of the same template
// look alike.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/incidex/incidex/bench/benchgen"
)

func main() {
	n := flag.Int("n", 1_000_000, "lines to write")
	frac := flag.Float64("errors", 0.01, "fraction of known-error lines")
	healthy := flag.String("healthy", "testdata/corpus/healthy.log", "healthy lines")
	variants := flag.String("variants", "testdata/corpus/variants.tsv", "labelled error lines (id<TAB>line)")
	seed := flag.Uint64("seed", 1, "random seed")
	writeups := flag.Int("writeups", 0, "instead of lines, write this many Markdown write-ups into -dir, 3 log lines (signatures) each")
	dir := flag.String("dir", "", "directory for -writeups")
	flag.Parse()
	h, err := benchgen.Lines(*healthy, 0)
	if err != nil {
		fail(err)
	}
	v, err := benchgen.VariantLines(*variants)
	if err != nil {
		fail(err)
	}
	r := rand.New(rand.NewPCG(*seed, 42))
	if *writeups > 0 {
		if err := genWriteups(*dir, *writeups, v, r); err != nil {
			fail(err)
		}
		return
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	for range *n {
		src := h
		if r.Float64() < *frac {
			src = v
		}
		fmt.Fprintln(w, vary(src[r.IntN(len(src))], r))
	}
}

// vary gives numbers, ids and addresses fresh digits so lines differ from
// each other while their shapes stay real. Digits glued to a letter (x509,
// k8s, sha256, v1beta1) are vocabulary and stay.
func vary(s string, r *rand.Rand) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] < '0' || b[i] > '9' || (i > 0 && isLetter(b[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j-i >= 2 && (j == len(b) || !isLetter(b[j])) {
			for k := i + 1; k < j; k++ { // keep the first digit: 10.x stays private, 2024 stays a year
				b[k] = byte('0' + r.IntN(10))
			}
		}
		i = j
	}
	return string(b)
}

// genWriteups writes n write-ups into dir for the memory benchmark: each
// has a log block of three error lines, made distinct per write-up by a
// component name, so the knowledge base holds about 3n signatures.
func genWriteups(dir string, n int, variants []string, r *rand.Rand) error {
	if dir == "" {
		return fmt.Errorf("-writeups needs -dir")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\nid: bench-%05d\ntitle: Generated incident %d\ntags: [bench]\n---\n# Generated incident %d\n\n## Symptoms\n\n```log\n", i, i, i)
		for k := range 3 {
			fmt.Fprintf(&b, "%s component%dx%d\n", vary(variants[r.IntN(len(variants))], r), i, k)
		}
		fmt.Fprintf(&b, "```\n\n## Root Cause\n\nGenerated cause %d.\n\n## Fix\n\nGenerated fix %d.\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("bench-%05d.md", i)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gencorpus:", err)
	os.Exit(2)
}
