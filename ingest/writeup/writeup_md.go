package writeup

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

var mdParser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// mdDoc collects what a walk over a write-up's AST finds.
type mdDoc struct {
	src    []byte
	title  string
	heads  []heading
	blocks []kb.Block
	steps  []kb.Step
	cands  []sigCandidate
	// quiet are pasted log lines that do not read as failures, and
	// pointers the prose's quotes and inline code that do not either: a
	// quiet line that the prose quotes is the message its author means
	// (see pointedLogs).
	quiet    []sigCandidate
	pointers []string
	// quietSpans are inline code of the prose with a log line's shape
	// and no error word: a write-up with no error text learns them,
	// ranked with its quiet block lines (see onlyLogs).
	quietSpans []sigCandidate
	refs       []kb.Ref
	date       string
	firstPar   string
	// leadIn: the last block was a paragraph that leads in to what comes
	// next ("The worker log:").
	leadIn bool
}

type heading struct {
	level     int
	text      string
	kind      string // own or inherited meaning
	options   bool   // a fix section that lists options
	lineStart int    // offset of the heading's line
	bodyStart int    // offset after the heading
}

// ParseMarkdown parses a Markdown write-up. name is the path as given; it
// becomes the incident's source and, failing front matter and a library id,
// its id.
func ParseMarkdown(name string, data []byte) (*kb.Incident, error) {
	inc, _, err := parseMarkdown(name, data)
	return inc, err
}

// parseMarkdown parses a Markdown write-up and returns what it warns about
// (front-matter fields it had to leave out).
func parseMarkdown(name string, data []byte) (*kb.Incident, []string, error) {
	fmSrc, body, _ := splitFrontMatter(jiraToMarkdown(emailToMarkdown(data)))
	fm, err := parseFrontMatter(fmSrc)
	if err != nil {
		return nil, nil, err
	}
	d := &mdDoc{src: body}
	root := mdParser.Parse(text.NewReader(body))
	if err := ast.Walk(root, d.visit); err != nil {
		return nil, nil, err
	}
	inc := &kb.Incident{
		Source: name, Format: "markdown", Body: string(data), Hash: contentHash(data),
		Tags: normTags(fm.Tags), Services: dedupe(fm.Services), Severity: normSeverity(fm.Severity),
		Likelihood: strings.ToLower(fm.Likelihood), TellApart: fm.TellApart,
		Overlaps: fm.Overlaps, Causes: fm.Causes, Pins: fm.Pins, Examples: fm.Examples,
		Counter: fm.Counter, Organisation: fm.Organisation, Extra: fm.Extra,
		Logs: d.blocks, Runbook: d.steps, References: append(fm.Refs, d.refs...),
		Duration: duration(fm.Date, fm.End),
	}
	inc.Title = firstNonEmpty(fm.Title, d.title, baseName(name))
	inc.ID, err = writeupID(fm.ID, body, name, inc.Title)
	if err != nil {
		return nil, nil, err
	}
	inc.Date = normDate(firstNonEmpty(fm.Date, d.date))
	d.fillSections(inc)
	d.fillFromFrontMatter(inc, &fm)
	d.fillFromProse(inc, root)
	if inc.Summary == "" {
		inc.Summary = trimLeadIn(d.firstPar)
	}
	cands := curated(fm.Signatures)
	cands = append(cands, d.cands...)
	pointed := d.pointedLogs()
	if len(cands) == 0 && len(pointed) == 0 {
		pointed = d.onlyLogs()
	}
	inc.Signatures, err = buildSignatures(inc.ID, inc.Pins, append(cands, pointed...))
	if err != nil {
		return nil, nil, err
	}
	return inc, fm.Warnings, nil
}

// fillFromFrontMatter takes the parts the front matter gives and the
// headings did not.
func (d *mdDoc) fillFromFrontMatter(inc *kb.Incident, fm *frontMatter) {
	if fm.Summary != "" {
		inc.Summary = fm.Summary // the author's own summary beats a section's first lines
	}
	if inc.Impact == "" {
		inc.Impact = fm.Impact
	}
	if inc.Fix == "" {
		inc.Fix = fm.Fix
	}
	if inc.CauseFrom != kb.CauseFromSection && fm.RootCause != "" {
		inc.RootCause, inc.CauseStatus, inc.CauseFrom = fm.RootCause, kb.CauseKnown, kb.CauseFromSection
		if unknownCause(fm.RootCause) {
			inc.RootCause, inc.CauseStatus, inc.CauseFrom = "", kb.CauseUnknown, kb.CauseFromStated
		}
	}
}

// fillFromProse finds in the sentences of the write-up the cause, fix,
// prevention and impact that no heading or front-matter field gave.
func (d *mdDoc) fillFromProse(inc *kb.Incident, root ast.Node) {
	wantCause := inc.CauseFrom == kb.CauseFromNone
	if !wantCause && inc.Fix != "" && inc.Prevention+inc.Lessons+inc.NextSteps != "" && inc.Impact != "" {
		return
	}
	// Impact and prevention come from sentences only in a write-up without
	// sections: in one with sections, a missing section means the author
	// did not write that part, and any sentence found would be a guess.
	structured := false
	for _, h := range d.heads {
		structured = structured || h.kind != ""
	}
	ss := proseSentences(root, d.src, d.sectionAt)
	f := findProse(ss, wantCause, inc.Fix == "", !structured && inc.Prevention+inc.Lessons+inc.NextSteps == "", !structured && inc.Impact == "")
	switch {
	case f.cause != "":
		inc.RootCause, inc.CauseSource, inc.CauseStatus, inc.CauseFrom = f.cause, f.cause, kb.CauseKnown, kb.CauseFromSentence
	case f.causeStatedUnknown:
		inc.CauseFrom = kb.CauseFromStated
	}
	if inc.Fix == "" {
		inc.Fix = f.fix
	}
	if inc.Prevention == "" {
		inc.Prevention = f.prevention
	}
	if inc.Impact == "" {
		inc.Impact = f.impact
	}
}

// sectionAt returns the kind of the section holding the byte offset.
func (d *mdDoc) sectionAt(off int) string {
	kind := ""
	for _, h := range d.heads {
		if h.lineStart > off {
			break
		}
		kind = h.kind
	}
	return kind
}

func dedupe(list []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" && !seen[strings.ToLower(s)] {
			seen[strings.ToLower(s)] = true
			out = append(out, s)
		}
	}
	return out
}

func (d *mdDoc) visit(n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	leadIn := d.leadIn
	switch n.Kind() {
	case ast.KindList, ast.KindListItem:
		// A list item that leads in ("top line:") leads in to the items
		// nested under it.
	default:
		if n.Type() == ast.TypeBlock {
			d.leadIn = false
		}
	}
	switch n := n.(type) {
	case *ast.Heading:
		d.addHeading(n)
		return ast.WalkSkipChildren, nil
	case *ast.FencedCodeBlock:
		d.addCode(string(n.Language(d.src)), linesOf(n.Lines(), d.src))
		return ast.WalkSkipChildren, nil
	case *ast.CodeBlock:
		d.addCode("", linesOf(n.Lines(), d.src))
		return ast.WalkSkipChildren, nil
	case *ast.Paragraph, *ast.TextBlock:
		if d.addLineHeading(n) {
			return ast.WalkSkipChildren, nil
		}
		quoted := inBlockquote(n)
		switch {
		case quoted:
			d.addQuotedBlock(n, looksLogged)
		case leadIn && n.Lines().Len() <= maxPastedLines && inList(n):
			// A list item under an item that leads in ("top line:"): list
			// items are prose more often than not, so it needs a log
			// line's firmer marks.
			d.addQuotedBlock(n, loggedItem)
		case leadIn && n.Lines().Len() <= maxPastedLines:
			// A log line pasted as a paragraph of its own under a lead-in,
			// without a fence: it must have a log line's shape, since
			// prose follows lead-ins too.
			d.addQuotedBlock(n, pastedShaped)
		case !quoted:
			d.addLedInLines(n)
		}
		raw := d.addProse(n)
		d.leadIn = !quoted && leadsIn(strings.TrimSpace(raw))
	case *ast.HTMLBlock:
		raw := strings.TrimSpace(strings.Join(linesOf(n.Lines(), d.src), "\n"))
		switch {
		case inBlockquote(n):
			d.addQuotedHTML(n)
		case strings.HasPrefix(raw, "<aside") && !strings.Contains(raw, "<pre"):
			// A Notion callout, exported as <aside>: its lines are read as
			// a blockquote's.
			d.addQuotedHTML(n)
		default:
			// Raw <pre> in Markdown (a GitHub issue's <details> of logs)
			// is a code block.
			for _, code := range htmlPre.FindAllStringSubmatch(raw, -1) {
				text := html.UnescapeString(htmlTag.ReplaceAllString(code[1], ""))
				d.addCode("", strings.Split(strings.Trim(text, "\n"), "\n"))
			}
		}
		return ast.WalkSkipChildren, nil
	case *ast.Link:
		if d.section().kind == kb.SectionReferences {
			d.refs = append(d.refs, kb.Ref{Text: inlineText(n, d.src), URL: string(n.Destination)})
		}
	case *ast.AutoLink:
		if d.section().kind == kb.SectionReferences {
			u := string(n.URL(d.src))
			d.refs = append(d.refs, kb.Ref{Text: u, URL: u})
		}
	}
	return ast.WalkContinue, nil
}

func (d *mdDoc) section() heading {
	if len(d.heads) == 0 {
		return heading{}
	}
	return d.heads[len(d.heads)-1]
}

func (d *mdDoc) addHeading(n *ast.Heading) {
	txt := strings.TrimSpace(inlineText(n, d.src))
	lines := n.Lines()
	start, end := 0, 0
	if lines.Len() > 0 {
		start, end = lines.At(0).Start, lines.At(lines.Len()-1).Stop
	} else if len(d.heads) > 0 {
		start, end = d.heads[len(d.heads)-1].bodyStart, d.heads[len(d.heads)-1].bodyStart
	}
	h := heading{level: n.Level, text: txt, lineStart: lineStartAt(d.src, start), bodyStart: lineEndAt(d.src, end)}
	own, numbered := headingKind(txt)
	// The first heading is the title when it is a level-1 one, or when the
	// document opens with it and it names no part ("h2. [DATA-771] Users
	// cannot delete a shipping address", a ticket's summary).
	if d.title == "" && (n.Level == 1 || len(d.heads) == 0 && d.firstPar == "" && own == "" && !numbered) {
		d.title = txt
		h.level = 1
		d.heads = append(d.heads, h)
		return
	}
	parent := d.parentOf(n.Level)
	switch {
	case own != "":
		h.kind = own
		h.options = own == kb.SectionFix && isOptionsHeading(txt)
	case parent != nil:
		h.kind, h.options = parent.kind, parent.options
	}
	_ = numbered // numbered headings have no own meaning: they inherit, as above
	d.heads = append(d.heads, h)
}

// maxLineHeadingWords is the most words a line heading has.
const maxLineHeadingWords = 6

// addLineHeading takes a paragraph of one short line that names a part of
// a write-up ("Why", "What we did", "**Root cause**", "Fix:") as a heading
// of the lowest level, as people type them without Markdown's '#'. It
// reports whether it did.
func (d *mdDoc) addLineHeading(n ast.Node) bool {
	if _, ok := n.Parent().(*ast.Document); !ok || n.Lines().Len() != 1 {
		return false
	}
	seg := n.Lines().At(0)
	raw := strings.TrimSpace(string(seg.Value(d.src)))
	txt := strings.TrimSpace(strings.TrimSuffix(strings.Trim(raw, "*_ "), ":"))
	txt = strings.TrimSpace(strings.Trim(txt, "*_ "))
	if txt == "" || len(strings.Fields(txt)) > maxLineHeadingWords || strings.ContainsAny(txt[len(txt)-1:], ".,;!?`") {
		return false
	}
	kind, numbered := headingKind(txt)
	if kind == "" || numbered {
		return false
	}
	d.heads = append(d.heads, heading{level: 6, text: txt, kind: kind, options: kind == kb.SectionFix && isOptionsHeading(txt),
		lineStart: lineStartAt(d.src, seg.Start), bodyStart: lineEndAt(d.src, seg.Stop)})
	return true
}

// parentOf returns the nearest earlier heading of a higher level.
func (d *mdDoc) parentOf(level int) *heading {
	for i := len(d.heads) - 1; i >= 0; i-- {
		if d.heads[i].level < level {
			return &d.heads[i]
		}
	}
	return nil
}

func (d *mdDoc) addCode(lang string, lines []string) {
	sec := d.section()
	class := classifyBlock(lang, lines)
	d.blocks = append(d.blocks, kb.Block{Section: sec.kind, Heading: sec.text, Lang: lang, Class: class, Lines: lines})
	switch class {
	case ClassLog:
		for _, e := range logEntries(lines) {
			d.addCandidate(e, sec.kind, 2)
		}
	case ClassConfig:
		// An object's status pasted as YAML or JSON (kubectl get -o
		// yaml): its failure reason and message are what logs and events
		// print. The rest is configuration, never a signature.
		for _, v := range statusFields(lines) {
			if errorText(v, 1) {
				d.cands = append(d.cands, sigCandidate{text: v, kind: kb.SigCode, section: sec.kind})
			}
		}
	case ClassCommands:
		steps, output := commandsOf(lines)
		for _, s := range steps {
			d.steps = append(d.steps, kb.Step{Section: sec.kind, Heading: sec.text, Comment: s.comment, Command: s.command})
		}
		for _, e := range logEntries(output) {
			d.addCandidate(e, sec.kind, 2)
		}
	}
}

func (d *mdDoc) addCandidate(s, section string, minTokens int) {
	if tableHeader(s) {
		return // kubectl's NAME READY STATUS RESTARTS AGE
	}
	kind := kb.SigCode
	if isEventLine(s) {
		kind = kb.SigEvent
	}
	c := sigCandidate{text: s, kind: kind, section: section}
	if errorText(s, minTokens) {
		d.cands = append(d.cands, c)
		return
	}
	d.quiet = append(d.quiet, c)
}

// minPointerWords is how many words a quote needs to point at a log line.
const minPointerWords = 3

// addPointer keeps a quote or inline code of the prose that is not error
// text itself but may point at a pasted line.
func (d *mdDoc) addPointer(q string) {
	fields := strings.Fields(strings.ToLower(q))
	q = strings.Join(fields, " ")
	words := 0
	for _, f := range fields {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			words++
		}
	}
	// Words, not a setting ("max_connections = 2000") or a command.
	if words >= minPointerWords && !isCommandLine(q) {
		d.pointers = append(d.pointers, q)
	}
}

// pointedLogs returns the pasted log lines that do not read as failures
// but that the prose quotes: "systemd then gives up for good: \"Start
// request repeated too quickly\"" names the line of the journal its
// author means, though the line has no error word.
func (d *mdDoc) pointedLogs() []sigCandidate {
	var out []sigCandidate
	for _, c := range d.quiet {
		line := strings.ToLower(strings.Join(strings.Fields(c.text), " "))
		for _, p := range d.pointers {
			if strings.Contains(line, p) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// maxOnlyLogs is how many quiet log lines a write-up with no other
// signature gives (see onlyLogs).
const maxOnlyLogs = 3

// onlyLogs returns, for a write-up with no error text anywhere, the log
// lines it pasted where it tells what happened (symptoms, summary, or a
// part with no known heading): they are the failure as its author saw it
// ("max virtual memory areas vm.max_map_count [65530] is too low"), though
// they have no error word. Without them the write-up could not match at
// all.
//
// The lines with the most words that hint at a failure (weak ones such as
// "conflict" or "limit" too) come first, and the order of the write-up
// among equals: "0/1 nodes are available: 1 node(s) had volume node
// affinity conflict." before the kubectl rows pasted above it. When some
// line has such a hint, the lines without one are left out.
func (d *mdDoc) onlyLogs() []sigCandidate {
	var told []sigCandidate
	for _, c := range append(d.quiet[:len(d.quiet):len(d.quiet)], d.quietSpans...) {
		switch c.section {
		case "", kb.SectionSummary, kb.SectionSymptoms, kb.SectionImpact, kb.SectionTimeline:
			told = append(told, c)
		}
	}
	return rankQuiet(told)
}

// rankQuiet returns up to maxOnlyLogs of a write-up's quiet log lines,
// those with the most hints of a failure first (see onlyLogs).
func rankQuiet(quiet []sigCandidate) []sigCandidate {
	type ranked struct {
		c    sigCandidate
		hint int
	}
	var rs []ranked
	for _, c := range quiet {
		p := patterns.Prepare(c.text)
		if len(patterns.Tokenize(p.Text, nil)) < 4 {
			continue
		}
		rs = append(rs, ranked{c, patterns.ErrorWords(c.text)})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return b.hint - a.hint })
	var out []sigCandidate
	for _, r := range rs[:min(len(rs), maxOnlyLogs)] {
		if r.hint == 0 && rs[0].hint > 0 {
			break // beside a hint of the failure, the rest are chatter
		}
		out = append(out, r.c)
	}
	return out
}

// inBlockquote reports whether n sits in a blockquote (at any depth).
func inBlockquote(n ast.Node) bool { return within(n, ast.KindBlockquote) }

// within reports whether n sits in a node of kind k (at any depth).
func within(n ast.Node, k ast.NodeKind) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == k {
			return true
		}
	}
	return false
}

// addQuotedBlock reads a paragraph of a blockquote as pasted log output:
// people quote a log line as often as they fence it. Each line (wrapped
// continuation lines joined) that reads like an error is a candidate, as a
// log block's lines are; prose in a blockquote rarely does.
func (d *mdDoc) addQuotedBlock(n ast.Node, logged func(string) bool) {
	lines := linesOf(n.Lines(), d.src)
	sec := d.section()
	var logs []string
	for _, e := range logEntries(lines) {
		e = strings.TrimSpace(strings.TrimLeft(e, "> "))
		if mailHeaderLine.MatchString(e) {
			continue // the header of a quoted email: "> Subject: …"
		}
		if c, ok := wholeCodeSpan(e); ok {
			e = c // a line that is one inline code span is its content
		} else if strings.Contains(e, "`") {
			continue // prose with inline code: a chat message, not a log line
		}
		if isCommandLine(e) || !logged(e) || !logShaped(e) && !patterns.FailsPlainly(e) {
			continue // a sentence whose only failure is a "not": "but why not on the mac"
		}
		logs = d.keepLog(e, sec, logs)
	}
	d.addLogBlock(sec, logs)
}

// addLedInLines keeps the log lines of a paragraph that its line before
// leads in to ("The traceback from the sqlalchemy pool ended with" and,
// on the next line, "psycopg2.OperationalError: FATAL:  remaining
// connection slots are reserved ..."): a line pasted inside the prose, with
// error text and a log line's shape.
func (d *mdDoc) addLedInLines(n ast.Node) {
	lines := linesOf(n.Lines(), d.src)
	sec := d.section()
	var logs []string
	for i := 1; i < len(lines); i++ {
		prev, e := strings.TrimSpace(lines[i-1]), strings.TrimSpace(lines[i])
		if !leadsIn(prev) || strings.Contains(e, "`") || isCommandLine(e) || !errorText(e, 3) {
			continue
		}
		// After a colon ("the build log has:") a log line's shape will do;
		// after a word ("... ended with") prose goes on as often, so the
		// line needs a log line's firmer marks.
		if !loggedItem(e) && !(strings.HasSuffix(prev, ":") && pastedShaped(e)) {
			continue
		}
		logs = d.keepLog(e, sec, logs)
	}
	d.addLogBlock(sec, logs)
}

// keepLog makes e a signature candidate of section sec and, when it
// became one, adds it to logs: the lines of the block shown as log text.
func (d *mdDoc) keepLog(e string, sec heading, logs []string) []string {
	before := len(d.cands)
	d.addCandidate(e, sec.kind, 2)
	if len(d.cands) > before {
		logs = append(logs, e)
	}
	return logs
}

// addLogBlock shows a quote's or a paragraph's log lines as a log block.
func (d *mdDoc) addLogBlock(sec heading, logs []string) {
	if len(logs) > 0 {
		d.blocks = append(d.blocks, kb.Block{Section: sec.kind, Heading: sec.text, Lang: "quote", Class: ClassLog, Lines: logs})
	}
}

// wholeCodeSpan returns the content of s when s is one inline code span
// ("`psycopg2.OperationalError: SSL SYSCALL error: EOF detected`").
func wholeCodeSpan(s string) (string, bool) {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n == 0 || len(s) <= 2*n || s[len(s)-n:] != s[:n] || strings.Contains(s[n:len(s)-n], s[:n]) {
		return "", false
	}
	return strings.TrimSpace(s[n : len(s)-n]), true
}

// looksLogged tells a pasted log line from a sentence of prose quoted in a
// blockquote: a log line has a prefix (level, timestamp, klog), an error
// identifier, a colon-separated message, or no sentence ending.
func looksLogged(s string) bool {
	return logShaped(s) || !proseSentence(s)
}

// proseSentence reports a line of prose: more than eight words ending in a
// period.
func proseSentence(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasSuffix(t, ".") && len(strings.Fields(t)) > 8
}

// prefixed reports a line that starts with a log prefix or level (see
// patterns.Prepare).
func prefixed(s string) bool {
	p := patterns.Prepare(s)
	return p.Level > 0 || len(p.Text) < len(s)
}

// maxPastedLines is the most lines a paragraph pasted under a lead-in has:
// a longer one is prose.
const maxPastedLines = 3

// pastedShaped reports a line of a paragraph that may be a pasted log
// line: without the inline code marks of prose, with a prefix or a
// colon-separated message, or with a log line's other marks where it is
// not a sentence.
func pastedShaped(s string) bool {
	if strings.Contains(s, "`") {
		return false
	}
	if prefixed(s) || strings.Contains(s, ": ") {
		return true
	}
	return !proseSentence(s) && logShaped(s)
}

// leadsIn reports a paragraph that introduces what follows it: it ends in
// a colon, or stops on a word that a pasted line completes ("... failed at
// the install step with", "the log said").
func leadsIn(p string) bool {
	if strings.HasSuffix(p, ":") {
		return true
	}
	i := strings.LastIndexAny(p, " \n")
	return leadInWords[strings.ToLower(p[i+1:])]
}

// ledIn reports inline code that the words before it introduce as what a
// program printed ("... and logged `The message is 4021051 bytes when
// serialized which is larger than 1048576 ...`"): a message, though it
// reads like a sentence.
func ledIn(cs *ast.CodeSpan, src []byte) bool {
	prev, ok := cs.PreviousSibling().(*ast.Text)
	if !ok {
		return false
	}
	before := strings.TrimRight(string(prev.Segment.Value(src)), " ")
	return before != "" && before[len(before)-1] != ':' && leadsIn(before) && !strings.HasSuffix(strings.ToLower(before), " like")
}

var leadInWords = map[string]bool{
	"with": true, "said": true, "says": true, "showed": true, "shows": true, "printed": true, "prints": true,
	"logged": true, "logs": true, "read": true, "reads": true, "got": true, "gets": true, "returned": true,
	"returns": true, "answered": true, "replied": true, "output": true, "like": true, "this": true,
	"threw": true, "throws": true, "raised": true, "raises": true, "reported": true, "reports": true,
}

// inList reports whether n sits in a list item.
func inList(n ast.Node) bool { return within(n, ast.KindListItem) }

// loggedItem reports a list item that is a pasted log line: a prefix, a
// level in capitals before a colon ("ERROR: canceling statement"), or an
// exception class ("PG::QueryCanceled", "OperationalError"). (Lines with
// inline code never get here: see addQuotedBlock.)
func loggedItem(s string) bool {
	if prefixed(s) {
		return true
	}
	for _, f := range strings.Fields(s) {
		w := strings.TrimRight(f, ":,")
		if strings.HasSuffix(f, ":") && w == strings.ToUpper(w) && patterns.ParseLevel(w) >= patterns.LevelWarn {
			return true
		}
		if i := strings.LastIndex(w, "::"); i >= 0 {
			w = w[i+2:]
		}
		if patterns.ErrorClassName(w) {
			return true
		}
	}
	return false
}

// logShaped reports a line with a log line's marks: a prefix (level,
// timestamp, klog), a colon-separated message, brackets, braces, a key=value,
// a path or an identifier with an underscore.
func logShaped(s string) bool {
	if prefixed(s) {
		return true
	}
	t := strings.TrimSpace(s)
	return strings.Contains(t, ": ") || strings.ContainsAny(t, "[]{}=_/")
}

// addQuotedHTML reads raw HTML quoted in a blockquote (a server's error
// page, "<h1>413 Request Entity Too Large</h1>") for its text lines.
func (d *mdDoc) addQuotedHTML(n *ast.HTMLBlock) {
	sec := d.section()
	for _, l := range linesOf(n.Lines(), d.src) {
		t := strings.TrimSpace(htmlTag.ReplaceAllString(strings.TrimLeft(l, "> "), " "))
		if t == "" {
			continue
		}
		d.addCandidate(strings.Join(strings.Fields(t), " "), sec.kind, 3)
	}
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// htmlPre matches a <pre> element of raw HTML and its content.
var htmlPre = regexp.MustCompile(`(?is)<pre[^>]*>(.*?)</pre>`)

var dateLine = regexp.MustCompile(`(?i)\b(?:date|last updated|updated|occurred|incident date|when)\W{0,4}\s*(\d{4}-\d{2}-\d{2})`)

// addProse looks at a paragraph: quoted error text and error-like inline
// code become signatures; a "Date: 2024-01-02" line dates the incident. It
// returns the paragraph's text.
func (d *mdDoc) addProse(n ast.Node) string {
	raw := string(joinSegments(n.Lines(), d.src))
	if d.firstPar == "" && len(d.heads) <= 1 {
		d.firstPar = strings.TrimSpace(raw)
	}
	if d.date == "" {
		if m := dateLine.FindStringSubmatch(raw); m != nil {
			d.date = m[1]
		}
	}
	sec := d.section().kind
	for _, q := range quotedSpans(strings.ReplaceAll(raw, "\n", " ")) {
		if quotedError(q) {
			d.cands = append(d.cands, sigCandidate{text: q, kind: kb.SigQuote, section: sec})
			d.blocks = append(d.blocks, kb.Block{Section: sec, Heading: d.section().text, Lang: "quote", Class: ClassLog, Lines: []string{q}})
			continue
		}
		d.addPointer(q)
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if cs, ok := c.(*ast.CodeSpan); ok {
			t := inlineText(cs, d.src)
			switch {
			case !isCommandLine(t) && !strings.HasPrefix(strings.TrimSpace(t), "/") && errorText(t, 3):
				d.cands = append(d.cands, sigCandidate{text: t, kind: kb.SigQuote, section: sec})
			default:
				if !isCommandLine(t) && len(patterns.Tokenize(t, nil)) >= minPointerWords+1 && (pastedShaped(t) || ledIn(cs, d.src)) {
					// A quiet log line in inline code ("… uWSGI listen queue
					// of socket ":5000" (fd: 3) full !!! …"): the failure of
					// a write-up with no error text (see onlyLogs).
					d.quietSpans = append(d.quietSpans, sigCandidate{text: t, kind: kb.SigQuote, section: sec})
				}
				d.addPointer(t)
			}
		}
	}
	return raw
}

// fillSections sets the incident's sections and the fields that come from
// them. The last root-cause section is the root cause; earlier ones are
// superseded guesses.
func (d *mdDoc) fillSections(inc *kb.Incident) {
	var causes, secondary []string
	var fixes, options []string
	text := make(map[string][]string)
	for i, h := range d.heads {
		end := len(d.src)
		if i+1 < len(d.heads) {
			end = d.heads[i+1].lineStart
		}
		body := strings.TrimSpace(string(d.src[min(h.bodyStart, end):end]))
		inc.Sections = append(inc.Sections, kb.Section{Kind: h.kind, Heading: h.text, Level: h.level, Text: body})
		if body == "" && h.kind != kb.SectionRootCause {
			continue
		}
		own, _ := headingKind(h.text)
		switch {
		case h.kind == kb.SectionRootCause && own == kb.SectionRootCause && isSecondaryCause(h.text):
			secondary = append(secondary, "**"+h.text+"**\n\n"+body)
		case h.kind == kb.SectionRootCause && own == kb.SectionRootCause:
			causes = append(causes, body)
		case h.kind == kb.SectionRootCause && len(causes) > 0:
			causes[len(causes)-1] = joinText(causes[len(causes)-1], subsection(h, body))
		case h.kind == kb.SectionFix && h.options:
			options = append(options, subsection(h, body))
		case h.kind == kb.SectionFix:
			fixes = append(fixes, subsection(h, body))
		case h.kind != "":
			text[h.kind] = append(text[h.kind], subsection(h, body))
		}
	}
	inc.CauseStatus, inc.CauseFrom = kb.CauseKnown, kb.CauseFromSection
	if len(causes) > 0 {
		inc.RootCause = causes[len(causes)-1]
		inc.Superseded = causes[:len(causes)-1]
	}
	for _, s := range secondary {
		inc.RootCause = joinText(inc.RootCause, s)
	}
	switch {
	case strings.TrimSpace(inc.RootCause) == "":
		// No root-cause section: the prose may still say it (fillFromProse).
		inc.RootCause, inc.CauseStatus, inc.CauseFrom = "", kb.CauseUnknown, kb.CauseFromNone
	case unknownCause(inc.RootCause):
		inc.RootCause, inc.CauseStatus, inc.CauseFrom = "", kb.CauseUnknown, kb.CauseFromStated
	}
	inc.Fix = strings.Join(fixes, "\n\n")
	inc.FixOptions = strings.Join(options, "\n\n")
	if inc.Fix == "" {
		inc.Fix = inc.FixOptions
	}
	set := map[string]*string{
		kb.SectionSummary: &inc.Summary, kb.SectionSymptoms: &inc.Symptoms, kb.SectionImpact: &inc.Impact,
		kb.SectionWorkaround: &inc.Workaround, kb.SectionMonitoring: &inc.Monitoring, kb.SectionTimeline: &inc.Timeline,
		kb.SectionLessons: &inc.Lessons, kb.SectionPrevention: &inc.Prevention, kb.SectionNextSteps: &inc.NextSteps,
		kb.SectionAlternatives: &inc.Alternatives,
	}
	for kind, ptr := range set {
		*ptr = strings.Join(text[kind], "\n\n")
	}
	if inc.Superseded == nil {
		inc.Superseded = []string{}
	}
}

// subsection prefixes a section's text with its heading when it is a
// sub-section, so joined fields stay readable.
func subsection(h heading, body string) string {
	if h.level <= 2 || body == "" {
		return body
	}
	return "**" + h.text + "**\n\n" + body
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// writeupID picks the incident id: front matter, else a library id leading
// the first line, else the file name. A write-up without a file name (an
// upload of a bare body, a pasted form) is named from its content: a slug of
// its title and a short hash of its text, so two different uploads never
// share an id and the same upload twice gets the same one.
func writeupID(fmID string, body []byte, name, title string) (string, error) {
	if fmID != "" {
		if !validID(fmID) {
			return "", fmt.Errorf("front matter id %q: use letters, digits, '.', '_' and '-'", fmID)
		}
		return fmID, nil
	}
	first := body
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if m := libraryID.FindSubmatch(bytes.TrimLeft(first, "# ")); m != nil {
		return string(m[1]), nil
	}
	if baseName(name) != "" {
		return slug(baseName(name)), nil
	}
	t := slug(strings.ToLower(title))
	if len(t) > 60 {
		t = strings.TrimRight(t[:60], "-._")
	}
	return t + "-" + contentHash(body)[:8], nil
}

var libraryID = regexp.MustCompile(`^([A-Z][A-Z0-9]{0,7}-\d{1,7})\b`)

func validID(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return s[0] != '.' && s[0] != '-'
}

// slug turns a file name into a valid id.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "incident"
	}
	if len(out) > 200 {
		out = out[:200]
	}
	return out
}

func linesOf(segs *text.Segments, src []byte) []string {
	out := make([]string, 0, segs.Len())
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		out = append(out, strings.TrimRight(string((&s).Value(src)), "\r\n"))
	}
	return out
}

func joinSegments(segs *text.Segments, src []byte) []byte {
	var b bytes.Buffer
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		b.Write((&s).Value(src))
	}
	return b.Bytes()
}

// inlineText returns the plain text of an inline container (heading, link).
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for g := c.FirstChild(); g != nil; g = g.NextSibling() {
				if t, ok := g.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func lineStartAt(src []byte, off int) int {
	off = min(off, len(src))
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// lineEndAt returns the offset after the line holding off, skipping a
// setext underline that follows it.
func lineEndAt(src []byte, off int) int {
	off = min(off, len(src))
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	next := off + i + 1
	if j := bytes.IndexByte(src[next:], '\n'); j >= 0 {
		if u := bytes.TrimSpace(src[next : next+j]); len(u) > 0 && (bytes.Trim(u, "=") == nil || len(bytes.Trim(u, "=")) == 0 || len(bytes.Trim(u, "-")) == 0) {
			return next + j + 1
		}
	}
	return next
}
