package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
)

// slowSink delays each batch so that a small queue overflows under load.
type slowSink struct {
	next  ingest.Sink
	delay time.Duration
}

func (s slowSink) Observe(ctx context.Context, obs []kb.Observation, checkpoint string, durable func()) error {
	time.Sleep(s.delay)
	return s.next.Observe(ctx, obs, checkpoint, durable)
}

// TestZeroLossUnderOverflow sends records concurrently into a queue small
// enough to overflow. Senders retry 503s as forwarders do. At the end every
// record was matched exactly once (occurrence counts add up to what was
// sent, no more), and /metrics agrees.
func TestZeroLossUnderOverflow(t *testing.T) {
	ctx := context.Background()
	k := kbtest.Open(t)
	if _, err := writeup.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, writeup.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	q := queue.NewMemQueue(300)
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{FlushEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	matchers := ingest.NewMatchers(ingest.MatchersOptions{KB: k})
	reg := prometheus.NewRegistry()
	srv := server.New(server.Options{KB: k, Queue: q, Matchers: matchers, Occurrences: occ, Mode: gin.TestMode, RetryAfter: time.Second, Registry: reg})
	if err := matchers.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	rt := ingest.New(ingest.Options{Queue: q, Matchers: matchers, Sink: slowSink{occ, 2 * time.Millisecond}, Workers: 1, BatchSize: 100, Registry: reg})
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = rt.Run(runCtx) })
	wg.Go(func() { _ = occ.Run(runCtx) })
	hs := newTestServer(t, srv)

	const senders, requests, perRequest = 8, 60, 50
	var sent, retries atomic.Int64
	var swg sync.WaitGroup
	for s := range senders {
		swg.Go(func() {
			for r := range requests {
				var b bytes.Buffer
				for i := range perRequest {
					fmt.Fprintf(&b, `{"msg":%q,"namespace":"ns-%d","pod":"p-%d-%d"}`+"\n", cniLine, s, r, i)
				}
				for {
					resp, err := http.Post(hs+"/ingest/v1/ndjson", "application/x-ndjson", bytes.NewReader(b.Bytes()))
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusServiceUnavailable {
						if resp.Header.Get("Retry-After") == "" {
							t.Error("503 without Retry-After")
						}
						retries.Add(1)
						time.Sleep(5 * time.Millisecond) // forwarders back off; the test keeps it short
						continue
					}
					if resp.StatusCode != http.StatusOK {
						t.Errorf("status %d", resp.StatusCode)
						return
					}
					sent.Add(perRequest)
					break
				}
			}
		})
	}
	swg.Wait()
	// Drain: close the queue, let the pipeline finish, flush occurrences.
	_ = q.Close()
	deadline := time.Now().Add(30 * time.Second)
	for q.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if err := occ.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := occ.List(ctx, kb.OccurrenceFilter{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	var counted int64
	for _, o := range list {
		counted += o.Count
	}
	want := int64(senders * requests * perRequest)
	if sent.Load() != want || counted != want {
		t.Errorf("sent %d (want %d), occurrence counts add up to %d: want every accepted record matched exactly once", sent.Load(), want, counted)
	}
	if retries.Load() == 0 {
		t.Errorf("the queue never overflowed (no 503): the test did not test overflow")
	}
	m := scrape(t, hs)
	if m[`incidex_records_received_total{format="ndjson"}`] != float64(want) || m[`incidex_records_processed_total{format="ndjson"}`] != float64(want) ||
		m[`incidex_records_matched_total{format="ndjson"}`] != float64(want) {
		t.Errorf("metrics received %v processed %v matched %v, want %d each", m[`incidex_records_received_total{format="ndjson"}`],
			m[`incidex_records_processed_total{format="ndjson"}`], m[`incidex_records_matched_total{format="ndjson"}`], want)
	}
	t.Logf("%d records in %d requests, %d retried 503s, %d occurrences", want, senders*requests, retries.Load(), len(list))
}

// scrape reads /metrics into name{labels} → value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err == nil {
			out[l[:i]] = v
		}
	}
	return out
}
