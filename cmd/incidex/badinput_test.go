package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputCatalogueCLI: the same bad inputs through the CLI. Each
// gets its documented exit code (0 fine, 1 nothing found or some files
// failed, 2 error) and a one-line error naming what was wrong, and the
// knowledge base is unchanged.
func TestBadInputCatalogueCLI(t *testing.T) {
	dir := t.TempDir()
	src := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var heads strings.Builder
	heads.WriteString("---\nid: many-headings\ntitle: Many headings\n---\n")
	for i := range 10000 {
		fmt.Fprintf(&heads, "## Heading %d\n\ntext %d\n\n", i, i)
	}
	binFile := write("binary.md", []byte("\x7fELF\x02\x01\x01\x00\x00\x00"))
	bigFile := write("huge.md", bytes.Repeat([]byte("# big\n"), 100<<20/6))
	badUTF := write("latin1.md", []byte("# caf\xe9 cr\xe8me\n"))
	headsFile := write("headings.md", []byte(heads.String()))
	if r := incidex(t, dir, "", "list", "--no-starter"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  string // on stderr (errors) or stdout
		adds  int
	}{
		{"binary file to ingest", []string{"ingest", binFile}, "", 1, "binary.md: binary file (contains NUL bytes)", 0},
		{"write-up of 100 MB", []string{"ingest", bigFile}, "", 1, "huge.md: file is 104857596 bytes, over the 8388608-byte limit", 0},
		{"invalid UTF-8 write-up", []string{"ingest", badUTF}, "", 1, "latin1.md: not valid UTF-8 (first bad byte at offset 5)", 0},
		{"missing path", []string{"ingest", filepath.Join(src, "nope.md")}, "", 1, "nope.md: no such file or directory", 0},
		{"Markdown with 10,000 headings", []string{"ingest", headsFile}, "", 0, "ingested 1 incidents", 1},
		{"unknown incident id", []string{"show", "no-such-incident"}, "", 2, `incident "no-such-incident": not found`, 0},
		{"malformed search query", []string{"search", "--syntax", `title:"unclosed`}, "", 2, "bad query syntax", 0},
		{"empty search query", []string{"search", " "}, "", 2, "no query given", 0},
		{"NUL bytes and invalid UTF-8 to match", []string{"match", "nul\x00 and \xff\xfe bytes"}, "", 1, "no known incident matches", 0},
		{"50 MB single line on stdin", []string{"match", "-"}, strings.Repeat("x", 50<<20), 2, "read stdin: line 1: bufio.Scanner: token too long", 0},
		{"bad --min-score", []string{"match", "--min-score", "-1", "x"}, "", 2, "--min-score -1: want a number from 0 to 1", 0},
		{"unknown flag", []string{"ingest", "--frobnicate", src}, "", 2, "flag provided but not defined: -frobnicate", 0},
		{"bad log level", []string{"list", "--log-level", "loud"}, "", 2, `log level "loud": want debug, info, warn or error`, 0},
		{"serve with a bad address", []string{"serve", "--addr", "nonsense"}, "", 2, `--addr "nonsense"`, 0},
	}
	count := func() int {
		r := incidex(t, dir, "", "list")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var n int
		fmt.Sscanf(lines[len(lines)-1], "%d incidents", &n)
		return n
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count()
			r := incidex(t, dir, tt.stdin, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %.300s\nstderr: %.300s", r.code, tt.code, r.stdout, r.stderr)
			}
			out := r.stdout
			if tt.code == 2 || (tt.code == 1 && r.stderr != "") {
				out = r.stderr
				if strings.Count(strings.TrimSpace(out), "\n") > 0 {
					t.Errorf("error is more than one line: %q", out)
				}
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output %.300q, want %q", out, tt.want)
			}
			if got := count(); got != before+tt.adds {
				t.Errorf("%d incidents after, %d before: want %d more", got, before, tt.adds)
			}
		})
	}
}
