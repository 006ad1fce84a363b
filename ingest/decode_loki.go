package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/loki/pkg/push"
)

// decodeLoki decodes a Loki push body: JSON when the Content-Type says so (or the body
// is a JSON object and no type was given), else a snappy-block protobuf PushRequest.
func decodeLoki(b *batch) error {
	if isLokiJSON(b.req) {
		return decodeLokiJSON(b)
	}
	return decodeLokiProto(b)
}

func isLokiJSON(req Request) bool {
	switch mt := mediaType(req.ContentType); {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return true
	case mt == "":
		body := trimBOM(req.Body)
		c := firstNonSpace(body, 0)
		return c >= 0 && body[c] == '{'
	}
	return false
}

func decodeLokiProto(b *batch) error {
	raw, err := lokiProtoBytes(b.req, b.lim.MaxBodyBytes)
	if err != nil {
		return err
	}
	var pr push.PushRequest
	if err := pr.Unmarshal(raw); err != nil {
		return fmt.Errorf("loki push: protobuf: %w", err)
	}
	for _, s := range pr.Streams {
		stream := parseLabelSet(s.Labels)
		for _, e := range s.Entries {
			if err := b.addLokiEntry(stream, e.Timestamp, e.Line, metadataMap(e.StructuredMetadata)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lokiProtoBytes returns the protobuf bytes of a push body. Loki bodies are snappy
// blocks whatever the Content-Encoding says, but a server that already undid
// "Content-Encoding: snappy" (Alloy sets it) hands over the raw protobuf, so both are
// tried, the likelier first.
func lokiProtoBytes(req Request, limit int64) ([]byte, error) {
	body := req.Body
	rawFirst := strings.EqualFold(strings.TrimSpace(req.ContentEncoding), "snappy")
	if rawFirst && isPushRequest(body) {
		return bytes.Clone(body), nil
	}
	out, err := snappyBlock(body, limit)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrTooLarge):
		return nil, err
	case !rawFirst && isPushRequest(body):
		return bytes.Clone(body), nil
	}
	return nil, fmt.Errorf("loki push: %w", err)
}

func isPushRequest(body []byte) bool {
	var pr push.PushRequest
	return len(body) > 0 && pr.Unmarshal(body) == nil && len(pr.Streams) > 0
}

func metadataMap(ls push.LabelsAdapter) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

// addLokiEntry adds one log line. A line that is a JSON record (Fluent Bit's loki output
// sends {"log":"..."}) gives its message, level and labels; stream labels come first.
func (b *batch) addLokiEntry(stream map[string]string, ts time.Time, line string, meta map[string]string) error {
	r := Record{Time: ts, Message: line}
	ls := b.labels()
	setAliased(ls, stream, flatAliases, true)
	setAliased(ls, meta, nil, true)
	r.Level = normLevel(stream["level"])
	if r.Level == "" {
		r.Level = normLevel(meta["level"])
	}
	if m := jsonObject(line); m != nil {
		if msg, ok, _ := messageOf(m, genericProfile.messageKeys); ok {
			r.Message = msg
			if r.Level == "" {
				r.Level = levelOf(m)
			}
			recordLabels(ls, m)
		}
	}
	if inner, lvl, ok := unwrapJSON(r.Message); ok {
		r.Message = inner
		if r.Level == "" {
			r.Level = lvl
		}
	}
	r.Labels = ls.m
	return b.add(r)
}

// lokiJSONPush is the v1 JSON push body.
type lokiJSONPush struct {
	Streams []struct {
		Stream map[string]any    `json:"stream"`
		Values []json.RawMessage `json:"values"`
	} `json:"streams"`
}

func decodeLokiJSON(b *batch) error {
	var p lokiJSONPush
	dec := json.NewDecoder(bytes.NewReader(trimBOM(b.req.Body)))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("loki push: body is not a JSON push request: %w", jsonErr(err))
	}
	for _, s := range p.Streams {
		stream := stringMap(s.Stream)
		for _, raw := range s.Values {
			if err := b.addLokiJSONValue(stream, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// addLokiJSONValue adds one [ts, line] or [ts, line, {structured metadata}] entry.
func (b *batch) addLokiJSONValue(stream map[string]string, raw json.RawMessage) error {
	var v []json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) < 2 {
		b.reject("value is not [timestamp, line]")
		return nil
	}
	var ts any
	if err := unmarshalNumber(v[0], &ts); err != nil {
		b.reject("timestamp: %v", jsonErr(err))
		return nil
	}
	t, ok := parseTime(ts)
	if !ok {
		b.reject("timestamp %s is not unix nanoseconds", v[0])
		return nil
	}
	var line string
	if err := json.Unmarshal(v[1], &line); err != nil {
		b.reject("line is not a string")
		return nil
	}
	var meta map[string]string
	if len(v) > 2 {
		meta = lokiJSONMetadata(v[2])
	}
	return b.addLokiEntry(stream, t, line, meta)
}

// lokiJSONMetadata reads structured metadata: a string map, or the query-response shape
// {"structuredMetadata": {...}, "parsed": {...}} that Loki also accepts.
func lokiJSONMetadata(raw json.RawMessage) map[string]string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if sm, ok := m["structuredMetadata"].(map[string]any); ok {
		return stringMap(sm)
	}
	return stringMap(m)
}

// stringMap keeps the scalar values of m, as text.
func stringMap(m map[string]any) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := scalarString(v); ok {
			out[k] = s
		}
	}
	return out
}

func unmarshalNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
