package patterns

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// tokenDigest is a digest of what Tokenize makes of a line: every token's
// range, kind and hash.
func tokenDigest(line string) string {
	h := fnv.New64a()
	for _, t := range Tokenize(line, nil) {
		fmt.Fprintf(h, "%d %d %d %x;", t.Start, t.End, t.Kind, t.Hash)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func renderTokens(line string) string {
	var b strings.Builder
	for _, t := range Tokenize(line, nil) {
		fmt.Fprintf(&b, "[%s %q] ", t.Kind, t.Text(line))
	}
	return b.String()
}

// TestTokenizeGolden pins the tokens of every corpus line, raw and
// prepared, so a faster tokenizer cannot change what it produces unnoticed.
// After a deliberate change: go test ./patterns -run TestTokenizeGolden -update.
func TestTokenizeGolden(t *testing.T) {
	lines := append(readLines(t, "../testdata/corpus/healthy.log"), variantLines(t)...)
	var got strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&got, "%s %s\n", tokenDigest(l), tokenDigest(Prepare(l).Text))
	}
	const path = "testdata/tokens.golden"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	if len(gl) != len(wl) {
		t.Fatalf("%d lines, golden has %d", len(gl), len(wl))
	}
	bad := 0
	for i := range gl {
		if gl[i] != wl[i] && bad < 5 {
			bad++
			t.Errorf("corpus line %d: tokens changed\n line:   %q\n tokens: %s", i+1, lines[i], renderTokens(Prepare(lines[i]).Text))
		}
	}
}
