package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/incidex/incidex/ingest/decode"
)

// runNATS starts an embedded JetStream server storing in dir.
func runNATS(t *testing.T, dir string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready after 10 s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// connect connects the way the queue's doc asks: no reconnect buffer.
func connect(t *testing.T, s *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func openTestJS(t *testing.T, nc *nats.Conn, opts JetStreamOptions) *JetStream {
	t.Helper()
	q, err := OpenJetStream(bg, nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func streamMsgs(t *testing.T, s jetstream.Stream) uint64 {
	t.Helper()
	si, err := s.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	return si.State.Msgs
}

// dequeueWithin dequeues with a timeout.
func dequeueWithin(q *JetStream, d time.Duration) (*Batch, error) {
	ctx, cancel := context.WithTimeout(bg, d)
	defer cancel()
	return q.Dequeue(ctx, 0)
}

// takeAcked dequeues a batch within 5 s, acknowledges it and returns its
// records.
func takeAcked(t *testing.T, q *JetStream) []decode.Record {
	t.Helper()
	b, err := dequeueWithin(q, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(bg); err != nil {
		t.Fatal(err)
	}
	return b.Records
}

// deadRecorder collects OnDead calls.
type deadRecorder struct {
	mu   sync.Mutex
	seqs []uint64
	ch   chan uint64
}

func newDeadRecorder() *deadRecorder { return &deadRecorder{ch: make(chan uint64, 16)} }

func (d *deadRecorder) onDead(_ context.Context, seq uint64, _ string) {
	d.mu.Lock()
	d.seqs = append(d.seqs, seq)
	d.mu.Unlock()
	d.ch <- seq
}

func TestJetStreamMessageIDs(t *testing.T) {
	t.Parallel()
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{Registry: prometheus.NewRegistry()})
	keyed := WithKey(bg, "body-sha")
	for range 2 {
		if err := q.Enqueue(keyed, recsN("k", 2)); err != nil {
			t.Fatal(err)
		}
	}
	if n := streamMsgs(t, q.records); n != 1 {
		t.Errorf("same key twice: %d messages in the stream, want 1", n)
	}
	if p, d := testutil.ToFloat64(q.m.pub), testutil.ToFloat64(q.m.dup); p != 2 || d != 1 {
		t.Errorf("published records %v, duplicate requests %v; want 2 and 1 (the repeat is not counted as published)", p, d)
	}
	for range 2 {
		if err := q.Enqueue(bg, recsN("k", 2)); err != nil {
			t.Fatal(err)
		}
	}
	if n := streamMsgs(t, q.records); n != 3 {
		t.Errorf("then no key twice: %d messages in the stream, want 3", n)
	}
}

func TestJetStreamChunks(t *testing.T) {
	t.Parallel()
	const chunk = 300
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{ChunkBytes: chunk})
	recs := recsN("chunked", 40)
	recs[7].Message = string(make([]byte, 2*chunk)) // alone larger than a chunk
	if err := q.Enqueue(bg, recs); err != nil {
		t.Fatal(err)
	}
	n := streamMsgs(t, q.records)
	if n < 5 {
		t.Fatalf("%d records of ~70 bytes in %d messages of at most %d bytes", len(recs), n, chunk)
	}
	for seq := uint64(1); seq <= n; seq++ {
		m, err := q.records.GetMsg(bg, seq)
		if err != nil {
			t.Fatal(err)
		}
		big := len(m.Data) > 2*chunk
		if len(m.Data) > chunk && !big {
			t.Errorf("message %d: %d bytes, over the %d-byte chunk", seq, len(m.Data), chunk)
		}
	}
	var got []decode.Record
	for len(got) < len(recs) {
		got = append(got, takeAcked(t, q)...)
	}
	if d := cmp.Diff(recs, got); d != "" {
		t.Errorf("chunked request out (-want +got):\n%s", d)
	}
}

// TestJetStreamRedelivery: a batch neither acknowledged nor kept alive is
// delivered again after AckWait; with InProgress it is not.
func TestJetStreamRedelivery(t *testing.T) {
	t.Parallel()
	for _, keepAlive := range []bool{false, true} {
		t.Run("in_progress="+strconv.FormatBool(keepAlive), func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{AckWait: time.Second, Registry: reg})
			q.noProgress.Store(!keepAlive)
			if err := q.Enqueue(bg, recsN("slow", 2)); err != nil {
				t.Fatal(err)
			}
			first, err := dequeueWithin(q, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			again, err := dequeueWithin(q, 3500*time.Millisecond) // 3.5 AckWaits
			if keepAlive {
				if err == nil {
					t.Fatalf("batch %s kept in progress was redelivered as %s", first.Checkpoint, again.Checkpoint)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatal(err)
				}
				if err := first.Ack(bg); err != nil {
					t.Fatal(err)
				}
				waitEmpty(t, q)
				return
			}
			if err != nil {
				t.Fatalf("unacknowledged batch not redelivered after 3.5 AckWaits: %v", err)
			}
			if again.Checkpoint != first.Checkpoint || len(again.Records) != 2 {
				t.Errorf("redelivered %s (%d records), want %s again", again.Checkpoint, len(again.Records), first.Checkpoint)
			}
			if n := testutil.ToFloat64(q.m.redeliv); n != 1 {
				t.Errorf("redeliveries metric = %v, want 1", n)
			}
			if err := again.Ack(bg); err != nil {
				t.Fatal(err)
			}
			// The first delivery's late ack is accepted too (nats-server#4786).
			_ = first.Ack(bg)
			waitEmpty(t, q)
		})
	}
}

// TestJetStreamPoison: a payload that does not decode goes to the dead
// letters, OnDead is called with its sequence, and Dequeue goes on.
func TestJetStreamPoison(t *testing.T) {
	t.Parallel()
	dead := newDeadRecorder()
	reg := prometheus.NewRegistry()
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{OnDead: dead.onDead, Registry: reg})
	a, err := q.js.Publish(bg, RecordsSubject, []byte("\xff\xff\xff garbage"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(bg, recsN("good", 1)); err != nil {
		t.Fatal(err)
	}
	b, err := dequeueWithin(q, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 1 || b.Records[0].Message != "good line 0" {
		t.Fatalf("Dequeue = %+v, want the good record after the poison one", b.Records)
	}
	if err := b.Ack(bg); err != nil {
		t.Fatal(err)
	}
	if got := <-dead.ch; got != a.Sequence {
		t.Errorf("OnDead seq = %d, want %d", got, a.Sequence)
	}
	m, err := q.dead.GetMsg(bg, 1)
	if err != nil {
		t.Fatalf("dead letter: %v", err)
	}
	if m.Header.Get(HeaderDeadSeq) != strconv.FormatUint(a.Sequence, 10) || m.Header.Get(HeaderDeadReason) == "" || string(m.Data) != "\xff\xff\xff garbage" {
		t.Errorf("dead letter = %q %v, want the payload with its seq and reason", m.Data, m.Header)
	}
	if n := testutil.ToFloat64(q.m.dead); n != 1 {
		t.Errorf("dead letters metric = %v, want 1", n)
	}
	list, total, err := q.DeadLetters(bg, 10)
	if err != nil || total != 1 || len(list) != 1 || list[0].Seq != a.Sequence || list[0].Reason == "" || list[0].Preview != "· garbage" {
		t.Errorf("DeadLetters = %+v, %d, %v; want the one poison message with a printable preview", list, total, err)
	}
	waitEmpty(t, q)
	if n := streamMsgs(t, q.records); n != 0 {
		t.Errorf("%d messages left in the records stream, want 0", n)
	}
}

// TestJetStreamMaxDeliver: a message delivered MaxDeliver times without an
// ack is moved to the dead letters by HandleDeadLetters and leaves the
// records stream (which would otherwise keep it).
func TestJetStreamMaxDeliver(t *testing.T) {
	t.Parallel()
	dead := newDeadRecorder()
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{AckWait: 500 * time.Millisecond, MaxDeliver: 2, OnDead: dead.onDead})
	q.noProgress.Store(true)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	handled := make(chan error, 1)
	go func() { handled <- q.HandleDeadLetters(ctx) }()
	if err := q.Enqueue(bg, recsN("stuck", 1)); err != nil {
		t.Fatal(err)
	}
	go func() {
		for ctx.Err() == nil {
			_, _ = q.Dequeue(ctx, 0) // never acknowledged
		}
	}()
	select {
	case seq := <-dead.ch:
		if seq != 1 {
			t.Errorf("OnDead seq = %d, want 1", seq)
		}
	case err := <-handled:
		t.Fatalf("HandleDeadLetters returned early: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("no OnDead 15 s after a message was delivered twice without an ack")
	}
	if n := streamMsgs(t, q.records); n != 0 {
		t.Errorf("%d messages left in the records stream, want 0", n)
	}
	m, err := q.dead.GetMsg(bg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := decodeRecords(m.Data); err != nil || len(recs) != 1 || recs[0].Message != "stuck line 0" {
		t.Errorf("dead letter holds %v, %v; want the stuck record", recs, err)
	}
	cancel()
	if err := <-handled; err != nil {
		t.Errorf("HandleDeadLetters = %v, want nil after ctx is done", err)
	}
}

// TestJetStreamRestart: the server restarts on the same store; what was
// accepted and not acknowledged is delivered again.
func TestJetStreamRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := runNATS(t, dir)
	q := openTestJS(t, connect(t, s), JetStreamOptions{AckWait: time.Second})
	for _, p := range []string{"acked", "taken", "waiting"} {
		if err := q.Enqueue(bg, recsN(p, 2)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := dequeueWithin(q, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := dequeueWithin(q, 5*time.Second); err != nil { // taken, never acked
		t.Fatal(err)
	}
	_ = q.Close()
	s.Shutdown()
	s.WaitForShutdown()

	q2 := openTestJS(t, connect(t, runNATS(t, dir)), JetStreamOptions{AckWait: time.Second})
	var got []string
	for range 2 {
		b, err := dequeueWithin(q2, 10*time.Second)
		if err != nil {
			t.Fatalf("after restart, with %v out: %v", got, err)
		}
		got = append(got, b.Records[0].Message)
		if err := b.Ack(bg); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff([]string{"taken line 0", "waiting line 0"}, got); d != "" {
		t.Errorf("after restart (-want +got):\n%s", d)
	}
}

// TestJetStreamNATSDown: with NATS gone, Enqueue fails fast with
// ErrUnavailable instead of buffering or hanging.
func TestJetStreamNATSDown(t *testing.T) {
	t.Parallel()
	s := runNATS(t, t.TempDir())
	reg := prometheus.NewRegistry()
	q := openTestJS(t, connect(t, s), JetStreamOptions{Registry: reg})
	s.Shutdown()
	s.WaitForShutdown()
	for range 3 {
		start := time.Now()
		err := q.Enqueue(bg, recsN("down", 2))
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("Enqueue with NATS down took %v, want < 2 s", el)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Enqueue with NATS down = %v, want ErrUnavailable", err)
		}
	}
	if n := testutil.ToFloat64(q.m.refusedBy.WithLabelValues("disconnected")); n != 3 {
		t.Errorf("refused{disconnected} = %v, want 3", n)
	}
}

// TestJetStreamFullChunked: a request refused part-way leaves nothing
// without a key; with one, its stored chunks stay and the sender's retry
// adds only the missing ones.
func TestJetStreamFullChunked(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{MaxBytes: 2000, ChunkBytes: 300, Registry: reg})
	recs := recsN("big", 60) // ~4 KiB in ~14 chunks: some fit
	if err := q.Enqueue(bg, recs); !errors.Is(err, ErrFull) {
		t.Fatalf("Enqueue over MaxBytes = %v, want ErrFull", err)
	}
	if n := streamMsgs(t, q.records); n != 0 {
		t.Errorf("a refused request without a key left %d chunks", n)
	}
	if n := testutil.ToFloat64(q.m.refusedBy.WithLabelValues("full")); n != 1 {
		t.Errorf("refused{full} = %v, want 1", n)
	}

	half := recs[:40] // fits in part only
	keyed := WithKey(bg, "retry-me")
	if err := q.Enqueue(keyed, half); !errors.Is(err, ErrFull) {
		t.Fatalf("keyed Enqueue over MaxBytes = %v, want ErrFull", err)
	}
	stored := streamMsgs(t, q.records)
	if stored == 0 {
		t.Fatal("no chunk of the keyed request fit; the test needs some to")
	}
	var got []decode.Record
	for range stored { // a worker drains what is there
		got = append(got, takeAcked(t, q)...)
	}
	if err := q.Enqueue(keyed, half); err != nil { // the sender retries
		t.Fatalf("retry: %v", err)
	}
	for len(got) < len(half) {
		b, err := dequeueWithin(q, 5*time.Second)
		if err != nil {
			t.Fatalf("after the retry, %d of %d records: %v", len(got), len(half), err)
		}
		got = append(got, b.Records...)
		if err := b.Ack(bg); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(half, got); d != "" {
		t.Errorf("keyed request across a refusal and a retry (-want +got):\n%s", d)
	}
	if n := streamMsgs(t, q.records); n != 0 {
		t.Errorf("%d messages left after the retry, want 0 (no duplicates)", n)
	}
}

func TestChunkRecordsSizes(t *testing.T) {
	recs := recsN("size", 30)
	for _, max := range []int{1, 100, 500, 1 << 20} {
		var got []decode.Record
		for _, c := range chunkRecords(recs, max) {
			part, err := decodeRecords(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(c) > max && len(part) > 1 {
				t.Errorf("max %d: a chunk of %d records is %d bytes", max, len(part), len(c))
			}
			got = append(got, part...)
		}
		if d := cmp.Diff(recs, got); d != "" {
			t.Errorf("max %d: chunks (-want +got):\n%s", max, d)
		}
	}
	for _, r := range recs {
		if n, want := recordSize(r), len(encodeRecords([]decode.Record{r}))-1; n != want {
			t.Fatalf("recordSize = %d, encoded %d", n, want)
		}
	}
}

// TestJetStreamEpochNamesTheStream: the epoch stays across opens of one
// records stream and changes when the stream is deleted and created
// again (its sequences then start from 1 again).
func TestJetStreamEpochNamesTheStream(t *testing.T) {
	t.Parallel()
	s := runNATS(t, t.TempDir())
	nc := connect(t, s)
	q := openTestJS(t, nc, JetStreamOptions{})
	e1 := q.Epoch()
	if e1 == 0 {
		t.Fatal("epoch 0")
	}
	if e := openTestJS(t, nc, JetStreamOptions{}).Epoch(); e != e1 {
		t.Errorf("a second open of the same stream: epoch %d, want %d", e, e1)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(bg, RecordsStream); err != nil {
		t.Fatal(err)
	}
	if e := openTestJS(t, nc, JetStreamOptions{}).Epoch(); e == e1 || e == 0 {
		t.Errorf("after the stream was created again: epoch %d, want a new one (was %d)", e, e1)
	}
}

// TestJetStreamSweepsMissedDeadLetters: a message that passed MaxDeliver
// while nothing handled the advisories (the writer was down) still goes
// to the dead letters when HandleDeadLetters starts, instead of sitting in
// INCIDEX_RECORDS for good with its sequence never applied.
func TestJetStreamSweepsMissedDeadLetters(t *testing.T) {
	t.Parallel()
	dead := newDeadRecorder()
	q := openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{AckWait: 300 * time.Millisecond, MaxDeliver: 2, OnDead: dead.onDead})
	q.noProgress.Store(true)
	if err := q.Enqueue(bg, recsN("stuck", 1)); err != nil {
		t.Fatal(err)
	}
	// Delivered twice, never acknowledged, no advisory handler running.
	ctx, cancel := context.WithTimeout(bg, 3*time.Second)
	for ctx.Err() == nil {
		_, _ = q.Dequeue(ctx, 0)
	}
	cancel()
	if err := q.Enqueue(bg, recsN("fine", 1)); err != nil {
		t.Fatal(err)
	}
	b, err := dequeueWithin(q, 5*time.Second)
	if err != nil || b.Records[0].Message != "fine line 0" {
		t.Fatalf("the next message: %v, %v", b, err)
	}
	if err := b.Ack(bg); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q.records); n != 1 {
		t.Fatalf("%d messages in the records stream before the sweep, want the stuck one", n)
	}

	hctx, hcancel := context.WithCancel(bg)
	defer hcancel()
	go func() { _ = q.HandleDeadLetters(hctx) }()
	select {
	case seq := <-dead.ch:
		if seq != 1 {
			t.Errorf("OnDead seq = %d, want 1", seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the message past MaxDeliver whose advisory was missed did not go to the dead letters")
	}
	if n := streamMsgs(t, q.records); n != 0 {
		t.Errorf("%d messages left in the records stream, want 0", n)
	}
	if _, err := q.dead.GetMsg(bg, 1); err != nil {
		t.Errorf("dead letter: %v", err)
	}
}
