package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/server"
	"github.com/incidex/incidex/starter"
	"github.com/incidex/incidex/web"
)

// BenchmarkPages10k renders every page type server-side (ServeHTTP into a
// recorder, no network) over a knowledge base of the starter plus 10,000
// generated write-ups, and reports p50 and p99 latency per page.
func BenchmarkPages10k(b *testing.B) {
	srv, ids := benchServer(b, 10000)
	h := srv.Handler()
	logs := benchLogs(b)
	block := strings.Join(logs[:min(1000, len(logs))], "\n")
	queries := []string{"subnet.env", "10.43.0.1", "i/o timeout", "no space left on device", "etcdserver: request timed out",
		"x509 certificate has expired", "FailedCreatePodSandBox flannel", "eviction ephemeral-storage", "ImagePullBackOff", "kubelet certificate rotation"}
	pages := []struct {
		name string
		req  func(i int) *http.Request
	}{
		{"search", func(i int) *http.Request { return pageReq("GET", "/?q="+url.QueryEscape(queries[i%len(queries)]), "") }},
		{"search-filtered", func(i int) *http.Request { return pageReq("GET", "/?q=timeout&tag=networking", "") }},
		{"list", func(i int) *http.Request { return pageReq("GET", fmt.Sprintf("/?page=%d", 1+i%200), "") }},
		{"incident", func(i int) *http.Request { return pageReq("GET", web.IncidentURL(ids[(i*7919)%len(ids)]), "") }},
		{"incident-starter", func(i int) *http.Request { return pageReq("GET", "/incidents/flannel-subnet-env-missing", "") }},
		{"analyze-2-lines", func(i int) *http.Request {
			return pageReq("POST", "/analyze", url.Values{"logs": {flannelEvent + "\n" + calicoLine}}.Encode())
		}},
		{"analyze-1000-lines", func(i int) *http.Request { return pageReq("POST", "/analyze", url.Values{"logs": {block}}.Encode()) }},
		{"live", func(i int) *http.Request { return pageReq("GET", "/live", "") }},
		{"new-writeup", func(i int) *http.Request { return pageReq("GET", "/incidents/new", "") }},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				rec := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(rec, p.req(i))
				lat = append(lat, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s = %d %s", p.name, rec.Code, firstN(rec.Body.Bytes(), 300))
				}
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pageReq(method, path, form string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(form))
	r.Header.Set("Accept", "text/html")
	if form != "" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return r
}

// benchServer builds a server over the starter and n generated write-ups
// (as ingest's BenchmarkSearch10k does), with 200 open occurrences.
func benchServer(b *testing.B, n int) (*server.Server, []string) {
	b.Helper()
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "data")
	k, err := kb.Open(ctx, kb.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := writeup.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, writeup.LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	files, ids := genWriteups(b, b.TempDir(), n, benchLogs(b))
	start := time.Now()
	if rep, err := writeup.Load(ctx, k, files, writeup.LoadOptions{Batch: 500}); err != nil || len(rep.Failed) > 0 {
		b.Fatalf("load: %v %v", err, rep.Failed)
	}
	b.Logf("loaded %d write-ups in %v", n, time.Since(start).Round(time.Millisecond))
	// Measure a settled index, as a running server has: reopen it.
	if err := k.Close(); err != nil {
		b.Fatal(err)
	}
	if k, err = kb.Open(ctx, kb.Options{Dir: dir}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = k.Close() })
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var obs []kb.Observation
	for i := range 200 {
		labels := map[string]string{"namespace": fmt.Sprintf("ns-%d", i%7), "node": fmt.Sprintf("node-%d", i%13)}
		obs = append(obs, kb.Observation{Time: time.Now(), IncidentID: ids[i], SignatureID: fmt.Sprintf("s-%d", i), Score: 0.9,
			Message: "E0101 something failed", Labels: labels, Resource: decode.ResourceKey(labels)})
	}
	if err := occ.Observe(ctx, obs, "", nil); err != nil {
		b.Fatal(err)
	}
	if err := occ.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	pages, err := web.New()
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New(server.Options{KB: k, Queue: queue.NewMemQueue(10), Matchers: ingest.NewMatchers(ingest.MatchersOptions{KB: k}), Occurrences: occ, Mode: gin.TestMode, Web: pages})
	if err := srv.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	// The first list page builds the catalog (every incident decoded once
	// per knowledge-base generation); report it on its own.
	start = time.Now()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, pageReq("GET", "/", ""))
	b.Logf("first list page (catalog of %d incidents built): %v", n+44, time.Since(start).Round(time.Millisecond))
	return srv, ids
}

func benchLogs(b *testing.B) []string {
	logs, err := benchgen.VariantLines("../testdata/corpus/variants.tsv")
	if err != nil {
		b.Fatal(err)
	}
	return logs
}

// genWriteups writes n generated write-ups into dir (see benchgen.Writeups).
func genWriteups(b *testing.B, dir string, n int, logs []string) (files, ids []string) {
	files, ids, err := benchgen.Writeups(dir, n, logs)
	if err != nil {
		b.Fatal(err)
	}
	return files, ids
}
