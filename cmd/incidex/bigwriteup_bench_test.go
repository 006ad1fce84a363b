package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
)

// cli runs one command line in-process on data directory dir.
func cli(tb testing.TB, dir string, args ...string) (int, string, string) {
	tb.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "INCIDEX_DATA" {
			return dir
		}
		return ""
	}}
	code := run(context.Background(), args, e)
	return code, out.String(), errb.String()
}

// bigKB is a data directory with the starter knowledge base and, with
// big, one write-up of 8,000,000 bytes (under the 8 MiB default limit):
// a pasted log dump, then pages of prose.
func bigKB(tb testing.TB, big bool) string {
	tb.Helper()
	dir := tb.TempDir()
	if code, _, stderr := cli(tb, dir, "list"); code != 0 {
		tb.Fatalf("list: %s", stderr)
	}
	if !big {
		return dir
	}
	f := filepath.Join(tb.TempDir(), "big-dump.md")
	if err := os.WriteFile(f, benchgen.BigWriteup(8_000_000), 0o644); err != nil {
		tb.Fatal(err)
	}
	if code, _, stderr := cli(tb, dir, "ingest", f); code != 0 {
		tb.Fatalf("ingest: %s", stderr)
	}
	return dir
}

// BenchmarkLookupBigWriteup: what one CLI lookup costs (open the data
// directory, build the matcher, match; or search) in the starter knowledge
// base, and in the same with one 8 MB write-up added. One op is one
// command. The two should be close: one write-up must not slow every
// lookup down.
func BenchmarkLookupBigWriteup(b *testing.B) {
	lookups := []struct {
		name string
		args []string
	}{
		{"match-signature", []string{"match", "subnet.env: no such file or directory"}},
		{"match-none", []string{"match", "--quiet", "completely unrelated words here"}},
		{"match-fulltext", []string{"match", "zephyr quasar nimbus"}},
		{"search", []string{"search", "zephyr quasar"}},
	}
	for _, kbName := range []string{"starter", "starter+8MB"} {
		dir := bigKB(b, kbName != "starter")
		for _, l := range lookups {
			b.Run(kbName+"/"+l.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if code, _, stderr := cli(b, dir, l.args...); code == 2 {
						b.Fatalf("%q: %s", l.args, stderr)
					}
				}
			})
		}
	}
}
