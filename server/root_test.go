package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRootNegotiation: GET / answers Elasticsearch's root document only to
// Elasticsearch clients (as Logstash, Filebeat, Vector and the Elastic client
// libraries send their probes); browsers and plain curl get the UI.
func TestRootNegotiation(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	locked := newHarness(t, harnessOpts{readTok: "read-secret"})
	const es, page, login = "es", "page", "login"
	for _, tt := range []struct {
		name   string
		locked bool
		hdr    []string
		want   string
	}{
		{"no Accept (Logstash, Vector probes)", false, nil, es},
		{"no Accept, locked UI", true, nil, es},
		{"Filebeat asks for JSON", false, []string{"Accept", "application/json", "User-Agent", "Filebeat/8.11.0 (linux; amd64; 7a2ea9f; 2023-11-08 07:52:47 +0000 UTC)"}, es},
		{"Logstash with */*", false, []string{"Accept", "*/*", "User-Agent", "Logstash/8.11.0 (OS=Linux-6.1; JVM=Eclipse Adoptium 17.0.9) logstash-output-elasticsearch/11.18.0"}, es},
		{"Vector with */*", false, []string{"Accept", "*/*", "User-Agent", "Vector/0.34.1 (x86_64-unknown-linux-gnu 86f1c22 2023-11-16)"}, es},
		{"Fluent Bit with */*", false, []string{"Accept", "*/*", "User-Agent", "Fluent-Bit"}, es},
		{"Elastic client library metadata", false, []string{"Accept", "*/*", "User-Agent", "Go-http-client/1.1", "X-Elastic-Client-Meta", "es=8.11.0,go=1.21.4,t=8.3.0,hc=1.21.4"}, es},
		{"Logstash product origin", false, []string{"Accept", "*/*", "X-Elastic-Product-Origin", "logstash-output-elasticsearch"}, es},
		{"plain curl", false, []string{"Accept", "*/*", "User-Agent", "curl/8.5.0"}, page},
		{"plain curl, locked UI", true, []string{"Accept", "*/*", "User-Agent", "curl/8.5.0"}, login},
		{"wget", false, []string{"Accept", "*/*", "User-Agent", "Wget/1.21.4"}, page},
		{"browser", false, []string{"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0"}, page},
		{"browser, locked UI", true, []string{"Accept", "text/html,*/*;q=0.8", "User-Agent", "Mozilla/5.0"}, login},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := h
			if tt.locked {
				srv = locked
			}
			req, err := http.NewRequest("GET", srv.http.URL+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req.Header.Set(tt.hdr[i], tt.hdr[i+1])
			}
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ct := resp.Header.Get("Content-Type")
			var got string
			switch {
			case resp.StatusCode == 200 && resp.Header.Get("X-Elastic-Product") == "Elasticsearch" && strings.Contains(string(b), `"number":"8.`):
				got = es
			case resp.StatusCode == 200 && strings.HasPrefix(ct, "text/html") && strings.Contains(string(b), "<form"):
				got = page
			case resp.StatusCode == 303 && strings.HasPrefix(resp.Header.Get("Location"), "/login"):
				got = login
			default:
				got = resp.Status + " " + ct + " " + firstN(b, 120)
			}
			if got != tt.want {
				t.Errorf("GET / with %q = %s, want %s", tt.hdr, got, tt.want)
			}
		})
	}
}
