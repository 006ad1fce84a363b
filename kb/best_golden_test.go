package kb_test

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

var updateBest = flag.Bool("update-best", false, "rewrite testdata/best-dev.golden from the current matcher")

// TestBestUnchanged pins what Best returns, incident, signature and score,
// for the write-ups of the user-style development set (whose example lines
// match through clauses) against its own lines, the starter corpora's
// variants and healthy lines, in both modes. It guards changes to how the
// matcher is built and searched that must not change what it finds: the
// golden file was written by the matcher that compiled each clause as a
// signature of its own and compiled the set twice; the text tier's matches
// (signature ids ending in #text) were added when it came.
func TestBestUnchanged(t *testing.T) {
	m := devMatcher(t)
	root := filepath.Join("..", "testdata")
	var lines []string
	for _, row := range tsvRows(t, filepath.Join(root, "corpus", "variants.tsv"), false) {
		lines = append(lines, row[1])
	}
	for _, row := range tsvRows(t, filepath.Join(root, "corpus", "healthy.log"), false) {
		lines = append(lines, strings.Join(row, "\t"))
	}
	for _, f := range []string{"positives.tsv", "negatives-healthy.tsv", "negatives-unknown.tsv"} {
		col := 0
		if f == "positives.tsv" {
			col = 1
		}
		for _, row := range tsvRows(t, filepath.Join(root, "userkb", "dev", f), true) {
			lines = append(lines, row[col])
		}
	}
	var got []string
	var dst []patterns.Match
	for n, l := range lines {
		for _, run := range []struct {
			mode patterns.Mode
			min  float64
			top  int
			name string
		}{{patterns.Stream, kb.PossibleMinScore, 3, "stream"}, {patterns.Query, 0, 1, "query"}} {
			dst = m.Best(l, run.mode, run.min, run.top, dst[:0])
			for _, pm := range dst {
				s := m.Signature(pm.Sig)
				got = append(got, fmt.Sprintf("%d\t%s\t%s\t%s\t%.7f", n, run.name, s.IncidentID, s.ID, pm.Score))
			}
		}
	}
	golden := filepath.Join("testdata", "best-dev.golden")
	if *updateBest {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := tsvRows(t, golden, false)
	if len(got) < 100 {
		t.Fatalf("only %d matches: the set did not load", len(got))
	}
	bad := 0
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			t.Errorf("missing match: %s", strings.Join(want[i], "\t"))
		case i >= len(want):
			t.Errorf("extra match: %s", got[i])
		default:
			g := strings.Split(got[i], "\t")
			ws, _ := strconv.ParseFloat(want[i][4], 64)
			gs, _ := strconv.ParseFloat(g[4], 64)
			if strings.Join(g[:4], "\t") == strings.Join(want[i][:4], "\t") && math.Abs(gs-ws) <= 1e-6 {
				continue
			}
			t.Errorf("match %d: got %s, want %s", i, got[i], strings.Join(want[i], "\t"))
		}
		if bad++; bad >= 20 {
			t.Fatal("too many differences")
		}
	}
}

// devMatcher builds a matcher from the write-ups of the development set.
func devMatcher(t *testing.T) *kb.Matcher { t.Helper(); return devSetMatcher(t, "dev") }

// devSetMatcher is the matcher of one of the user-style development sets
// under testdata/userkb.
func devSetMatcher(t *testing.T, set string) *kb.Matcher {
	t.Helper()
	dir := filepath.Join("..", "testdata", "userkb", set, "writeups")
	var sigs []kb.Signature
	refs := map[string]*kb.IncidentRef{}
	for _, row := range tsvRows(t, filepath.Join(dir, "MANIFEST.tsv"), true) {
		b, err := os.ReadFile(filepath.Join(dir, row[0]))
		if err != nil {
			t.Fatal(err)
		}
		incs, err := writeup.ParseWriteup(row[0], b)
		if err != nil {
			t.Fatalf("%s: %v", row[0], err)
		}
		for _, inc := range incs {
			refs[inc.ID] = inc.Ref()
			sigs = append(sigs, inc.Signatures...)
		}
	}
	m, err := kb.NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tsvRows(t *testing.T, path string, header bool) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for first := true; sc.Scan(); first = false {
		if first && header || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
