package server_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/server"
)

// TestReceiverOnly: a server with a queue and no knowledge base is a
// webhook receiver. It takes records, answers the Elasticsearch probes and
// health, has no API or pages, sends browsers to the public URL, and is not
// ready while its extra readiness check fails.
func TestReceiverOnly(t *testing.T) {
	q := queue.NewMemQueue(100)
	var notReady error
	srv := server.New(server.Options{Queue: q, Mode: gin.TestMode, PublicURL: "https://incidex.example.org/",
		Ready: func() error { return notReady }})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	resp, err := http.Post(hs.URL+"/ingest/v1/ndjson", "application/x-ndjson", strings.NewReader(`{"msg":"x failed"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || q.Len() != 1 {
		t.Fatalf("ingest: status %d, queued %d; want 200 and 1", resp.StatusCode, q.Len())
	}
	for path, want := range map[string]int{"/api/v1/search?q=x": 404, "/analyze": 404, "/healthz": 200, "/readyz": 200, "/metrics": 200, "/_cluster/health": 200} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/", nil)
	req.Header.Set("Accept", "text/html")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://incidex.example.org/" {
		t.Errorf("browser GET / = %d to %q, want 302 to the public URL", resp.StatusCode, resp.Header.Get("Location"))
	}
	notReady = errors.New("NATS not connected")
	resp, err = http.Get(hs.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz while the check fails = %d, want 503", resp.StatusCode)
	}
}
