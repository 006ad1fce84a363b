package decode

import (
	"os"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDetect(t *testing.T) {
	t.Parallel()
	lokiPB := readTestdata(t, "loki/promtail.pb.in")
	otlpPB := readTestdata(t, "otlp/sdk-export.pb.in")
	fbMsgpack := readTestdata(t, "fluentbit/chunk.msgpack.in")
	const json = "application/json"
	tests := []struct {
		name string
		req  Request
		want Format
	}{
		// Path first.
		{"loki path, protobuf", Request{Path: "/loki/api/v1/push", ContentType: "application/x-protobuf", Body: lokiPB}, FormatLoki},
		{"loki path, JSON", Request{Path: "/loki/api/v1/push", ContentType: json, Body: readTestdata(t, "loki/fluentbit.in")}, FormatLoki},
		{"loki path under a prefix", Request{Path: "/tenant-a/loki/api/v1/push/", Body: lokiPB}, FormatLoki},
		{"otlp path, protobuf", Request{Path: "/v1/logs", ContentType: "application/x-protobuf", Body: otlpPB}, FormatOTLP},
		{"otlp path, JSON", Request{Path: "/otlp/v1/logs", ContentType: json, Body: readTestdata(t, "otlp/collector.json.in")}, FormatOTLP},
		{"bulk", Request{Path: "/_bulk", ContentType: "application/x-ndjson", Body: readTestdata(t, "elasticsearch/fluentbit.ndjson.in")}, FormatElasticsearch},
		{"index bulk with query", Request{Path: "/filebeat-8.15.0/_bulk?filter_path=errors,items.*.status", Body: readTestdata(t, "elasticsearch/filebeat.in")}, FormatElasticsearch},
		// Content-Type next.
		{"fluent bit msgpack", Request{ContentType: "application/msgpack", Body: fbMsgpack}, FormatFluentBit},
		{"fluentd msgpack", Request{ContentType: "application/x-msgpack", Body: readTestdata(t, "fluentd/records.msgpack.in")}, FormatFluentd},
		{"msgpack without a Content-Type", Request{Body: fbMsgpack}, FormatFluentBit},
		{"protobuf off-path: loki snappy block", Request{ContentType: "application/x-protobuf", Body: lokiPB}, FormatLoki},
		{"protobuf off-path: otlp", Request{ContentType: "application/x-protobuf", Body: otlpPB}, FormatOTLP},
		{"protobuf off-path: promtail user agent", Request{ContentType: "application/x-protobuf", UserAgent: "promtail/2.9.4", Body: []byte{0x0a}}, FormatLoki},
		{"text/plain", Request{ContentType: "text/plain; charset=utf-8", Body: []byte(`{"looks":"like json"}`)}, FormatText},
		{"logplex", Request{ContentType: "application/logplex-1", Body: []byte("83 <40>1 2024-06-01T10:00:00+00:00 host app web.1 - State changed\n")}, FormatText},
		// Body sniffing.
		{"loki JSON off-path", Request{ContentType: json, Body: readTestdata(t, "loki/vector.in")}, FormatLoki},
		{"otlp JSON off-path", Request{ContentType: json, Body: readTestdata(t, "otlp/collector.json.in")}, FormatOTLP},
		{"alertmanager", Request{ContentType: json, Body: readTestdata(t, "alertmanager/firing.in")}, FormatAlertmanager},
		{"alertmanager library body", Request{ContentType: json, Body: readTestdata(t, "alertmanager/webhook-lib.in")}, FormatAlertmanager},
		{"k8s core/v1 event", Request{ContentType: json, Body: readTestdata(t, "k8s-events/core-v1.in")}, FormatK8sEvents},
		{"k8s events.k8s.io/v1 event", Request{ContentType: json, Body: readTestdata(t, "k8s-events/events-v1.in")}, FormatK8sEvents},
		{"k8s List", Request{ContentType: json, Body: readTestdata(t, "k8s-events/list.in")}, FormatK8sEvents},
		{"k8s EventList", Request{ContentType: json, Body: readTestdata(t, "k8s-events/eventlist-lib.in")}, FormatK8sEvents},
		{"k8s watch stream", Request{Body: readTestdata(t, "k8s-events/watch.ndjson.in")}, FormatK8sEvents},
		{"resmoio exporter", Request{ContentType: json, Body: readTestdata(t, "k8s-events/resmoio.in")}, FormatK8sEvents},
		{"kube-eventer, no Content-Type", Request{Body: readTestdata(t, "k8s-events/kube-eventer.in")}, FormatK8sEvents},
		{"kube-eventer, invalid JSON", Request{Body: readTestdata(t, "k8s-events/kube-eventer-invalid.in")}, FormatK8sEvents},
		{"fluent bit kubernetes_events input as a JSON array", Request{ContentType: json, Body: []byte(`[{"date":1717236000.1,"involvedObject":{"kind":"Pod","name":"a"},"reason":"BackOff","message":"m"}]`)}, FormatK8sEvents},
		{"fluent bit json by date key", Request{ContentType: json, Body: readTestdata(t, "fluentbit/json-k8s.in")}, FormatFluentBit},
		{"fluent bit json_stream", Request{ContentType: json, Body: readTestdata(t, "fluentbit/json-stream.in")}, FormatFluentBit},
		{"fluent bit by user agent", Request{ContentType: json, UserAgent: "Fluent-Bit", Body: []byte(`[{"message":"x"}]`)}, FormatFluentBit},
		{"fluent bit by tag header", Request{ContentType: json, Tag: "app.log", Body: []byte(`{"message":"x"}`)}, FormatFluentBit},
		{"vector by kubernetes fields", Request{ContentType: json, Body: readTestdata(t, "vector/json-array.in")}, FormatVector},
		{"vector by user agent", Request{ContentType: "application/x-ndjson", UserAgent: "Vector/0.41.1 (x86_64-unknown-linux-gnu)", Body: []byte(`{"message":"x"}`)}, FormatVector},
		{"fluentd by user agent", Request{ContentType: "application/x-ndjson", UserAgent: "fluentd/1.16", Body: []byte(`{"log":"x"}`)}, FormatFluentd},
		{"generic ndjson", Request{ContentType: "application/x-ndjson", Body: readTestdata(t, "ndjson/app-logs.ndjson.in")}, FormatNDJSON},
		{"empty array", Request{ContentType: json, Body: []byte(`[]`)}, FormatNDJSON},
		{"plain text body", Request{Body: readTestdata(t, "text/syslog.txt.in")}, FormatText},
		// A body that claims JSON is decoded as JSON, so its errors are reported.
		{"broken JSON", Request{ContentType: json, Body: []byte(`{"log": nope}`)}, FormatNDJSON},
		{"text that claims JSON", Request{ContentType: "application/json; charset=utf-8", Body: []byte(`hello world`)}, FormatNDJSON},
		{"broken JSON, no Content-Type", Request{Body: []byte(`{"log": nope}`)}, FormatText},
		{"empty body", Request{}, FormatText},
		{"byte order mark", Request{ContentType: json, Body: []byte("\xef\xbb\xbf" + `{"resourceLogs":[]}`)}, FormatOTLP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Detect(tt.req); got != tt.want {
				t.Errorf("Detect(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestDecodeAuto checks that FormatAuto decodes each golden input without an error.
func TestDecodeAuto(t *testing.T) {
	t.Parallel()
	for _, in := range goldenInputs(t) {
		req := goldenRequest(t, in)
		want, wantErr := Decode(req, Limits{})
		if wantErr != nil {
			continue
		}
		req.Format = FormatAuto
		got, err := Decode(req, Limits{})
		if err != nil {
			t.Errorf("Decode(%s, auto) error = %v", in, err)
			continue
		}
		if len(got.Records) != len(want.Records) {
			t.Errorf("Decode(%s, auto as %s) = %d records, want %d as %s", in, got.Format, len(got.Records), len(want.Records), want.Format)
		}
	}
}
