package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

var (
	_ ingest.Sink      = (*Publisher)(nil)
	_ ingest.Unmatched = UnmatchedCollector{}
)

// natsServer is an embedded JetStream server that can be restarted on the
// same store directory and port.
type natsServer struct {
	t    testing.TB
	dir  string
	port int
	s    *server.Server
}

func startNATS(t testing.TB) *natsServer {
	n := &natsServer{t: t, dir: t.TempDir(), port: -1}
	n.start()
	n.port = n.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	s, err := server.NewServer(&server.Options{JetStream: true, StoreDir: n.dir, Port: n.port, Host: "127.0.0.1", NoLog: true, NoSigs: true})
	if err != nil {
		n.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats server not ready")
	}
	n.s = s
}

func (n *natsServer) stop() {
	if n.s != nil {
		n.s.Shutdown()
		n.s.WaitForShutdown()
		n.s = nil
	}
}

func (n *natsServer) restart() { n.stop(); n.start() }

func waitConnected(t testing.TB, js jetstream.JetStream) {
	deadline := time.Now().Add(10 * time.Second)
	for !js.Conn().IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("client did not reconnect")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *natsServer) connect(t testing.TB) jetstream.JetStream {
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", n.port), nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond), nats.ReconnectBufSize(-1))
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

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// batchObs is what a worker matches in records message seq: seq%5+1 lines
// of one signature and two of another, spread over two resources.
func batchObs(seq uint64) []kb.Observation {
	var obs []kb.Observation
	at := t0.Add(time.Duration(seq) * time.Second)
	for i := range int(seq%5) + 1 {
		obs = append(obs, kb.Observation{Time: at, IncidentID: "a", SignatureID: "s-a", Score: 0.9, Message: fmt.Sprintf("db refused %d/%d", seq, i),
			Labels: map[string]string{"pod": fmt.Sprintf("db-%d", i%2)}, Resource: fmt.Sprintf("pod=db-%d", i%2)})
	}
	for range 2 {
		obs = append(obs, kb.Observation{Time: at, IncidentID: "b", SignatureID: "s-b", Score: 1, Message: "oom killed", Resource: "pod=api-0"})
	}
	return obs
}

func batchCount(seq uint64) int64 { return int64(seq%5) + 3 }

// writer is one knowledge-base writer: an Applier and its occurrence
// store's flusher. crash stops both without a last flush, so what was not
// flushed is lost, as with kill -9.
type writer struct {
	occ  *kb.Occurrences
	a    *Applier
	stop context.CancelFunc
	done chan struct{}
}

func startWriter(t *testing.T, js jetstream.JetStream, k *kb.KB, opts ApplierOptions) *writer {
	t.Helper()
	occ, err := k.Occurrences(context.Background(), kb.OccurrenceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.AckWait == 0 {
		opts.AckWait = time.Second
	}
	a, err := NewApplier(js, k, occ, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &writer{occ: occ, a: a, stop: cancel, done: make(chan struct{})}
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				if err := occ.Flush(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("flush: %v", err)
				}
			}
		}
	}()
	go func() {
		defer close(w.done)
		if err := a.Run(ctx); err != nil {
			t.Errorf("Applier.Run: %v", err)
		}
		<-flushed
	}()
	t.Cleanup(w.crash)
	return w
}

func (w *writer) crash() {
	w.stop()
	<-w.done
}

// publishDuplicate publishes a second result for seq, as a second worker
// that finished the same records message would, under an id the duplicate
// window does not know (after a server restart it forgets the ids of
// deleted messages).
func publishDuplicate(t *testing.T, js jetstream.JetStream, res Result, n int) {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: ResultsSubject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("dup-%d-%d", res.Seq, n))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
}

// scenario publishes results for records messages lo..hi through a
// Publisher, every 13th one a tombstone and every 4th one a second time,
// and returns the count the distinct messages stand for and the extra
// count of the duplicates.
func scenario(t *testing.T, js jetstream.JetStream, p *Publisher, lo, hi uint64) (want, dup int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for seq := lo; seq <= hi; seq++ {
		if seq%13 == 0 {
			if err := p.Tombstone(ctx, seq, "poison"); err != nil {
				t.Fatal(err)
			}
			if seq%2 == 0 {
				publishDuplicate(t, js, Result{Seq: seq, Tombstone: true}, 1)
			}
			continue
		}
		obs := batchObs(seq)
		var durable atomic.Bool
		if err := p.Observe(ctx, obs, fmt.Sprint(seq), func() { durable.Store(true) }); err != nil || !durable.Load() {
			t.Fatalf("Observe(%d) = %v, durable %v", seq, err, durable.Load())
		}
		want += batchCount(seq)
		if seq%4 == 0 {
			publishDuplicate(t, js, Result{Seq: seq, Obs: Aggregate(obs)}, 1)
			dup += batchCount(seq)
		}
	}
	return want, dup
}

// drained waits until the writer has applied and acknowledged every
// result (the work-queue stream is empty), then returns the sum of the
// stored occurrence counts.
func drained(t *testing.T, js jetstream.JetStream, k *kb.KB, w *writer) int64 {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := js.Stream(ctx, ResultsStream)
		if err == nil {
			info, err := st.Info(ctx)
			if err == nil && info.State.Msgs == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("results not drained: stream %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := w.occ.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := w.occ.List(ctx, kb.OccurrenceFilter{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, o := range list {
		sum += o.Count
	}
	return sum
}

// TestExactlyOnceAcrossRestarts: results for records messages 1..300,
// with duplicates (as two workers finishing one message publish) and
// tombstones, count exactly the distinct messages' lines, although the
// writer crashes (unflushed counts lost, results redelivered) and the NATS
// server restarts on the same store in between.
func TestExactlyOnceAcrossRestarts(t *testing.T) {
	n := startNATS(t)
	js := n.connect(t)
	k := kbtest.Open(t)
	p, err := NewPublisher(js, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := startWriter(t, js, k, ApplierOptions{})
	want, _ := scenario(t, js, p, 1, 100)
	time.Sleep(30 * time.Millisecond) // some applied and unflushed
	w.crash()

	// Writer down: results queue up; duplicates of old messages arrive.
	w2, _ := scenario(t, js, p, 101, 200)
	want += w2
	for seq := uint64(1); seq <= 50; seq += 7 {
		if seq%13 != 0 {
			publishDuplicate(t, js, Result{Seq: seq, Obs: Aggregate(batchObs(seq))}, 2)
		}
	}
	n.restart()
	waitConnected(t, js)
	w = startWriter(t, js, k, ApplierOptions{})
	w3, _ := scenario(t, js, p, 201, 300)
	want += w3
	if got := drained(t, js, k, w); got != want {
		t.Fatalf("occurrences count %d lines, want exactly %d (stats: %d applied, %d duplicates)", got, want,
			w.a.Stats().Applied.Load(), w.a.Stats().Duplicates.Load())
	}
	ck, err := k.QueueCheckpoint(context.Background())
	if err != nil || ck != "applied:300" {
		t.Errorf("stored applied set %q, %v; want applied:300", ck, err)
	}
	if w.a.Stats().Duplicates.Load() == 0 {
		t.Error("the restarted writer saw no duplicate: the test exercises nothing")
	}

	// A crash and a restart once everything is applied re-apply nothing.
	w.crash()
	for seq := uint64(280); seq <= 300; seq++ {
		publishDuplicate(t, js, Result{Seq: seq, Obs: Aggregate(batchObs(seq))}, 3)
	}
	w = startWriter(t, js, k, ApplierOptions{})
	if got := drained(t, js, k, w); got != want {
		t.Fatalf("after a restart with late duplicates: %d lines, want %d", got, want)
	}
}

// TestNoAppliedSetOverCounts is the negative control: without the applied
// set, the same duplicates are counted, so the applied set is what keeps
// the counts exact.
func TestNoAppliedSetOverCounts(t *testing.T) {
	for _, noSet := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoAppliedSet=%v", noSet), func(t *testing.T) {
			n := startNATS(t)
			js := n.connect(t)
			k := kbtest.Open(t)
			p, err := NewPublisher(js, PublisherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w := startWriter(t, js, k, ApplierOptions{NoAppliedSet: noSet})
			want, dup := scenario(t, js, p, 1, 120)
			got := drained(t, js, k, w)
			switch {
			case noSet && got != want+dup:
				t.Fatalf("without the applied set: %d lines, want the over-count %d+%d", got, want, dup)
			case !noSet && got != want:
				t.Fatalf("with the applied set: %d lines, want %d", got, want)
			}
		})
	}
}

// TestPublisherDurableAfterPubAck: durable is called only once the results
// stream has stored the result: not while the server is down, and once it
// is back, with the result in the stream.
func TestPublisherDurableAfterPubAck(t *testing.T) {
	n := startNATS(t)
	js := n.connect(t)
	p, err := NewPublisher(js, PublisherOptions{PublishTimeout: 200 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() uint64 {
		st, err := js.Stream(context.Background(), ResultsStream)
		if err != nil {
			return 0
		}
		info, err := st.Info(context.Background())
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	observe := func(seq uint64) (chan uint64, chan error) {
		durable, errc := make(chan uint64, 1), make(chan error, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		go func() { errc <- p.Observe(ctx, batchObs(seq), fmt.Sprint(seq), func() { durable <- stored() }) }()
		return durable, errc
	}

	n.stop()
	durable, errc := observe(1)
	select {
	case <-durable:
		t.Fatal("durable called while the server is down")
	case <-time.After(700 * time.Millisecond):
	}
	n.start()
	select {
	case msgs := <-durable:
		if msgs != 1 {
			t.Errorf("at durable the stream holds %d results, want 1", msgs)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("durable not called after the server came back")
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	// The stream deleted under the publisher: it is created again, and
	// durable follows the result's ack.
	if err := js.DeleteStream(context.Background(), ResultsStream); err != nil {
		t.Fatal(err)
	}
	durable, errc = observe(2)
	select {
	case msgs := <-durable:
		if msgs != 1 {
			t.Errorf("at durable the recreated stream holds %d results, want 1", msgs)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("durable not called after the stream was deleted")
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	// ctx ending while the server is down: no durable, no error (the
	// records message is delivered again).
	n.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	called := false
	if err := p.Observe(ctx, batchObs(3), "3", func() { called = true }); err != nil || called {
		t.Errorf("Observe with the server down until ctx ends = %v, durable called %v; want nil, false", err, called)
	}
}

// TestPublisherCarriesUnmatched: the unmatched lines handed over just
// before a batch's matches travel in that batch's result, deduplicated,
// and reach the writer's miner.
func TestPublisherCarriesUnmatched(t *testing.T) {
	n := startNATS(t)
	js := n.connect(t)
	k := kbtest.Open(t)
	p, err := NewPublisher(js, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	line := kb.UnmatchedLine{Time: t0, Message: "ledger sync aborted: shard a7 replica lag 120s over budget", Labels: map[string]string{"namespace": "ledger"}}
	p.Unmatched().Observe([]kb.UnmatchedLine{line, line, line})
	if err := p.Observe(context.Background(), batchObs(1), "1", nil); err != nil {
		t.Fatal(err)
	}
	occ, err := k.Occurrences(context.Background(), kb.OccurrenceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	em, err := k.Emerging(context.Background(), kb.EmergingOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewApplier(js, k, occ, em, ApplierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	for a.Stats().Applied.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := em.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	list := em.List(context.Background(), kb.PatternFilter{})
	if len(list) != 1 || list[0].Count != 3 {
		t.Fatalf("emerging patterns = %+v, want one of 3 lines", list)
	}
}

// TestRecreatedRecordsStreamCountsFromOne: a records stream deleted and
// created again numbers its messages from 1 again. Its results carry its
// epoch, so the writer starts a new applied set instead of taking them
// all for ones it applied; a late result of the old stream still counts
// once, and the new epoch survives a writer restart.
func TestRecreatedRecordsStreamCountsFromOne(t *testing.T) {
	n := startNATS(t)
	js := n.connect(t)
	k := kbtest.Open(t)
	w := startWriter(t, js, k, ApplierOptions{})
	oldEpoch, newEpoch := int64(1_700_000_000_000_000_000), int64(1_700_000_900_000_000_000)
	pOld, err := NewPublisher(js, PublisherOptions{Epoch: oldEpoch})
	if err != nil {
		t.Fatal(err)
	}
	pNew, err := NewPublisher(js, PublisherOptions{Epoch: newEpoch})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := scenario(t, js, pOld, 1, 40)
	// The stream is created again: sequences 1.. again, in the new epoch.
	w2, _ := scenario(t, js, pNew, 1, 30)
	want += w2
	// A late result of the old stream's message 41, and duplicates of both.
	ctx := context.Background()
	if err := pOld.Observe(ctx, batchObs(41), "41", nil); err != nil {
		t.Fatal(err)
	}
	want += batchCount(41)
	publishDuplicate(t, js, Result{Seq: 41, Epoch: oldEpoch, Obs: Aggregate(batchObs(41))}, 7)
	publishDuplicate(t, js, Result{Seq: 30, Epoch: newEpoch, Obs: Aggregate(batchObs(30))}, 7)
	if got := drained(t, js, k, w); got != want {
		t.Fatalf("occurrences count %d lines, want exactly %d (stats: %d applied, %d duplicates)", got, want,
			w.a.Stats().Applied.Load(), w.a.Stats().Duplicates.Load())
	}
	ck, err := k.QueueCheckpoint(ctx)
	if want := fmt.Sprintf("applied:30;epoch=%d", newEpoch); err != nil || ck != want {
		t.Errorf("stored applied set %q, %v; want %q", ck, err, want)
	}
	// Restarted, the writer knows the new epoch: a duplicate of it is
	// dropped, a new message counted.
	w.crash()
	w = startWriter(t, js, k, ApplierOptions{})
	publishDuplicate(t, js, Result{Seq: 12, Epoch: newEpoch, Obs: Aggregate(batchObs(12))}, 8)
	if err := pNew.Observe(ctx, batchObs(31), "31", nil); err != nil {
		t.Fatal(err)
	}
	want += batchCount(31)
	if got := drained(t, js, k, w); got != want {
		t.Fatalf("after a restart: %d lines, want %d", got, want)
	}
}
