// Command loadgen drives incidex's webhook the way a fleet of Fluent Bit
// agents would: concurrent senders post Fluent Bit json batches (about
// -batch bytes each, kubernetes metadata included), back off on 503 as
// Retry-After says, and count every record the server acknowledged. At the
// end it waits until /metrics shows every acknowledged record matched and
// reports throughput and request latency.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/incidex/incidex/bench/benchgen"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "incidex base URL")
	token := flag.String("token", "", "ingest token")
	corpus := flag.String("corpus", "bench/out/corpus.log", "lines to send")
	senders := flag.Int("senders", 4, "concurrent senders")
	batchBytes := flag.Int("batch", 1<<20, "approximate JSON bytes per request")
	duration := flag.Duration("duration", 30*time.Second, "how long to send")
	rate := flag.Int("rate", 0, "target lines/s over all senders (0: as fast as the server takes them)")
	flag.Parse()
	lines, err := benchgen.Lines(*corpus, 200000)
	if err != nil {
		fail(err)
	}
	batches := buildBatches(lines, *batchBytes, 64)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *senders}}
	var acked, refused, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(*duration)
	start := time.Now()
	var wg sync.WaitGroup
	for s := range *senders {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), 7))
			for time.Now().Before(deadline) {
				b := batches[r.IntN(len(batches))]
				if *rate > 0 {
					pace(start, acked.Load(), *rate)
				}
				for time.Now().Before(deadline) {
					t0 := time.Now()
					status, retry, err := post(client, *url+"/ingest/v1/fluentbit", *token, b.body)
					d := time.Since(t0)
					if err != nil {
						failed.Add(1)
						time.Sleep(100 * time.Millisecond)
						continue
					}
					if status == http.StatusServiceUnavailable {
						refused.Add(1)
						time.Sleep(retry)
						continue
					}
					if status != http.StatusOK {
						failed.Add(1)
						break
					}
					acked.Add(int64(b.records))
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	matched, waitErr := waitMatched(*url, *token, acked.Load(), 120*time.Second)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	out := map[string]any{
		"senders": *senders, "batch_bytes": *batchBytes, "seconds": elapsed.Seconds(),
		"acked_records": acked.Load(), "lines_per_s": float64(acked.Load()) / elapsed.Seconds(),
		"requests": len(lat), "p50_ms": ms(pct(0.5)), "p99_ms": ms(pct(0.99)), "max_ms": ms(pct(1)),
		"refused_503": refused.Load(), "failed": failed.Load(), "processed_by_server": matched,
		"all_matched": waitErr == nil,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	if waitErr != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", waitErr)
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pace sleeps while the senders are ahead of the target rate.
func pace(start time.Time, done int64, rate int) {
	want := time.Duration(float64(done) / float64(rate) * float64(time.Second))
	if ahead := want - time.Since(start); ahead > 0 {
		time.Sleep(ahead)
	}
}

type batch struct {
	body    []byte
	records int
}

// buildBatches renders n Fluent Bit json batches from the corpus.
func buildBatches(lines []string, size, n int) []batch {
	r := rand.New(rand.NewPCG(1, 2))
	var out []batch
	for range n {
		var b bytes.Buffer
		b.WriteByte('[')
		recs := 0
		for b.Len() < size {
			if recs > 0 {
				b.WriteByte(',')
			}
			rec := map[string]any{
				"date": float64(time.Now().UnixNano()) / 1e9, "log": lines[r.IntN(len(lines))], "stream": "stderr",
				"kubernetes": map[string]any{"namespace_name": fmt.Sprintf("ns-%d", r.IntN(20)), "pod_name": fmt.Sprintf("app-%d-7d9f8b6c4-x2kq9", r.IntN(50)),
					"container_name": "app", "host": fmt.Sprintf("node-%d", r.IntN(10))},
			}
			j, _ := json.Marshal(rec)
			b.Write(j)
			recs++
		}
		b.WriteByte(']')
		out = append(out, batch{body: b.Bytes(), records: recs})
	}
	return out
}

func post(c *http.Client, url, token string, body []byte) (int, time.Duration, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	retry := time.Second
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		retry = time.Duration(s) * time.Second
	}
	return resp.StatusCode, retry, nil
}

// waitMatched waits until the server's processed-records counter reaches want.
func waitMatched(url, token string, want int64, limit time.Duration) (int64, error) {
	deadline := time.Now().Add(limit)
	var got int64
	for time.Now().Before(deadline) {
		got = processed(url, token)
		if got >= want {
			return got, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return got, fmt.Errorf("server processed %d of %d acknowledged records", got, want)
}

func processed(url, token string) int64 {
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var total int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "incidex_records_processed_total{") {
			f, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			total += int64(f)
		}
	}
	return total
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(2)
}
