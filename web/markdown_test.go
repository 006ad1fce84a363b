package web_test

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/incidex/incidex/web"
)

// xssWriteup is a write-up that tries every way to run script.
const xssWriteup = `---
id: xss
title: '<script>alert("title")</script>'
---
# Evil <script>alert(1)</script>

<script>alert(2)</script>
<img src=x onerror="alert(3)">
<a href="javascript:alert(4)">raw link</a>
<iframe src="https://example.com"></iframe>
<svg onload=alert(5)></svg>

[md link](javascript:alert(6)) [upper](JaVaScRiPt:alert(7)) [entity](jav&#x61;script:alert(8))
[vb](vbscript:msgbox(9)) [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMCk8L3NjcmlwdD4=)
![img](javascript:alert(11)) <javascript:alert(12)>

Inline ` + "`<script>alert(13)</script>`" + ` and text <b onmouseover=alert(14)>bold</b>.

| col <script>alert(15)</script> | b |
|---|---|
| <img src=x onerror=alert(16)> | [x](javascript:alert(17)) |

` + "```html\n<script>alert(18)</script>\n```\n"

// assertInert fails when HTML has a script element, an event-handler
// attribute, an element that can run or embed content, or a URL with a
// scheme that runs script.
func assertInert(t *testing.T, name, out string, allowScriptSrc string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: parse: %v", name, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				src := attr(n, "src")
				if allowScriptSrc == "" || !strings.HasPrefix(src, allowScriptSrc) || n.FirstChild != nil {
					t.Errorf("%s: a <script src=%q> element survived", name, src)
				}
			case "iframe", "object", "embed", "svg", "style", "base", "form":
				if !(n.Data == "form" && allowScriptSrc != "") {
					t.Errorf("%s: a <%s> element survived", name, n.Data)
				}
			}
			for _, a := range n.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("%s: <%s %s=%q> survived", name, n.Data, a.Key, a.Val)
				}
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") &&
					(strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") || strings.HasPrefix(v, "data:text")) {
					t.Errorf("%s: <%s %s=%q> survived", name, n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestMarkdownIsSafe(t *testing.T) {
	out := string(web.Writeup("markdown", xssWriteup))
	assertInert(t, "Writeup", out, "")
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Errorf("Writeup output contains <script: %s", out)
	}
	for _, want := range []string{"&lt;script&gt;alert(13)&lt;/script&gt;", "<table>", `<code class="language-html">&lt;script&gt;alert(18)`, "raw HTML omitted"} {
		if !strings.Contains(out, want) {
			t.Errorf("Writeup output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "id: xss") {
		t.Error("Writeup output shows the front matter")
	}
}

func TestMarkdownRendersGFM(t *testing.T) {
	out := string(web.Markdown("See [docs](https://example.com/a?b=1&c=2) and https://kubernetes.io.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n~~old~~\n"))
	for _, want := range []string{`<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">docs</a>`,
		`<a href="https://kubernetes.io" rel="nofollow noopener noreferrer">`, "<td>1</td>", `type="checkbox"`, "<del>old</del>"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown output lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteupLibraryIsText(t *testing.T) {
	out := string(web.Writeup("library", "IL-1 Org · 2023-01-01\n<script>alert(1)</script>\n\n*not emphasis*"))
	want := "<p>IL-1 Org · 2023-01-01</p>\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n<p>*not emphasis*</p>\n"
	if out != want {
		t.Errorf("Writeup(library) = %q, want %q", out, want)
	}
}
