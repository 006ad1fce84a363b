package web

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/incidex/incidex/kb"
)

// md renders write-ups: GitHub-flavoured Markdown (tables, strikethrough,
// task lists, autolinks). It is never given html.WithUnsafe, so raw HTML
// in a write-up comes out as a "raw HTML omitted" comment and links or
// images with dangerous schemes (javascript:, vbscript:, file:, most
// data:) get an empty URL: write-ups are untrusted input.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkRel{}, 1000))),
)

// linkRel marks every link of a write-up nofollow and noopener, and keeps
// the Referer from leaking the incident URL to other sites.
type linkRel struct{}

func (linkRel) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindLink || n.Kind() == ast.KindAutoLink) {
			n.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		}
		return ast.WalkContinue, nil
	})
}

// Markdown renders Markdown to safe HTML.
func Markdown(src string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		// goldmark's HTML renderer only fails when the writer does, and a
		// bytes.Buffer does not: show the source as text rather than nothing.
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark without WithUnsafe escapes raw HTML (tested in markdown_test.go and FuzzRender)
}

// Writeup renders the original text of a write-up: Markdown without its
// front matter (shown elsewhere on the page as signatures and tags), or an
// incident-library entry as one paragraph per line.
func Writeup(format, body string) template.HTML {
	if format == "library" {
		var b strings.Builder
		for line := range strings.SplitSeq(body, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				b.WriteString("<p>" + template.HTMLEscapeString(line) + "</p>\n")
			}
		}
		return template.HTML(b.String()) //nolint:gosec // every line is escaped
	}
	return Markdown(kb.WithoutFrontMatter(body))
}
