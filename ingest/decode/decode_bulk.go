package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Bulk item statuses, as Elasticsearch reports them.
const (
	bulkCreated  = 201
	bulkDeleted  = 200
	bulkRejected = 400
)

// bulkAction is one parsed action line.
type bulkAction struct {
	action, index, id string
}

// decodeBulk decodes an Elasticsearch _bulk body: NDJSON action lines, each but delete
// followed by a source line. Every action gets a Result.Bulk item, in order, so the
// server can answer with the per-item statuses Filebeat and Fluent Bit check.
func decodeBulk(b *batch) error {
	lines := &lineReader{body: b.req.Body}
	defIndex := bulkPathIndex(b.req.Path)
	sawAction := false
	for {
		line, ok := lines.next()
		if !ok {
			break
		}
		a, err := parseBulkAction(line, lines.at, defIndex)
		if err != nil {
			b.rejectBulk(bulkAction{action: "index", index: defIndex}, "action line: %v", err)
			if next, ok := lines.peek(); ok && !isBulkAction(next) {
				lines.next()
			}
			continue
		}
		sawAction = true
		if err := b.bulkSource(a, lines); err != nil {
			return err
		}
	}
	if !sawAction && b.res.Rejected > 0 {
		return fmt.Errorf("elasticsearch bulk: no valid action line: %s", b.res.Errors[0])
	}
	return nil
}

// bulkSource handles the source line of action a, if it has one.
func (b *batch) bulkSource(a bulkAction, lines *lineReader) error {
	if a.action == "delete" {
		b.res.Bulk = append(b.res.Bulk, BulkItem{Action: a.action, Index: a.index, ID: a.id, Status: bulkDeleted})
		return nil
	}
	line, ok := lines.next()
	if !ok {
		b.rejectBulk(a, "%s action without a source line", a.action)
		return nil
	}
	doc, err := bulkDoc(a.action, line, lines.at)
	if err != nil {
		b.rejectBulk(a, "source: %v", err)
		return nil
	}
	before := b.res.Rejected
	if err := b.addBulkDoc(a, doc); err != nil {
		return err
	}
	status := bulkCreated
	if b.res.Rejected > before {
		status = bulkRejected
	}
	b.res.Bulk = append(b.res.Bulk, BulkItem{Action: a.action, Index: a.index, ID: a.id, Status: status})
	return nil
}

// addBulkDoc adds a source document as a record with the action's id and index.
func (b *batch) addBulkDoc(a bulkAction, doc map[string]any) error {
	n := len(b.res.Records)
	if err := b.addFields(doc, bulkProfile, time.Time{}); err != nil {
		return err
	}
	if len(b.res.Records) > n {
		r := &b.res.Records[n]
		r.ID = a.id
		if a.index != "" && len(r.Labels) < b.lim.MaxLabels {
			ls := labelSet{m: r.Labels, max: b.lim.MaxLabels}
			ls.set("index", a.index)
			r.Labels = ls.m
		}
	}
	return nil
}

func (b *batch) rejectBulk(a bulkAction, format string, args ...any) {
	b.reject(format, args...)
	b.res.Bulk = append(b.res.Bulk, BulkItem{Action: a.action, Index: a.index, ID: a.id, Status: bulkRejected})
}

// parseBulkAction reads {"<action>": {"_index": ..., "_id": ...}}; the line starts
// at offset at of the body.
func parseBulkAction(line []byte, at int, defIndex string) (bulkAction, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return bulkAction{}, jsonErr(err, line, 0, at)
	}
	if len(m) != 1 {
		return bulkAction{}, fmt.Errorf("want one action, got %d keys", len(m))
	}
	for action, raw := range m {
		switch action {
		case "index", "create", "update", "delete":
		default:
			return bulkAction{}, fmt.Errorf("unknown action %q", action)
		}
		var meta struct {
			Index string `json:"_index"`
			ID    any    `json:"_id"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return bulkAction{}, fmt.Errorf("%s metadata: %w", action, jsonErr(err, raw, 0, -1))
		}
		a := bulkAction{action: action, index: meta.Index}
		a.id, _ = scalarString(meta.ID)
		if a.index == "" {
			a.index = defIndex
		}
		return a, nil
	}
	return bulkAction{}, errors.New("BUG: unreachable")
}

func isBulkAction(line []byte) bool {
	_, err := parseBulkAction(line, 0, "")
	return err == nil
}

// bulkDoc parses a source line, which starts at offset at of the body; for update
// it is the "doc" (or "upsert") inside.
func bulkDoc(action string, line []byte, at int) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonErr(err, line, 0, at)
	}
	if doc == nil {
		return nil, errors.New("not an object")
	}
	if action != "update" {
		return doc, nil
	}
	for _, k := range []string{"doc", "upsert"} {
		if d, ok := doc[k].(map[string]any); ok {
			return d, nil
		}
	}
	return nil, errors.New("update without a doc")
}

// bulkPathIndex returns the index of a /{index}/_bulk path, or "".
func bulkPathIndex(path string) string {
	path, _, _ = strings.Cut(path, "?")
	path = strings.TrimSuffix(strings.TrimSuffix(path, "/"), "/_bulk")
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	if path == "" || strings.HasPrefix(path, "_") {
		return ""
	}
	return path
}

// lineReader yields the non-blank lines of a body.
type lineReader struct {
	body []byte
	pos  int // offset of body[0] in the request body
	at   int // offset of the line next returned
}

func (l *lineReader) next() ([]byte, bool) {
	for len(l.body) > 0 {
		raw, start := l.body, l.pos
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw, l.body = raw[:i], l.body[i+1:]
		} else {
			l.body = nil
		}
		l.pos += len(raw) + 1
		if line := bytes.TrimSpace(raw); len(line) > 0 {
			l.at = start + len(raw) - len(bytes.TrimLeftFunc(raw, unicode.IsSpace))
			return line, true
		}
	}
	return nil, false
}

func (l *lineReader) peek() ([]byte, bool) {
	saved, pos, at := l.body, l.pos, l.at
	line, ok := l.next()
	l.body, l.pos, l.at = saved, pos, at
	return line, ok
}
