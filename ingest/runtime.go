// Package ingest is the matcher runtime, the worker role: it takes batches
// of records from a queue, matches each record against the current
// knowledge base, hands the matches to a Sink (the occurrence store in one
// process, a results stream when scaled out), feeds the error lines that
// matched nothing to the emerging-pattern miner, and acknowledges each
// batch through the queue once the sink says what it produced is durable.
//
// The forwarder formats are in ingest/decode, the queues in ingest/queue
// and the write-up parsers in ingest/writeup.
package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// Sink receives the records that matched an incident, batch by batch in
// queue order. *kb.Occurrences implements it.
type Sink interface {
	// Observe takes one batch's matches and the batch's queue checkpoint.
	// The sink stores the checkpoint in the same transaction as the
	// matches (so a durable queue resumes exactly after the last batch
	// counted) and calls durable once both are stored. It may store several
	// batches in one write, and call durable later, from another goroutine.
	Observe(ctx context.Context, obs []kb.Observation, checkpoint string, durable func()) error
}

// Unmatched receives the error lines that matched nothing. *kb.Emerging
// implements it.
type Unmatched interface {
	Observe(lines []kb.UnmatchedLine)
}

// Options configure a Runtime. Queue, Matchers and Sink are required.
type Options struct {
	Queue    queue.Queue
	Matchers *Matchers
	Sink     Sink
	// Unmatched, when set, receives the records at warning level or above
	// that matched nothing.
	Unmatched Unmatched
	// Workers is the number of matching goroutines (default 2); BatchSize
	// the records taken per dequeue (default 512).
	Workers, BatchSize int
	// Registry, when set, receives the batch metrics.
	Registry prometheus.Registerer
	Logger   *slog.Logger
}

// IsErrorRecord reports whether a record is at warning level or above:
// from its level when the format carries one, else inferred from its text
// (an error word, a Warning event, a W/E/F klog prefix).
func IsErrorRecord(r decode.Record) bool {
	switch r.Level {
	case "warn", "error", "fatal":
		return true
	case "debug", "info":
		return false
	}
	return patterns.IsFailure(r.Message)
}

// Runtime matches queued records and hands the matches to a Sink.
type Runtime struct {
	q       queue.Queue
	opts    Options
	log     *slog.Logger
	metrics *batchMetrics

	// The sink sees batches in the order they were dequeued: workers
	// dequeue one at a time (taking a ticket), match in parallel, then wait
	// for their ticket's turn.
	deqMu   sync.Mutex
	tickets uint64
	turnMu  sync.Mutex
	turn    *sync.Cond
	next    uint64
}

// New returns a runtime over opts.Queue.
func New(opts Options) *Runtime {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 512
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{q: opts.Queue, opts: opts, log: log.With("component", "runtime")}
	if opts.Registry != nil {
		r.metrics = newBatchMetrics(opts.Registry)
	}
	r.turn = sync.NewCond(&r.turnMu)
	return r
}

// Run matches records until the queue is closed and drained, reloading the
// matcher when the knowledge base changes meanwhile. Cancelling ctx stops
// it early (records still queued stay queued).
func (r *Runtime) Run(ctx context.Context) error {
	reloadCtx, stopReload := context.WithCancel(ctx)
	var reload sync.WaitGroup
	reload.Go(func() { _ = r.opts.Matchers.Run(reloadCtx) })
	defer func() { stopReload(); reload.Wait() }()
	var wg sync.WaitGroup
	errs := make([]error, r.opts.Workers)
	for w := range r.opts.Workers {
		wg.Go(func() { errs[w] = r.work(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Runtime) work(ctx context.Context) error {
	var dst []patterns.Match
	stop := context.AfterFunc(ctx, func() {
		r.turnMu.Lock()
		r.turn.Broadcast()
		r.turnMu.Unlock()
	})
	defer stop()
	for {
		r.deqMu.Lock()
		b, err := r.q.Dequeue(ctx, r.opts.BatchSize)
		ticket := r.tickets
		if err == nil {
			r.tickets++
		}
		r.deqMu.Unlock()
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
		if dst, err = r.process(ctx, b, ticket, dst); err != nil {
			return err
		}
	}
}

// waitTurn blocks until ticket is the next one for the sink.
func (r *Runtime) waitTurn(ctx context.Context, ticket uint64) error {
	r.turnMu.Lock()
	defer r.turnMu.Unlock()
	for r.next != ticket {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.turn.Wait()
	}
	return nil
}

func (r *Runtime) doneTurn() {
	r.turnMu.Lock()
	r.next++
	r.turn.Broadcast()
	r.turnMu.Unlock()
}

// process matches one batch. The sink sees the batch's matches in one
// call, in queue order; the batch is acknowledged when the sink says they
// are durable.
func (r *Runtime) process(ctx context.Context, b *queue.Batch, ticket uint64, dst []patterns.Match) ([]patterns.Match, error) {
	recs := b.Records
	start := time.Now()
	m := r.opts.Matchers.Matcher()
	var obs []kb.Observation
	var unmatched []kb.UnmatchedLine
	byFormat := make(map[decode.Format][2]int, 1)
	matched := 0
	for i := range recs {
		rec := &recs[i]
		dst = m.Best(rec.Message, patterns.Stream, 0, 1, dst[:0])
		c := byFormat[rec.Source]
		c[0]++
		if len(dst) == 0 {
			byFormat[rec.Source] = c
			if r.opts.Unmatched != nil && IsErrorRecord(*rec) {
				unmatched = append(unmatched, kb.UnmatchedLine{Time: rec.Time, Message: rec.Message, Labels: rec.Labels})
			}
			continue
		}
		c[1]++
		byFormat[rec.Source] = c
		matched++
		// The best explanation makes the occurrence; incidents that print
		// the same message are shown beside it as alternatives.
		pm := dst[0]
		sig := m.Signature(pm.Sig)
		obs = append(obs, kb.Observation{
			Time: rec.Time, IncidentID: sig.IncidentID, SignatureID: sig.ID, Score: pm.Score,
			Message: rec.Message, Labels: rec.Labels, Resource: decode.ResourceKey(rec.Labels),
			Format: string(rec.Source),
		})
	}
	if err := r.waitTurn(ctx, ticket); err != nil {
		return dst, err
	}
	// Unmatched lines go first, in the same turn: a sink that publishes a
	// batch's results as one message (a scaled-out worker) takes them with
	// the matches that follow.
	if len(unmatched) > 0 {
		r.opts.Unmatched.Observe(unmatched)
	}
	err := r.opts.Sink.Observe(ctx, obs, b.Checkpoint, func() {
		if err := b.Ack(context.WithoutCancel(ctx)); err != nil {
			r.log.Warn("acknowledge batch", "err", err)
		}
	})
	r.doneTurn()
	if err != nil {
		return dst, err
	}
	if r.metrics != nil {
		r.metrics.observe(byFormat, len(recs), time.Since(start))
	}
	return dst, nil
}

// batchMetrics are the runtime's Prometheus metrics.
type batchMetrics struct {
	processed    *prometheus.CounterVec
	matched      *prometheus.CounterVec
	batchSeconds prometheus.Histogram
	lineSeconds  prometheus.Histogram
}

func newBatchMetrics(reg prometheus.Registerer) *batchMetrics {
	m := &batchMetrics{
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_processed_total", Help: "Records matched against the knowledge base, by format."}, []string{"format"}),
		matched:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_matched_total", Help: "Records that matched a known incident, by format."}, []string{"format"}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "incidex_match_batch_seconds", Help: "Time to match one batch of records.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		lineSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "incidex_match_line_seconds", Help: "Average time to match one record, per batch.",
			Buckets: prometheus.ExponentialBuckets(1e-7, 4, 10)}),
	}
	reg.MustRegister(m.processed, m.matched, m.batchSeconds, m.lineSeconds)
	return m
}

func (m *batchMetrics) observe(byFormat map[decode.Format][2]int, records int, d time.Duration) {
	for f, c := range byFormat {
		m.processed.WithLabelValues(string(f)).Add(float64(c[0]))
		m.matched.WithLabelValues(string(f)).Add(float64(c[1]))
	}
	m.batchSeconds.Observe(d.Seconds())
	if records > 0 {
		m.lineSeconds.Observe(d.Seconds() / float64(records))
	}
}
