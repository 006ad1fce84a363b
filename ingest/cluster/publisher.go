package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/incidex/incidex/kb"
)

// PublisherOptions configure a Publisher.
type PublisherOptions struct {
	// DuplicateWindow is the results stream's duplicate window (default 2
	// minutes); MaxBytes its size bound (default none).
	DuplicateWindow time.Duration
	MaxBytes        int64
	// PublishTimeout bounds one publish attempt (default 5 s); failed
	// attempts are retried after a backoff from RetryMin (default 50 ms)
	// doubling up to RetryMax (default 5 s).
	PublishTimeout, RetryMin, RetryMax time.Duration
	// Epoch is the records stream's epoch (queue.JetStream.Epoch), put in
	// every result.
	Epoch  int64
	Logger *slog.Logger
}

// Publisher is the worker's sink: it publishes one Result per records
// message to the results stream. It implements ingest.Sink; Unmatched
// returns its ingest.Unmatched.
type Publisher struct {
	js   jetstream.JetStream
	opts PublisherOptions
	log  *slog.Logger

	mu        sync.Mutex
	unmatched []kb.UnmatchedLine // the lines of the batch whose matches come next
}

// NewPublisher returns a publisher, creating the results stream if needed.
func NewPublisher(js jetstream.JetStream, opts PublisherOptions) (*Publisher, error) {
	if opts.PublishTimeout <= 0 {
		opts.PublishTimeout = 5 * time.Second
	}
	if opts.RetryMin <= 0 {
		opts.RetryMin = 50 * time.Millisecond
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 5 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.PublishTimeout)
	defer cancel()
	if err := ensureResults(ctx, js, opts.DuplicateWindow, opts.MaxBytes); err != nil {
		return nil, err
	}
	return &Publisher{js: js, opts: opts, log: log.With("component", "results")}, nil
}

// Unmatched returns the publisher's ingest.Unmatched: the runtime hands it
// a batch's unmatched lines just before the batch's matches, and the lines
// travel in the same Result.
func (p *Publisher) Unmatched() UnmatchedCollector { return UnmatchedCollector{p} }

// UnmatchedCollector keeps a batch's unmatched lines for the Publisher's
// next Observe. It implements ingest.Unmatched.
type UnmatchedCollector struct{ p *Publisher }

// Observe keeps lines for the result of the batch observed next.
func (u UnmatchedCollector) Observe(lines []kb.UnmatchedLine) {
	u.p.mu.Lock()
	u.p.unmatched = append(u.p.unmatched, lines...)
	u.p.mu.Unlock()
}

// Observe implements ingest.Sink. It publishes the Result of the records
// message whose sequence is checkpoint, waits for the stream's ack, and
// only then calls durable (after which the runtime acknowledges the
// records message). A failed publish is retried with backoff until ctx is
// done, meanwhile the records queue keeps the message in progress; if ctx
// ends first, durable is not called and the records message is delivered
// again.
func (p *Publisher) Observe(ctx context.Context, obs []kb.Observation, checkpoint string, durable func()) error {
	seq, err := strconv.ParseUint(checkpoint, 10, 64)
	if err != nil || seq == 0 {
		return fmt.Errorf("publish result for %q: %w", checkpoint, errBadCheckpoint)
	}
	p.mu.Lock()
	lines := p.unmatched
	p.unmatched = nil
	p.mu.Unlock()
	res := Result{Seq: seq, Epoch: p.opts.Epoch, Obs: Aggregate(obs), Unmatched: Dedup(lines)}
	if err := p.publish(ctx, res); err != nil {
		return nil // ctx is done: the records message stays unacknowledged
	}
	if durable != nil {
		durable()
	}
	return nil
}

// Tombstone publishes the result of a dead-lettered records message: it
// counts nothing but lets the writer's floor pass seq. It is the records
// queue's OnDead hook; it returns an error only when ctx ends first.
func (p *Publisher) Tombstone(ctx context.Context, seq uint64, reason string) error {
	return p.publish(ctx, Result{Seq: seq, Epoch: p.opts.Epoch, Tombstone: true, Reason: reason})
}

// publish sends res until the stream acknowledges it or ctx is done.
func (p *Publisher) publish(ctx context.Context, res Result) error {
	data, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode result %d: %w", res.Seq, err)
	}
	msg := &nats.Msg{Subject: ResultsSubject, Data: data, Header: nats.Header{}}
	id := resultMsgPrefix + strconv.FormatUint(res.Seq, 10)
	if res.Epoch != 0 {
		// A recreated records stream reuses sequences: the results stream's
		// duplicate window must not take its results for the old ones.
		id = resultMsgPrefix + strconv.FormatInt(res.Epoch, 36) + "-" + strconv.FormatUint(res.Seq, 10)
	}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	wait := p.opts.RetryMin
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, p.opts.PublishTimeout)
		_, err := p.js.PublishMsg(actx, msg, jetstream.WithExpectStream(ResultsStream))
		cancel()
		if err == nil {
			if attempt > 1 {
				p.log.Info("result published after retries", "seq", res.Seq, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, context.DeadlineExceeded) {
			// The stream may be gone (a NATS server that lost its store;
			// a publish to a deleted stream times out rather than finding
			// no responders): create it again rather than wait for the
			// writer to. On a stream that exists this changes nothing.
			ectx, cancel := context.WithTimeout(ctx, p.opts.PublishTimeout)
			if eerr := ensureResults(ectx, p.js, p.opts.DuplicateWindow, p.opts.MaxBytes); eerr != nil {
				err = errors.Join(err, eerr)
			}
			cancel()
		}
		p.log.Warn("publish result; retrying", "seq", res.Seq, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, p.opts.RetryMax)
	}
}
