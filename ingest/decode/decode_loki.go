package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	if len(b.req.Body) == 0 {
		return nil
	}
	pr, err := lokiPush(b.req, b.lim.MaxBodyBytes)
	if err != nil {
		return err
	}
	for _, s := range pr.Streams {
		stream := b.lokiStream(parseLabelSet(s.Labels))
		for _, e := range s.Entries {
			if err := b.addLokiEntry(stream, e.Timestamp, e.Line, metadataMap(e.StructuredMetadata)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lokiPush unmarshals a push body. Loki bodies are snappy blocks whatever the
// Content-Encoding says, but a server that already undid "Content-Encoding: snappy"
// (Alloy sets it) hands over the raw protobuf, so both are tried, the likelier first.
func lokiPush(req Request, limit int64) (*push.PushRequest, error) {
	rawFirst := strings.EqualFold(strings.TrimSpace(req.ContentEncoding), "snappy")
	if rawFirst {
		if pr, ok := unmarshalPush(bytes.Clone(req.Body)); ok {
			return pr, nil
		}
	}
	out, err := snappyBlock(req.Body, limit)
	if err == nil {
		var pr push.PushRequest
		if err = pr.Unmarshal(out); err == nil {
			return &pr, nil
		}
		err = fmt.Errorf("protobuf: %w", err)
	}
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	if !rawFirst {
		if pr, ok := unmarshalPush(bytes.Clone(req.Body)); ok {
			return pr, nil
		}
	}
	return nil, fmt.Errorf("loki push: %w", err)
}

// unmarshalPush parses raw protobuf, accepting it only if it holds streams: arbitrary
// bytes often parse as a message of unknown fields. The strings of the result alias p.
func unmarshalPush(p []byte) (*push.PushRequest, bool) {
	var pr push.PushRequest
	if len(p) == 0 || pr.Unmarshal(p) != nil || len(pr.Streams) == 0 {
		return nil, false
	}
	return &pr, true
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

// lokiStream holds what a stream's entries share: their labels and level.
type lokiStream struct {
	labels map[string]string
	level  string
}

func (b *batch) lokiStream(kv map[string]string) lokiStream {
	ls := b.labels()
	setAliased(ls, kv, flatAliases, true)
	return lokiStream{labels: ls.m, level: normLevel(kv["level"])}
}

// addLokiEntry adds one log line. A line that is a JSON record (Fluent Bit's loki output
// sends {"log":"..."}) gives its message, level and labels; stream labels come first.
func (b *batch) addLokiEntry(stream lokiStream, ts time.Time, line string, meta map[string]string) error {
	r := Record{Time: ts, Message: line, Level: stream.level}
	ls := &labelSet{m: maps.Clone(stream.labels), max: b.lim.MaxLabels}
	setAliased(ls, meta, nil, true)
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
	body := trimBOM(b.req.Body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("loki push: body is not a JSON push request: %w", jsonErr(err, body, 0, len(b.req.Body)-len(body)))
	}
	for _, s := range p.Streams {
		stream := b.lokiStream(stringMap(s.Stream))
		for _, raw := range s.Values {
			if err := b.addLokiJSONValue(stream, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// addLokiJSONValue adds one [ts, line] or [ts, line, {structured metadata}] entry.
func (b *batch) addLokiJSONValue(stream lokiStream, raw json.RawMessage) error {
	var v []json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) < 2 {
		b.reject("value is not [timestamp, line]")
		return nil
	}
	t, ok := lokiTimestamp(v[0])
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

// lokiTimestamp reads a JSON timestamp: a string of Unix nanoseconds, or leniently a
// number.
func lokiTimestamp(raw json.RawMessage) (time.Time, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, false
		}
		return parseTime(s)
	}
	return parseTime(json.Number(raw))
}
