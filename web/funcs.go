package web

import (
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/incidex/incidex/kb"
)

func (e *Engine) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":    e.AssetURL,
		"mark":     Mark,
		"command":  Command,
		"markdown": Markdown,
		"writeup":  Writeup,
		"when":     when,
		"iso":      iso,
		"score":    func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
		"labels":   Labels,
		"plural":   plural,
		"plural64": func(n int64, word string) string { return plural(int(n), word) },
		"join":     strings.Join,
		"fieldName": func(f string) string {
			return strings.ReplaceAll(f, "_", " ")
		},
		"incidentURL": IncidentURL,
		"mb":          func(n int) string { return fmt.Sprintf("%d MB", n>>20) },
		"ackArgs":     func(p Page, r LiveRow) ackArgs { return ackArgs{p, r} },
		"runbook":     Runbook,
	}
}

// IncidentURL is the path of an incident's page.
func IncidentURL(id string) string { return "/incidents/" + url.PathEscape(id) }

type ackArgs struct {
	Page Page
	Row  LiveRow
}

// Mark turns a bleve highlight fragment into HTML: the text is escaped,
// then kb.MarkStart/kb.MarkEnd become <mark> and </mark>. Unbalanced
// markers are ignored, so the output is always well formed.
func Mark(fragment string) template.HTML {
	var b strings.Builder
	open := false
	for len(fragment) > 0 {
		i := strings.IndexAny(fragment, kb.MarkStart+kb.MarkEnd)
		if i < 0 {
			b.WriteString(template.HTMLEscapeString(fragment))
			break
		}
		b.WriteString(template.HTMLEscapeString(fragment[:i]))
		switch {
		case fragment[i:i+1] == kb.MarkStart && !open:
			b.WriteString("<mark>")
			open = true
		case fragment[i:i+1] == kb.MarkEnd && open:
			b.WriteString("</mark>")
			open = false
		}
		fragment = fragment[i+1:]
	}
	if open {
		b.WriteString("</mark>")
	}
	return template.HTML(b.String()) //nolint:gosec // escaped above; tested in funcs_test.go
}

// placeholder is a runbook placeholder such as <namespace>, once escaped.
var placeholder = regexp.MustCompile(`&lt;([A-Za-z][A-Za-z0-9_.-]{0,40})&gt;`)

// Command renders a runbook command as HTML, with placeholders such as
// <namespace> or <node-ip> marked as variables to fill in.
func Command(cmd string) template.HTML {
	s := template.HTMLEscapeString(cmd)
	return template.HTML(placeholder.ReplaceAllString(s, `<var class="ph">&lt;$1&gt;</var>`)) //nolint:gosec // escaped first; the pattern only matches escaped word characters
}

// Labels returns a label map in a stable order: the resource labels first
// (cluster, namespace, workload, pod, container, node), then the rest by name.
func Labels(m map[string]string) []Label {
	order := []string{"cluster", "namespace", "app", "workload", "pod", "container", "node", "host"}
	out := make([]Label, 0, len(m))
	for _, k := range order {
		if v, ok := m[k]; ok && v != "" {
			out = append(out, Label{k, v})
		}
	}
	var rest []string
	for k, v := range m {
		if !slices.Contains(order, k) && v != "" {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, Label{k, m[k]})
	}
	return out
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
