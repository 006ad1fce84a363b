package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// Sink receives the records that matched an incident, batch by batch in
// queue order. pos is the queue position after the batch (Batch.Seq+1): a
// sink that persists it with its own state makes a durable queue resume
// exactly after the last batch it counted. *kb.Occurrences implements it.
type Sink interface {
	Observe(ctx context.Context, obs []kb.Observation, pos uint64) error
}

// PipelineOptions configure a Pipeline. Matcher and Sink are required.
type PipelineOptions struct {
	// Matcher returns the current matcher; it may change between batches
	// (the knowledge base was edited).
	Matcher func() *kb.Matcher
	Sink    Sink
	// Unmatched, when set, receives records that matched nothing.
	Unmatched func(ctx context.Context, recs []Record)
	// Workers is the number of matching goroutines (default 2); BatchSize
	// the records taken per dequeue (default 512).
	Workers, BatchSize int
	// OnBatch, when set, is told about each processed batch (metrics).
	OnBatch func(BatchStats)
	Logger  *slog.Logger
}

// IsErrorRecord reports whether a record is at warning level or above:
// from its level when the format carries one, else inferred from its text
// (an error word, a Warning event, a W/E/F klog prefix).
func IsErrorRecord(r Record) bool {
	switch r.Level {
	case "warn", "error", "fatal":
		return true
	case "debug", "info":
		return false
	}
	return patterns.IsFailure(r.Message)
}

// BatchStats describe one processed batch.
type BatchStats struct {
	Records, Matched int
	ByFormat         map[Format][2]int // records, matched
	Duration         time.Duration
}

// Pipeline matches queued records and hands matches to a Sink.
type Pipeline struct {
	q    Queue
	opts PipelineOptions
	log  *slog.Logger

	// The sink sees batches in the order they were dequeued: workers
	// dequeue one at a time (taking a ticket), match in parallel, then wait
	// for their ticket's turn.
	deqMu   sync.Mutex
	tickets uint64
	turnMu  sync.Mutex
	turn    *sync.Cond
	next    uint64
}

// NewPipeline returns a pipeline over q.
func NewPipeline(q Queue, opts PipelineOptions) *Pipeline {
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
	p := &Pipeline{q: q, opts: opts, log: log.With("component", "pipeline")}
	p.turn = sync.NewCond(&p.turnMu)
	return p
}

// Run matches records until the queue is closed and drained. Cancelling ctx
// stops it early (records still queued stay queued).
func (p *Pipeline) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, p.opts.Workers)
	for w := range p.opts.Workers {
		wg.Go(func() { errs[w] = p.work(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (p *Pipeline) work(ctx context.Context) error {
	var dst []patterns.Match
	stop := context.AfterFunc(ctx, func() {
		p.turnMu.Lock()
		p.turn.Broadcast()
		p.turnMu.Unlock()
	})
	defer stop()
	for {
		p.deqMu.Lock()
		b, err := p.q.Dequeue(ctx, p.opts.BatchSize)
		ticket := p.tickets
		if err == nil {
			p.tickets++
		}
		p.deqMu.Unlock()
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
		if dst, err = p.process(ctx, b, ticket, dst); err != nil {
			return err
		}
		if err := b.Ack(); err != nil {
			return err
		}
	}
}

// waitTurn blocks until ticket is the next one for the sink.
func (p *Pipeline) waitTurn(ctx context.Context, ticket uint64) error {
	p.turnMu.Lock()
	defer p.turnMu.Unlock()
	for p.next != ticket {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.turn.Wait()
	}
	return nil
}

func (p *Pipeline) doneTurn() {
	p.turnMu.Lock()
	p.next++
	p.turn.Broadcast()
	p.turnMu.Unlock()
}

// process matches one batch. The sink sees the batch's matches in one
// call, in queue order.
func (p *Pipeline) process(ctx context.Context, b Batch, ticket uint64, dst []patterns.Match) ([]patterns.Match, error) {
	recs := b.Records
	start := time.Now()
	m := p.opts.Matcher()
	var obs []kb.Observation
	var unmatched []Record
	byFormat := make(map[Format][2]int, 1)
	matched := 0
	for i := range recs {
		r := &recs[i]
		dst = m.Best(r.Message, patterns.Stream, 0, 1, dst[:0])
		c := byFormat[r.Source]
		c[0]++
		if len(dst) == 0 {
			byFormat[r.Source] = c
			if p.opts.Unmatched != nil {
				unmatched = append(unmatched, *r)
			}
			continue
		}
		c[1]++
		byFormat[r.Source] = c
		matched++
		// The best explanation makes the occurrence; incidents that print
		// the same message are shown beside it as alternatives.
		pm := dst[0]
		sig := m.Signature(pm.Sig)
		obs = append(obs, kb.Observation{
			Time: r.Time, IncidentID: sig.IncidentID, SignatureID: sig.ID, Score: pm.Score,
			Message: r.Message, Labels: r.Labels, Format: string(r.Source),
		})
	}
	if err := p.waitTurn(ctx, ticket); err != nil {
		return dst, err
	}
	var pos uint64
	if b.Durable {
		pos = b.Seq + 1
	}
	err := p.opts.Sink.Observe(ctx, obs, pos)
	if err == nil && len(unmatched) > 0 {
		p.opts.Unmatched(ctx, unmatched)
	}
	p.doneTurn()
	if err != nil {
		return dst, err
	}
	if p.opts.OnBatch != nil {
		p.opts.OnBatch(BatchStats{Records: len(recs), Matched: matched, ByFormat: byFormat, Duration: time.Since(start)})
	}
	return dst, nil
}
