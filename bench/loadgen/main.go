// Command loadgen drives incidex's webhook the way a fleet of Fluent Bit
// agents would: concurrent senders post Fluent Bit json batches (about
// -batch bytes each, kubernetes metadata included), back off on 503 as
// Retry-After says, and count every record the server acknowledged. At the
// end it waits until /metrics shows every acknowledged record matched and
// reports throughput and request latency.
//
// In the scaled-out topology the records are matched by workers and
// counted by a writer: -check-url names the processes whose /metrics
// count the matched records (the workers), and -writer-url the writer,
// whose occurrence counts must then add up to the records the workers
// matched.
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
	checkURL := flag.String("check-url", "", "comma-separated base URLs whose /metrics incidex_records_processed_total must add up to the acknowledged records (default: -url)")
	writerURL := flag.String("writer-url", "", "base URL whose /api/v1/occurrences counts must add up to the matched records (default: none checked; the single process: its own -url)")
	wait := flag.Duration("wait", 120*time.Second, "how long to wait after the flood for every record to be matched and counted")
	flag.Parse()
	checks := []string{*url}
	if *checkURL != "" {
		checks = strings.Split(*checkURL, ",")
	}
	lines, err := benchgen.Lines(*corpus, 200000)
	if err != nil {
		fail(err)
	}
	batches := buildBatches(lines, *batchBytes, 64)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *senders}}
	var acked, refused, failed, seq atomic.Int64
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
				body := b.unique(start, seq.Add(1))
				if *rate > 0 {
					pace(start, acked.Load(), *rate)
				}
				for time.Now().Before(deadline) {
					t0 := time.Now()
					status, retry, err := post(client, *url+"/ingest/v1/fluentbit", *token, body)
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
	waitUntil := time.Now().Add(*wait)
	processedN, waitErr := waitMatched(checks, *token, acked.Load(), waitUntil)
	processedAt := time.Since(start)
	matchedN := sumMetric(checks, *token, "incidex_records_matched_total{")
	var counted int64 = -1
	countedAt := processedAt
	if waitErr == nil && *writerURL != "" {
		counted, waitErr = waitCounted(*writerURL, *token, matchedN, waitUntil)
		countedAt = time.Since(start)
	}
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
		"refused_503": refused.Load(), "failed": failed.Load(), "processed_by_server": processedN,
		"all_matched": waitErr == nil, "matched_records": matchedN,
		// processed_s: from the first request until the matchers had every
		// acknowledged record; counted_s: until the occurrence counts also
		// added up (the backlog fully drained).
		"processed_s": processedAt.Seconds(), "drained_lines_per_s": float64(acked.Load()) / countedAt.Seconds(),
	}
	if *writerURL != "" {
		out["counted_records"], out["counted_s"] = counted, countedAt.Seconds()
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

// namespaces is how many kubernetes namespaces the records come from.
const namespaces = 20

type batch struct {
	body    []byte
	records int
	// dateAt is where the first record's date is in body: each request
	// rewrites it, so that no two requests have the same body. Real
	// forwarders' batches never repeat, and a receiver on NATS JetStream
	// takes a repeated body within its duplicate window for a retry.
	dateAt int
}

// dateStamp renders t as Fluent Bit's float seconds, always 17 bytes.
func dateStamp(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("%010d.%06d", us/1e6, us%1e6)
}

// unique returns a copy of b's body whose first record's date is the
// n-th microsecond after base.
func (b batch) unique(base time.Time, n int64) []byte {
	body := slices.Clone(b.body)
	copy(body[b.dateAt:], dateStamp(base.Add(time.Duration(n)*time.Microsecond)))
	return body
}

// buildBatches renders n Fluent Bit json batches from the corpus.
func buildBatches(lines []string, size, n int) []batch {
	r := rand.New(rand.NewPCG(1, 2))
	var out []batch
	for range n {
		var b bytes.Buffer
		b.WriteByte('[')
		recs := 0
		dateAt := 0
		for b.Len() < size {
			if recs > 0 {
				b.WriteByte(',')
			}
			rec := map[string]any{
				"date": json.Number(dateStamp(time.Now())), "log": lines[r.IntN(len(lines))], "stream": "stderr",
				"kubernetes": map[string]any{"namespace_name": fmt.Sprintf("ns-%d", r.IntN(namespaces)), "pod_name": fmt.Sprintf("app-%d-7d9f8b6c4-x2kq9", r.IntN(50)),
					"container_name": "app", "host": fmt.Sprintf("node-%d", r.IntN(10))},
			}
			j, _ := json.Marshal(rec)
			if recs == 0 {
				dateAt = b.Len() + bytes.Index(j, []byte(`"date":`)) + len(`"date":`)
			}
			b.Write(j)
			recs++
		}
		b.WriteByte(']')
		out = append(out, batch{body: b.Bytes(), records: recs, dateAt: dateAt})
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

// waitMatched waits until the processed-records counters of urls add up
// to want.
func waitMatched(urls []string, token string, want int64, deadline time.Time) (int64, error) {
	var got int64
	for time.Now().Before(deadline) {
		got = sumMetric(urls, token, "incidex_records_processed_total{")
		if got >= want {
			return got, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return got, fmt.Errorf("server processed %d of %d acknowledged records", got, want)
}

// sumMetric adds up the samples whose line starts with prefix (a metric
// name and "{") over the /metrics of urls.
func sumMetric(urls []string, token, prefix string) int64 {
	n, _ := sumMetricFound(urls, token, prefix)
	return n
}

// sumMetricFound is sumMetric, and whether any sample was there.
func sumMetricFound(urls []string, token, prefix string) (int64, bool) {
	var total int64
	found := false
	for _, u := range urls {
		resp, err := get(u+"/metrics", token)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, prefix) {
				found = true
				f, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				total += int64(f)
			}
		}
		_ = resp.Body.Close()
	}
	return total, found
}

func get(url, token string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return http.DefaultClient.Do(req)
}

// waitCounted waits until the occurrence counts on url add up to want. A
// scaled-out writer's applied-records counter is watched first: it is
// cheaper to poll than the occurrences.
func waitCounted(url, token string, want int64, deadline time.Time) (int64, error) {
	for time.Now().Before(deadline) {
		n, found := sumMetricFound([]string{url}, token, "incidex_records_applied_total ")
		if !found || n >= want {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	var got int64
	var err error
	for time.Now().Before(deadline) {
		if got, err = occurrenceTotal(url, token); err == nil && got == want {
			return got, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return got, err
	}
	return got, fmt.Errorf("occurrence counts add up to %d, the matchers matched %d", got, want)
}

// occurrenceTotal sums every occurrence's count, one namespace at a time
// (the senders use ns-0 to ns-19) so that no answer reaches the API's
// 10,000-row limit.
func occurrenceTotal(url, token string) (int64, error) {
	const limit = 10000
	var total int64
	for ns := range namespaces {
		resp, err := get(fmt.Sprintf("%s/api/v1/occurrences?status=all&limit=%d&namespace=ns-%d", url, limit, ns), token)
		if err != nil {
			return 0, err
		}
		var body struct {
			Occurrences []struct {
				Count int64 `json:"count"`
			} `json:"occurrences"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("occurrences of ns-%d: HTTP %d %v", ns, resp.StatusCode, err)
		}
		if len(body.Occurrences) == limit {
			return 0, fmt.Errorf("occurrences of ns-%d: %d rows, the API's limit; the sum would be short", ns, limit)
		}
		for _, o := range body.Occurrences {
			total += o.Count
		}
	}
	return total, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(2)
}
