package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
	"github.com/incidex/incidex/server"
	"github.com/incidex/incidex/starter"
	"github.com/incidex/incidex/web"
)

// harness is a real server over a real knowledge base (the starter) with
// its pipeline running, served on 127.0.0.1.
type harness struct {
	t    *testing.T
	kb   *kb.KB
	srv  *server.Server
	occ  *kb.Occurrences
	em   *kb.Emerging
	q    queue.Queue
	http *httptest.Server
	stop func()
}

type harnessOpts struct {
	queue                 int
	ingestToken, adminTok string
	readTok               string
	withoutStarter        bool
	withoutEmerging       bool
	extraWriteups         map[string]string
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	ctx := context.Background()
	k := kbtest.Open(t)
	if !o.withoutStarter {
		rep, err := writeup.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, writeup.LoadOptions{})
		if err != nil || len(rep.Failed) > 0 {
			t.Fatalf("load starter: %v %v", err, rep.Failed)
		}
	}
	for name, body := range o.extraWriteups {
		incs, err := writeup.ParseWriteup(name, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Write(ctx, kb.Write{Source: kb.Source{Path: name}, Incidents: incs}); err != nil {
			t.Fatal(err)
		}
	}
	if o.queue == 0 {
		o.queue = 10000
	}
	q := queue.NewMemQueue(o.queue)
	var srv *server.Server
	// The fixtures carry 2024 timestamps: a retention of 30 days would let
	// the first purge delete their (already closed) occurrences before the
	// test reads them.
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{FlushEvery: 20 * time.Millisecond, Retention: 100 * 365 * 24 * time.Hour,
		OnEvent: func(ev kb.OccurrenceEvent) { srv.OnOccurrence(ev) }})
	if err != nil {
		t.Fatal(err)
	}
	var em *kb.Emerging
	if !o.withoutEmerging {
		if em, err = k.Emerging(ctx, kb.EmergingOptions{FlushEvery: 20 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	mopts := ingest.MatchersOptions{KB: k}
	ropts := ingest.Options{Queue: q, Sink: occ}
	if em != nil {
		mopts.Emerging, ropts.Unmatched = em, em
	}
	ropts.Matchers = ingest.NewMatchers(mopts)
	reg := prometheus.NewRegistry()
	ropts.Registry = reg
	srv = server.New(server.Options{KB: k, Queue: q, Matchers: ropts.Matchers, Occurrences: occ, Emerging: em, IngestToken: o.ingestToken, AdminToken: o.adminTok,
		ReadToken: o.readTok, Mode: gin.TestMode, Web: pages, Registry: reg})
	if err := ropts.Matchers.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	rt := ingest.New(ropts)
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = rt.Run(runCtx) })
	wg.Go(func() { _ = occ.Run(runCtx) })
	if em != nil {
		wg.Go(func() { _ = em.Run(runCtx) })
	}
	hs := httptest.NewServer(srv.Handler())
	h := &harness{t: t, kb: k, srv: srv, occ: occ, em: em, q: q, http: hs}
	h.stop = func() {
		hs.Close()
		_ = q.Close()
		cancel()
		wg.Wait()
	}
	t.Cleanup(h.stop)
	return h
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) do(method, path, contentType string, body []byte, header ...string) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// waitOccurrence waits until an occurrence of incident exists (the
// pipeline and flush are asynchronous) and returns it.
func (h *harness) waitOccurrence(incident string) kb.Occurrence {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_ = h.occ.Flush(context.Background())
		list, err := h.occ.List(context.Background(), kb.OccurrenceFilter{Incident: incident})
		if err != nil {
			h.t.Fatal(err)
		}
		if len(list) > 0 {
			return list[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	all, _ := h.occ.List(context.Background(), kb.OccurrenceFilter{Limit: -1})
	var got []string
	for _, o := range all {
		got = append(got, o.IncidentID)
	}
	h.t.Fatalf("no occurrence of %s; have %v", incident, got)
	return kb.Occurrence{}
}

func jsonBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response %q is not a JSON object: %v", b, err)
	}
	return m
}

func TestHealthAndReadiness(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	if r := h.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("/healthz = %d", r.status)
	}
	r := h.do("GET", "/readyz", "", nil)
	if r.status != 200 || jsonBody(t, r.body)["signatures"].(float64) < 100 {
		t.Errorf("/readyz = %d %s", r.status, r.body)
	}
	h.srv.Drain()
	if r := h.do("GET", "/readyz", "", nil); r.status != 503 {
		t.Errorf("/readyz while draining = %d, want 503", r.status)
	}
	if r := h.do("POST", "/ingest/v1/text", "text/plain", []byte("x\n")); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("webhook while draining = %d (Retry-After %q), want 503 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
}

func TestAPIErrorsAreJSON(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	for _, tt := range []struct {
		method, path, ct string
		body             string
		status           int
		want             string
	}{
		{"GET", "/api/v1/incidents/nope", "", "", 404, `incident \"nope\": not found`},
		{"GET", "/api/v1/search?q=", "", "", 400, "query is empty"},
		{"GET", "/api/v1/search?syntax=bleve&q=title:%22open", "", "", 400, "bad query syntax"},
		{"POST", "/api/v1/match", "application/json", "{", 400, "want JSON"},
		{"POST", "/api/v1/match", "application/json", `{"lines":["x"],"mode":"sideways"}`, 400, "want stream or query"},
		{"GET", "/api/v1/occurrences?status=maybe", "", "", 400, "want open, closed or all"},
		{"POST", "/api/v1/incidents", "text/markdown", "# x", 401, "missing token"},
		{"POST", "/ingest/v1/klingon", "text/plain", "x", 404, `unknown format \"klingon\"`},
		{"GET", "/nope", "", "", 404, "no such route"},
	} {
		r := h.do(tt.method, tt.path, tt.ct, []byte(tt.body))
		if r.status != tt.status || !strings.Contains(string(r.body), tt.want) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s = %d %s, want %d with %q as JSON", tt.method, tt.path, r.status, r.body, tt.status, tt.want)
		}
	}
}

func TestMatchAPI(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	body := `{"lines":["E0302 03:04:05.000001 911 kubelet.go:3012] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"", "all good"],"explain":true}`
	r := h.do("POST", "/api/v1/match", "application/json", []byte(body))
	var res struct {
		Results []struct {
			Line    int `json:"line"`
			Matches []struct {
				Incident struct{ ID string }
				Explain  map[string]any
			} `json:"matches"`
		} `json:"results"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil || len(res.Results) != 2 {
		t.Fatalf("match = %d %s", r.status, r.body)
	}
	if m := res.Results[0].Matches; len(m) == 0 || m[0].Incident.ID != "cni-not-initialized" || m[0].Explain == nil {
		t.Errorf("line 1 matches = %+v, want cni-not-initialized with an explanation", m)
	}
	if len(res.Results[1].Matches) != 0 {
		t.Errorf("line 2 matched %+v", res.Results[1].Matches)
	}
}

func TestIncidentCRUDReloadsMatcher(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, adminTok: "adm"})
	md := "---\nid: broker-disk\ntitle: Broker disk full\n---\n# Broker disk full\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] broker: write segment /data/kafka/log-42: no space left on device\n```\n"
	auth := []string{"Authorization", "Bearer adm"}
	r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte(md), auth...)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["broker: write segment /data/kafka/log-7: no space left on device"]}`))
	if !strings.Contains(string(m.body), `"id":"broker-disk"`) {
		t.Errorf("a new incident does not match at once: %s", m.body)
	}
	if r := h.do("PUT", "/api/v1/incidents/other-id", "text/markdown", []byte(md), auth...); r.status != 400 || !strings.Contains(string(r.body), "defines broker-disk, not other-id") {
		t.Errorf("update with another id = %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte("\x00\x01binary"), auth...); r.status != 400 || !strings.Contains(string(r.body), "binary") {
		t.Errorf("binary upload = %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/api/v1/incidents/broker-disk", "", nil, auth...); r.status != 204 {
		t.Errorf("delete = %d %s", r.status, r.body)
	}
	m = h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["broker: write segment /data/kafka/log-7: no space left on device"]}`))
	if strings.Contains(string(m.body), `"id":"broker-disk"`) {
		t.Errorf("a deleted incident still matches: %s", m.body)
	}
}

func TestTokens(t *testing.T) {
	h := newHarness(t, harnessOpts{ingestToken: "in-tok", adminTok: "adm-tok"})
	line := []byte("hello\n")
	if r := h.do("POST", "/ingest/v1/text", "text/plain", line); r.status != 401 {
		t.Errorf("no token = %d, want 401", r.status)
	}
	if r := h.do("POST", "/ingest/v1/text", "text/plain", line, "Authorization", "Bearer wrong"); r.status != 401 || !strings.Contains(string(r.body), "invalid token") {
		t.Errorf("wrong token = %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/ingest/v1/text", "text/plain", line, "Authorization", "Bearer in-tok"); r.status != 200 {
		t.Errorf("ingest token = %d", r.status)
	}
	if r := h.do("POST", "/ingest/v1/text", "text/plain", line, "Authorization", "Basic dXNlcjppbi10b2s="); r.status != 200 {
		t.Errorf("basic auth with the token as password = %d", r.status)
	}
	if r := h.do("DELETE", "/api/v1/incidents/oom-killed", "", nil, "Authorization", "Bearer in-tok"); r.status != 401 {
		t.Errorf("ingest token on an admin route = %d, want 401", r.status)
	}
	if r := h.do("GET", "/api/v1/incidents/oom-killed", "", nil); r.status != 200 {
		t.Errorf("reads without a read token = %d, want 200", r.status)
	}
}

// helper for tests that need the starter's incident ids.
func starterIDs(t *testing.T) map[string]bool {
	ids := map[string]bool{}
	names, _ := fs.Glob(starter.FS(), "*.md")
	for _, n := range names {
		ids[strings.TrimSuffix(n, ".md")] = true
	}
	return ids
}

// newTestServer serves srv on 127.0.0.1 until the test ends.
func newTestServer(t *testing.T, srv *server.Server) string {
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}
