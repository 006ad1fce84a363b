package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServerBinary finds nats-server: CI installs Debian's; elsewhere the
// test is skipped when it is missing.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("INCIDEX_NATS_SERVER"), "nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nats-server is not installed (.ci/run installs it)")
	}
	t.Skip("nats-server not installed (apt-get install nats-server)")
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is one process of the test topology, restartable.
type proc struct {
	t    *testing.T
	name string
	bin  string
	args []string
	env  []string
	cmd  *exec.Cmd
	url  string // "serving on" URL, when it serves HTTP
	log  *os.File
}

// start runs the process and waits until it says it is serving (or, for
// nats-server, until its port answers).
func (p *proc) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Env = append(os.Environ(), p.env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Stdout = p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.log, line)
			if m := servingRE.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			} else if strings.Contains(line, "worker running") || strings.Contains(line, "Server is ready") {
				ready <- ""
			}
		}
	}()
	select {
	case p.url = <-ready:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s did not start; its log is %s", p.name, p.log.Name())
	}
}

func (p *proc) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		p.kill9()
	}
}

// e2eAckWait is short so that the messages of a killed or frozen worker
// come back within the test.
const e2eAckWait = 3 * time.Second

// topology is one nats-server, the writer, workers and receivers.
type topology struct {
	t         *testing.T
	dir       string
	natsURL   string
	nats      *proc
	writer    *proc
	workers   []*proc
	receivers []*proc
}

func newTopology(t *testing.T, receivers, workers int, writerEnv ...string) *topology {
	t.Helper()
	bin, natsBin := binary(t), natsServerBinary(t)
	top := &topology{t: t, dir: t.TempDir()}
	logs := filepath.Join(top.dir, "logs")
	_ = os.MkdirAll(logs, 0o755)
	mk := func(name, b string, env []string, args ...string) *proc {
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		p := &proc{t: t, name: name, bin: b, args: args, env: env, log: f}
		t.Cleanup(func() {
			if p.cmd != nil && p.cmd.ProcessState == nil {
				p.kill9()
			}
		})
		return p
	}
	port := freePort(t)
	top.natsURL = fmt.Sprintf("nats://127.0.0.1:%d", port)
	top.nats = mk("nats", natsBin, nil, "-js", "-sd", filepath.Join(top.dir, "nats"), "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	top.nats.start()
	common := []string{"--nats", top.natsURL, "--log-level", "info", "--log-format", "text", "--ack-wait", e2eAckWait.String()}
	env := []string{"INCIDEX_NO_STARTER="}
	top.writer = mk("writer", bin, append(env, writerEnv...), append([]string{"serve", "--role", "writer", "--data", filepath.Join(top.dir, "data"), "--addr", "127.0.0.1:0"}, common...)...)
	top.writer.start()
	for i := range workers {
		w := mk(fmt.Sprintf("worker-%d", i), bin, env, append([]string{"serve", "--role", "worker"}, common...)...)
		w.start()
		top.workers = append(top.workers, w)
	}
	for i := range receivers {
		r := mk(fmt.Sprintf("receiver-%d", i), bin, env, append([]string{"serve", "--role", "receiver", "--addr", "127.0.0.1:0"}, common...)...)
		r.start()
		top.receivers = append(top.receivers, r)
	}
	return top
}

// restart starts p again on a fresh port when it has one (receivers keep
// "127.0.0.1:0").
func (top *topology) restart(p *proc) { p.start() }

// occurrenceTotal sums the writer's occurrence counts.
func (top *topology) occurrenceTotal() (int64, error) {
	resp, err := http.Get(top.writer.url + "/api/v1/occurrences?status=all&limit=10000")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("occurrences: HTTP %d %s", resp.StatusCode, b)
	}
	var body struct {
		Occurrences []struct {
			Count int64 `json:"count"`
		} `json:"occurrences"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	var n int64
	for _, o := range body.Occurrences {
		n += o.Count
	}
	return n, nil
}

// flood sends Fluent Bit-style batches (JSON arrays of records with their
// own time) to the receivers, in turn, until stop is closed. A request is
// retried, with the same body, until a receiver answers 2xx, as Fluent Bit
// retries a chunk; the records of acknowledged requests are counted.
func flood(ctx context.Context, urls func() []string, senders, perRequest int, acked *atomic.Int64, retries *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 20 * time.Second}
	for s := range senders {
		wg.Go(func() {
			for r := 0; ctx.Err() == nil; r++ {
				var b bytes.Buffer
				b.WriteByte('[')
				base := float64(time.Now().UnixNano())/1e9 + float64(s)/1000
				for i := range perRequest {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"date":%.6f,"log":%q,"kubernetes":{"namespace_name":"ns-%d","pod_name":"web-%d","container_name":"app"}}`,
						base+float64(i)/1e6, e2eLine, s, r%7)
				}
				b.WriteByte(']')
				body := b.Bytes()
				for try := 0; ; try++ {
					us := urls()
					u := us[(s+r+try)%len(us)]
					resp, err := client.Post(u+"/ingest/v1/fluentbit", "application/json", bytes.NewReader(body))
					if err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						if resp.StatusCode/100 == 2 {
							acked.Add(int64(perRequest))
							break
						}
					}
					retries.Add(1)
					if ctx.Err() != nil && try > 200 {
						return // give up only long after the flood ended
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	return &wg
}

// TestScaleOutExactlyOnceAcrossKills runs one nats-server, 2 receivers, 2
// workers and a writer as separate processes. It floods the receivers with
// Fluent Bit-style batches retried until acknowledged, kill -9s a worker and
// a receiver mid-flood and later the writer, and restarts them; poison
// messages are published straight into the records stream. Then it makes
// the duplicates the applied set exists for: a worker frozen (SIGSTOP) with
// messages in hand loses them to the other worker after AckWait, NATS is
// killed and restarted (it forgets the ids of consumed messages,
// nats-server#3272), and the frozen worker resumes and publishes results for
// messages already counted. At the end the occurrence counts add up to the
// acknowledged records exactly, and the dead letters to the poison messages.
//
// INCIDEX_E2E_NO_APPLIED_SET=1 runs the negative control: the writer
// applies every result, duplicates included, and the count check fails.
func TestScaleOutExactlyOnceAcrossKills(t *testing.T) {
	var writerEnv []string
	if os.Getenv("INCIDEX_E2E_NO_APPLIED_SET") == "1" {
		writerEnv = append(writerEnv, "INCIDEX_TEST_NO_APPLIED_SET=1")
	}
	top := newTopology(t, 2, 2, writerEnv...)
	var mu sync.Mutex
	live := []string{top.receivers[0].url, top.receivers[1].url}
	urls := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), live...) }

	ctx, stopFlood := context.WithCancel(context.Background())
	var acked, retries atomic.Int64
	senders := flood(ctx, urls, 4, 200, &acked, &retries)

	const poison = 3
	nc, err := nats.Connect(top.natsURL, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for i := range poison {
		if _, err := js.Publish(context.Background(), "incidex.records", []byte(fmt.Sprintf("not a records message %d", i))); err != nil {
			t.Fatal(err)
		}
	}

	time.Sleep(1500 * time.Millisecond)
	top.workers[0].kill9()
	r0 := top.receivers[0]
	mu.Lock()
	live = []string{top.receivers[1].url}
	mu.Unlock()
	r0.kill9()
	time.Sleep(time.Second)
	top.restart(top.workers[0])
	top.restart(r0)
	mu.Lock()
	live = []string{r0.url, top.receivers[1].url}
	mu.Unlock()
	time.Sleep(1500 * time.Millisecond)
	top.writer.kill9()
	time.Sleep(time.Second)
	top.restart(top.writer)
	time.Sleep(1500 * time.Millisecond)

	// The duplicates: freeze a worker that holds messages, let the other
	// take them over, restart NATS with the flood stopped, thaw the worker.
	frozen := top.workers[1]
	_ = frozen.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(500 * time.Millisecond)
	stopFlood()
	senders.Wait()
	time.Sleep(3 * e2eAckWait)
	top.nats.kill9()
	top.nats.start()
	_ = frozen.cmd.Process.Signal(syscall.SIGCONT)

	want := acked.Load()
	if want == 0 {
		t.Fatal("no request was acknowledged")
	}
	var got int64
	settled := 0
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		got, err = top.occurrenceTotal()
		// Equal, and still equal once the thawed worker had time to
		// publish what it held.
		if err == nil && got == want {
			if settled++; settled >= 20 {
				break
			}
		} else {
			settled = 0
		}
		if got > want {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("occurrence counts add up to %d records, %d were acknowledged: want equal", got, want)
	}
	var dups string
	if resp, err := http.Get(top.writer.url + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "incidex_results_duplicate_total") {
				dups = l
			}
		}
	}
	dead, err := js.Stream(context.Background(), "INCIDEX_DEAD")
	if err != nil {
		t.Fatal(err)
	}
	info, err := dead.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != poison {
		t.Errorf("%d dead letters, %d poison messages sent: want equal", info.State.Msgs, poison)
	}
	resp, err := http.Get(top.writer.url + "/api/v1/dead-letters")
	if err != nil {
		t.Fatal(err)
	}
	var dl struct {
		Total uint64 `json:"total"`
	}
	err = json.NewDecoder(resp.Body).Decode(&dl)
	_ = resp.Body.Close()
	if err != nil || dl.Total != poison {
		t.Errorf("writer's /api/v1/dead-letters total = %d (%v), want %d", dl.Total, err, poison)
	}
	t.Logf("acknowledged %d records (%d retries), counted %d; %d dead letters; writer: %s", want, retries.Load(), got, info.State.Msgs, dups)
}
