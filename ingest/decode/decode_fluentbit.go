package decode

import (
	"time"
)

// decodeFluentBit decodes a Fluent Bit http output body: json (array), json_lines,
// json_stream, or msgpack records [[EventTime, meta], body] / [EventTime, body].
func decodeFluentBit(b *batch) error {
	if isMsgpack(b.req) {
		return decodeMsgpack(b, fluentProfile)
	}
	return decodeJSONRecords(b, fluentProfile)
}

// decodeFluentd decodes a Fluentd out_http body: NDJSON, a JSON array (json_array), bare
// msgpack maps (application/x-msgpack), or text/plain from its single_value formatter.
func decodeFluentd(b *batch) error {
	switch {
	case isMsgpack(b.req):
		return decodeMsgpack(b, fluentdProfile)
	case isTextContent(b.req.ContentType):
		return decodeText(b)
	}
	return decodeJSONRecords(b, fluentdProfile)
}

// isMsgpack tells a msgpack body by its Content-Type or, failing that, by its first byte:
// msgpack arrays and maps start with bytes that no JSON text starts with.
func isMsgpack(req Request) bool {
	switch mediaType(req.ContentType) {
	case "application/msgpack", "application/x-msgpack", "application/vnd.msgpack":
		return true
	case "application/json", "application/x-ndjson", "text/plain":
		return false
	}
	return len(req.Body) > 0 && isMsgpackContainer(req.Body[0])
}

func isMsgpackContainer(c byte) bool {
	return (c >= 0x80 && c <= 0x9f) || (c >= 0xdc && c <= 0xdf)
}

// Fluent Bit group markers: records whose seconds are these carry group metadata.
const (
	groupStart = 0xFFFFFFFF
	groupEnd   = 0xFFFFFFFE
)

// addMsgpackRecord adds one top-level msgpack value: a Fluent Bit record or a bare map.
func (b *batch) addMsgpackRecord(v any, p *profile) error {
	switch x := v.(type) {
	case map[string]any:
		return b.addFields(x, p, time.Time{})
	case []any:
		if len(x) != 2 {
			b.reject("record is an array of %d elements, want [time, body]", len(x))
			return nil
		}
		t, marker := fluentTime(x[0])
		if marker {
			return nil
		}
		return b.addValue(x[1], p, t)
	}
	b.reject("record is %s, not an array or map", kindOf(v))
	return nil
}

// fluentTime reads the header of a Fluent Bit record: [EventTime, metadata] (v2) or a
// bare EventTime, integer or float seconds. marker reports a group start or end record.
func fluentTime(h any) (t time.Time, marker bool) {
	if hdr, ok := h.([]any); ok && len(hdr) > 0 {
		h = hdr[0]
	}
	var sec int64
	switch x := h.(type) {
	case eventTime:
		sec = int64(x.sec)
		t = time.Unix(sec, int64(x.nsec))
	case int64:
		sec = x
		t, _ = parseTime(x)
	case uint64:
		sec = int64(x & 0xFFFFFFFF)
		t, _ = parseTime(x)
	case float64:
		sec = int64(x)
		t, _ = parseTime(x)
	}
	if sec == groupStart || sec == groupEnd || sec == -1 || sec == -2 {
		return time.Time{}, true
	}
	if sec <= 0 {
		return time.Time{}, false
	}
	return t.UTC(), false
}
