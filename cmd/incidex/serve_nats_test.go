package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A scaled-out process started before NATS (pods start in any order)
// listens at once: alive on /healthz, not ready on /readyz, and the
// webhook answers 503 with Retry-After, which forwarders retry, instead
// of refusing connections. When NATS comes up it becomes ready and takes
// records.
func TestScaledProcessAnswersBeforeNATSIsUp(t *testing.T) {
	bin := binary(t)
	natsPort, httpPort := freePort(t), freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(httpPort)
	rcv := exec.Command(bin, "serve", "--role", "receiver", "--nats", "nats://127.0.0.1:"+strconv.Itoa(natsPort),
		"--addr", "127.0.0.1:"+strconv.Itoa(httpPort), "--log-level", "error")
	rcv.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := rcv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rcv.Process.Signal(syscall.SIGKILL); _ = rcv.Wait() })

	get := func(path string) (int, http.Header) {
		r, err := http.Get(base + path)
		if err != nil {
			return 0, nil
		}
		r.Body.Close()
		return r.StatusCode, r.Header
	}
	post := func() (int, http.Header) {
		r, err := http.Post(base+"/ingest/v1/text", "text/plain", strings.NewReader("dial tcp 10.96.0.1:443: i/o timeout\n"))
		if err != nil {
			return 0, nil
		}
		r.Body.Close()
		return r.StatusCode, r.Header
	}
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s: not within %v", what, d)
	}
	waitFor("/healthz answers 200 while NATS is down", 20*time.Second, func() bool { c, _ := get("/healthz"); return c == 200 })
	if c, _ := get("/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz while NATS is down = %d, want 503", c)
	}
	if c, h := post(); c != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("webhook while NATS is down = %d (Retry-After %q), want 503 with Retry-After", c, h.Get("Retry-After"))
	}

	nats := exec.Command(natsServerBinary(t), "-js", "-sd", filepath.Join(t.TempDir(), "nats"), "-a", "127.0.0.1", "-p", strconv.Itoa(natsPort))
	if err := nats.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nats.Process.Signal(syscall.SIGKILL); _ = nats.Wait() })
	waitFor("/readyz answers 200 once NATS is up", 30*time.Second, func() bool { c, _ := get("/readyz"); return c == 200 })
	if c, _ := post(); c < 200 || c > 299 {
		t.Errorf("webhook once NATS is up = %d, want 2xx", c)
	}
}
