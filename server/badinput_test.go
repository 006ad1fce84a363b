package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"strings"
	"testing"
)

// TestBadInputCatalogue sends the inputs a service in the path of a
// cluster's logs will get on a bad day, through the real HTTP server. Each
// gets its documented status and a one-line JSON error that says what was
// wrong, and the knowledge base is unchanged.
func TestBadInputCatalogue(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	admin := []string{"Authorization", "Bearer adm"}
	// Fixed-seed garbage: random bytes can, by chance, begin with a snappy
	// length header above the limit, which is a 413, not a 400.
	garbage := make([]byte, 4096)
	_, _ = rand.NewChaCha8([32]byte{'i', 'n', 'c', 'i', 'd', 'e', 'x'}).Read(garbage)
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	var labels strings.Builder
	labels.WriteString(`{"msg":"hello failed","x":1`)
	for i := range 2000 {
		fmt.Fprintf(&labels, `,"label_%d":"v"`, i)
	}
	labels.WriteString("}\n")
	bigLine := gz(t, append(bytes.Repeat([]byte("a"), 50<<20), '\n'))
	var heads strings.Builder
	heads.WriteString("---\nid: many-headings\ntitle: Many headings\n---\n")
	for i := range 10000 {
		fmt.Fprintf(&heads, "## Heading %d\n\ntext %d\n\n", i, i)
	}
	upload := func(name string, content []byte) ([]byte, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("file", name)
		_, _ = fw.Write(content)
		_ = w.Close()
		return b.Bytes(), w.FormDataContentType()
	}
	binBody, binCT := upload("photo.md", append([]byte("\x89PNG\r\n\x1a\n\x00\x00"), garbage...))
	bigMD, bigCT := upload("huge.md", bytes.Repeat([]byte("# x\n"), 100<<20/4))

	tests := []struct {
		name, method, path, ct string
		body                   []byte
		hdr                    []string
		status                 int
		want                   string // in the error, or in the body for 2xx
		adds                   int    // incidents the request may add
	}{
		{"empty body", "POST", "/ingest/v1/ndjson", "application/x-ndjson", nil, nil, 400, "empty body", 0},
		{"wrong content type for the format", "POST", "/v1/logs", "text/html", []byte("<html>hello</html>"), nil, 400, "", 0},
		{"truncated gzip", "POST", "/ingest/v1/text", "text/plain", gz(t, []byte("some line\n"))[:12], []string{"Content-Encoding", "gzip"}, 400, "corrupt or truncated", 0},
		{"gzip bomb", "POST", "/ingest/v1/text", "text/plain", gz(t, make([]byte, 200<<20)), []string{"Content-Encoding", "gzip"}, 413, "too large", 0},
		{"invalid UTF-8 is accepted, repaired", "POST", "/ingest/v1/text", "text/plain", []byte("bad \xff\xfe bytes failed\n"), nil, 200, `"accepted":1`, 0},
		{"NUL bytes are accepted", "POST", "/ingest/v1/text", "text/plain", []byte("nul\x00inside failed\n"), nil, 200, `"accepted":1`, 0},
		{"50 MB single line is truncated", "POST", "/ingest/v1/text", "text/plain", bigLine, []string{"Content-Encoding", "gzip"}, 200, `"accepted":1`, 0},
		{"deeply nested JSON", "POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(deep + "\n"), nil, 400, "", 0},
		{"JSON with wrong types", "POST", "/ingest/v1/alertmanager", "application/json", []byte(`{"version":4,"alerts":"nope"}`), nil, 400, "", 0},
		{"protobuf garbage", "POST", "/v1/logs", "application/x-protobuf", garbage, nil, 400, "", 0},
		{"loki protobuf garbage", "POST", "/loki/api/v1/push", "application/x-protobuf", garbage, nil, 400, "", 0},
		{"msgpack garbage", "POST", "/ingest/v1/fluentbit", "application/msgpack", garbage, nil, 400, "", 0},
		{"huge label set is capped", "POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(labels.String()), nil, 200, `"accepted":1`, 0},
		{"unknown format", "POST", "/ingest/v1/syslog-ng", "text/plain", []byte("x\n"), nil, 404, "unknown format", 0},
		{"unknown incident id", "GET", "/api/v1/incidents/no-such-incident", "", nil, nil, 404, "not found", 0},
		{"malformed search query", "GET", "/api/v1/search?syntax=bleve&q=title:%22unclosed", "", nil, nil, 400, "bad query syntax", 0},
		{"empty search query", "GET", "/api/v1/search?q=", "", nil, nil, 400, "query is empty", 0},
		{"Markdown with 10,000 headings", "POST", "/api/v1/incidents", "text/markdown", []byte(heads.String()), admin, 201, `"many-headings"`, 1},
		{"binary file as a write-up", "POST", "/api/v1/incidents", binCT, binBody, admin, 400, "binary", 0},
		{"write-up of 100 MB", "POST", "/api/v1/incidents", bigCT, bigMD, admin, 413, "limit", 0},
		{"front matter that is not YAML", "POST", "/api/v1/incidents", "text/markdown", []byte("---\nid: [unclosed\n---\n# T\n"), admin, 400, "front matter", 0},
		{"bad curated signature", "POST", "/api/v1/incidents", "text/markdown", []byte("---\nid: x1\nsignatures: ['dial <ipp>']\n---\n# T\n"), admin, 400, "<ipp>", 0},
		{"match request that is not JSON", "POST", "/api/v1/match", "application/json", []byte("lines=1"), nil, 400, "want JSON", 0},
	}
	count := func() int {
		r := h.do("GET", "/api/v1/incidents", "", nil)
		var l struct {
			Incidents []json.RawMessage `json:"incidents"`
		}
		_ = json.Unmarshal(r.body, &l)
		return len(l.Incidents)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count()
			r := h.do(tt.method, tt.path, tt.ct, tt.body, tt.hdr...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			if r.status >= 400 {
				m := jsonBody(t, r.body)
				msg, _ := m["error"].(string)
				if msg == "" || strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) {
					t.Errorf("error %q: want one line containing %q", msg, tt.want)
				}
			} else if !strings.Contains(string(r.body), tt.want) {
				t.Errorf("body %.300s: want %q", r.body, tt.want)
			}
			if got := count(); got != before+tt.adds {
				t.Errorf("knowledge base has %d incidents after the request, %d before: want %d more", got, before, tt.adds)
			}
		})
	}
}
