package web_test

import (
	"strings"
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// FuzzRender: whatever a write-up, a highlight fragment or a runbook
// command holds, the HTML made from it never contains "<script".
func FuzzRender(f *testing.F) {
	for _, s := range []string{xssWriteup, "# t\n\n<script>x</script>", "[a](javascript:b)", "<scr<script>ipt>",
		"`<script>`", kb.MarkStart + "<script>" + kb.MarkEnd, "kubectl <script>", "<SCRIPT SRC=//x>", "---\nid: a\n---\n<script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		outs := map[string]string{
			"Markdown":         string(web.Markdown(src)),
			"Writeup(library)": string(web.Writeup("library", src)),
			"Mark":             string(web.Mark(src)),
			"Command":          string(web.Command(src)),
		}
		for name, out := range outs {
			if strings.Contains(strings.ToLower(out), "<script") {
				t.Fatalf("%s(%q) contains <script: %q", name, src, out)
			}
		}
	})
}
