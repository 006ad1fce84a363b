package queue

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/ingest/decode"
)

// contract opens the queues a contract case runs on.
type contract struct {
	// open returns an empty queue; small one that holds a few short
	// requests of recsN("", 2) and not many more.
	open, small func(t *testing.T) Queue
	// reopen, for a queue whose records outlive Close in shared storage
	// (JetStream), returns another queue on the same storage: records
	// accepted and not handed out before Close come out of it. Nil when
	// Dequeue after Close drains everything (memory, spool).
	reopen func(t *testing.T, closed Queue) Queue
}

// TestQueueContract runs the same cases against every Queue.
func TestQueueContract(t *testing.T) {
	impls := map[string]contract{
		"memory": {
			open:  func(*testing.T) Queue { return NewMemQueue(1000) },
			small: func(*testing.T) Queue { return NewMemQueue(5) },
		},
		"spool": {
			open: func(t *testing.T) Queue {
				s, err := OpenSpool(t.TempDir(), "", SpoolOptions{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			small: func(t *testing.T) Queue {
				s, err := OpenSpool(t.TempDir(), "", SpoolOptions{MaxBytes: 600, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
		},
		"jetstream": {
			open: func(t *testing.T) Queue {
				return openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{AckWait: 2 * time.Second})
			},
			small: func(t *testing.T) Queue {
				return openTestJS(t, connect(t, runNATS(t, t.TempDir())), JetStreamOptions{MaxBytes: 1200})
			},
			reopen: func(t *testing.T, closed Queue) Queue {
				return openTestJS(t, closed.(*JetStream).nc, JetStreamOptions{AckWait: 2 * time.Second})
			},
		},
	}
	for name, c := range impls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("InOrderAndComplete", func(t *testing.T) { contractInOrder(t, c) })
			t.Run("DequeueBlocksUntilEnqueue", func(t *testing.T) { contractBlocks(t, c) })
			t.Run("CancelUnblocksDequeue", func(t *testing.T) { contractCancel(t, c) })
			t.Run("Close", func(t *testing.T) { contractClose(t, c) })
			t.Run("FullEnqueuesNothing", func(t *testing.T) { contractFull(t, c) })
		})
	}
}

// take dequeues and acknowledges batches until n records came out.
func take(t *testing.T, q Queue, n int) []decode.Record {
	t.Helper()
	var got []decode.Record
	for len(got) < n {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		b, err := q.Dequeue(ctx, 100)
		cancel()
		if err != nil {
			t.Fatalf("Dequeue after %d of %d records: %v", len(got), n, err)
		}
		got = append(got, b.Records...)
		if err := b.Ack(bg); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
	return got
}

// waitEmpty waits for Len to reach 0 (a shared queue's figure lags).
func waitEmpty(t *testing.T, q Queue) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Len() = %d after everything was acknowledged, want 0", q.Len())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contractInOrder(t *testing.T, c contract) {
	q := c.open(t)
	var want []decode.Record
	for _, p := range []string{"a", "b", "c"} {
		recs := recsN(p, 3)
		if err := q.Enqueue(bg, recs); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	if d := cmp.Diff(want, take(t, q, len(want))); d != "" {
		t.Errorf("records out (-want +got):\n%s", d)
	}
	waitEmpty(t, q)
}

func contractBlocks(t *testing.T, c contract) {
	q := c.open(t)
	got := make(chan *Batch, 1)
	go func() {
		b, err := q.Dequeue(bg, 10)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	select {
	case <-got:
		t.Fatal("Dequeue on an empty queue returned")
	case <-time.After(200 * time.Millisecond):
	}
	if err := q.Enqueue(bg, recsN("late", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if b == nil || len(b.Records) != 1 || b.Records[0].Message != "late line 0" {
			t.Fatalf("Dequeue = %+v, want the late record", b)
		}
		if err := b.Ack(bg); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Dequeue still blocked 10 s after Enqueue")
	}
}

func contractCancel(t *testing.T, c contract) {
	q := c.open(t)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		_, err := q.Dequeue(ctx, 10)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Dequeue after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Dequeue still blocked 2 s after its ctx was cancelled")
	}
}

// contractClose: after Close, Enqueue is refused and Dequeue ends with EOF;
// every record accepted before comes out once, from this queue or (a shared
// one) from the next opened on the same storage.
func contractClose(t *testing.T, c contract) {
	q := c.open(t)
	var want []decode.Record
	for _, p := range []string{"a", "b", "c"} {
		recs := recsN(p, 2)
		if err := q.Enqueue(bg, recs); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	got := take(t, q, 1)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(bg, recsN("late", 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Enqueue after Close = %v, want ErrClosed", err)
	}
	for {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		b, err := q.Dequeue(ctx, 100)
		cancel()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Dequeue after Close = %v, want records then EOF", err)
		}
		got = append(got, b.Records...)
		if err := b.Ack(bg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Dequeue(bg, 100); !errors.Is(err, io.EOF) {
		t.Errorf("Dequeue after EOF = %v, want EOF again", err)
	}
	if c.reopen != nil {
		q2 := c.reopen(t, q)
		got = append(got, take(t, q2, len(want)-len(got))...)
		waitEmpty(t, q2)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records out across Close (-want +got):\n%s", d)
	}
}

// contractFull: a request that does not fit is refused whole with ErrFull.
func contractFull(t *testing.T, c contract) {
	q := c.small(t)
	var want []decode.Record
	full := false
	for i := range 100 {
		recs := recsN(string(rune('a'+i%26)), 2)
		err := q.Enqueue(bg, recs)
		if errors.Is(err, ErrFull) {
			full = true
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	if !full || len(want) == 0 {
		t.Fatalf("small queue: %d records accepted, full=%v; want some, then ErrFull", len(want), full)
	}
	if err := q.Enqueue(bg, recsN("big", 40)); !errors.Is(err, ErrFull) {
		t.Fatalf("Enqueue of a big request into a full queue = %v, want ErrFull", err)
	}
	got := take(t, q, len(want))
	waitEmpty(t, q)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records out of a full queue (-want +got):\n%s", d)
	}
}
