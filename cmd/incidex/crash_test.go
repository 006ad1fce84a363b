package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/incidex/incidex/kb"
)

// TestCrashDuringWebhookFlood: senders post while the server is killed
// with SIGKILL. After a restart every request that was answered 200 has
// all its records counted exactly once; a request cut off without an
// answer is counted fully or not at all. Delivery is at-least-once from the
// spool, made exactly-once by storing the spool position with the
// occurrence counts in one transaction.
func TestCrashDuringWebhookFlood(t *testing.T) {
	dir := t.TempDir()
	cmd, url := startServe(t, dir)
	type req struct {
		ns    string
		acked bool
	}
	var mu sync.Mutex
	var reqs []req
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for s := range 4 {
		wg.Go(func() {
			for r := 0; ; r++ {
				select {
				case <-stop:
					return
				default:
				}
				ns := fmt.Sprintf("r-%d-%d", s, r)
				var b bytes.Buffer
				for i := range 50 {
					fmt.Fprintf(&b, `{"msg":%q,"namespace":%q,"pod":"p-%d"}`+"\n", e2eLine, ns, i%3)
				}
				resp, err := http.Post(url+"/ingest/v1/ndjson", "application/x-ndjson", &b)
				if err != nil {
					mu.Lock()
					reqs = append(reqs, req{ns: ns}) // no answer: in doubt
					mu.Unlock()
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				reqs = append(reqs, req{ns: ns, acked: resp.StatusCode == http.StatusOK})
				mu.Unlock()
			}
		})
	}
	time.Sleep(800 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(stop)
	wg.Wait()

	_, url2 := startServe(t, dir)
	counts := waitCounts(t, url2, 50)
	acked := 0
	for _, r := range reqs {
		got := counts[r.ns]
		switch {
		case r.acked && got != 50:
			t.Errorf("request %s was answered 200 but %d of its 50 records were counted", r.ns, got)
		case !r.acked && got != 0 && got != 50:
			t.Errorf("request %s (no answer) has %d of 50 records counted: want all or none", r.ns, got)
		}
		if r.acked {
			acked++
		}
	}
	if acked == 0 {
		t.Fatal("no request was acknowledged before the kill")
	}
	t.Logf("%d requests answered 200 before SIGKILL (%d records); all counted exactly once after restart", acked, acked*50)
}

// waitCounts waits until the restarted server has drained its spool and
// returns the occurrence count per namespace.
func waitCounts(t *testing.T, url string, per int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var prev map[string]int
	for {
		time.Sleep(1500 * time.Millisecond) // occurrences are written every second
		resp, err := http.Get(url + "/api/v1/occurrences?status=all&limit=10000")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Occurrences []struct {
				Count  int               `json:"count"`
				Labels map[string]string `json:"labels"`
			} `json:"occurrences"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, o := range body.Occurrences {
			counts[o.Labels["namespace"]] += o.Count
		}
		if prev != nil && fmt.Sprint(prev) == fmt.Sprint(counts) {
			return counts
		}
		if time.Now().After(deadline) {
			return counts
		}
		prev = counts
	}
}

// TestCrashDuringIngest: incidex ingest of 1,000 write-ups is killed with
// SIGKILL midway. The database passes PRAGMA integrity_check, the index
// agrees with SQLite after the next open, and running the ingest again
// completes the rest.
func TestCrashDuringIngest(t *testing.T) {
	bin := binary(t)
	dir, src := t.TempDir(), t.TempDir()
	for i := range 1000 {
		body := fmt.Sprintf("---\nid: crash-%04d\ntitle: Generated incident %d\n---\n# Generated incident %d\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] generated failure %d: component-%d refused connection\n```\n\n## Root Cause\n\nGenerated cause %d.\n", i, i, i, i, i, i)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("w%04d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "ingest", "--no-starter", "--data", dir, src)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once some of it is in: the database exists and has incidents.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if n := countIncidents(filepath.Join(dir, kb.DBFile)); n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	stored := countIncidents(filepath.Join(dir, kb.DBFile))
	t.Logf("killed with %d of 1000 incidents stored", stored)

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, kb.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	_ = db.Close()

	ctx := context.Background()
	k, err := kb.Open(ctx, kb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := k.List(ctx, "")
	res, err := k.Search(ctx, kb.SearchRequest{Query: "generated", Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if int(res.Total) != len(list) {
		t.Errorf("search finds %d incidents, SQLite has %d", res.Total, len(list))
	}
	_ = k.Close()

	out, err := exec.Command(bin, "ingest", "--data", dir, src).CombinedOutput()
	if err != nil {
		t.Fatalf("re-run ingest: %v\n%s", err, out)
	}
	if n := countIncidents(filepath.Join(dir, kb.DBFile)); n != 1000 {
		t.Errorf("after the re-run %d incidents, want 1000 (%s)", n, strings.TrimSpace(string(out)))
	}
}

func countIncidents(path string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1000)&mode=ro")
	if err != nil {
		return 0
	}
	defer db.Close()
	var n int
	_ = db.QueryRow("SELECT count(*) FROM incidents").Scan(&n)
	return n
}
