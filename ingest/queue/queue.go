// Package queue holds accepted records between the webhook receiver and
// the matcher workers. Queue is the contract; MemQueue (in memory) and
// Spool (fsynced segments on local disk) implement it, and a
// distributed implementation sits beside them behind the same interface.
//
// A receiver enqueues a request's records all or none, and answers 2xx only
// when Enqueue returned nil. A worker dequeues a Batch, matches it, hands
// what it produced to the knowledge base, and calls Batch.Ack once that is
// durable. Each implementation states its delivery guarantee in its doc.
package queue

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/incidex/incidex/ingest/decode"
)

// Queue sits between the webhook receiver and the matcher workers.
type Queue interface {
	// Enqueue adds all records or none. It returns ErrFull when they
	// do not fit and ErrClosed after Close.
	Enqueue(ctx context.Context, recs []decode.Record) error
	// Dequeue returns up to max records, blocking until some are queued.
	// After Close it returns what is left, then io.EOF.
	Dequeue(ctx context.Context, max int) (*Batch, error)
	// Close stops Enqueue; Dequeue drains what was accepted.
	Close() error
	// Len returns the number of records queued and not yet dequeued.
	Len() int
}

// Batch is records taken from a queue, to be acknowledged once what they
// produced is durable downstream.
type Batch struct {
	Records []decode.Record
	// Checkpoint is where the queue resumes after this batch, opaque to all
	// but the queue that made it. A consumer that stores it in the same
	// transaction as the batch's results, and gives the last one stored back
	// to the queue when it opens, makes processing exactly-once across a
	// crash (the spool does this with kb). Empty when the queue does not
	// need it.
	Checkpoint string

	ack func(context.Context) error
}

// NewBatch returns a batch whose Ack calls ack (nil: nothing to do), for
// Queue implementations.
func NewBatch(recs []decode.Record, checkpoint string, ack func(context.Context) error) *Batch {
	return &Batch{Records: recs, Checkpoint: checkpoint, ack: ack}
}

// Ack tells the queue that what the batch produced is durable, so the queue
// may forget it. Until then a queue that survives restarts keeps it.
func (b *Batch) Ack(ctx context.Context) error {
	if b.ack == nil {
		return nil
	}
	return b.ack(ctx)
}

// Queue errors.
var (
	ErrFull   = errors.New("queue is full")
	ErrClosed = errors.New("queue is closed")
	// ErrUnavailable means a distributed queue cannot be reached (or did not
	// confirm in time): nothing is accepted, the sender should retry.
	ErrUnavailable = errors.New("queue is unavailable")
)

// MemQueue is a bounded in-memory queue. Guarantee: at most once. Records
// survive nothing: a crash loses what is queued and what was matched but not
// yet written, and Ack does nothing.
type MemQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []decode.Record // ring
	head   int
	n      int
	closed bool
}

// NewMemQueue returns a queue that holds at most capacity records.
func NewMemQueue(capacity int) *MemQueue {
	if capacity <= 0 {
		capacity = 1
	}
	q := &MemQueue{buf: make([]decode.Record, capacity)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Enqueue implements Queue.
func (q *MemQueue) Enqueue(_ context.Context, recs []decode.Record) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return ErrClosed
	case len(recs) > len(q.buf)-q.n:
		return ErrFull
	}
	for _, r := range recs {
		q.buf[(q.head+q.n)%len(q.buf)] = r
		q.n++
	}
	q.cond.Broadcast()
	return nil
}

// Dequeue implements Queue.
func (q *MemQueue) Dequeue(ctx context.Context, max int) (*Batch, error) {
	defer wakeOnDone(ctx, &q.mu, q.cond)()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 {
		if q.closed {
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.cond.Wait()
	}
	k := min(max, q.n)
	out := make([]decode.Record, k)
	for i := range k {
		out[i] = q.buf[q.head]
		q.buf[q.head] = decode.Record{}
		q.head = (q.head + 1) % len(q.buf)
	}
	q.n -= k
	return NewBatch(out, "", nil), nil
}

// Close implements Queue.
func (q *MemQueue) Close() error {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	return nil
}

// Len implements Queue.
func (q *MemQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Cap returns the queue's capacity in records.
func (q *MemQueue) Cap() int { return len(q.buf) }

// wakeOnDone wakes the waiters on c when ctx is done, so that a Dequeue
// blocked on c sees the cancellation; the returned function stops it.
func wakeOnDone(ctx context.Context, mu sync.Locker, c *sync.Cond) func() bool {
	return context.AfterFunc(ctx, func() {
		mu.Lock()
		c.Broadcast()
		mu.Unlock()
	})
}

type keyCtx struct{}

// WithKey returns ctx carrying the idempotency key of the request whose
// records are being enqueued: the same key means the same records (a
// sender's retry of one body), so a queue that deduplicates (JetStream)
// drops the second copy. Queues that do not deduplicate ignore it. Leave
// it unset where identical bodies can legitimately repeat.
func WithKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtx{}, key)
}

// KeyFrom returns the idempotency key set by WithKey, or "".
func KeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(keyCtx{}).(string)
	return k
}
