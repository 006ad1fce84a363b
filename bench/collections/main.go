// Command collections measures knowledge-base search on a collection of
// postmortems, side by side with a plain TF-IDF cosine over the raw files.
//
//	go run ./bench/collections -dir DIR -queries QUERIES.tsv [-v]
//
// It ingests every write-up under DIR into an empty data directory (no
// starter knowledge base), runs each query of QUERIES.tsv
// (file<TAB>kind<TAB>query; file is a path under DIR, kind a label such as
// "keywords" or "title") the way `incidex search` does, and prints top-1
// and top-3 per kind for incidex and for TF-IDF, and search latency.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
)

type query struct{ file, kind, text string }

func main() {
	dir := flag.String("dir", "", "directory of write-ups")
	qfile := flag.String("queries", "", "queries TSV: file<TAB>kind<TAB>query")
	verbose := flag.Bool("v", false, "list the queries incidex or TF-IDF missed at top 1")
	flag.Parse()
	if *dir == "" || *qfile == "" {
		fmt.Fprintln(os.Stderr, "usage: collections -dir DIR -queries QUERIES.tsv [-v]")
		os.Exit(2)
	}
	if err := run(*dir, *qfile, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "collections:", err)
		os.Exit(1)
	}
}

func run(dir, qfile string, verbose bool) error {
	ctx := context.Background()
	qs, err := readQueries(qfile)
	if err != nil {
		return err
	}
	data, err := os.MkdirTemp("", "incidex-collections-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	k, err := kb.Open(ctx, kb.Options{Dir: data})
	if err != nil {
		return err
	}
	defer k.Close()
	files, errs := writeup.Collect([]string{dir})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	start := time.Now()
	rep, err := writeup.Load(ctx, k, files, writeup.LoadOptions{})
	if err != nil {
		return err
	}
	for _, f := range rep.Failed {
		fmt.Fprintln(os.Stderr, "ingest:", f)
	}
	ids := map[string][]string{} // file under dir → its incident ids
	causes := map[string]int{}
	for _, fr := range rep.PerFile {
		rel, _ := filepath.Rel(dir, fr.Path)
		for _, inc := range fr.Incidents {
			ids[rel] = append(ids[rel], inc.ID)
			causes[inc.Cause]++
		}
	}
	fmt.Printf("ingested %d files, %d incidents in %v; root cause by: %v\n", len(files), len(rep.Incidents), time.Since(start).Round(time.Millisecond), causes)
	tf := newTFIDF(files, dir)
	type score struct{ n, top1, top3, tfTop1, tfTop3 int }
	byKind := map[string]*score{}
	var lat []time.Duration
	for _, q := range qs {
		want := ids[q.file]
		if len(want) == 0 {
			return fmt.Errorf("query %q: no incident from file %s", q.text, q.file)
		}
		t0 := time.Now()
		res, err := k.Search(ctx, kb.SearchRequest{Query: q.text, Size: 10})
		lat = append(lat, time.Since(t0))
		if err != nil {
			return fmt.Errorf("search %q: %w", q.text, err)
		}
		got := make([]string, 0, len(res.Hits))
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		r := rank(got, want)
		tr := rank(tf.search(q.text), []string{q.file})
		s := byKind[q.kind]
		if s == nil {
			s = &score{}
			byKind[q.kind] = s
		}
		s.n++
		s.top1 += b2i(r == 1)
		s.top3 += b2i(r >= 1 && r <= 3)
		s.tfTop1 += b2i(tr == 1)
		s.tfTop3 += b2i(tr >= 1 && tr <= 3)
		if verbose && (r != 1 || tr != 1) {
			fmt.Printf("  %-9s incidex rank %-2s tfidf rank %-2s %s  %q  incidex top: %v\n", q.kind, rs(r), rs(tr), q.file, q.text, got[:min(3, len(got))])
		}
	}
	kinds := make([]string, 0, len(byKind))
	for kd := range byKind {
		kinds = append(kinds, kd)
	}
	sort.Strings(kinds)
	fmt.Printf("%-10s %5s  %-15s  %-15s\n", "kind", "n", "incidex t1/t3", "tf-idf t1/t3")
	for _, kd := range kinds {
		s := byKind[kd]
		fmt.Printf("%-10s %5d  %.3f / %.3f    %.3f / %.3f\n", kd, s.n, frac(s.top1, s.n), frac(s.top3, s.n), frac(s.tfTop1, s.n), frac(s.tfTop3, s.n))
	}
	slices.Sort(lat)
	fmt.Printf("search latency over %d queries: p50 %v, p99 %v\n", len(lat), lat[len(lat)/2], lat[len(lat)*99/100])
	return nil
}

func readQueries(path string) ([]query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []query
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.SplitN(line, "\t", 3)
		if len(p) != 3 || strings.TrimSpace(p[2]) == "" {
			return nil, fmt.Errorf("%s:%d: want file<TAB>kind<TAB>query", path, n)
		}
		out = append(out, query{file: filepath.Clean(p[0]), kind: p[1], text: p[2]})
	}
	return out, sc.Err()
}

// rank is the 1-based position of the first of want in got, or 0.
func rank(got, want []string) int {
	for i, g := range got {
		if slices.Contains(want, g) {
			return i + 1
		}
	}
	return 0
}

func rs(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprint(r)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func frac(a, n int) float64 { return float64(a) / float64(max(n, 1)) }

// tfidf is the baseline: a plain TF-IDF cosine over the raw files (front
// matter, markup and all), words split at anything that is not a letter
// or a digit, no stop words, no stemming.
type tfidf struct {
	names []string
	vecs  []map[string]float64
	idf   map[string]float64
}

func newTFIDF(files []string, dir string) *tfidf {
	t := &tfidf{idf: map[string]float64{}}
	df := map[string]int{}
	var counts []map[string]int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(dir, f)
		c := termCounts(string(b))
		for w := range c {
			df[w]++
		}
		t.names, counts = append(t.names, rel), append(counts, c)
	}
	for w, n := range df {
		t.idf[w] = math.Log(float64(len(t.names)) / float64(n))
	}
	for _, c := range counts {
		t.vecs = append(t.vecs, t.vector(c))
	}
	return t
}

func (t *tfidf) vector(c map[string]int) map[string]float64 {
	v, norm := make(map[string]float64, len(c)), 0.0
	for w, n := range c {
		x := float64(n) * t.idf[w]
		v[w], norm = x, norm+x*x
	}
	for w := range v {
		v[w] /= math.Sqrt(norm) + 1e-12
	}
	return v
}

// search returns the file names, best cosine first (ties by name).
func (t *tfidf) search(q string) []string {
	qv := t.vector(termCounts(q))
	type hit struct {
		name string
		s    float64
	}
	hits := make([]hit, len(t.names))
	for i, dv := range t.vecs {
		s := 0.0
		for w, x := range qv {
			s += x * dv[w]
		}
		hits[i] = hit{t.names[i], s}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].s > hits[b].s })
	out := make([]string, 0, 10)
	for _, h := range hits[:min(10, len(hits))] {
		out = append(out, h.name)
	}
	return out
}

func termCounts(s string) map[string]int {
	c := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		c[w]++
	}
	return c
}
