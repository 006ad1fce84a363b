package writeup

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
)

// An 8 MB write-up (under the default size limit) used to be stored and
// indexed whole: every later match decoded it and every search highlighted
// it. What it keeps is now bounded, and the warnings name the caps.
func TestCapsPerWriteup(t *testing.T) {
	incs, err := ParseWriteup("big.md", benchgen.BigWriteup(8_000_000))
	if err != nil || len(incs) != 1 {
		t.Fatalf("ParseWriteup = %d incidents, %v", len(incs), err)
	}
	inc := incs[0]
	doc, _ := json.Marshal(inc)
	if len(doc) > 2<<20 {
		t.Errorf("the stored incident is %d bytes, want at most 2 MB", len(doc))
	}
	var logBytes int
	for _, b := range inc.Logs {
		for _, l := range b.Lines {
			logBytes += len(l) + 1
		}
	}
	if len(inc.Body) > MaxKeptText+200 || logBytes > MaxLogText || len(inc.RootCause) > MaxFieldText+4 || len(inc.Signatures) > MaxSignatures {
		t.Errorf("kept body %d, log text %d, root cause %d bytes, %d signatures: over the caps", len(inc.Body), logBytes, len(inc.RootCause), len(inc.Signatures))
	}
	all := strings.Join(inc.Warnings, "\n")
	for _, want := range []string{"first 256 KB is kept", "first 256 KB of log text", "300 signatures, the cap per write-up", "longer than 64 KB"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(inc.Body), "of a write-up)") {
		t.Errorf("the kept body does not say where it was cut: …%q", inc.Body[len(inc.Body)-120:])
	}
	// An ordinary write-up keeps everything and gets no warning.
	normal := parseFile(t, "testdata/writeups/rabbitmq-sandbox-flannel.md")[0]
	if len(normal.Warnings) != 0 {
		t.Errorf("an ordinary write-up got warnings %q", normal.Warnings)
	}
}

func TestClipText(t *testing.T) {
	f := func(in string, n int, want string) {
		t.Helper()
		if got := clipText(in, n); got != want {
			t.Errorf("clipText(%q, %d) = %q, want %q", in, n, got, want)
		}
	}
	f("line one\nline two", 12, "line one")
	f("word word word", 12, "word word")
	f("ééééé", 5, "éé") // never half a rune
}
