package writeup

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/incidex/incidex/kb"
)

// A hostile page keeps its text and loses everything active: no script,
// frame, object, form or event handler survives, and no javascript: or
// data: link; text that looks like markup stays text.
func TestHTMLHostileInert(t *testing.T) {
	b, err := os.ReadFile("testdata/collection/pm-d04-hostile.html")
	if err != nil {
		t.Fatal(err)
	}
	md, err := HTMLToMarkdown(b)
	if err != nil {
		t.Fatal(err)
	}
	// pwned=11 to 14 are text of the page (escaped markup, code); every
	// other one is in a script, an attribute or a link, and must be gone.
	for _, n := range []string{"=1<", "=1)", "=2", "=3", "=4", "=5", "=6", "=7", "=8", "=9", "=10", "=15", "=16", "=17", "=18", "=19", "=20", "=21", "title="} {
		if strings.Contains(md, "pwned"+n) || (n == "title=" && strings.Contains(md, "document.title")) {
			t.Errorf("Markdown of the hostile page keeps pwned%s:\n%s", n, md)
		}
	}
	if regexp.MustCompile(`(^|[^\\])\]\((?i:javascript|data):`).MatchString(md) {
		t.Errorf("Markdown has a javascript: or data: link:\n%s", md)
	}
	// '<' that could open a tag is escaped outside code.
	if regexp.MustCompile(`(^|[^\\])<script`).MatchString(proseOnly(md)) {
		t.Errorf("unescaped <script in prose:\n%s", md)
	}
	for _, keep := range []string{"event handlers", "[a good link](https://example.org/ok)", `webhook token rejected: signature mismatch`} {
		if !strings.Contains(md, keep) {
			t.Errorf("Markdown lacks %q:\n%s", keep, md)
		}
	}
}

// proseOnly drops fenced code blocks, whose content is shown as text.
func proseOnly(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, "> "), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// HTML structure carries over: headings give sections, <pre> a code
// block whose log lines become signatures, <code> inline code, lists and
// links; navigation, breadcrumbs and the footer are dropped.
func TestHTMLConfluenceExport(t *testing.T) {
	b, err := os.ReadFile("testdata/collection/pm-d01-brightcart-confluence.html")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseFile("pm-d01.html", b)
	if err != nil {
		t.Fatal(err)
	}
	inc := p.Incidents[0]
	if inc.Format != "html" || inc.Title != "Search cluster red after a full disk" {
		t.Errorf("format %q title %q", inc.Format, inc.Title)
	}
	if inc.CauseFrom != kb.CauseFromSection || !strings.Contains(inc.RootCause, "flood-stage disk watermark") {
		t.Errorf("root cause %s %q", inc.CauseFrom, inc.RootCause)
	}
	if !strings.Contains(inc.Fix, "- Deleted the old log indices.") {
		t.Errorf("fix %q, want the list", inc.Fix)
	}
	if len(inc.Signatures) == 0 || !strings.Contains(inc.Signatures[0].Text, "cluster_block_exception") {
		t.Errorf("signatures %v, want the <pre> log line", inc.Signatures)
	}
	if len(inc.Logs) == 0 || inc.Logs[0].Class != ClassLog {
		t.Errorf("logs %v, want the <pre> block as a log block", inc.Logs)
	}
	for _, chrome := range []string{"Powered by a wiki", "Postmortems", "analytics.js", "Created by Ravi"} {
		if chrome == "Created by Ravi" {
			continue // page metadata is text of the page, kept
		}
		if strings.Contains(inc.Body, chrome) {
			t.Errorf("body keeps page chrome %q:\n%s", chrome, inc.Body)
		}
	}
	if want := []string{"elasticsearch", "disk watermark", "read-only index"}; strings.Join(inc.Tags, ",") != strings.Join(want, ",") {
		t.Errorf("tags %q, want %q from <meta name=keywords>", inc.Tags, want)
	}
}

func TestIsHTML(t *testing.T) {
	f := func(name, data string, want bool) {
		t.Helper()
		if got := IsHTML(name, []byte(data)); got != want {
			t.Errorf("IsHTML(%q, %q) = %v, want %v", name, data, got, want)
		}
	}
	f("a.html", "anything", true)
	f("a.HTM", "anything", true)
	f("a.md", "  <!DOCTYPE html><p>x", true)
	f("a.txt", "<html><body>x", true)
	f("a.md", "# Title\n\n<div>inline html in markdown</div>", false)
}

// Google Docs marks code with a class its style sheet sets in a monospace
// font, not with <code> or <pre>: such a span is inline code, such a
// paragraph a code block.
func TestHTMLMonospaceClassesAreCode(t *testing.T) {
	page := `<html><head><style type="text/css">.c1{font-weight:700}.c2{font-family:"Courier New"}.c3{background-color:#f3f3f3;font-family:"Courier New";font-size:9pt}</style></head>
<body><p><span>Incident note</span></p>
<h2><span>What happened</span></h2>
<p><span>Every login failed: Redis answered each write with </span><span class="c2">NOREPLICAS Not enough good replicas to write</span><span>. Reads were fine.</span></p>
<p class="c3"><span>redis-cli CONFIG GET min-replicas-to-write</span><br><span>redis-cli INFO replication</span></p>
<p><span class="c1">Not code</span><span style="font-family:Consolas"> set_config(x)</span></p>
</body></html>`
	md, err := HTMLToMarkdown([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`NOREPLICAS Not enough good replicas to write`", "```\nredis-cli CONFIG GET min-replicas-to-write\nredis-cli INFO replication\n```", "`set_config(x)`"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "`Not code`") {
		t.Errorf("a bold span became code:\n%s", md)
	}
	inc, _, err := ParseHTML("note.html", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(inc.Signatures) != 1 || !strings.Contains(inc.Signatures[0].Text, "NOREPLICAS") {
		t.Errorf("signatures %+v, want the monospace error", inc.Signatures)
	}
}

// Confluence's storage format keeps a code block's text in CDATA, which an
// HTML parser drops as a comment: the block is its code, and its text
// stays text.
func TestConfluenceStorageFormatCode(t *testing.T) {
	page := `<h2>What happened</h2>
<p>The nightly export failed. The job log said:</p>
<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">text</ac:parameter><ac:plain-text-body><![CDATA[2024-03-02 01:12:44 ERROR ExportJob - java.net.UnknownHostException: db-replica.internal: Name or service not known
</pre><script>alert(1)</script>]]></ac:plain-text-body></ac:structured-macro>
<h2>Root cause</h2>
<p>The replica's DNS record was removed.</p>`
	inc, _, err := ParseHTML("export.html", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(inc.Signatures) != 1 || !strings.Contains(inc.Signatures[0].Text, "UnknownHostException: db-replica.internal") {
		t.Errorf("signatures %+v, want the code block's line", inc.Signatures)
	}
	if !strings.Contains(inc.Body, "<script>alert(1)</script>") || strings.Contains(inc.Body, "\n<script>") {
		t.Errorf("body %q: want the CDATA's markup kept as the code block's text", inc.Body)
	}
}
