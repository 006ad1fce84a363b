package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds incidex once for the end-to-end tests.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test (builds and runs the binary); skipped with -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "incidex-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "incidex")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var servingRE = regexp.MustCompile(`serving on (http://\S+)`)

// startServe starts incidex serve on a free port and returns its URL.
func startServe(t *testing.T, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--log-level", "warn"}, extra...)...)
	cmd.Env = append(os.Environ(), "INCIDEX_NO_STARTER=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	select {
	case u := <-urlc:
		return cmd, u
	case <-time.After(60 * time.Second):
		t.Fatal("incidex serve did not start")
	}
	return nil, ""
}

const e2eLine = `E0302 03:04:05.000001     911 kubelet.go:3012] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"`

// TestServeSIGTERMLosesNothingAcknowledged: senders post records while the
// server gets SIGTERM. Every record in a request answered 2xx is matched
// before the process exits (the restarted server's occurrences count them
// all).
func TestServeSIGTERMLosesNothingAcknowledged(t *testing.T) {
	dir := t.TempDir()
	cmd, url := startServe(t, dir, "--queue-size", "2000")
	var acked atomic.Int64
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
				var b bytes.Buffer
				for i := range 100 {
					fmt.Fprintf(&b, `{"msg":%q,"namespace":"ns-%d","pod":"p-%d-%d"}`+"\n", e2eLine, s, r, i)
				}
				resp, err := http.Post(url+"/ingest/v1/ndjson", "application/x-ndjson", &b)
				if err != nil {
					return // the server is gone
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					acked.Add(100)
				}
			}
		})
	}
	time.Sleep(700 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("serve exited with %v after SIGTERM, want a clean exit", err)
	}
	if acked.Load() == 0 {
		t.Fatal("no request was acknowledged before SIGTERM")
	}
	_, url2 := startServe(t, dir)
	resp, err := http.Get(url2 + "/api/v1/occurrences?status=all&limit=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Occurrences []struct {
			Count int64 `json:"count"`
		} `json:"occurrences"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var counted int64
	for _, o := range body.Occurrences {
		counted += o.Count
	}
	if counted != acked.Load() {
		t.Errorf("%d records acknowledged with 200, %d matched after restart: want equal", acked.Load(), counted)
	}
	t.Logf("acknowledged %d records before and during SIGTERM; all matched", acked.Load())
}

// TestServeRefusesPublicAddressWithoutTokens: binding to a non-loopback
// address without tokens is refused unless --insecure.
func TestServeRefusesPublicAddressWithoutTokens(t *testing.T) {
	r := incidex(t, t.TempDir(), "", "serve", "--addr", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "refusing to listen on 0.0.0.0:0 without --ingest-token and --admin-token") {
		t.Errorf("serve on 0.0.0.0 without tokens: exit %d %s", r.code, r.stderr)
	}
}

// TestCLIWhileServing: match, search and ingest keep working while a
// server holds the data directory's index.
func TestCLIWhileServing(t *testing.T) {
	dir := t.TempDir()
	startServe(t, dir)
	bin := binary(t)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append(args, "--data", dir)...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("match", "dial tcp 10.96.0.1:443: i/o timeout"); code != 0 || !strings.Contains(out, "calico-apiserver-unreachable") {
		t.Errorf("match while serving: exit %d\n%s", code, out)
	}
	if out, code := run("search", "subnet.env"); code != 0 || !strings.Contains(out, "flannel-subnet-env-missing") {
		t.Errorf("search while serving (through the server's API): exit %d\n%s", code, out)
	}
	md := filepath.Join(t.TempDir(), "mine.md")
	_ = os.WriteFile(md, []byte("---\nid: queue-stuck\ntitle: Queue consumer stuck\n---\n# Queue consumer stuck\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 c.go:1] consumer group orders-v2: rebalance failed: heartbeat session expired\n```\n"), 0o644)
	if out, code := run("ingest", md); code != 0 {
		t.Errorf("ingest while serving: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, code := run("search", "orders-v2")
		if code == 0 && strings.Contains(out, "queue-stuck") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not index the incident ingested beside it:\n%s", out)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
