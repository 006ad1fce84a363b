package writeup

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/incidex/incidex/kb"
)

// HTML write-ups (a postmortem saved as a web page, a Confluence or Google
// Docs export, a scraped incident-library page) are parsed with
// golang.org/x/net/html, the HTML5 parsing algorithm browsers use, and
// turned into Markdown text: headings, paragraphs, lists, links, <pre> and
// <code>, blockquotes and tables carry over; scripts, styles, frames, forms
// and page chrome (nav, footer, aside, sidebars) are dropped. The Markdown
// then goes through ParseMarkdown, so <pre> and <blockquote> text reaches
// the same signature extraction as Markdown code blocks and blockquotes.
// The page is never shown as HTML: the incident's body is the Markdown,
// rendered later without raw HTML.

// IsHTML reports whether a write-up is an HTML page: by its file name, or
// by a first tag of <!doctype html> or <html>.
func IsHTML(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".html", ".htm":
		return true
	}
	head := bytes.ToLower(bytes.TrimLeft(data[:min(len(data), 512)], " \t\r\n\ufeff"))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

// ParseHTML parses an HTML write-up into an incident of format "html"
// whose body is the page as Markdown.
func ParseHTML(name string, data []byte) (*kb.Incident, []string, error) {
	md, err := HTMLToMarkdown(data)
	if err != nil {
		return nil, nil, err
	}
	inc, warn, err := parseMarkdown(name, []byte(md))
	if err != nil {
		return nil, nil, err
	}
	inc.Format, inc.Hash = "html", contentHash(data)
	return inc, warn, nil
}

// HTMLToMarkdown converts an HTML page to Markdown, with the page's
// <meta> keywords, description and date as front matter.
func HTMLToMarkdown(data []byte) (string, error) {
	doc, err := html.Parse(bytes.NewReader(confluenceCode(data)))
	if err != nil {
		return "", err
	}
	c := &htmlConv{mono: monoClasses(doc)}
	meta := c.meta(doc)
	root := contentRoot(doc)
	if findFirst(root, atom.H1) == nil && c.title != "" {
		c.out.WriteString("# " + escapeMD(c.title) + "\n\n")
	}
	c.blocks(root, "")
	body := strings.TrimSpace(c.out.String()) + "\n"
	if len(meta) == 0 {
		return body, nil
	}
	fm, err := yaml.Marshal(meta)
	if err != nil {
		return body, nil //nolint:nilerr // meta values are strings; without front matter the page still parses
	}
	return "---\n" + string(fm) + "---\n" + body, nil
}

// storageCode matches a code block of Confluence's storage format: a code
// or noformat macro whose text is in CDATA, which an HTML parser drops as a
// comment.
var storageCode = regexp.MustCompile(`(?s)<ac:structured-macro[^>]*ac:name="(?:code|noformat)"[^>]*>.*?<ac:plain-text-body>\s*<!\[CDATA\[(.*?)\]\]>\s*</ac:plain-text-body>.*?</ac:structured-macro>`)

// confluenceCode turns the code blocks of Confluence's storage format into
// <pre> blocks, their text escaped.
func confluenceCode(data []byte) []byte {
	if !bytes.Contains(data, []byte("<ac:structured-macro")) {
		return data
	}
	return storageCode.ReplaceAllFunc(data, func(m []byte) []byte {
		text := storageCode.FindSubmatch(m)[1]
		return []byte("<pre>" + html.EscapeString(string(text)) + "</pre>")
	})
}

type htmlConv struct {
	out   strings.Builder
	title string
	// mono are the classes the page's style sheet sets in a monospace
	// font: Google Docs marks code that way, not with <code>.
	mono map[string]bool
}

// monoFont matches a CSS font-family of code.
var monoFont = regexp.MustCompile(`(?i)font-family:[^;}]*(courier|monospace|consolas|menlo|monaco|source code|roboto mono|fira code|lucida console)`)

// cssRule matches one class rule of a style sheet: ".c2{font-family:…}".
var cssRule = regexp.MustCompile(`\.([A-Za-z_][\w-]*)\s*\{([^}]*)\}`)

// monoClasses returns the classes a style sheet sets in a monospace font.
func monoClasses(doc *html.Node) map[string]bool {
	var m map[string]bool
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Style {
			var css strings.Builder
			for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
				if ch.Type == html.TextNode {
					css.WriteString(ch.Data)
				}
			}
			for _, r := range cssRule.FindAllStringSubmatch(css.String(), -1) {
				if monoFont.MatchString(r[2]) {
					if m == nil {
						m = map[string]bool{}
					}
					m[r[1]] = true
				}
			}
		}
		return true
	})
	return m
}

// isMono reports an element set in a monospace font by its class or its
// own style.
func (c *htmlConv) isMono(n *html.Node) bool {
	if monoFont.MatchString(attr(n, "style")) {
		return true
	}
	for _, cl := range strings.Fields(attr(n, "class")) {
		if c.mono[cl] {
			return true
		}
	}
	return false
}

// dropped are elements whose content is never write-up text.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Iframe: true,
	atom.Object: true, atom.Embed: true, atom.Svg: true, atom.Math: true, atom.Canvas: true,
	atom.Nav: true, atom.Footer: true, atom.Aside: true, atom.Form: true, atom.Button: true,
	atom.Select: true, atom.Input: true, atom.Textarea: true, atom.Head: true, atom.Frameset: true,
	atom.Frame: true, atom.Audio: true, atom.Video: true, atom.Dialog: true,
}

// chromeWords in an id, class or role mark page chrome.
var chromeWords = []string{"nav", "navbar", "navigation", "breadcrumb", "breadcrumbs", "sidebar", "footer",
	"cookie", "cookies", "banner", "menu", "toolbar", "share", "social", "comments", "skip-link", "contentinfo"}

func isChrome(n *html.Node) bool {
	if dropped[n.DataAtom] {
		return true
	}
	for _, a := range n.Attr {
		if a.Key == "aria-hidden" && a.Val == "true" || a.Key == "hidden" {
			return true
		}
		if a.Key != "id" && a.Key != "class" && a.Key != "role" {
			continue
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(a.Val), func(r rune) bool { return r == ' ' || r == '-' || r == '_' }) {
			for _, c := range chromeWords {
				if w == c {
					return true
				}
			}
		}
	}
	return false
}

// meta reads the page title and the <meta> fields that map to front matter.
func (c *htmlConv) meta(doc *html.Node) yaml.MapSlice {
	var ms yaml.MapSlice
	seen := map[string]bool{}
	walk(doc, func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.Title:
			if c.title == "" {
				c.title = collapse(textOf(n))
			}
		case atom.Meta:
			key := map[string]string{
				"keywords": "keywords", "description": "description", "date": "date", "dc.date": "date",
				"article:published_time": "date", "author": "author", "dc.creator": "author",
			}[strings.ToLower(attr(n, "name")+attr(n, "property"))]
			if v := strings.TrimSpace(attr(n, "content")); key != "" && v != "" && !seen[key] {
				seen[key] = true
				ms = append(ms, yaml.MapItem{Key: key, Value: v})
			}
		}
		return n.DataAtom != atom.Body
	})
	return ms
}

// contentRoot is <main>, else the only <article>, else <body>.
func contentRoot(doc *html.Node) *html.Node {
	if m := findFirst(doc, atom.Main); m != nil {
		return m
	}
	var arts []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.DataAtom == atom.Article {
			arts = append(arts, n)
			return false
		}
		return !isChrome(n) || n.Type == html.DocumentNode
	})
	if len(arts) == 1 {
		return arts[0]
	}
	if b := findFirst(doc, atom.Body); b != nil {
		return b
	}
	return doc
}

// blocks writes the block content of n, each line prefixed (for
// blockquotes and list items).
func (c *htmlConv) blocks(n *html.Node, prefix string) {
	var inline []*html.Node
	flush := func() {
		if t := strings.TrimSpace(c.inlineMD(inline)); t != "" {
			c.para(prefix, escapeLineStart(t))
		}
		inline = inline[:0]
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.CommentNode || (ch.Type == html.ElementNode && isChrome(ch)) {
			continue
		}
		if ch.Type != html.ElementNode || !isBlock(ch.DataAtom) {
			inline = append(inline, ch)
			continue
		}
		flush()
		c.block(ch, prefix)
	}
	flush()
}

func (c *htmlConv) block(n *html.Node, prefix string) {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if t := collapse(c.inlineMD(nil, n)); t != "" {
			c.para(prefix, strings.Repeat("#", int(n.Data[1]-'0'))+" "+t)
		}
	case atom.Pre:
		c.pre(n, prefix)
	case atom.P:
		if c.isMono(n) {
			c.pre(n, prefix) // a paragraph set as code: Google Docs' code block
			return
		}
		c.blocks(n, prefix)
	case atom.Blockquote:
		c.blocks(n, prefix+"> ")
		c.out.WriteString(strings.TrimRight(prefix, " ") + "\n")
	case atom.Ul, atom.Ol:
		c.list(n, prefix)
	case atom.Table:
		c.table(n, prefix)
	case atom.Hr:
		c.para(prefix, "---")
	case atom.Dl:
		c.defs(n, prefix)
	default:
		c.blocks(n, prefix)
	}
}

func (c *htmlConv) para(prefix, text string) {
	for _, l := range strings.Split(text, "\n") {
		c.out.WriteString(prefix + l + "\n")
	}
	c.out.WriteString(strings.TrimRight(prefix, " ") + "\n")
}

// pre writes a fenced code block, with the language of a language-X or
// lang-X class.
func (c *htmlConv) pre(n *html.Node, prefix string) {
	lang := langOf(n)
	if code := findFirst(n, atom.Code); code != nil && lang == "" {
		lang = langOf(code)
	}
	text := strings.Trim(textOf(n), "\n")
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	c.out.WriteString(prefix + fence + lang + "\n")
	for _, l := range strings.Split(text, "\n") {
		c.out.WriteString(prefix + strings.TrimRight(l, " \t\r") + "\n")
	}
	c.out.WriteString(prefix + fence + "\n" + strings.TrimRight(prefix, " ") + "\n")
}

func (c *htmlConv) list(n *html.Node, prefix string) {
	i := 0
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || li.DataAtom != atom.Li {
			continue
		}
		i++
		marker := "- "
		if n.DataAtom == atom.Ol {
			marker = itoa(i) + ". "
		}
		sub := &htmlConv{}
		sub.blocks(li, "")
		lines := strings.Split(strings.TrimSpace(sub.out.String()), "\n")
		pad := strings.Repeat(" ", len(marker))
		for j, l := range lines {
			switch {
			case j == 0:
				c.out.WriteString(prefix + marker + l + "\n")
			case l == "":
				c.out.WriteString(strings.TrimRight(prefix, " ") + "\n")
			default:
				c.out.WriteString(prefix + pad + l + "\n")
			}
		}
	}
	c.out.WriteString(strings.TrimRight(prefix, " ") + "\n")
}

// table writes a GFM table; the first row is the header.
func (c *htmlConv) table(n *html.Node, prefix string) {
	var rows [][]string
	walk(n, func(x *html.Node) bool {
		if x.DataAtom != atom.Tr {
			return true
		}
		var row []string
		for td := x.FirstChild; td != nil; td = td.NextSibling {
			if td.DataAtom == atom.Td || td.DataAtom == atom.Th {
				row = append(row, strings.ReplaceAll(collapse(c.inlineMD(nil, td)), "|", `\|`))
			}
		}
		if len(row) > 0 {
			rows = append(rows, row)
		}
		return false
	})
	if len(rows) == 0 {
		return
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	line := func(r []string) string {
		for len(r) < width {
			r = append(r, "")
		}
		return "| " + strings.Join(r, " | ") + " |"
	}
	var b strings.Builder
	b.WriteString(line(rows[0]) + "\n" + line(strings.Split(strings.Repeat("---,", width-1)+"---", ",")))
	for _, r := range rows[1:] {
		b.WriteString("\n" + line(r))
	}
	c.para(prefix, b.String())
}

// defs writes a definition list as "Term: definition" lines.
func (c *htmlConv) defs(n *html.Node, prefix string) {
	var lines []string
	term := ""
	for x := n.FirstChild; x != nil; x = x.NextSibling {
		switch x.DataAtom {
		case atom.Dt:
			term = collapse(c.inlineMD(nil, x))
		case atom.Dd:
			lines = append(lines, escapeLineStart(strings.TrimSpace(term+": "+collapse(c.inlineMD(nil, x)))))
		}
	}
	for _, l := range lines {
		c.para(prefix, l)
	}
}

// inlineMD renders inline nodes (and, when parent is set, its children) as
// Markdown inline text.
func (c *htmlConv) inlineMD(nodes []*html.Node, parent ...*html.Node) string {
	if len(parent) > 0 {
		for ch := parent[0].FirstChild; ch != nil; ch = ch.NextSibling {
			nodes = append(nodes, ch)
		}
	}
	var b strings.Builder
	for _, n := range nodes {
		c.inlineNode(&b, n)
	}
	return collapseSpaces(b.String())
}

func (c *htmlConv) inlineNode(b *strings.Builder, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		b.WriteString(escapeMD(strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(n.Data)))
		return
	case html.ElementNode:
	default:
		return
	}
	if isChrome(n) {
		return
	}
	switch n.DataAtom {
	case atom.Br:
		b.WriteString("\n")
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		b.WriteString(codeSpan(collapse(textOf(n))))
	case atom.Span:
		if c.isMono(n) {
			b.WriteString(codeSpan(collapse(textOf(n))))
			return
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			c.inlineNode(b, ch)
		}
	case atom.Img:
		b.WriteString(escapeMD(attr(n, "alt")))
	case atom.A:
		text := collapse(c.inlineMD(nil, n))
		if u := linkURL(strings.TrimSpace(attr(n, "href"))); u != "" && text != "" && !strings.ContainsAny(u, " ()<>") {
			b.WriteString("[" + text + "](" + u + ")")
		} else {
			b.WriteString(text)
		}
	default:
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			c.inlineNode(b, ch)
		}
	}
}

// codeSpan writes s as inline code, with a fence longer than any run of
// backticks in it.
func codeSpan(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// escapeMD escapes what would make text Markdown markup or raw HTML: a
// '<' that could open a tag, link brackets, backticks, and a backslash
// before punctuation. Emphasis marks stay: at worst they emphasise.
func escapeMD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == '<' && (isASCIILetter(next) || next == '/' || next == '!' || next == '?'):
			b.WriteByte('\\')
		case c == '[' || c == ']' || c == '`':
			b.WriteByte('\\')
		case c == '\\' && isASCIIPunct(next):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// escapeLineStart keeps a paragraph's first characters from starting a
// heading, list, quote or rule.
func escapeLineStart(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimLeft(l, " ")
		switch {
		case l == "":
		case strings.ContainsRune("#>-+=|~", rune(l[0])):
			l = `\` + l
		case l[0] >= '0' && l[0] <= '9':
			j := strings.IndexFunc(l, func(r rune) bool { return r < '0' || r > '9' })
			if j > 0 && (l[j] == '.' || l[j] == ')') {
				l = l[:j] + `\` + l[j:]
			}
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Pre, atom.Blockquote, atom.Ul, atom.Ol, atom.Li, atom.Table, atom.Hr, atom.Dl,
		atom.Figure, atom.Figcaption, atom.Details, atom.Summary, atom.Address, atom.Center, atom.Body:
		return true
	}
	return false
}

func langOf(n *html.Node) string {
	for _, cl := range strings.Fields(attr(n, "class")) {
		for _, p := range []string{"language-", "lang-"} {
			if l, ok := strings.CutPrefix(cl, p); ok && l != "" && !strings.ContainsAny(l, "`~ ") {
				return l
			}
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textOf is the text of n and its children, without dropped elements.
func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
			return
		}
		if x.Type == html.ElementNode && (dropped[x.DataAtom] && x.DataAtom != atom.Head) {
			return
		}
		if x.DataAtom == atom.Br {
			b.WriteString("\n")
		}
		for ch := x.FirstChild; ch != nil; ch = ch.NextSibling {
			rec(ch)
		}
	}
	rec(n)
	return b.String()
}

// walk calls f on n and its descendants, depth first; f returns false to
// skip a node's children.
func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		walk(ch, f)
	}
}

func findFirst(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walk(n, func(x *html.Node) bool {
		if found != nil {
			return false
		}
		if x.DataAtom == a && x.Type == html.ElementNode {
			found = x
			return false
		}
		return x.Type != html.ElementNode || !isChrome(x) || x.DataAtom == atom.Head
	})
	return found
}

// collapse joins whitespace runs (newlines too) into single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// collapseSpaces joins runs of spaces and tabs, keeping <br> newlines.
func collapseSpaces(s string) string {
	lines := strings.Split(strings.NewReplacer("\r", " ", "\t", " ").Replace(s), "\n")
	var out []string
	for _, l := range lines {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(out, "\n")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
