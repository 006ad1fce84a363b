package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/cluster"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
	"github.com/incidex/incidex/patterns"
)

// snapServer starts an embedded JetStream server storing in dir, on port
// (-1: any), and shuts it down when the test ends.
func snapServer(t *testing.T, dir string, port int) *natsserver.Server {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{JetStream: true, StoreDir: dir, Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// snapConnect connects to url, reconnecting forever as a worker does.
func snapConnect(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// snapLog is a logger whose messages a test can wait for.
type snapLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *snapLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *snapLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *snapLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *snapLog) WithGroup(string) slog.Handler      { return l }

// count returns how many messages contain all of parts.
func (l *snapLog) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
next:
	for _, m := range l.msgs {
		for _, p := range parts {
			if !strings.Contains(m, p) {
				continue next
			}
		}
		n++
	}
	return n
}

func eventually(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("not within %v: %s", d, what)
}

// writer is the knowledge-base side: a KB, its Matchers and a publisher.
type writer struct {
	k      *kb.KB
	m      *ingest.Matchers
	cancel context.CancelFunc
	done   chan error
}

func startWriter(t *testing.T, js jetstream.JetStream, k *kb.KB, log *slog.Logger) *writer {
	t.Helper()
	w := &writer{k: k, m: ingest.NewMatchers(ingest.MatchersOptions{KB: k}), done: make(chan error, 1)}
	if err := w.m.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- cluster.PublishSnapshots(ctx, js, w.m, log) }()
	t.Cleanup(w.stop)
	return w
}

func (w *writer) stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
		w.cancel = nil
	}
}

// add writes an incident and reloads the writer's matcher.
func (w *writer) add(t *testing.T, inc *kb.Incident) {
	t.Helper()
	if err := w.k.Write(context.Background(), kb.Write{Source: kb.Source{Path: inc.ID + ".md", Hash: inc.ID}, Incidents: []*kb.Incident{inc}}); err != nil {
		t.Fatal(err)
	}
	if err := w.m.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// startWorker starts a worker's snapshot watch.
func startWorker(t *testing.T, js jetstream.JetStream, log *slog.Logger) *ingest.Matchers {
	t.Helper()
	m := ingest.NewMatchers(ingest.MatchersOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cluster.WatchSnapshots(ctx, js, m, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchSnapshots = %v", err)
		}
	})
	return m
}

func waitMatcher(t *testing.T, m *ingest.Matchers) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cluster.WaitMatcher(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// matches returns the incident a line matches best on m's matcher, "" when none.
func matches(m *ingest.Matchers, line string) string {
	mt := m.Matcher()
	if mt == nil {
		return ""
	}
	ms := mt.Best(line, patterns.Stream, 0, 1, nil)
	if len(ms) == 0 {
		return ""
	}
	return mt.Signature(ms[0].Sig).IncidentID
}

var (
	dnsInc   = kbtest.Incident("dns-timeout", "DNS times out", "dial udp 10.96.0.10:53: i/o timeout while resolving postgres.db.svc.cluster.local")
	dnsLine  = "E0412 resolver.go:88] dial udp 10.96.0.10:53: i/o timeout while resolving postgres.db.svc.cluster.local"
	diskInc  = kbtest.Incident("pg-disk-full", "Postgres disk full", "could not write to file pg_wal/xlogtemp.1234: No space left on device")
	diskLine = "FATAL: could not write to file pg_wal/xlogtemp.99: No space left on device"
	certInc  = kbtest.Incident("cert-expired", "Certificate expired", "x509: certificate has expired or is not yet valid: current time 2024-03-01T10:00:00Z is after 2024-02-28T00:00:00Z")
	certLine = "tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2025-01-01T00:00:00Z is after 2024-12-31T00:00:00Z"
)

// TestSnapshotPropagation: a worker started before the writer waits for
// its first snapshot, then matches the KB's lines; a new incident on the
// writer reaches it within seconds as a new generation; once the writer
// stops, and then NATS too, it keeps matching on the matcher it has.
func TestSnapshotPropagation(t *testing.T) {
	s := snapServer(t, t.TempDir(), -1)
	log := &snapLog{}
	worker := startWorker(t, snapConnect(t, s.ClientURL()), slog.New(log))
	time.Sleep(200 * time.Millisecond)
	if worker.Matcher() != nil {
		t.Fatal("a worker has a matcher before any writer published")
	}
	if log.count("no snapshot published yet") != 1 {
		t.Error("the waiting worker did not say once that it waits for the writer")
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := cluster.WaitMatcher(short, worker); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitMatcher with no writer = %v, want a deadline error", err)
	}

	k := kbtest.Open(t)
	for _, l := range []string{dnsLine, diskLine, certLine} {
		if got := matches(worker, l); got != "" {
			t.Fatalf("%q matches %s before any snapshot", l, got)
		}
	}
	wr := startWriter(t, snapConnect(t, s.ClientURL()), k, slog.New(log))
	wr.add(t, dnsInc)
	waitMatcher(t, worker)
	eventually(t, "the worker matches the first incident", 5*time.Second, func() bool { return matches(worker, dnsLine) == "dns-timeout" })
	if matches(worker, diskLine) != "" {
		t.Fatalf("the disk line matches before its incident exists")
	}

	wr.add(t, diskInc)
	gen := wr.m.Matcher().Generation()
	eventually(t, "the worker gets the new generation", 5*time.Second, func() bool { return worker.Matcher().Generation() == gen })
	if got := matches(worker, diskLine); got != "pg-disk-full" {
		t.Fatalf("new generation: disk line matches %q", got)
	}

	// The writer stops; its knowledge base moves on without it.
	wr.stop()
	wr.add(t, certInc)
	time.Sleep(300 * time.Millisecond)
	if g := worker.Matcher().Generation(); g != gen {
		t.Fatalf("worker at generation %d after the writer stopped, want %d", g, gen)
	}
	// Then NATS goes down: the worker still matches.
	s.Shutdown()
	time.Sleep(300 * time.Millisecond)
	if matches(worker, dnsLine) != "dns-timeout" || matches(worker, diskLine) != "pg-disk-full" || worker.Matcher().Generation() != gen {
		t.Fatalf("with NATS down the worker lost its matcher (generation %d)", worker.Matcher().Generation())
	}
}

// TestSnapshotCorruptSkipped: an object that is not a snapshot, or one of
// a version this build does not read, is logged and skipped; the worker
// keeps the matcher it has, and still takes the next good one.
func TestSnapshotCorruptSkipped(t *testing.T) {
	s := snapServer(t, t.TempDir(), -1)
	js := snapConnect(t, s.ClientURL())
	log := &snapLog{}
	k := kbtest.Open(t)
	wr := startWriter(t, js, k, slog.New(log))
	wr.add(t, dnsInc)
	worker := startWorker(t, snapConnect(t, s.ClientURL()), slog.New(log))
	waitMatcher(t, worker)
	eventually(t, "the worker matches", 5*time.Second, func() bool { return matches(worker, dnsLine) == "dns-timeout" })
	before := worker.Matcher()
	wr.stop() // the test writes the store itself

	ctx := context.Background()
	obj, err := js.ObjectStore(ctx, "INCIDEX_SNAPSHOTS")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "INCIDEX_KB")
	if err != nil {
		t.Fatal(err)
	}
	good, err := before.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	future := append([]byte(nil), good...)
	future[6]++
	for i, bad := range [][]byte{[]byte("not a snapshot at all"), good[:len(good)/2], future} {
		name := fmt.Sprintf("gen-bad-%d", i)
		if _, err := obj.PutBytes(ctx, name, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, "snapshot", []byte(name)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the worker skips "+name, 5*time.Second, func() bool { return log.count("snapshot skipped", "object="+name) == 1 })
		if worker.Matcher() != before {
			t.Fatalf("%s replaced the worker's matcher", name)
		}
	}
	if log.count("snapshot skipped", "version 2") != 1 {
		t.Errorf("the skip of a version-2 snapshot does not name the version")
	}
	// A KV value naming no object: retried, matcher kept.
	if _, err := kv.Put(ctx, "snapshot", []byte("gen-missing")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the worker reports the missing object", 5*time.Second, func() bool { return log.count("fetch snapshot", "object=gen-missing") > 0 })
	if worker.Matcher() != before {
		t.Fatal("a missing object replaced the worker's matcher")
	}

	// The writer comes back with a new generation: the worker takes it.
	wr = startWriter(t, js, k, slog.New(log))
	wr.add(t, diskInc)
	eventually(t, "the worker takes the next good snapshot", 5*time.Second, func() bool { return matches(worker, diskLine) == "pg-disk-full" })
	// The writer deleted what it did not publish last.
	eventually(t, "older objects deleted", 5*time.Second, func() bool {
		infos, err := obj.List(ctx)
		return err == nil && len(infos) == 1 && infos[0].Name == fmt.Sprintf("gen-%d", wr.m.Matcher().Generation())
	})
}

// TestSnapshotAfterServerRestart: the snapshot outlives a restart of NATS
// on the same store; a worker started afterwards gets it, a worker that
// was running follows the next generation, and a restarted writer does
// not republish the generation already there.
func TestSnapshotAfterServerRestart(t *testing.T) {
	dir := t.TempDir()
	s := snapServer(t, dir, -1)
	port := s.Addr().(*net.TCPAddr).Port
	url := s.ClientURL()
	log := &snapLog{}
	k := kbtest.Open(t)
	wr := startWriter(t, snapConnect(t, url), k, slog.New(log))
	wr.add(t, dnsInc)
	gen := wr.m.Matcher().Generation()
	old := startWorker(t, snapConnect(t, url), slog.New(log))
	waitMatcher(t, old)
	eventually(t, "the first worker at the generation", 5*time.Second, func() bool { return old.Matcher().Generation() == gen })
	wr.stop()

	s.Shutdown()
	s.WaitForShutdown()
	snapServer(t, dir, port)

	fresh := startWorker(t, snapConnect(t, url), slog.New(log))
	waitMatcher(t, fresh)
	if g := fresh.Matcher().Generation(); g != gen || matches(fresh, dnsLine) != "dns-timeout" {
		t.Fatalf("a worker started after the restart: generation %d, want %d", g, gen)
	}

	published := log.count("snapshot published")
	wr = startWriter(t, snapConnect(t, url), k, slog.New(log))
	time.Sleep(300 * time.Millisecond)
	if n := log.count("snapshot published"); n != published {
		t.Errorf("a restarted writer republished the generation already there (%d publishes, want %d)", n, published)
	}
	wr.add(t, diskInc)
	gen2 := wr.m.Matcher().Generation()
	for name, m := range map[string]*ingest.Matchers{"running": old, "fresh": fresh} {
		t.Cleanup(func() {
			if t.Failed() {
				log.mu.Lock()
				t.Logf("log:\n%s", strings.Join(log.msgs, "\n"))
				log.mu.Unlock()
			}
		})
		eventually(t, "the "+name+" worker follows the next generation", 15*time.Second, func() bool { return m.Matcher().Generation() == gen2 })
		if matches(m, diskLine) != "pg-disk-full" {
			t.Errorf("%s worker: the new incident does not match", name)
		}
	}
}
