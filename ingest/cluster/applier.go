package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/kb"
)

// ApplierOptions configure an Applier.
type ApplierOptions struct {
	// MaxSpan bounds the applied set (default DefaultMaxSpan).
	MaxSpan int
	// AckWait is how long a delivered result may stay unacknowledged
	// before it is delivered again (default 30 s); it must exceed the
	// occurrence store's flush interval by a good margin. MaxAckPending
	// bounds the results applied but not yet flushed (default 20,000).
	AckWait       time.Duration
	MaxAckPending int
	// DuplicateWindow and MaxBytes configure the results stream, as in
	// PublisherOptions.
	DuplicateWindow time.Duration
	MaxBytes        int64
	// NoAppliedSet applies every result, duplicates included. It is for
	// tests and benchmarks only: it shows what the applied set prevents.
	NoAppliedSet bool
	// Registry, when set, receives the writer's metrics.
	Registry prometheus.Registerer
	Logger   *slog.Logger
}

// Applier is the knowledge-base writer's side of the results stream: it
// applies each records message's result exactly once.
//
// For each result it checks the records sequence against its AppliedSet;
// a new one goes to the occurrence store (and its unmatched lines to the
// emerging-pattern miner) with the set's new encoding as the checkpoint,
// which the store writes in the same SQLite transaction as the counts. The
// result is acknowledged, and so deleted from the work-queue stream, only
// once that transaction has committed. A crash before it loses the counts
// and the set's additions together, and the result is delivered again. A
// result whose sequence is already in the set is acknowledged after the
// next commit, without counting anything.
//
// The caller runs the occurrence store's Run (its flusher), as the single
// process does.
type Applier struct {
	k    *kb.KB
	occ  *kb.Occurrences
	em   *kb.Emerging
	cons jetstream.Consumer
	opts ApplierOptions
	log  *slog.Logger

	set     *AppliedSet // touched only by Run's goroutine
	encoded string      // set.Encode() as of the last Add
	skipped uint64
	// prev is the set of the records stream before the current one, kept
	// (in memory) for its results still in flight when a recreated stream's
	// first result came.
	prev *AppliedSet

	stats   ApplierStats
	metrics *applierMetrics
}

// ApplierStats are an Applier's counts since it was created.
type ApplierStats struct {
	Applied, Duplicates, Tombstones, Records, Invalid atomic.Int64
}

// NewApplier returns the writer for the knowledge base k, creating the
// results stream and the writer's durable consumer if needed. em may be
// nil.
func NewApplier(js jetstream.JetStream, k *kb.KB, occ *kb.Occurrences, em *kb.Emerging, opts ApplierOptions) (*Applier, error) {
	if opts.AckWait <= 0 {
		opts.AckWait = 30 * time.Second
	}
	if opts.MaxAckPending <= 0 {
		opts.MaxAckPending = 20000
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ensureResults(ctx, js, opts.DuplicateWindow, opts.MaxBytes); err != nil {
		return nil, err
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{
		Durable: WriterConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: opts.AckWait,
		MaxAckPending: opts.MaxAckPending, MaxDeliver: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("ensure consumer %s: %w", WriterConsumer, err)
	}
	a := &Applier{k: k, occ: occ, em: em, cons: cons, opts: opts, log: log.With("component", "writer")}
	a.metrics = newApplierMetrics(opts.Registry)
	return a, nil
}

// Stats returns the applier's counters.
func (a *Applier) Stats() *ApplierStats { return &a.stats }

// Run applies results until ctx is done. It starts from the applied set
// stored in the knowledge base.
func (a *Applier) Run(ctx context.Context) error {
	if err := a.load(ctx); err != nil {
		return err
	}
	it, err := a.cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return fmt.Errorf("consume %s: %w", ResultsStream, err)
	}
	defer it.Stop()
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return fmt.Errorf("consume %s: %w", ResultsStream, err)
			}
			a.log.Debug("next result", "err", err)
			continue
		}
		if err := a.apply(ctx, msg); err != nil {
			return err
		}
	}
}

func (a *Applier) load(ctx context.Context) error {
	ck, err := a.k.QueueCheckpoint(ctx)
	if err != nil {
		return fmt.Errorf("read applied set: %w", err)
	}
	set, err := ParseAppliedSet(ck, a.opts.MaxSpan)
	switch {
	case ck == "" || errors.Is(err, ErrNotAppliedSet):
		if ck != "" {
			a.log.Warn("queue checkpoint is not an applied set; starting with an empty one", "checkpoint", ck)
		}
		set = NewAppliedSet(a.opts.MaxSpan)
	case err != nil:
		return fmt.Errorf("read applied set: %w", err)
	}
	a.set, a.encoded, a.skipped = set, set.Encode(), 0
	a.log.Info("writer started", "floor", set.Floor())
	return nil
}

// apply hands one result to the stores; it returns an error only when
// they refuse it.
func (a *Applier) apply(ctx context.Context, msg jetstream.Msg) error {
	var res Result
	if err := json.Unmarshal(msg.Data(), &res); err != nil || res.Seq == 0 {
		a.stats.Invalid.Add(1)
		a.log.Warn("invalid result dropped", "err", err, "bytes", len(msg.Data()))
		_ = msg.Term()
		return nil
	}
	ack := func() {
		if err := msg.Ack(); err != nil {
			// Delivered again after AckWait and acknowledged then.
			a.log.Debug("acknowledge result", "seq", res.Seq, "err", err)
		}
	}
	set := a.setFor(res.Epoch)
	isNew := set.Add(res.Seq)
	// A late result of the records stream before the current one is
	// deduplicated in memory and counted; only the current set is the
	// checkpoint.
	if isNew && set == a.set {
		a.encoded = a.set.Encode()
		if a.set.Skipped != a.skipped {
			a.log.Warn("applied set past its bound; older sequences treated as applied", "skipped", a.set.Skipped-a.skipped, "floor", a.set.Floor())
			a.skipped = a.set.Skipped
		}
	}
	if !isNew && !a.opts.NoAppliedSet {
		a.stats.Duplicates.Add(1)
		a.metrics.duplicates.Add(1)
		return a.occ.Observe(ctx, nil, a.encoded, ack)
	}
	return a.count(ctx, res, ack)
}

// setFor returns the applied set of the records stream named by epoch.
// The first result that names one adopts it; a newer one means the stream
// was deleted and created again, its sequences starting from 1: the set
// starts empty for it, and the old one is kept for late results. A result
// of an epoch older than both, or without one, goes to the current set.
func (a *Applier) setFor(epoch int64) *AppliedSet {
	switch {
	case epoch == 0 || epoch == a.set.Epoch:
		return a.set
	case a.set.Epoch == 0:
		a.set.Epoch = epoch
		a.encoded = a.set.Encode()
		return a.set
	case epoch > a.set.Epoch:
		a.log.Warn("the records stream was created again; its sequences start over", "old_epoch", a.set.Epoch, "epoch", epoch, "old_floor", a.set.Floor())
		a.prev = a.set
		a.set = NewAppliedSet(a.opts.MaxSpan)
		a.set.Epoch = epoch
		a.encoded, a.skipped = a.set.Encode(), 0
		return a.set
	case a.prev != nil && epoch == a.prev.Epoch:
		return a.prev
	}
	return a.set
}

// count applies res to the stores; ack acknowledges it after the commit.
func (a *Applier) count(ctx context.Context, res Result, ack func()) error {
	var obs []kb.Observation
	if res.Tombstone {
		a.stats.Tombstones.Add(1)
		a.metrics.tombstones.Add(1)
	} else {
		obs = Observations(res.Obs)
		if a.em != nil && len(res.Unmatched) > 0 {
			a.em.Observe(UnmatchedLines(res.Unmatched))
		}
	}
	if err := a.occ.Observe(ctx, obs, a.encoded, ack); err != nil {
		return fmt.Errorf("apply result %d: %w", res.Seq, err)
	}
	var n int64
	for _, o := range obs {
		n += o.Count
	}
	a.stats.Applied.Add(1)
	a.stats.Records.Add(n)
	a.metrics.applied.Add(1)
	a.metrics.records.Add(float64(n))
	return nil
}

type applierMetrics struct {
	applied, duplicates, tombstones, records prometheus.Counter
}

func newApplierMetrics(reg prometheus.Registerer) *applierMetrics {
	m := &applierMetrics{
		applied:    prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_results_applied_total", Help: "Results applied by the writer."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_results_duplicate_total", Help: "Results dropped because their records message was already applied."}),
		tombstones: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_results_tombstones_total", Help: "Tombstone results (dead-lettered records messages) applied."}),
		records:    prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_records_applied_total", Help: "Matched records counted into occurrences by the writer."}),
	}
	if reg != nil {
		reg.MustRegister(m.applied, m.duplicates, m.tombstones, m.records)
	}
	return m
}
