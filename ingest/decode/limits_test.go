package decode

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/grafana/loki/pkg/push"
	"github.com/klauspost/compress/snappy"
)

// threeRecords are bodies of three records in several formats.
var threeRecords = []struct {
	format Format
	ct     string
	body   string
}{
	{FormatFluentBit, "application/json", `[{"log":"a"},{"log":"b"},{"log":"c"}]`},
	{FormatNDJSON, "application/x-ndjson", "{\"message\":\"a\"}\n{\"message\":\"b\"}\n{\"message\":\"c\"}"},
	{FormatText, "text/plain", "a\nb\nc\n"},
	{FormatLoki, "application/json", `{"streams":[{"stream":{"job":"x"},"values":[["1","a"],["2","b"],["3","c"]]}]}`},
	{FormatOTLP, "application/json", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"a"}},{"body":{"stringValue":"b"}},{"body":{"stringValue":"c"}}]}]}]}`},
	{FormatElasticsearch, "application/x-ndjson", "{\"index\":{}}\n{\"message\":\"a\"}\n{\"index\":{}}\n{\"message\":\"b\"}\n{\"index\":{}}\n{\"message\":\"c\"}\n"},
	{FormatAlertmanager, "application/json", `{"version":"4","alerts":[{"labels":{"alertname":"a"}},{"labels":{"alertname":"b"}},{"labels":{"alertname":"c"}}]}`},
	{FormatK8sEvents, "application/json", `{"kind":"List","items":[{"involvedObject":{},"reason":"a"},{"involvedObject":{},"reason":"b"},{"involvedObject":{},"reason":"c"}]}`},
}

func TestMaxRecords(t *testing.T) {
	t.Parallel()
	for _, tt := range threeRecords {
		t.Run(string(tt.format), func(t *testing.T) {
			t.Parallel()
			req := Request{Format: tt.format, ContentType: tt.ct, Body: []byte(tt.body), Now: goldenNow}
			res, err := Decode(req, Limits{MaxRecords: 3})
			if err != nil || len(res.Records) != 3 {
				t.Fatalf("Decode(MaxRecords 3) = %d records, %v, want 3", len(res.Records), err)
			}
			_, err = Decode(req, Limits{MaxRecords: 2})
			if !errors.Is(err, ErrTooManyRecords) {
				t.Errorf("Decode(MaxRecords 2) error = %v, want ErrTooManyRecords", err)
			}
		})
	}
}

func TestMaxBodyBytes(t *testing.T) {
	t.Parallel()
	req := Request{Format: FormatText, Body: []byte("0123456789")}
	if _, err := Decode(req, Limits{MaxBodyBytes: 10}); err != nil {
		t.Errorf("Decode(10 bytes, limit 10) error = %v", err)
	}
	if _, err := Decode(req, Limits{MaxBodyBytes: 9}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode(10 bytes, limit 9) error = %v, want ErrTooLarge", err)
	}
}

// TestLokiSnappyLimit checks the snappy block's declared length against MaxBodyBytes
// before decoding it.
func TestLokiSnappyLimit(t *testing.T) {
	t.Parallel()
	pr := push.PushRequest{Streams: []push.Stream{{Labels: `{job="x"}`, Entries: []push.Entry{{Line: strings.Repeat("x", 4096)}}}}}
	raw, err := pr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Format: FormatLoki, ContentType: "application/x-protobuf", Body: snappy.Encode(nil, raw)}
	if _, err := Decode(req, Limits{MaxBodyBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode(snappy block of %d bytes, limit 1000) error = %v, want ErrTooLarge", len(raw), err)
	}
	bomb := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
	req.Body = bomb
	if _, err := Decode(req, Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode(snappy block declaring 4 GiB) error = %v, want ErrTooLarge", err)
	}
}

func TestMaxLineBytes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 10) // 20 bytes
	tests := []struct {
		name      string
		max       int
		msg       string
		want      string
		truncated bool
	}{
		{"short line kept", 64, "connection refused", "connection refused", false},
		{"exactly the limit", 18, "connection refused", "connection refused", false},
		{"cut between runes", 6, long, "ééé", true},
		{"cut inside a rune backs off", 7, long, "ééé", true},
		{"4-byte runes", 5, "🔥🔥", "🔥", true},
		{"invalid UTF-8 is replaced before the cut", 5, "ab\xffcdef", "ab\uFFFD", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := Request{Format: FormatText, Body: []byte(tt.msg)}
			res, err := Decode(req, Limits{MaxLineBytes: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Records[0]
			if r.Message != tt.want || r.Truncated != tt.truncated {
				t.Errorf("Decode(%q, MaxLineBytes %d) = %q truncated=%v, want %q truncated=%v", tt.msg, tt.max, r.Message, r.Truncated, tt.want, tt.truncated)
			}
			if !utf8.ValidString(r.Message) || len(r.Message) > tt.max {
				t.Errorf("Decode(%q) = %q: not valid UTF-8 within %d bytes", tt.msg, r.Message, tt.max)
			}
		})
	}
}

func TestMaxLabels(t *testing.T) {
	t.Parallel()
	body := `[{"log":"x","stream":"stderr","kubernetes":{"namespace_name":"prod","pod_name":"api-0","container_name":"api","host":"node-1","labels":{"app":"api"}}}]`
	res, err := Decode(Request{Format: FormatFluentBit, Body: []byte(body)}, Limits{MaxLabels: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"namespace": "prod", "pod": "api-0", "container": "api"}
	if diff := cmp.Diff(want, res.Records[0].Labels); diff != "" {
		t.Errorf("Decode(MaxLabels 3) labels mismatch (-want +got):\n%s", diff)
	}

	// Alertmanager labels beyond the known ones are kept in sorted order.
	var labels []string
	for i := range 100 {
		labels = append(labels, fmt.Sprintf(`"l%02d":"v"`, i))
	}
	am := `{"version":"4","alerts":[{"labels":{"alertname":"A","namespace":"prod",` + strings.Join(labels, ",") + `}}]}`
	res, err = Decode(Request{Format: FormatAlertmanager, Body: []byte(am)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Records[0].Labels
	if len(got) != DefaultMaxLabels || got["namespace"] != "prod" || got["alertname"] != "A" || got["l00"] != "v" || got["l99"] != "" {
		t.Errorf("Decode(102 alert labels) kept %d labels (namespace=%q alertname=%q l00=%q l99=%q), want %d with the known and first sorted ones",
			len(got), got["namespace"], got["alertname"], got["l00"], got["l99"], DefaultMaxLabels)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  Request
		want error
		text string
	}{
		{"unknown format", Request{Format: "syslog", Body: []byte("x")}, ErrUnknownFormat, `format "syslog"`},
		{"not JSON", Request{Format: FormatNDJSON, Body: []byte("xyz")}, ErrMalformed, "body is not JSON: invalid character 'x' looking for beginning of value at offset 0"},
		{"loki snappy", Request{Format: FormatLoki, ContentType: "application/x-protobuf", Body: []byte("\x20garbage")}, ErrMalformed, "loki push: snappy: corrupt input"},
		{"otlp protobuf", Request{Format: FormatOTLP, ContentType: "application/x-protobuf", Body: []byte{0x0a, 0x05, 0x01}}, ErrMalformed, "otlp: protobuf:"},
		{"msgpack", Request{Format: FormatFluentBit, ContentType: "application/msgpack", Body: []byte{0x92, 0xd7}}, ErrMalformed, "msgpack:"},
		{"all records rejected", Request{Format: FormatFluentBit, Body: []byte(`[{"a":1},{"b":2}]`)}, ErrMalformed, "no valid records: record 1: no message field"},
		{"bulk without actions", Request{Format: FormatElasticsearch, Body: []byte("hello\nworld\n")}, ErrMalformed, "elasticsearch bulk: no valid action line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode(tt.req, Limits{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode() error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Decode() error = %q, want one line containing %q", err, tt.text)
			}
		})
	}
}

// TestBulkStatuses checks that every action gets one item, in order.
func TestBulkStatuses(t *testing.T) {
	t.Parallel()
	body := "{\"index\":{\"_id\":\"1\"}}\n{\"message\":\"a\"}\n{\"delete\":{\"_id\":\"2\"}}\n{\"create\":{\"_id\":\"3\"}}\n{\"no_message\":true}\n"
	res, err := Decode(Request{Format: FormatElasticsearch, Path: "/logs/_bulk", Body: []byte(body)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []BulkItem{
		{Action: "index", Index: "logs", ID: "1", Status: 201},
		{Action: "delete", Index: "logs", ID: "2", Status: 200},
		{Action: "create", Index: "logs", ID: "3", Status: 400},
	}
	if diff := cmp.Diff(want, res.Bulk); diff != "" {
		t.Errorf("Decode() bulk items mismatch (-want +got):\n%s", diff)
	}
}
