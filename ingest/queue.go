package ingest

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Queue sits between the webhook handlers and the matcher workers. A
// request's records are enqueued all or none; a worker takes them in
// batches and acknowledges each batch once its records are matched. The
// in-memory queue implements it; a durable spool or NATS JetStream can
// implement it for multi-node setups.
type Queue interface {
	// Enqueue adds all records or none. It returns ErrQueueFull when they
	// do not fit and ErrQueueClosed after Close.
	Enqueue(ctx context.Context, recs []Record) error
	// Dequeue returns up to max records, blocking until some are queued.
	// After Close it returns what is left, then io.EOF.
	Dequeue(ctx context.Context, max int) (Batch, error)
	// Close stops Enqueue; Dequeue drains what was accepted.
	Close() error
	// Len returns the number of queued records.
	Len() int
	// Cap returns the queue's capacity in records.
	Cap() int
}

// Batch is records taken from a queue. Seq numbers batches in the order
// Dequeue hands them out, contiguously from the queue's start; for a
// durable queue it is also the position to resume from (Seq+1 once the
// batch is processed). Ack tells the queue the batch is processed.
type Batch struct {
	Records []Record
	Seq     uint64
	// Durable is set by queues that keep batches across a restart.
	Durable bool
	Ack     func() error
}

// Queue errors.
var (
	ErrQueueFull   = errors.New("queue is full")
	ErrQueueClosed = errors.New("queue is closed")
)

// MemQueue is a bounded in-memory queue. Records survive nothing: a crash
// loses what is queued (the spool queue does not).
type MemQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []Record // ring
	head   int
	n      int
	seq    uint64
	closed bool
}

// NewMemQueue returns a queue that holds at most capacity records.
func NewMemQueue(capacity int) *MemQueue {
	if capacity <= 0 {
		capacity = 1
	}
	q := &MemQueue{buf: make([]Record, capacity)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Enqueue implements Queue.
func (q *MemQueue) Enqueue(_ context.Context, recs []Record) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return ErrQueueClosed
	case len(recs) > len(q.buf)-q.n:
		return ErrQueueFull
	}
	for _, r := range recs {
		q.buf[(q.head+q.n)%len(q.buf)] = r
		q.n++
	}
	q.cond.Broadcast()
	return nil
}

// Dequeue implements Queue.
func (q *MemQueue) Dequeue(ctx context.Context, max int) (Batch, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 {
		if q.closed {
			return Batch{}, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return Batch{}, err
		}
		q.cond.Wait()
	}
	k := min(max, q.n)
	out := make([]Record, k)
	for i := range k {
		out[i] = q.buf[q.head]
		q.buf[q.head] = Record{}
		q.head = (q.head + 1) % len(q.buf)
	}
	q.n -= k
	q.seq++
	return Batch{Records: out, Seq: q.seq - 1, Ack: func() error { return nil }}, nil
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

// Cap implements Queue.
func (q *MemQueue) Cap() int { return len(q.buf) }
