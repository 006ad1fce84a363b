package writeup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseMarkdown: any Markdown write-up parses to incidents xor an
// error, never a panic, and every incident validates.
func FuzzParseMarkdown(f *testing.F) {
	for _, p := range []string{"testdata/writeups/rabbitmq-sandbox-flannel.md"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("---\nid: x\nsignatures: ['a <ip> b']\n---\n# T\n\n## Root Cause\n\nNot stated\n"))
	f.Add([]byte("# T\n\n```\nWarning  X  y failed\n   continued\n```\n\"quoted \"nested\" error failed here\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		incs, err := ParseWriteup("fuzz.md", b)
		if err != nil {
			return
		}
		for _, inc := range incs {
			if inc.ID == "" || inc.Title == "" {
				t.Fatalf("incident without id or title: %+v", inc)
			}
		}
	})
}

// FuzzParseLibrary: incident-library text never panics the parser.
func FuzzParseLibrary(f *testing.F) {
	if b, err := os.ReadFile("testdata/writeups/IL-0142-example.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("IL-1 Org · 2024-01-01x\nSymptom ? aB\nRoot cause ? Not stated\n–\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseLibrary("fuzz.txt", b)
	})
}

// FuzzParseHTML: any HTML page parses to an incident xor an error, never
// a panic, and its Markdown has no raw <script or javascript: link.
func FuzzParseHTML(f *testing.F) {
	files, _ := filepath.Glob("testdata/collection/*.htm*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("<ul><li><pre>```x</pre><blockquote><ol><li>1. a</ol></blockquote></ul><a href=' javascript:x'>y</a>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		md, err := HTMLToMarkdown(b)
		if err != nil {
			return
		}
		if strings.Contains(strings.ToLower(md), "](javascript:") && !strings.Contains(md, `\](`) {
			t.Fatalf("javascript: link in %q", md)
		}
		p, err := ParseFile("fuzz.html", b)
		if err != nil {
			return
		}
		for _, inc := range p.Incidents {
			if inc.ID == "" || inc.Title == "" {
				t.Fatalf("incident without id or title: %+v", inc)
			}
		}
	})
}
