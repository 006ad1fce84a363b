package decode_test

// These tests build payloads with the senders' own Go libraries rather than by hand:
// the OpenTelemetry log exporter, Alertmanager's webhook types, the Kubernetes API types,
// Loki's push protocol and msgpack with Fluent Bit's EventTime. Each also stores its body
// under testdata/ (with UPDATE_GOLDEN=1) for the golden and fuzz tests.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/grafana/loki/pkg/push"
	"github.com/klauspost/compress/snappy"
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
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/incidex/incidex/ingest/decode"
)

var t0 = time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC)

// decodeAuto decodes a request the way the server's auto-detect route would.
func decodeAuto(t *testing.T, req decode.Request, want decode.Format) decode.Result {
	t.Helper()
	req.Now = decode.GoldenNow
	if got := decode.Detect(req); got != want {
		t.Errorf("Detect() = %q, want %q", got, want)
	}
	res, err := decode.Decode(req, decode.Limits{})
	if err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if res.Rejected != 0 {
		t.Errorf("Decode() rejected %d: %v", res.Rejected, res.Errors)
	}
	return res
}

func diffRecords(t *testing.T, got, want []decode.Record) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode() records mismatch (-want +got):\n%s", diff)
	}
}

// capture is an OTLP/HTTP endpoint that keeps the last request and counts them.
type capture struct {
	mu       sync.Mutex
	requests int
	body     []byte
	headers  http.Header
	path     string
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.requests++
	c.body, c.headers, c.path = body, r.Header.Clone(), r.URL.Path
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func TestOTLPExporter(t *testing.T) {
	var c capture
	srv := httptest.NewServer(&c)
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlploghttp.New(ctx,
		otlploghttp.WithEndpointURL(srv.URL+"/v1/logs"),
		otlploghttp.WithCompression(otlploghttp.GzipCompression),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	)
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", "api"),
		attribute.String("k8s.namespace.name", "prod"),
		attribute.String("k8s.pod.name", "api-7d9f"),
		attribute.String("k8s.container.name", "api"),
		attribute.String("k8s.node.name", "node-1"),
		attribute.String("k8s.cluster.name", "eu-1"),
	)
	provider := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	logger := provider.Logger("incidex/test")

	var r otellog.Record
	r.SetTimestamp(t0.Add(123456789))
	r.SetObservedTimestamp(t0.Add(time.Second))
	r.SetSeverity(otellog.SeverityError)
	r.SetSeverityText("ERROR")
	r.SetBody(attribute.StringValue("dial tcp 10.0.0.5:5432: connect: connection refused"))
	r.AddAttributes(attribute.String("log.file.path", "/var/log/app.log"), attribute.Int("attempt", 3))
	logger.Emit(ctx, r)

	var r2 otellog.Record // no event time: the observed time is used
	r2.SetObservedTimestamp(t0.Add(2 * time.Second))
	r2.SetSeverity(otellog.SeverityWarn)
	r2.SetBody(attribute.MapValue(attribute.String("msg", "cache miss ratio above 0.9"), attribute.Float64("ratio", 0.93)))
	logger.Emit(ctx, r2)
	if err := provider.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests != 1 {
		t.Fatalf("exporter sent %d requests, want 1 batch", c.requests)
	}
	if c.headers.Get("Content-Encoding") != "gzip" {
		t.Fatalf("exporter sent Content-Encoding %q, want gzip", c.headers.Get("Content-Encoding"))
	}
	body, err := decode.Decompress(c.headers.Get("Content-Encoding"), bytes.NewReader(c.body), 1<<20)
	if err != nil {
		t.Fatalf("Decompress() error = %v", err)
	}
	decode.WriteTestdata(t, "testdata/otlp/sdk-export.pb.in", body)
	got := decodeAuto(t, decode.Request{
		Path: c.path, ContentType: c.headers.Get("Content-Type"), UserAgent: c.headers.Get("User-Agent"), Body: body,
	}, decode.FormatOTLP)

	labels := map[string]string{
		"cluster": "eu-1", "namespace": "prod", "pod": "api-7d9f", "container": "api", "node": "node-1", "service": "api",
	}
	withLabels := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range labels {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	diffRecords(t, got.Records, []decode.Record{
		{
			Time: t0.Add(123456789), Message: "dial tcp 10.0.0.5:5432: connect: connection refused", Level: "error",
			Labels: withLabels(map[string]string{"file": "/var/log/app.log", "attempt": "3"}), Source: decode.FormatOTLP,
		},
		{
			Time: t0.Add(2 * time.Second), Message: "cache miss ratio above 0.9", Level: "warn",
			Labels: withLabels(nil), Source: decode.FormatOTLP,
		},
	})
}

func TestAlertmanagerWebhookMessage(t *testing.T) {
	alerts := template.Alerts{
		{
			Status:      "firing",
			Labels:      template.KV{"alertname": "KubePodCrashLooping", "namespace": "prod", "pod": "api-7d9f", "container": "api", "severity": "warning"},
			Annotations: template.KV{"summary": "Pod is crash looping", "description": "Pod prod/api-7d9f (api) is restarting 3 times / 10 minutes."},
			StartsAt:    t0,
			Fingerprint: "b3c1a9e0d2f4a5c6",
		},
		{
			Status:      "resolved",
			Labels:      template.KV{"alertname": "KubeNodeNotReady", "node": "node-3", "severity": "critical"},
			Annotations: template.KV{"message": "node-3 has been unready for more than 15 minutes."},
			StartsAt:    t0.Add(-time.Hour),
			EndsAt:      t0,
		},
	}
	msg := &webhook.Message{
		Data: &template.Data{
			Receiver: "ops-webhook", Status: "firing", Alerts: alerts,
			GroupLabels:  template.KV{"alertname": "KubePodCrashLooping"},
			CommonLabels: template.KV{}, CommonAnnotations: template.KV{},
			ExternalURL: "http://alertmanager:9093",
		},
		Version:  "4",
		GroupKey: `{}:{alertname="KubePodCrashLooping"}`,
	}
	var buf bytes.Buffer // encoded as the notifier does it
	if err := json.NewEncoder(&buf).Encode(msg); err != nil {
		t.Fatal(err)
	}
	decode.WriteTestdata(t, "testdata/alertmanager/webhook-lib.in", buf.Bytes())
	got := decodeAuto(t, decode.Request{Path: "/ingest", ContentType: "application/json", UserAgent: "Alertmanager/0.35.0", Body: buf.Bytes()}, decode.FormatAlertmanager)
	diffRecords(t, got.Records, []decode.Record{
		{
			Time: t0, Message: "KubePodCrashLooping: Pod prod/api-7d9f (api) is restarting 3 times / 10 minutes.", Level: "warn",
			Labels: map[string]string{"alertname": "KubePodCrashLooping", "namespace": "prod", "pod": "api-7d9f", "container": "api", "severity": "warning", "status": "firing"},
			Source: decode.FormatAlertmanager,
		},
		{
			Time: t0.Add(-time.Hour), Message: "KubeNodeNotReady: node-3 has been unready for more than 15 minutes.", Level: "fatal",
			Labels: map[string]string{"alertname": "KubeNodeNotReady", "node": "node-3", "severity": "critical", "status": "resolved"},
			Source: decode.FormatAlertmanager,
		},
	})
}

func coreEvent() corev1.Event {
	return corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "api-7d9f.17d8a1b2", Namespace: "prod", CreationTimestamp: metav1.NewTime(t0.Add(-5 * time.Minute))},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "prod", Name: "api-7d9f", APIVersion: "v1", FieldPath: "spec.containers{api}"},
		Reason:         "FailedCreatePodSandBox",
		Message:        `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "3f2a": plugin type="calico" failed (add): connection is unauthorized: Unauthorized`,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: metav1.NewTime(t0.Add(-5 * time.Minute)),
		LastTimestamp:  metav1.NewTime(t0),
		Count:          7,
		Type:           corev1.EventTypeWarning,
	}
}

// newRecorderEvent is an event from the events.k8s.io recorder as core/v1 shows it:
// null first/last timestamps, eventTime and series set.
func newRecorderEvent() corev1.Event {
	return corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "node-3.1", Namespace: "default"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Node", Name: "node-3"},
		Reason:              "NodeNotReady",
		Message:             "Node node-3 status is now: NodeNotReady",
		Type:                corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(t0.Add(time.Minute + 123456*time.Microsecond)),
		Series:              &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(t0.Add(2*time.Minute + 654321*time.Microsecond))},
		ReportingController: "node-controller",
	}
}

func TestKubernetesEventTypes(t *testing.T) {
	list := corev1.EventList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"},
		Items:    []corev1.Event{coreEvent(), newRecorderEvent()},
	}
	ev1 := eventsv1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:          metav1.ObjectMeta{Name: "api-7d9f.3", Namespace: "prod"},
		EventTime:           metav1.NewMicroTime(t0.Add(4 * time.Minute)),
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
		Action:              "Killing",
		Reason:              "Unhealthy",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "prod", Name: "api-7d9f", FieldPath: "spec.containers{api}"},
		Note:                "Liveness probe failed: HTTP probe failed with statuscode: 503",
		Type:                "Warning",
	}
	sandbox := decode.Record{
		Time: t0, Level: "warn", Source: decode.FormatK8sEvents,
		Message: "Warning FailedCreatePodSandBox " + coreEvent().Message,
		Labels: map[string]string{
			"namespace": "prod", "kind": "Pod", "name": "api-7d9f", "pod": "api-7d9f", "container": "api",
			"node": "node-1", "reason": "FailedCreatePodSandBox",
		},
	}
	notReady := decode.Record{
		Time: t0.Add(2*time.Minute + 654321*time.Microsecond), Level: "info", Source: decode.FormatK8sEvents,
		Message: "Normal NodeNotReady Node node-3 status is now: NodeNotReady",
		Labels:  map[string]string{"namespace": "default", "kind": "Node", "name": "node-3", "node": "node-3", "reason": "NodeNotReady"},
	}
	unhealthy := decode.Record{
		Time: t0.Add(4 * time.Minute), Level: "warn", Source: decode.FormatK8sEvents,
		Message: "Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 503",
		Labels: map[string]string{
			"namespace": "prod", "kind": "Pod", "name": "api-7d9f", "pod": "api-7d9f", "container": "api",
			"node": "node-1", "reason": "Unhealthy",
		},
	}
	tests := []struct {
		name string
		file string
		obj  any
		want []decode.Record
	}{
		{"core/v1 Event", "", coreEvent(), []decode.Record{sandbox}},
		{"EventList", "testdata/k8s-events/eventlist-lib.in", list, []decode.Record{sandbox, notReady}},
		{"events.k8s.io/v1 Event", "", ev1, []decode.Record{unhealthy}},
		{"watch event", "", metav1.WatchEvent{Type: "ADDED", Object: runtimeRaw(t, coreEvent())}, []decode.Record{sandbox}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				decode.WriteTestdata(t, tt.file, body)
			}
			got := decodeAuto(t, decode.Request{ContentType: "application/json", Body: body}, decode.FormatK8sEvents)
			diffRecords(t, got.Records, tt.want)
		})
	}
}

func TestLokiPushProto(t *testing.T) {
	pr := push.PushRequest{Streams: []push.Stream{
		{
			Labels: `{app="api", container="api", namespace="prod", node_name="node-1", pod="api-7d9f"}`,
			Entries: []push.Entry{
				{Timestamp: t0.Add(123456789), Line: "panic: assignment to entry in nil map"},
				{Timestamp: t0.Add(223456789), Line: `level=error msg="redis: connection pool timeout"`,
					StructuredMetadata: push.LabelsAdapter{{Name: "trace_id", Value: "4bf92f3577b34da6"}}},
			},
		},
		{ // Vector writes label values unescaped
			Labels:  `{job="vector", msg="say "hi", ok", path="C:\logs"}`,
			Entries: []push.Entry{{Timestamp: t0, Line: `{"message":"disk full","level":"error"}`}},
		},
	}}
	raw, err := pr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	api := map[string]string{"app": "api", "container": "api", "namespace": "prod", "node": "node-1", "pod": "api-7d9f"}
	want := []decode.Record{
		{Time: t0.Add(123456789), Message: "panic: assignment to entry in nil map", Labels: api, Source: decode.FormatLoki},
		{Time: t0.Add(223456789), Message: `level=error msg="redis: connection pool timeout"`, Level: "error",
			Labels: merge(api, map[string]string{"trace_id": "4bf92f3577b34da6"}), Source: decode.FormatLoki},
		{Time: t0, Message: "disk full", Level: "error", Source: decode.FormatLoki,
			Labels: map[string]string{"job": "vector", "msg": `say "hi", ok`, "path": `C:\logs`}},
	}
	body := snappy.Encode(nil, raw)
	decode.WriteTestdata(t, "testdata/loki/promtail.pb.in", body)
	tests := []struct {
		name     string
		body     []byte
		encoding string
		ua       string
	}{
		{"promtail: snappy block, no Content-Encoding", body, "", "promtail/2.9.4"},
		{"alloy: snappy already undone by the server", raw, "snappy", "Alloy/v1.5.0 (linux; binary)"},
		{"raw protobuf without header", raw, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAuto(t, decode.Request{
				Path: "/loki/api/v1/push", ContentType: "application/x-protobuf", ContentEncoding: tt.encoding, UserAgent: tt.ua, Body: tt.body,
			}, decode.FormatLoki)
			diffRecords(t, got.Records, want)
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// encodeEventTime writes a Fluent Bit EventTime: ext type 0, 8 bytes, big-endian
// seconds and nanoseconds (fixext8 on the wire: d7 00 ...).
func encodeEventTime(t *testing.T, enc *msgpack.Encoder, sec, nsec uint32) {
	t.Helper()
	if err := enc.EncodeExtHeader(0, 8); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], sec)
	binary.BigEndian.PutUint32(b[4:], nsec)
	if _, err := enc.Writer().Write(b[:]); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fluentBitChunk encodes records as Fluent Bit's msgpack output does: a group start
// marker, two v2 records [[EventTime, meta], body], a legacy [EventTime, body] record,
// one with integer seconds, and a group end marker.
func fluentBitChunk(t *testing.T) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	sec := uint32(t0.Unix())
	k8s := map[string]any{"pod_name": "api-7d9f", "namespace_name": "prod", "container_name": "api", "host": "node-1", "labels": map[string]any{"app": "api"}}
	v2 := func(ts func(), meta, body map[string]any) {
		must(t, enc.EncodeArrayLen(2))
		must(t, enc.EncodeArrayLen(2))
		ts()
		must(t, enc.Encode(meta))
		must(t, enc.Encode(body))
	}
	v2(func() { encodeEventTime(t, enc, 0xFFFFFFFF, 0) }, map[string]any{"otlp": map[string]any{}}, map[string]any{"resource": map[string]any{}})
	v2(func() { encodeEventTime(t, enc, sec, 123456789) }, map[string]any{},
		map[string]any{"log": "dial tcp 10.0.0.5:5432: connect: connection refused\n", "stream": "stderr", "kubernetes": k8s})
	v2(func() { encodeEventTime(t, enc, sec+1, 0) }, map[string]any{},
		map[string]any{"log": []byte(`{"level":"error","msg":"pq: too many connections"}`), "stream": "stdout", "kubernetes": k8s})
	must(t, enc.EncodeArrayLen(2)) // legacy layout
	encodeEventTime(t, enc, sec+2, 500000000)
	must(t, enc.Encode(map[string]any{"message": "Started Session 42 of User root.", "PRIORITY": "6"}))
	must(t, enc.EncodeArrayLen(2)) // integer seconds
	must(t, enc.EncodeUint32(sec+3))
	must(t, enc.Encode(map[string]any{"log": "OOMKilled"}))
	v2(func() { encodeEventTime(t, enc, 0xFFFFFFFE, 0) }, map[string]any{}, map[string]any{})
	return buf.Bytes()
}

func TestFluentBitMsgpack(t *testing.T) {
	body := fluentBitChunk(t)
	if !bytes.Contains(body, []byte{0xd7, 0x00}) {
		t.Fatal("EventTime was not encoded as fixext8 type 0")
	}
	decode.WriteTestdata(t, "testdata/fluentbit/chunk.msgpack.in", body)
	got := decodeAuto(t, decode.Request{ContentType: "application/msgpack", UserAgent: "Fluent-Bit", Tag: "kube.var.log.containers.api", Body: body}, decode.FormatFluentBit)
	k8s := map[string]string{"app": "api", "container": "api", "namespace": "prod", "node": "node-1", "pod": "api-7d9f", "tag": "kube.var.log.containers.api"}
	diffRecords(t, got.Records, []decode.Record{
		{Time: t0.Add(123456789), Message: "dial tcp 10.0.0.5:5432: connect: connection refused", Source: decode.FormatFluentBit,
			Labels: merge(k8s, map[string]string{"stream": "stderr"})},
		{Time: t0.Add(time.Second), Message: "pq: too many connections", Level: "error", Source: decode.FormatFluentBit,
			Labels: merge(k8s, map[string]string{"stream": "stdout"})},
		{Time: t0.Add(2500 * time.Millisecond), Message: "Started Session 42 of User root.", Level: "info", Source: decode.FormatFluentBit,
			Labels: map[string]string{"tag": "kube.var.log.containers.api"}},
		{Time: t0.Add(3 * time.Second), Message: "OOMKilled", Source: decode.FormatFluentBit,
			Labels: map[string]string{"tag": "kube.var.log.containers.api"}},
	})
}

func TestFluentdMsgpack(t *testing.T) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	must(t, enc.Encode(map[string]any{"log": "ERROR: deadlock detected", "stream": "stderr", "time": "2024-06-01T10:00:00.5Z",
		"kubernetes": map[string]any{"pod_name": "pg-0", "namespace_name": "db"}}))
	must(t, enc.Encode(map[string]any{"message": "connection refused", "time": float64(t0.Unix()) + 0.25}))
	body := buf.Bytes()
	decode.WriteTestdata(t, "testdata/fluentd/records.msgpack.in", body)
	got := decodeAuto(t, decode.Request{ContentType: "application/x-msgpack", Body: body}, decode.FormatFluentd)
	diffRecords(t, got.Records, []decode.Record{
		{Time: t0.Add(500 * time.Millisecond), Message: "ERROR: deadlock detected", Source: decode.FormatFluentd,
			Labels: map[string]string{"pod": "pg-0", "namespace": "db", "stream": "stderr"}},
		{Time: t0.Add(250 * time.Millisecond), Message: "connection refused", Source: decode.FormatFluentd},
	})
}

func runtimeRaw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}
