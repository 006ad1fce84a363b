package writeup

import (
	"bytes"
	"regexp"
	"strings"
)

// Tickets and wiki pages pasted from Jira or Confluence are written in
// their wiki markup: "h2. Root cause" headings, {code} and {noformat}
// blocks, {{monospace}}, "# " numbered items, {quote} and "bq. " quotes.
// Such text is turned into the Markdown it means before it is parsed; in
// Markdown its "# Told the user ..." items would be headings.

var (
	jiraHeading = regexp.MustCompile(`^h([1-6])\.\s+(.*)$`)
	jiraFence   = regexp.MustCompile(`^\s*\{(code|noformat)(?::([^}|]*))?[^}]*\}\s*(.*)$`)
	jiraNumber  = regexp.MustCompile(`^(#+)\s+(.*)$`)
	jiraMono    = regexp.MustCompile(`\{\{([^{}]+)\}\}`)
)

// isJira reports wiki markup: a "hN. " heading, or a {code} or
// {noformat} block, at the start of a line.
func isJira(data []byte) bool {
	for l := range strings.SplitSeq(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if jiraHeading.MatchString(l) || strings.HasPrefix(strings.TrimSpace(l), "{code") || strings.HasPrefix(strings.TrimSpace(l), "{noformat}") {
			return true
		}
	}
	return false
}

// jiraToMarkdown turns wiki markup into Markdown, or returns data as it is
// when it has none.
func jiraToMarkdown(data []byte) []byte {
	if !isJira(data) {
		return data
	}
	var b bytes.Buffer
	fence := "" // the {code} or {noformat} block open, if any
	quote := false
	for l := range strings.SplitSeq(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimSpace(l)
		if fence != "" {
			if i := strings.Index(l, "{"+fence+"}"); i >= 0 {
				if pre := l[:i]; strings.TrimSpace(pre) != "" {
					b.WriteString(pre + "\n")
				}
				b.WriteString("````\n")
				fence = ""
				continue
			}
			b.WriteString(l + "\n")
			continue
		}
		if m := jiraFence.FindStringSubmatch(l); m != nil {
			fence = m[1]
			b.WriteString("````" + strings.TrimSpace(m[2]) + "\n")
			if rest := m[3]; rest != "" {
				if i := strings.Index(rest, "{"+fence+"}"); i >= 0 { // one line: {code}x{code}
					b.WriteString(rest[:i] + "\n````\n")
					fence = ""
					continue
				}
				b.WriteString(rest + "\n")
			}
			continue
		}
		if t == "{quote}" {
			quote = !quote
			continue
		}
		prefix := ""
		if quote {
			prefix = "> "
		}
		switch m1, m2 := jiraHeading.FindStringSubmatch(t), jiraNumber.FindStringSubmatch(t); {
		case m1 != nil:
			l = strings.Repeat("#", int(m1[1][0]-'0')) + " " + m1[2]
		case m2 != nil:
			l = strings.Repeat("   ", len(m2[1])-1) + "1. " + m2[2]
		case strings.HasPrefix(t, "bq. "):
			l = "> " + t[len("bq. "):]
		}
		b.WriteString(prefix + jiraMono.ReplaceAllString(l, "`$1`") + "\n")
	}
	if fence != "" {
		b.WriteString("````\n")
	}
	return b.Bytes()
}
