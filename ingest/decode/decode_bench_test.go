package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/loki/pkg/push"
	"github.com/klauspost/compress/snappy"
	"github.com/vmihailenco/msgpack/v5"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// benchTarget is the body size each benchmark decodes: about 1 MiB.
const benchTarget = 1 << 20

var benchLines = []string{
	"E0601 10:00:00.123456       1 main.go:42] dial tcp 10.0.0.5:5432: connect: connection refused",
	`{"level":"error","ts":1717236000.2234,"caller":"db/pool.go:88","msg":"pq: too many connections for role \"app\""}`,
	"2024-06-01T10:00:00.123Z INFO  [http-nio-8080-exec-7] c.e.api.OrderController - GET /api/v1/orders/42 200 12ms",
	"panic: runtime error: invalid memory address or nil pointer dereference",
}

func benchLine(i int) string { return benchLines[i%len(benchLines)] + fmt.Sprintf(" #%d", i) }

// repeatUntil calls add with 0, 1, 2, ... until the buffer holds benchTarget bytes.
func repeatUntil(buf *bytes.Buffer, add func(i int)) int {
	n := 0
	for ; buf.Len() < benchTarget; n++ {
		add(n)
	}
	return n
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func benchFluentBitJSON() (Request, int) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"date":1717236000.%06d,"log":%s,"stream":"stderr","time":"2024-06-01T10:00:00.123456789Z","kubernetes":{"pod_name":"api-7d9f8b6c5-%05d","namespace_name":"prod","pod_id":"5f1e7a2c-1111-4c1e-9a55-2b5d0c1e2f3a","labels":{"app":"api","pod-template-hash":"7d9f8b6c5"},"host":"node-%d","container_name":"api","docker_id":"3f2a1b","container_image":"registry.example.com/api:1.4.2"}}`,
			i%1000000, jsonString(benchLine(i)+"\n"), i, i%10)
	})
	buf.WriteByte(']')
	return Request{Format: FormatFluentBit, ContentType: "application/json", Body: buf.Bytes()}, n
}

func benchFluentBitMsgpack() (Request, int) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	n := repeatUntil(&buf, func(i int) {
		_ = enc.EncodeArrayLen(2)
		_ = enc.EncodeArrayLen(2)
		_ = enc.EncodeExtHeader(0, 8)
		_, _ = enc.Writer().Write([]byte{0x66, 0x5a, 0xf1, 0x20, 0, 0, 0, byte(i)})
		_ = enc.EncodeMapLen(0)
		_ = enc.Encode(map[string]any{"log": benchLine(i), "stream": "stderr", "kubernetes": map[string]any{
			"pod_name": fmt.Sprintf("api-%05d", i), "namespace_name": "prod", "container_name": "api", "host": "node-1",
		}})
	})
	return Request{Format: FormatFluentBit, ContentType: "application/msgpack", Body: buf.Bytes()}, n
}

func benchVector() (Request, int) {
	var buf bytes.Buffer
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte('\n')
		}
		fmt.Fprintf(&buf, `{"file":"/var/log/pods/prod_api/api/0.log","kubernetes":{"container_name":"api","pod_labels":{"app":"api"},"pod_name":"api-%05d","pod_namespace":"prod","pod_node_name":"node-1"},"message":%s,"source_type":"kubernetes_logs","stream":"stderr","timestamp":"2024-06-01T10:00:00.123456789Z"}`,
			i, jsonString(benchLine(i)))
	})
	return Request{Format: FormatVector, ContentType: "application/x-ndjson", Body: buf.Bytes()}, n
}

func benchLokiJSON() (Request, int) {
	var buf bytes.Buffer
	buf.WriteString(`{"streams":[{"stream":{"job":"fluent-bit","namespace":"prod","pod":"api-7d9f","container":"api"},"values":[`)
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte(',')
		}
		line := `{"log":` + jsonString(benchLine(i)+"\n") + `,"stream":"stderr"}`
		fmt.Fprintf(&buf, `["%d",%s]`, 1717236000000000000+int64(i), jsonString(line))
	})
	buf.WriteString(`]}]}`)
	return Request{Format: FormatLoki, ContentType: "application/json", Body: buf.Bytes()}, n
}

func benchLokiProto() (Request, int) {
	s := push.Stream{Labels: `{app="api", container="api", namespace="prod", pod="api-7d9f"}`}
	size := 0
	for i := 0; size < benchTarget; i++ {
		e := push.Entry{Timestamp: time.Unix(1717236000, int64(i)), Line: benchLine(i)}
		s.Entries = append(s.Entries, e)
		size += len(e.Line) + 16
	}
	raw, err := (&push.PushRequest{Streams: []push.Stream{s}}).Marshal()
	if err != nil {
		panic(err)
	}
	return Request{Format: FormatLoki, ContentType: "application/x-protobuf", Body: snappy.Encode(nil, raw)}, len(s.Entries)
}

func otlpString(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func benchOTLPProto() (Request, int) {
	sl := &logspb.ScopeLogs{}
	size := 0
	for i := 0; size < benchTarget; i++ {
		lr := &logspb.LogRecord{
			TimeUnixNano: uint64(1717236000000000000 + i), SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_ERROR,
			Body:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: benchLine(i)}},
			Attributes: []*commonpb.KeyValue{otlpString("log.file.path", "/var/log/pods/prod_api/api/0.log"), otlpString("log.iostream", "stderr")},
		}
		sl.LogRecords = append(sl.LogRecords, lr)
		size += proto.Size(lr)
	}
	data := &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			otlpString("service.name", "api"), otlpString("k8s.namespace.name", "prod"), otlpString("k8s.pod.name", "api-7d9f"),
		}},
		ScopeLogs: []*logspb.ScopeLogs{sl},
	}}}
	body, err := proto.Marshal(data)
	if err != nil {
		panic(err)
	}
	return Request{Format: FormatOTLP, ContentType: "application/x-protobuf", Body: body}, len(sl.LogRecords)
}

func benchOTLPJSON() (Request, int) {
	var buf bytes.Buffer
	buf.WriteString(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}},{"key":"k8s.namespace.name","value":{"stringValue":"prod"}}]},"scopeLogs":[{"scope":{"name":"otelcol/filelogreceiver"},"logRecords":[`)
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"timeUnixNano":"%d","severityNumber":17,"severityText":"ERROR","body":{"stringValue":%s},"attributes":[{"key":"log.file.path","value":{"stringValue":"/var/log/pods/prod_api/api/0.log"}}],"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174"}`,
			1717236000000000000+int64(i), jsonString(benchLine(i)))
	})
	buf.WriteString(`]}]}]}`)
	return Request{Format: FormatOTLP, ContentType: "application/json", Body: buf.Bytes()}, n
}

func benchBulk() (Request, int) {
	var buf bytes.Buffer
	n := repeatUntil(&buf, func(i int) {
		buf.WriteString(`{"create":{"_index":"fluent-bit","_type":"_doc"}}` + "\n")
		fmt.Fprintf(&buf, `{"@timestamp":"2024-06-01T10:00:00.123Z","log":%s,"stream":"stderr","kubernetes":{"pod_name":"api-%05d","namespace_name":"prod","container_name":"api","host":"node-1"}}`+"\n",
			jsonString(benchLine(i)), i)
	})
	return Request{Format: FormatElasticsearch, Path: "/_bulk", ContentType: "application/x-ndjson", Body: buf.Bytes()}, n
}

func benchAlertmanager() (Request, int) {
	var buf bytes.Buffer
	buf.WriteString(`{"version":"4","groupKey":"{}:{alertname=\"KubePodCrashLooping\"}","status":"firing","receiver":"ops","alerts":[`)
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"status":"firing","labels":{"alertname":"KubePodCrashLooping","namespace":"prod","pod":"api-%05d","container":"api","severity":"warning"},"annotations":{"summary":"Pod is crash looping","description":"Pod prod/api-%05d (api) is restarting 3 times / 10 minutes."},"startsAt":"2024-06-01T10:00:00.000Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"b3c1a9e0d2f4a5c6"}`, i, i)
	})
	buf.WriteString(`]}`)
	return Request{Format: FormatAlertmanager, ContentType: "application/json", Body: buf.Bytes()}, n
}

func benchK8sEvents() (Request, int) {
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	n := repeatUntil(&buf, func(i int) {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"metadata":{"name":"api-%05d.17d8","namespace":"prod","creationTimestamp":"2024-06-01T09:55:00Z"},"involvedObject":{"kind":"Pod","namespace":"prod","name":"api-%05d","fieldPath":"spec.containers{api}"},"reason":"BackOff","message":"Back-off restarting failed container api in pod api-%05d_prod","source":{"component":"kubelet","host":"node-1"},"firstTimestamp":"2024-06-01T09:55:00Z","lastTimestamp":"2024-06-01T10:00:00Z","count":12,"type":"Warning","eventTime":null}`, i, i, i)
	})
	buf.WriteString(`]}`)
	return Request{Format: FormatK8sEvents, ContentType: "application/json", Body: buf.Bytes()}, n
}

func benchNDJSON() (Request, int) {
	var buf bytes.Buffer
	n := repeatUntil(&buf, func(i int) {
		fmt.Fprintf(&buf, `{"level":"error","time":"2024-06-01T10:00:00.123Z","msg":%s,"service":"billing"}`+"\n", jsonString(benchLine(i)))
	})
	return Request{Format: FormatNDJSON, ContentType: "application/x-ndjson", Body: buf.Bytes()}, n
}

func benchText() (Request, int) {
	var buf bytes.Buffer
	n := repeatUntil(&buf, func(i int) {
		buf.WriteString(benchLine(i))
		buf.WriteString("\r\n")
	})
	return Request{Format: FormatText, ContentType: "text/plain", Body: buf.Bytes()}, n
}

var benchBodies = []struct {
	name  string
	build func() (Request, int)
}{
	{"fluentbit-json", benchFluentBitJSON},
	{"fluentbit-msgpack", benchFluentBitMsgpack},
	{"vector-ndjson", benchVector},
	{"loki-json", benchLokiJSON},
	{"loki-protobuf", benchLokiProto},
	{"otlp-protobuf", benchOTLPProto},
	{"otlp-json", benchOTLPJSON},
	{"elasticsearch-bulk", benchBulk},
	{"alertmanager", benchAlertmanager},
	{"k8s-events", benchK8sEvents},
	{"ndjson", benchNDJSON},
	{"text", benchText},
}

// BenchmarkDecode decodes a ~1 MiB body of each format and reports records/s.
func BenchmarkDecode(b *testing.B) {
	for _, bb := range benchBodies {
		b.Run(bb.name, func(b *testing.B) {
			req, n := bb.build()
			res, err := Decode(req, Limits{})
			if err != nil || len(res.Records) != n {
				b.Fatalf("Decode() = %d records, %v, want %d", len(res.Records), err, n)
			}
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			loops := 0
			for b.Loop() {
				if _, err := Decode(req, Limits{}); err != nil {
					b.Fatal(err)
				}
				loops++
			}
			b.ReportMetric(float64(loops*n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkDetect sniffs the format of each benchmark body, as the auto route does.
func BenchmarkDetect(b *testing.B) {
	for _, bb := range benchBodies {
		b.Run(bb.name, func(b *testing.B) {
			req, _ := bb.build()
			req.Format, req.Path = FormatAuto, ""
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			for b.Loop() {
				Detect(req)
			}
		})
	}
}

// BenchmarkDecompress decompresses the Fluent Bit JSON body in each encoding.
func BenchmarkDecompress(b *testing.B) {
	req, _ := benchFluentBitJSON()
	for _, c := range []struct{ encoding, compressor string }{
		{"gzip", "gzip"}, {"deflate", "zlib"}, {"zstd", "zstd"}, {"snappy", "snappy block"}, {"x-snappy-framed", "snappy framed"},
	} {
		b.Run(c.encoding, func(b *testing.B) {
			in := compressors[c.compressor](b, req.Body)
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decompress(c.encoding, bytes.NewReader(in), DefaultMaxBodyBytes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
