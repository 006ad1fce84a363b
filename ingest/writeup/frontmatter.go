package writeup

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/incidex/incidex/kb"
)

// frontMatter is the optional YAML header of a Markdown write-up, after
// its field names were mapped (see fmFields): the dialects of postmortem
// collections name the same things differently.
type frontMatter struct {
	ID, Title, Date, End string
	Organisation         string
	Severity, Likelihood string
	TellApart            string
	Summary, RootCause   string
	Impact, Fix          string
	Tags, Services       []string
	Overlaps, Causes     []string
	Pins, Signatures     []string
	Examples, Counter    []string
	Refs                 []kb.Ref
	Extra                []kb.Field
	Warnings             []string
}

// fmField is where a front-matter key goes: a string or a list field.
type fmField struct {
	str  func(fm *frontMatter) *string
	list func(fm *frontMatter) *[]string
	refs bool
}

func strField(f func(fm *frontMatter) *string) fmField    { return fmField{str: f} }
func listField(f func(fm *frontMatter) *[]string) fmField { return fmField{list: f} }

// fmFields maps front-matter keys (lower-cased, '-' read as '_') to the
// incident. The first key of a group that has a value wins for strings;
// lists are joined. The README's "Front matter" section documents it.
var fmFields = map[string]fmField{
	"id": strField(func(fm *frontMatter) *string { return &fm.ID }),

	"title": strField(func(fm *frontMatter) *string { return &fm.Title }),
	"name":  strField(func(fm *frontMatter) *string { return &fm.Title }),

	"date":        strField(func(fm *frontMatter) *string { return &fm.Date }),
	"start_time":  strField(func(fm *frontMatter) *string { return &fm.Date }),
	"started_at":  strField(func(fm *frontMatter) *string { return &fm.Date }),
	"start":       strField(func(fm *frontMatter) *string { return &fm.Date }),
	"end_time":    strField(func(fm *frontMatter) *string { return &fm.End }),
	"resolved_at": strField(func(fm *frontMatter) *string { return &fm.End }),
	"ended_at":    strField(func(fm *frontMatter) *string { return &fm.End }),

	"organisation": strField(func(fm *frontMatter) *string { return &fm.Organisation }),
	"organization": strField(func(fm *frontMatter) *string { return &fm.Organisation }),
	"org":          strField(func(fm *frontMatter) *string { return &fm.Organisation }),
	"company":      strField(func(fm *frontMatter) *string { return &fm.Organisation }),

	"severity": strField(func(fm *frontMatter) *string { return &fm.Severity }),
	"sev":      strField(func(fm *frontMatter) *string { return &fm.Severity }),
	"priority": strField(func(fm *frontMatter) *string { return &fm.Severity }),

	"summary":     strField(func(fm *frontMatter) *string { return &fm.Summary }),
	"description": strField(func(fm *frontMatter) *string { return &fm.Summary }),
	"root_cause":  strField(func(fm *frontMatter) *string { return &fm.RootCause }),
	"impact":      strField(func(fm *frontMatter) *string { return &fm.Impact }),
	"resolution":  strField(func(fm *frontMatter) *string { return &fm.Fix }),
	"fix":         strField(func(fm *frontMatter) *string { return &fm.Fix }),

	"likelihood": strField(func(fm *frontMatter) *string { return &fm.Likelihood }),
	"tell_apart": strField(func(fm *frontMatter) *string { return &fm.TellApart }),

	"tags":       listField(func(fm *frontMatter) *[]string { return &fm.Tags }),
	"keywords":   listField(func(fm *frontMatter) *[]string { return &fm.Tags }),
	"categories": listField(func(fm *frontMatter) *[]string { return &fm.Tags }),
	"labels":     listField(func(fm *frontMatter) *[]string { return &fm.Tags }),

	"services":   listField(func(fm *frontMatter) *[]string { return &fm.Services }),
	"service":    listField(func(fm *frontMatter) *[]string { return &fm.Services }),
	"product":    listField(func(fm *frontMatter) *[]string { return &fm.Services }),
	"products":   listField(func(fm *frontMatter) *[]string { return &fm.Services }),
	"components": listField(func(fm *frontMatter) *[]string { return &fm.Services }),
	"component":  listField(func(fm *frontMatter) *[]string { return &fm.Services }),

	"url":         {refs: true},
	"archive_url": {refs: true},
	"link":        {refs: true},
	"links":       {refs: true},
	"references":  {refs: true},
	"source_url":  {refs: true},

	"overlaps":        listField(func(fm *frontMatter) *[]string { return &fm.Overlaps }),
	"causes":          listField(func(fm *frontMatter) *[]string { return &fm.Causes }),
	"pin":             listField(func(fm *frontMatter) *[]string { return &fm.Pins }),
	"pins":            listField(func(fm *frontMatter) *[]string { return &fm.Pins }),
	"signatures":      listField(func(fm *frontMatter) *[]string { return &fm.Signatures }),
	"examples":        listField(func(fm *frontMatter) *[]string { return &fm.Examples }),
	"counterexamples": listField(func(fm *frontMatter) *[]string { return &fm.Counter }),
}

// splitFrontMatter separates a leading "---" YAML block from the body. It
// returns the YAML, the body, and the byte offset of the body.
func splitFrontMatter(data []byte) (fm, body []byte, off int) {
	if !bytes.HasPrefix(data, []byte("---\n")) && !bytes.HasPrefix(data, []byte("---\r\n")) {
		return nil, data, 0
	}
	start := bytes.IndexByte(data, '\n') + 1
	for i := start; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		line := data[i:]
		next := len(data)
		if end >= 0 {
			line, next = data[i:i+end], i+end+1
		}
		if t := bytes.TrimRight(line, " \t\r"); bytes.Equal(t, []byte("---")) || bytes.Equal(t, []byte("...")) {
			return data[start:i], data[next:], next
		}
		i = next
	}
	return nil, data, 0 // no closing line: not front matter
}

// parseFrontMatter decodes the YAML header and maps its keys. A field of
// the wrong type (a map where a list is expected) is left out with a
// warning; only YAML that does not parse at all is an error.
func parseFrontMatter(src []byte) (fm frontMatter, err error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return fm, nil
	}
	// The YAML decoder panics on some malformed input (found by fuzzing:
	// a tag on a list field); a write-up must never crash incidex.
	defer func() {
		if r := recover(); r != nil {
			fm, err = frontMatter{}, errors.New("front matter: malformed YAML")
		}
	}()
	var raw any
	if err := yaml.UnmarshalWithOptions(src, &raw, yaml.UseOrderedMap()); err != nil {
		// People write front matter by hand: a title with quotes and
		// more text after them, or a colon in it, is not YAML. Read such
		// a header as the plain "key: value" lines it is, and say so.
		items, ok := plainFrontMatter(src)
		if !ok {
			return fm, fmt.Errorf("front matter: %s", firstLine(err.Error()))
		}
		for _, it := range items {
			fm.set(fmt.Sprint(it.Key), it.Value)
		}
		fm.Warnings = append(fm.Warnings, fmt.Sprintf("front matter is not valid YAML (%s); read as plain key: value lines", firstLine(err.Error())))
		return fm, nil
	}
	items, ok := raw.(yaml.MapSlice)
	if !ok {
		if raw == nil {
			return fm, nil
		}
		return fm, errors.New("front matter: not a map of fields")
	}
	for _, it := range items {
		fm.set(fmt.Sprint(it.Key), it.Value)
	}
	return fm, nil
}

// plainFrontMatter reads a header of "key: value" lines, each value as
// written (a [a, b] value and "- item" lines under a key are lists). It
// reports false when a line is neither.
func plainFrontMatter(src []byte) (yaml.MapSlice, bool) {
	var items yaml.MapSlice
	for _, raw := range strings.Split(string(src), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case strings.HasPrefix(trimmed, "- ") && line != trimmed && len(items) > 0:
			last := &items[len(items)-1]
			list, _ := last.Value.([]any)
			if last.Value != nil && list == nil {
				return nil, false
			}
			last.Value = append(list, unquote(strings.TrimSpace(trimmed[2:])))
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || line != strings.TrimLeft(line, " \t") || !plainKey(k) {
			return nil, false
		}
		v = strings.TrimSpace(v)
		var val any
		switch {
		case strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") && !strings.HasSuffix(v, "]"):
			return nil, false // a broken flow collection, not a plain value
		case v == "":
		case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
			var list []any
			for _, x := range strings.Split(v[1:len(v)-1], ",") {
				if x = unquote(strings.TrimSpace(x)); x != "" {
					list = append(list, x)
				}
			}
			val = list
		default:
			val = unquote(v)
		}
		items = append(items, yaml.MapItem{Key: k, Value: val})
	}
	return items, len(items) > 0
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unquote strips the quotes around a value that is one quoted string.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] && !strings.ContainsRune(v[1:len(v)-1], rune(v[0])) {
		return v[1 : len(v)-1]
	}
	return v
}

func (fm *frontMatter) set(key string, v any) {
	k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "-", "_")
	f, known := fmFields[k]
	switch {
	case v == nil:
	case !known:
		if s, ok := scalarOrList(v); ok {
			fm.Extra = append(fm.Extra, kb.Field{Key: key, Value: s})
		} else {
			fm.Extra = append(fm.Extra, kb.Field{Key: key, Value: flatten(v)})
		}
	case f.refs:
		refs, ok := refsOf(v)
		if !ok {
			fm.warn(key, "want a URL or a list of URLs", v)
			return
		}
		fm.Refs = append(fm.Refs, refs...)
	case f.list != nil:
		list, ok := listOf(v)
		if !ok {
			fm.warn(key, "want a list or a string", v)
			return
		}
		*f.list(fm) = append(*f.list(fm), list...)
	default:
		s, ok := scalar(v)
		if !ok {
			fm.warn(key, "want a single value", v)
			return
		}
		if p := f.str(fm); *p == "" {
			*p = strings.TrimSpace(s)
		}
	}
}

func (fm *frontMatter) warn(key, msg string, v any) {
	got := "a value"
	switch v.(type) {
	case yaml.MapSlice:
		got = "a map"
	case []any:
		got = "a list"
	}
	fm.Warnings = append(fm.Warnings, fmt.Sprintf("front matter field %q: %s, got %s; left out", key, msg, got))
}

// scalar returns the text of a YAML scalar.
func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case yaml.MapSlice, map[string]any, []any:
		return "", false
	case time.Time:
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
			return t.Format("2006-01-02"), true
		}
		return t.Format(time.RFC3339), true
	}
	return fmt.Sprint(v), true
}

// listOf accepts a YAML list of scalars or a comma-separated string.
func listOf(v any) ([]string, bool) {
	if l, ok := v.([]any); ok {
		var out []string
		for _, x := range l {
			s, ok := scalar(x)
			if !ok {
				return nil, false
			}
			if s = strings.TrimSpace(s); s != "" && x != nil {
				out = append(out, s)
			}
		}
		return out, true
	}
	s, ok := scalar(v)
	if !ok {
		return nil, false
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out, true
}

// refsOf accepts a URL, a list of URLs, or a list of {title|text|name, url}.
func refsOf(v any) ([]kb.Ref, bool) {
	one := func(x any) (kb.Ref, bool) {
		if m, ok := x.(yaml.MapSlice); ok {
			var r kb.Ref
			for _, it := range m {
				s, _ := scalar(it.Value)
				switch strings.ToLower(fmt.Sprint(it.Key)) {
				case "url", "href", "link":
					r.URL = s
				case "title", "text", "name":
					r.Text = s
				}
			}
			r.Text = firstNonEmpty(r.Text, r.URL)
			return r, r.Text != ""
		}
		s, ok := scalar(x)
		s = strings.TrimSpace(s)
		return kb.Ref{Text: s, URL: linkURL(s)}, ok && s != ""
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	}
	var out []kb.Ref
	for _, x := range list {
		r, ok := one(x)
		if !ok {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// linkURL keeps s as a link only when it is an http(s) URL: a reference
// never becomes a javascript: or data: link.
func linkURL(s string) string {
	l := strings.ToLower(s)
	if strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") {
		return s
	}
	return ""
}

func scalarOrList(v any) (string, bool) {
	if s, ok := scalar(v); ok {
		return s, true
	}
	if l, ok := listOf(v); ok {
		return strings.Join(l, ", "), true
	}
	return "", false
}

// flatten writes a nested value as "k: v; k2: v2" for display.
func flatten(v any) string {
	switch t := v.(type) {
	case yaml.MapSlice:
		parts := make([]string, 0, len(t))
		for _, it := range t {
			parts = append(parts, fmt.Sprint(it.Key)+": "+flatten(it.Value))
		}
		return strings.Join(parts, "; ")
	case []any:
		parts := make([]string, 0, len(t))
		for _, x := range t {
			parts = append(parts, flatten(x))
		}
		return strings.Join(parts, ", ")
	}
	s, _ := scalar(v)
	return s
}

// normSeverity maps the severity scales teams use onto one: critical,
// high, medium, low. A value it does not know stays as written.
func normSeverity(s string) string {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.NewReplacer("-", "", "_", "", " ", "").Replace(t)
	switch t {
	case "":
		return ""
	case "sev0", "sev1", "s0", "s1", "p0", "p1", "0", "1", "critical", "crit", "blocker", "emergency", "major":
		return "critical"
	case "sev2", "s2", "p2", "2", "high", "severe":
		return "high"
	case "sev3", "s3", "p3", "3", "medium", "moderate", "med", "normal":
		return "medium"
	case "sev4", "sev5", "s4", "s5", "p4", "p5", "4", "5", "low", "minor", "trivial", "info":
		return "low"
	}
	return strings.TrimSpace(s)
}

// duration is the time between the start and end values, as "2h15m", or
// "" when either is not a time or the end is not after the start.
func duration(start, end string) string {
	a, ok1 := parseInstant(start)
	b, ok2 := parseInstant(end)
	if !ok1 || !ok2 || !b.After(a) {
		return ""
	}
	d := b.Sub(a).Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h >= 48:
		return fmt.Sprintf("%dd%dh", h/24, h%24)
	case h > 0 && m > 0:
		return fmt.Sprintf("%dh%dm", h, m)
	case h > 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dm", max(m, 1))
}

func parseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04 MST", "2006-01-02 15:04:05 MST"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
