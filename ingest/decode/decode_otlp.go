package decode

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// otlpRecord is one OTLP log record, whichever encoding it came in.
type otlpRecord struct {
	timeNanos, observedNanos uint64
	severity                 int32
	severityText             string
	body                     any // nil, scalar, map[string]any or []any
	attrs                    map[string]string
}

// otlpResourceAliases map resource attributes (semantic conventions) to record labels.
var otlpResourceAliases = []labelAlias{
	{"cluster", []string{"k8s.cluster.name"}},
	{"namespace", []string{"k8s.namespace.name"}},
	{"pod", []string{"k8s.pod.name"}},
	{"container", []string{"k8s.container.name"}},
	{"node", []string{"k8s.node.name"}},
	{"host", []string{"host.name"}},
	{"app", []string{"app", "app.kubernetes.io/name"}},
	{"job", []string{"job"}},
	{"service", []string{"service.name"}},
}

// otlpRecordAliases map log record attributes to record labels; the others are kept as is.
var otlpRecordAliases = []labelAlias{
	{"file", []string{"log.file.path", "log.file.name"}},
	{"stream", []string{"log.iostream"}},
}

// decodeOTLP decodes an OTLP/HTTP ExportLogsServiceRequest, JSON or protobuf.
func decodeOTLP(b *batch) error {
	if isJSONBody(b.req) {
		return decodeOTLPJSON(b)
	}
	return decodeOTLPProto(b)
}

// isJSONBody tells JSON by Content-Type or, without one, by a body starting with '{'.
func isJSONBody(req Request) bool {
	switch mt := mediaType(req.ContentType); mt {
	case "application/json":
		return true
	case "application/x-protobuf", "application/protobuf":
		return false
	}
	body := trimBOM(req.Body)
	c := firstNonSpace(body, 0)
	return c >= 0 && body[c] == '{'
}

// decodeOTLPProto reads the body as LogsData, which has the same wire form as
// ExportLogsServiceRequest (field 1, repeated ResourceLogs) and spares the collector
// package's gRPC dependencies.
func decodeOTLPProto(b *batch) error {
	var data logspb.LogsData
	if err := proto.Unmarshal(b.req.Body, &data); err != nil {
		return fmt.Errorf("otlp: protobuf: %w", err)
	}
	for _, rl := range data.GetResourceLogs() {
		res := kvMap(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				if err := b.addOTLPRecord(res, protoRecord(lr)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func protoRecord(lr *logspb.LogRecord) otlpRecord {
	var body any
	if lr.GetBody() != nil {
		body = anyValue(lr.GetBody(), 0)
	}
	return otlpRecord{
		timeNanos:     lr.GetTimeUnixNano(),
		observedNanos: lr.GetObservedTimeUnixNano(),
		severity:      int32(lr.GetSeverityNumber()),
		severityText:  lr.GetSeverityText(),
		body:          body,
		attrs:         kvMap(lr.GetAttributes()),
	}
}

// anyValue converts an AnyValue to a Go value.
func anyValue(v *commonpb.AnyValue, depth int) any {
	if depth > maxDepth {
		return nil
	}
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return bytesText(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, anyValue(e, depth+1))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := make(map[string]any, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			out[kv.GetKey()] = anyValue(kv.GetValue(), depth+1)
		}
		return out
	}
	return nil
}

// kvMap keeps the attributes that have a scalar value, as text.
func kvMap(kvs []*commonpb.KeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if s, ok := scalarString(anyValue(kv.GetValue(), 0)); ok {
			m[kv.GetKey()] = s
		}
	}
	return m
}

// bytesText shows bytes as text when they are UTF-8, else as base64.
func bytesText(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	return base64.StdEncoding.EncodeToString(p)
}

// addOTLPRecord adds one log record with its resource's attributes.
func (b *batch) addOTLPRecord(res map[string]string, lr otlpRecord) error {
	msg, lvl, ok := otlpBody(lr.body)
	if !ok {
		b.reject("log record has no body")
		return nil
	}
	r := Record{Message: msg, Level: severityLevel(lr.severity, lr.severityText)}
	if r.Level == "" {
		r.Level = lvl
	}
	r.Time = nanosTime(lr.timeNanos)
	if r.Time.IsZero() {
		r.Time = nanosTime(lr.observedNanos)
	}
	if inner, l, ok := unwrapJSON(r.Message); ok {
		r.Message = inner
		if r.Level == "" {
			r.Level = l
		}
	}
	ls := b.labels()
	setAliased(ls, res, otlpResourceAliases, false)
	setAliased(ls, lr.attrs, otlpRecordAliases, true)
	r.Labels = ls.m
	return b.add(r)
}

// otlpBody renders a body as the message: a string as is, a map by its message, msg or
// log key (with its level), anything else as JSON.
func otlpBody(body any) (msg, level string, ok bool) {
	switch x := body.(type) {
	case nil:
		return "", "", false
	case map[string]any:
		if s, found, _ := messageOf(x, unwrapKeys); found {
			return s, levelOf(x), true
		}
	}
	if s, isScalar := scalarString(body); isScalar {
		return s, "", true
	}
	out, err := json.Marshal(body)
	if err != nil { // NaN or infinite doubles
		return fmt.Sprint(body), "", true
	}
	return string(out), "", true
}

func nanosTime(ns uint64) time.Time {
	if ns == 0 || ns > 1<<63-1 {
		return time.Time{}
	}
	return time.Unix(0, int64(ns)).UTC()
}

// severityLevel maps an OTLP severity number (TRACE 1-4, DEBUG 5-8, INFO 9-12, WARN 13-16,
// ERROR 17-20, FATAL 21-24) to a level, falling back to the severity text.
func severityLevel(n int32, text string) string {
	switch {
	case n >= 1 && n <= 8:
		return "debug"
	case n >= 9 && n <= 12:
		return "info"
	case n >= 13 && n <= 16:
		return "warn"
	case n >= 17 && n <= 20:
		return "error"
	case n >= 21 && n <= 24:
		return "fatal"
	}
	return normLevel(text)
}

// severityNumber reads a JSON severityNumber: an integer, a string of one, or an enum
// name such as "SEVERITY_NUMBER_ERROR".
func severityNumber(s string) int32 {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(n)
	}
	return logspb.SeverityNumber_value[s]
}
