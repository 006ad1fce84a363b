package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/loki/pkg/push"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/alertmanager/notify/webhook"
	"github.com/prometheus/alertmanager/template"
	"github.com/vmihailenco/msgpack/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cniLine is how kubelet reports cni-not-initialized (a starter incident).
const cniLine = `E0302 03:04:05.000001     911 kubelet.go:3012] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"`

func wantLabels(t *testing.T, o interface{ String() string }, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("occurrence label %s = %q, want %q (labels %v)", k, got[k], v, got)
		}
	}
}

type noString struct{}

func (noString) String() string { return "" }

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// TestWebhookFormats sends one payload per native format (built the way
// each sender builds it) and checks that it becomes an occurrence of the
// right incident with the resource labels the format carries.
func TestWebhookFormats(t *testing.T) {
	esc, _ := json.Marshal(cniLine)
	tests := []struct {
		name, path, ct, enc string
		body                []byte
		status              int
		labels              map[string]string
	}{
		{name: "fluentbit json", path: "/ingest/v1/fluentbit", ct: "application/json",
			body:   []byte(`[{"date":1717236000.123456,"log":` + string(esc) + `,"stream":"stderr","kubernetes":{"pod_name":"web-7d9f8b6c4-x2kq9","namespace_name":"shop","container_name":"web","host":"node-7","labels":{"app":"web"}}}]`),
			status: 200, labels: map[string]string{"namespace": "shop", "pod": "web-7d9f8b6c4-x2kq9", "node": "node-7", "container": "web"}},
		{name: "fluentbit json_lines gzip", path: "/ingest/v1/fluentbit", ct: "application/x-ndjson", enc: "gzip",
			body:   []byte(`{"date":1717236000,"log":` + string(esc) + `,"kubernetes":{"namespace_name":"shop","pod_name":"api-6c9d8f7b5-z8wq4","host":"node-2"}}` + "\n"),
			status: 200, labels: map[string]string{"namespace": "shop", "node": "node-2"}},
		{name: "fluentbit msgpack", path: "/ingest/v1", ct: "application/msgpack", body: fluentBitMsgpack(t), status: 200,
			labels: map[string]string{"namespace": "kube-system", "node": "node-9"}},
		{name: "fluentd ndjson", path: "/ingest/v1/fluentd", ct: "application/x-ndjson",
			body:   []byte(`{"log":` + string(esc) + `,"time":"2024-06-01T10:00:00Z","kubernetes":{"namespace_name":"batch","pod_name":"etl-28391234-x7k2p","host":"node-4"}}` + "\n"),
			status: 200, labels: map[string]string{"namespace": "batch", "node": "node-4"}},
		{name: "vector ndjson zstd", path: "/ingest/v1/vector", ct: "application/x-ndjson", enc: "zstd",
			body:   []byte(`{"message":` + string(esc) + `,"timestamp":"2024-06-01T10:00:00.123Z","kubernetes":{"pod_namespace":"pay","pod_name":"pay-0","container_name":"pay","pod_node_name":"node-5"}}`),
			status: 200, labels: map[string]string{"namespace": "pay", "node": "node-5"}},
		{name: "loki protobuf", path: "/loki/api/v1/push", ct: "application/x-protobuf", body: lokiProto(t), status: 204,
			labels: map[string]string{"namespace": "monitoring", "node": "node-3"}},
		{name: "loki json gzip", path: "/loki/api/v1/push", ct: "application/json", enc: "gzip",
			body:   []byte(`{"streams":[{"stream":{"namespace":"web","pod":"front-5f6d7c8b9-abcde","node_name":"node-8","job":"fluent-bit"},"values":[["1717236000000000000",` + string(esc) + `]]}]}`),
			status: 204, labels: map[string]string{"namespace": "web", "node": "node-8"}},
		{name: "otlp json", path: "/v1/logs", ct: "application/json",
			body:   []byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"k8s.namespace.name","value":{"stringValue":"otel"}},{"key":"k8s.node.name","value":{"stringValue":"node-6"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":"1717236000123456789","severityNumber":17,"body":{"stringValue":` + string(esc) + `}}]}]}]}`),
			status: 200, labels: map[string]string{"namespace": "otel", "node": "node-6"}},
		{name: "elasticsearch bulk gzip", path: "/logs-k8s/_bulk", ct: "application/x-ndjson", enc: "gzip",
			body:   []byte(`{"create":{"_index":"fluent-bit"}}` + "\n" + `{"@timestamp":"2024-06-01T10:00:00.123Z","log":` + string(esc) + `,"kubernetes":{"namespace_name":"es","pod_name":"x-0","host":"node-1"}}` + "\n"),
			status: 200, labels: map[string]string{"namespace": "es", "node": "node-1"}},
		{name: "ndjson", path: "/ingest/v1/ndjson", ct: "application/x-ndjson",
			body:   []byte(`{"msg":` + string(esc) + `,"namespace":"nd","node":"node-11"}` + "\n"),
			status: 200, labels: map[string]string{"namespace": "nd", "node": "node-11"}},
		{name: "text", path: "/ingest/v1/text", ct: "text/plain", body: []byte(cniLine + "\n"), status: 200, labels: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			body := tt.body
			hdr := []string{}
			switch tt.enc {
			case "gzip":
				body = gz(t, body)
				hdr = []string{"Content-Encoding", "gzip"}
			case "zstd":
				enc, _ := zstd.NewWriter(nil)
				body = enc.EncodeAll(body, nil)
				hdr = []string{"Content-Encoding", "zstd"}
			}
			r := h.do("POST", tt.path, tt.ct, body, hdr...)
			if r.status != tt.status {
				t.Fatalf("POST %s = %d %s, want %d", tt.path, r.status, r.body, tt.status)
			}
			occ := h.waitOccurrence("cni-not-initialized")
			wantLabels(t, noString{}, occ.Labels, tt.labels)
			if occ.Count != 1 || len(occ.Samples) != 1 {
				t.Errorf("occurrence count %d samples %d, want 1 and 1", occ.Count, len(occ.Samples))
			}
		})
	}
}

// fluentBitMsgpack builds a Fluent Bit msgpack chunk: [[EventTime, {}], {record}]
// with EventTime as ext type 0 (seconds, nanoseconds big-endian).
func fluentBitMsgpack(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	et := make([]byte, 8)
	binary.BigEndian.PutUint32(et[:4], 1717236000)
	binary.BigEndian.PutUint32(et[4:], 123000000)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(enc.EncodeArrayLen(2))
	must(enc.EncodeArrayLen(2))
	must(enc.EncodeExtHeader(0, 8))
	_, err := buf.Write(et)
	must(err)
	must(enc.EncodeMapLen(0))
	must(enc.Encode(map[string]any{"log": cniLine, "kubernetes": map[string]any{"namespace_name": "kube-system", "pod_name": "calico-node-x7k2p", "host": "node-9"}}))
	return buf.Bytes()
}

// lokiProto builds a push request as Promtail and Alloy send it: the
// Loki push proto, snappy block-compressed.
func lokiProto(t *testing.T) []byte {
	t.Helper()
	req := push.PushRequest{Streams: []push.Stream{{
		Labels:  `{job="kubernetes-pods", namespace="monitoring", node_name="node-3", pod="loki-0"}`,
		Entries: []push.Entry{{Timestamp: time.Unix(1717236000, 0), Line: cniLine}},
	}}}
	raw, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return snappy.Encode(nil, raw)
}

// TestWebhookOTLPExporter drives the OpenTelemetry Go OTLP/HTTP log
// exporter (protobuf, gzip) against the server.
func TestWebhookOTLPExporter(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(h.http.URL+"/v1/logs"), otlploghttp.WithCompression(otlploghttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("k8s.namespace.name", "prod"), attribute.String("k8s.pod.name", "api-7d9f8b6c4-x2kq9"),
		attribute.String("k8s.node.name", "node-12"), attribute.String("k8s.cluster.name", "eu-1"))
	provider := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	var rec otellog.Record
	rec.SetTimestamp(time.Now())
	rec.SetSeverity(otellog.SeverityError)
	rec.SetBody(attribute.StringValue(cniLine))
	provider.Logger("test").Emit(ctx, rec)
	if err := provider.Shutdown(ctx); err != nil {
		t.Fatalf("exporter: %v", err)
	}
	occ := h.waitOccurrence("cni-not-initialized")
	wantLabels(t, noString{}, occ.Labels, map[string]string{"namespace": "prod", "node": "node-12", "cluster": "eu-1"})
}

// TestWebhookAlertmanager posts Alertmanager's own webhook message type.
func TestWebhookAlertmanager(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	msg := &webhook.Message{Version: "4", GroupKey: `{}:{alertname="EtcdDatabaseQuotaLowSpace"}`, Data: &template.Data{
		Receiver: "incidex", Status: "firing", GroupLabels: template.KV{}, CommonLabels: template.KV{}, CommonAnnotations: template.KV{},
		Alerts: template.Alerts{{
			Status: "firing", StartsAt: time.Now(),
			Labels:      template.KV{"alertname": "EtcdDatabaseQuotaLowSpace", "namespace": "kube-system", "node": "cp-1", "severity": "critical"},
			Annotations: template.KV{"description": "etcd cluster \"kube-etcd\": etcdserver: mvcc: database space exceeded"},
		}},
	}}
	b, _ := json.Marshal(msg)
	if r := h.do("POST", "/ingest/v1/alertmanager", "application/json", b); r.status != 200 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	occ := h.waitOccurrence("etcd-db-space-exceeded")
	wantLabels(t, noString{}, occ.Labels, map[string]string{"namespace": "kube-system", "node": "cp-1"})
}

// TestWebhookKubernetesEvents posts core/v1 and events.k8s.io/v1 Events
// built with the Kubernetes API types, single and as a List.
func TestWebhookKubernetesEvents(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ev := corev1.Event{
		TypeMeta:       metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta:     metav1.ObjectMeta{Name: "web.17d8", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-7d9f8b6c4-x2kq9"},
		Reason:         "FailedScheduling", Type: corev1.EventTypeWarning,
		Message: "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		Source:  corev1.EventSource{Component: "default-scheduler"}, LastTimestamp: metav1.Now(), Count: 4,
	}
	b, _ := json.Marshal(ev)
	if r := h.do("POST", "/ingest/v1/k8s-events", "application/json", b); r.status != 200 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	occ := h.waitOccurrence("scheduler-insufficient-resources")
	wantLabels(t, noString{}, occ.Labels, map[string]string{"namespace": "shop"})

	nev := eventsv1.Event{
		TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "events.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n.1", Namespace: "data"},
		EventTime: metav1.NowMicro(), ReportingController: "kubelet", ReportingInstance: "node-21", Action: "Mounting",
		Reason: "FailedMount", Type: "Warning", Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "data", Name: "pg-0"},
		Note: `MountVolume.SetUp failed for volume "creds" : secret "pg-creds" not found`,
	}
	list := map[string]any{"kind": "List", "apiVersion": "v1", "items": []any{nev}}
	b, _ = json.Marshal(list)
	if r := h.do("POST", "/ingest/v1", "application/json", b); r.status != 200 {
		t.Fatalf("POST list = %d %s", r.status, r.body)
	}
	occ = h.waitOccurrence("volume-secret-configmap-not-found")
	wantLabels(t, noString{}, occ.Labels, map[string]string{"namespace": "data", "node": "node-21"})
}

// TestWebhookElasticsearchProbesAndResponse: the probes log shippers make
// before sending, and the bulk answer they require (errors:false, one item
// per action, malformed documents as 400 items).
func TestWebhookElasticsearchProbesAndResponse(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	r := h.do("GET", "/", "", nil, "Accept", "application/json")
	root := jsonBody(t, r.body)
	if r.status != 200 || r.header.Get("X-Elastic-Product") != "Elasticsearch" || root["version"].(map[string]any)["number"] == "" {
		t.Errorf("GET / = %d %s", r.status, r.body)
	}
	if r := h.do("HEAD", "/", "", nil); r.status != 200 {
		t.Errorf("HEAD / = %d", r.status)
	}
	for _, p := range []string{"/_nodes/http", "/_cluster/health", "/_license", "/_index_template/filebeat-8"} {
		if r := h.do("GET", p, "", nil); r.status != 200 {
			t.Errorf("GET %s = %d", p, r.status)
		}
	}
	body := `{"index":{"_index":"a"}}` + "\n" + `{"message":"fine"}` + "\n" + `{"create":{"_index":"a","_id":"x1"}}` + "\n" + `not json` + "\n" + `{"delete":{"_index":"a","_id":"x2"}}` + "\n"
	r = h.do("POST", "/_bulk", "application/json", []byte(body))
	var resp struct {
		Errors bool                        `json:"errors"`
		Items  []map[string]map[string]any `json:"items"`
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || r.status != 200 || resp.Errors || len(resp.Items) != 3 {
		t.Fatalf("bulk = %d %s", r.status, r.body)
	}
	if resp.Items[1]["create"]["status"].(float64) != 400 || resp.Items[0]["index"]["status"].(float64) != 201 {
		t.Errorf("bulk items = %v, want 201 then 400 for the malformed document", resp.Items)
	}
}

// TestWebhookLimits: size limits on the compressed and the decompressed
// body, unsupported encodings, and bodies with nothing decodable.
func TestWebhookLimits(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	bomb := gz(t, make([]byte, 200<<20)) // 200 MiB of zeros, ~200 KiB compressed
	for _, tt := range []struct {
		name, path, ct string
		body           []byte
		hdr            []string
		status         int
		want           string
	}{
		{"gzip bomb", "/ingest/v1/text", "text/plain", bomb, []string{"Content-Encoding", "gzip"}, 413, "too large"},
		{"truncated gzip", "/ingest/v1/text", "text/plain", gz(t, []byte("hello world"))[:10], []string{"Content-Encoding", "gzip"}, 400, "corrupt or truncated"},
		{"unknown encoding", "/ingest/v1/text", "text/plain", []byte("x"), []string{"Content-Encoding", "br"}, 415, "br"},
		{"not json", "/ingest/v1/fluentbit", "application/json", []byte("{{{"), nil, 400, ""},
		{"empty", "/ingest/v1/ndjson", "application/x-ndjson", nil, nil, 400, "empty body"},
	} {
		r := h.do("POST", tt.path, tt.ct, tt.body, tt.hdr...)
		if r.status != tt.status || !strings.Contains(string(r.body), tt.want) || strings.Count(jsonBody(t, r.body)["error"].(string), "\n") > 0 {
			t.Errorf("%s: %d %s, want %d with %q on one line", tt.name, r.status, r.body, tt.status, tt.want)
		}
	}
	// A request with malformed records among valid ones is accepted: the
	// valid ones are queued, the others counted, and nothing is retried.
	r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(`{"msg":"ok line"}`+"\n"+`{"msg":"second"}`+"\n"+`{broken`+"\n"))
	m := jsonBody(t, r.body)
	if r.status != 200 || m["accepted"].(float64) != 2 || m["rejected"].(float64) != 1 {
		t.Errorf("mixed request = %d %s, want 200 with accepted 2 rejected 1", r.status, r.body)
	}
}

var _ = fmt.Sprint

// TestWebhookJSONErrors: a body that claims JSON and is not JSON is refused
// with 400 and the byte offset of the error, on the auto-detecting route too
// (it used to be taken as one text line); a bad record among good ones is
// counted with its record number and offset.
func TestWebhookJSONErrors(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for _, tt := range []struct {
		name, path, ct, body string
		status               int
		want                 string
	}{
		{"text as JSON, auto route", "/ingest/v1", "application/json", "hello world\n", 400,
			"body is not JSON: invalid character 'h' looking for beginning of value at offset 0 (record 1)"},
		{"truncated JSON, auto route", "/ingest/v1", "application/json", `{"message": "disk full", "n": [1,2`, 400,
			"body is not JSON: unexpected end of JSON input at offset 34 (record 1)"},
		{"truncated JSON, ndjson route", "/ingest/v1/ndjson", "application/x-ndjson", `{"message": "disk full", "n": [1,2`, 400,
			"body is not JSON: unexpected end of JSON input at offset 34 (record 1)"},
		{"loki", "/loki/api/v1/push", "application/json", `{"streams": [{"stream": {}, "values": [["1", x]]}]}`, 400,
			"at offset 45"},
		{"second record broken", "/ingest/v1", "application/json", `{"message":"a"}` + "\n" + `{"message": "b", }`, 200,
			`"record 2: invalid JSON: invalid character '}' looking for beginning of object key string at offset 33"`},
	} {
		r := h.do("POST", tt.path, tt.ct, []byte(tt.body))
		if r.status != tt.status || !strings.Contains(string(r.body), tt.want) {
			t.Errorf("%s: POST %s = %d %s, want %d with %q", tt.name, tt.path, r.status, r.body, tt.status, tt.want)
		}
	}
}
