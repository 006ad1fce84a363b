package queue

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/ingest/decode"
)

// Names of the JetStream objects the queue uses; other roles rely on them.
const (
	RecordsStream  = "INCIDEX_RECORDS"
	RecordsSubject = "incidex.records"
	DeadStream     = "INCIDEX_DEAD"
	DeadSubject    = "incidex.dead"
	WorkerConsumer = "incidex-workers"
)

// Headers of a message in INCIDEX_DEAD.
const (
	HeaderDeadReason = "Incidex-Dead-Reason"
	HeaderDeadSeq    = "Incidex-Records-Seq" // the message's sequence in INCIDEX_RECORDS
	HeaderDeadMsgID  = "Incidex-Msg-Id"      // its Nats-Msg-Id, if it had one
)

// JetStreamOptions configure a JetStream queue. The zero value gives the
// defaults.
type JetStreamOptions struct {
	// MaxBytes bounds the records stream; past it Enqueue returns ErrFull
	// (DiscardNew). Default 1 GiB.
	MaxBytes int64
	// Duplicates is the stream's duplicate window: a request enqueued again
	// with the same key within it is stored once. Default 2 minutes.
	Duplicates time.Duration
	// AckWait is how long a message may stay unacknowledged (and without an
	// InProgress) before the server redelivers it. Default 30 s.
	AckWait time.Duration
	// MaxDeliver is how many times a message is delivered before it goes
	// to the dead letters (see HandleDeadLetters). Default 5.
	MaxDeliver int
	// MaxAckPending bounds the messages out and unacknowledged across all
	// workers. Default 256.
	MaxAckPending int
	// ChunkBytes is the largest payload of one message; a request larger
	// than that is split. It must not exceed the server's max_payload
	// (1 MiB by default). Default 512 KiB.
	ChunkBytes int
	// FetchMaxBytes limits one pull request. Default 4 MiB.
	FetchMaxBytes int
	// PublishTimeout bounds an Enqueue's wait for its PubAcks. Default 5 s.
	PublishTimeout time.Duration
	// OnDead, when set, is called after a records message was moved to
	// INCIDEX_DEAD (a payload that does not decode, found by Dequeue, or a
	// message delivered MaxDeliver times, found by HandleDeadLetters), so the
	// caller can publish a tombstone result for its sequence. It may be
	// called more than once for one sequence.
	OnDead func(ctx context.Context, seq uint64, reason string)
	// SweepEvery is how often HandleDeadLetters looks for messages past
	// MaxDeliver whose advisory it missed. Default 1 minute.
	SweepEvery time.Duration
	Logger     *slog.Logger
	// Registry, when set, receives the queue's metrics.
	Registry prometheus.Registerer
}

func (o *JetStreamOptions) setDefaults() {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 30
	}
	if o.Duplicates <= 0 {
		o.Duplicates = 2 * time.Minute
	}
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxDeliver <= 0 {
		o.MaxDeliver = 5
	}
	if o.MaxAckPending <= 0 {
		o.MaxAckPending = 256
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = 512 << 10
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = 4 << 20
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// JetStream is a queue on NATS JetStream, shared by any number of
// receivers (Enqueue) and workers (Dequeue, Ack) in other processes.
//
// A request is one message in INCIDEX_RECORDS (WorkQueue retention, file
// storage), or several of at most ChunkBytes each, and Enqueue returns nil
// only once every one of them has its PubAck. With a key (WithKey), chunk
// i carries the message id key-i, so a sender's retry within the
// duplicate window is stored once; without one each chunk gets a random
// id. Workers share the durable pull consumer incidex-workers. Each Batch
// is one message; its Checkpoint is the message's sequence in
// INCIDEX_RECORDS, in decimal. While a batch, or a message pulled and not
// yet handed out, waits, the queue sends InProgress every AckWait/3, so a
// slow knowledge-base writer does not cause redeliveries; it never Naks.
// Ack double-acks (waits for the server's confirmation).
//
// Guarantee: at least once to the workers. A worker that dies before Ack
// has its message redelivered after AckWait. Exactly-once counting needs
// the writer to skip sequences it has applied: the duplicate window alone
// is not enough, because the ids of deleted messages are forgotten when
// the server restarts (nats-server#3272) and a late ack is accepted after
// a redelivery (nats-server#4786), so two workers can finish one message.
// Durability is the stream's: a file stream fsyncs every 2 minutes unless
// the server runs with sync_interval: always or the stream has replicas.
//
// A request that fails part-way (the stream fills between two chunks) is
// left half stored when it has a key, because the sender's retry is then
// deduplicated chunk by chunk; without a key its stored chunks are deleted
// again, which can race with a worker that already took one.
//
// The caller owns the connection. It must be made with
// nats.ReconnectBufSize(-1), so a publish while disconnected fails at once
// rather than buffering, and Enqueue returns ErrUnavailable fast.
type JetStream struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	records jetstream.Stream
	dead    jetstream.Stream
	cons    jetstream.Consumer
	opts    JetStreamOptions
	log     *slog.Logger
	m       *jsMetrics

	mu      sync.Mutex
	cond    *sync.Cond
	closed  bool
	started bool                     // the puller and heartbeat run
	buf     []jetstream.Msg          // pulled, not yet handed out
	out     map[uint64]jetstream.Msg // handed out, not yet acked
	stopCtx context.Context          // done at Close
	stop    context.CancelFunc
	pulling bool // a pull request is in flight

	noProgress atomic.Bool // tests: stop sending InProgress

	lenMu   sync.Mutex
	lenAt   time.Time
	lenLast int
	fullAt  time.Time
	full    bool
}

// OpenJetStream creates or updates the streams INCIDEX_RECORDS and
// INCIDEX_DEAD and the consumer incidex-workers, and returns a queue on
// them. An existing stream keeps the settings the queue does not own (its
// replicas, placement). Close does not close nc.
func OpenJetStream(ctx context.Context, nc *nats.Conn, opts JetStreamOptions) (*JetStream, error) {
	opts.setDefaults()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(opts.PublishTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	q := &JetStream{nc: nc, js: js, opts: opts, log: opts.Logger.With("component", "queue"),
		out: map[uint64]jetstream.Msg{}}
	q.cond = sync.NewCond(&q.mu)
	q.stopCtx, q.stop = context.WithCancel(context.Background())
	q.records, err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name: RecordsStream, Subjects: []string{RecordsSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		MaxBytes: opts.MaxBytes, Discard: jetstream.DiscardNew, Duplicates: opts.Duplicates,
	})
	if err != nil {
		return nil, err
	}
	q.dead, err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name: DeadStream, Subjects: []string{DeadSubject},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Duplicates: opts.Duplicates,
	})
	if err != nil {
		return nil, err
	}
	q.cons, err = q.records.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: WorkerConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: opts.AckWait, MaxDeliver: opts.MaxDeliver, MaxAckPending: opts.MaxAckPending,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", WorkerConsumer, err)
	}
	if opts.Registry != nil {
		q.m = newJSMetrics(opts.Registry, q.Len)
	}
	return q, nil
}

// ensureStream creates the stream, or updates the fields of want on the
// existing one, keeping the rest of its config (replicas above all).
func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, want)
		if err != nil {
			return nil, fmt.Errorf("create stream %s: %w", want.Name, err)
		}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", want.Name, err)
	}
	cfg := s.CachedInfo().Config
	cfg.Subjects, cfg.MaxBytes, cfg.Discard, cfg.Duplicates = want.Subjects, want.MaxBytes, want.Discard, want.Duplicates
	if s, err = js.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("update stream %s: %w", want.Name, err)
	}
	return s, nil
}

// Enqueue implements Queue: it publishes the records as one message, or
// as chunks of at most ChunkBytes, and returns once all are acknowledged.
// It returns ErrFull when the stream is full, ErrUnavailable when NATS is
// down or slow, ErrClosed after Close.
func (q *JetStream) Enqueue(ctx context.Context, recs []decode.Record) error {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed {
		return ErrClosed
	}
	key := KeyFrom(ctx)
	chunks := chunkRecords(recs, q.opts.ChunkBytes)
	ctx, cancel := context.WithTimeout(ctx, q.opts.PublishTimeout)
	defer cancel()
	futs := make([]jetstream.PubAckFuture, 0, len(chunks))
	var err error
	for i, c := range chunks {
		id := nuid.Next()
		if key != "" {
			id = key + "-" + strconv.Itoa(i)
		}
		var f jetstream.PubAckFuture
		if f, err = q.js.PublishMsgAsync(&nats.Msg{Subject: RecordsSubject, Data: c}, jetstream.WithMsgID(id)); err != nil {
			break
		}
		futs = append(futs, f)
	}
	var stored []uint64
	dups := 0
	for _, f := range futs {
		select {
		case a := <-f.Ok():
			if a.Duplicate {
				dups++
			} else {
				stored = append(stored, a.Sequence)
			}
		case e := <-f.Err():
			err = cmpErr(err, e)
		case <-ctx.Done():
			err = cmpErr(err, ctx.Err())
		}
	}
	if err == nil {
		if dups == len(chunks) {
			q.m.duplicate() // a retry of a request already stored (or an identical body)
		} else {
			q.m.published(len(recs))
		}
		return nil
	}
	if key == "" {
		q.rollback(stored)
	}
	return q.refused(err)
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// rollback deletes the chunks of a failed request that has no key (its
// retry gets fresh ids).
func (q *JetStream) rollback(seqs []uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), q.opts.PublishTimeout)
	defer cancel()
	for _, s := range seqs {
		if err := q.records.DeleteMsg(ctx, s); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			q.log.Debug("delete chunk of a refused request", "seq", s, "err", err)
		}
	}
}

// refused maps a publish error to ErrFull or ErrUnavailable and counts it.
func (q *JetStream) refused(err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == 10077 && strings.Contains(apiErr.Description, "maximum") {
		q.m.refused("full")
		return ErrFull
	}
	cause := "timeout"
	if !q.nc.IsConnected() || errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionClosed) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, jetstream.ErrNoStreamResponse) {
		cause = "disconnected"
	}
	q.m.refused(cause)
	return fmt.Errorf("%w: publish: %w", ErrUnavailable, err)
}

// chunkRecords encodes recs into payloads of at most max bytes each, in
// order; a record larger than max alone is one payload.
func chunkRecords(recs []decode.Record, max int) [][]byte {
	var out [][]byte
	start, size := 0, 0
	for i, r := range recs {
		n := recordSize(r)
		if i > start && uvarintLen(uint64(i-start+1))+size+n > max {
			out = append(out, encodeRecords(recs[start:i]))
			start, size = i, 0
		}
		size += n
	}
	if start < len(recs) || len(recs) == 0 {
		out = append(out, encodeRecords(recs[start:]))
	}
	return out
}

// recordSize is the size of r in encodeRecords' format.
func recordSize(r decode.Record) int {
	var tmp [binary.MaxVarintLen64]byte
	n := binary.PutVarint(tmp[:], r.Time.UnixNano()) + 1
	n += stringSize(r.Level) + stringSize(string(r.Source)) + stringSize(r.ID) + stringSize(r.Message)
	n += uvarintLen(uint64(len(r.Labels)))
	for k, v := range r.Labels {
		n += stringSize(k) + stringSize(v)
	}
	return n
}

func stringSize(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

func uvarintLen(v uint64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutUvarint(tmp[:], v)
}

// Dequeue implements Queue: it returns the next message's records, one
// message per batch whatever max. It blocks until a message arrives or
// ctx is done. A message that does not decode goes to INCIDEX_DEAD and
// Dequeue goes on to the next. After Close it returns the messages this
// process had already pulled, then io.EOF; the rest stay in the stream.
func (q *JetStream) Dequeue(ctx context.Context, _ int) (*Batch, error) {
	for {
		m, err := q.next(ctx)
		if err != nil {
			return nil, err
		}
		if b := q.batch(ctx, m); b != nil {
			return b, nil
		}
	}
}

// next returns the next pulled message, starting the puller on first use.
func (q *JetStream) next(ctx context.Context) (jetstream.Msg, error) {
	defer wakeOnDone(ctx, &q.mu, q.cond)()
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started && !q.closed {
		q.started = true
		go q.pull()
		go q.heartbeat()
	}
	for len(q.buf) == 0 {
		if q.closed && !q.pulling {
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.cond.Wait()
	}
	m := q.buf[0]
	q.buf[0] = nil
	q.buf = q.buf[1:]
	q.cond.Broadcast() // the puller waits for an empty buffer
	return m, nil
}

// pullWait is how long one pull request waits on the server.
const pullWait = 5 * time.Second

// pull fetches messages into buf whenever it is empty, until Close.
func (q *JetStream) pull() {
	for {
		q.mu.Lock()
		for len(q.buf) > 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		q.pulling = true
		q.mu.Unlock()
		err := q.fetch()
		q.mu.Lock()
		q.pulling = false
		q.cond.Broadcast()
		q.mu.Unlock()
		if err != nil && q.stopCtx.Err() == nil {
			q.log.Debug("pull from consumer", "err", err)
			select {
			case <-q.stopCtx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// fetch runs one pull request bounded by FetchMaxBytes. Messages the
// server sends after Close cancelled it come back after AckWait.
func (q *JetStream) fetch() error {
	ctx, cancel := context.WithTimeout(q.stopCtx, pullWait)
	defer cancel()
	mb, err := q.cons.Fetch(q.opts.MaxAckPending, jetstream.FetchMaxBytes(q.opts.FetchMaxBytes), jetstream.FetchContext(ctx))
	if err != nil {
		return err
	}
	for m := range mb.Messages() {
		q.mu.Lock()
		q.buf = append(q.buf, m)
		q.cond.Broadcast()
		q.mu.Unlock()
	}
	if err := mb.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// heartbeat sends InProgress for every message held (handed out, or
// pulled and waiting before Close) every AckWait/3. It ends after Close
// once every batch handed out is acknowledged.
func (q *JetStream) heartbeat() {
	t := time.NewTicker(q.opts.AckWait / 3)
	defer t.Stop()
	var held []jetstream.Msg
	for range t.C {
		q.mu.Lock()
		if q.closed && len(q.out) == 0 {
			q.mu.Unlock()
			return
		}
		held = held[:0]
		for _, m := range q.out {
			held = append(held, m)
		}
		if !q.closed {
			held = append(held, q.buf...)
		}
		q.mu.Unlock()
		if q.noProgress.Load() {
			continue
		}
		for _, m := range held {
			if err := m.InProgress(); err != nil {
				q.log.Debug("in progress", "err", err)
			}
		}
	}
}

// batch turns a pulled message into a Batch, or moves it to the dead
// letters and returns nil when its payload does not decode.
func (q *JetStream) batch(ctx context.Context, m jetstream.Msg) *Batch {
	md, err := m.Metadata()
	if err != nil {
		q.log.Warn("message without metadata", "err", err)
		return nil
	}
	seq := md.Sequence.Stream
	if md.NumDelivered > 1 {
		q.m.redelivered()
	}
	recs, err := decodeRecords(m.Data())
	if err != nil {
		reason := "payload does not decode: " + err.Error()
		if err := q.bury(ctx, seq, m.Data(), m.Headers(), reason); err != nil {
			q.log.Warn("move poison message to dead letters", "seq", seq, "err", err)
			return nil // redelivered after AckWait; retried then
		}
		if err := m.TermWithReason(reason); err != nil {
			q.log.Debug("term poison message", "seq", seq, "err", err)
		}
		q.died(ctx, seq, reason)
		return nil
	}
	q.mu.Lock()
	q.out[seq] = m
	q.mu.Unlock()
	var once sync.Once
	var ackErr error
	return NewBatch(recs, strconv.FormatUint(seq, 10), func(ctx context.Context) error {
		once.Do(func() {
			q.mu.Lock()
			delete(q.out, seq)
			q.mu.Unlock()
			if ackErr = m.DoubleAck(ctx); ackErr != nil {
				ackErr = fmt.Errorf("ack records message %d: %w", seq, ackErr)
			}
		})
		return ackErr
	})
}

// bury publishes a records message to INCIDEX_DEAD with why and where it
// came from. Its message id is derived from seq, so two processes burying
// the same message store it once.
func (q *JetStream) bury(ctx context.Context, seq uint64, data []byte, hdr nats.Header, reason string) error {
	m := nats.NewMsg(DeadSubject)
	m.Data = data
	for k, v := range hdr {
		if !strings.HasPrefix(k, "Nats-") {
			m.Header[k] = v
		}
	}
	if id := hdr.Get(jetstream.MsgIDHeader); id != "" {
		m.Header.Set(HeaderDeadMsgID, id)
	}
	m.Header.Set(HeaderDeadReason, reason)
	m.Header.Set(HeaderDeadSeq, strconv.FormatUint(seq, 10))
	ctx, cancel := context.WithTimeout(ctx, q.opts.PublishTimeout)
	defer cancel()
	a, err := q.js.PublishMsg(ctx, m, jetstream.WithMsgID("dead-"+strconv.FormatUint(seq, 10)))
	if err != nil {
		return err
	}
	if !a.Duplicate {
		q.m.deadLetter()
	}
	return nil
}

func (q *JetStream) died(ctx context.Context, seq uint64, reason string) {
	q.log.Warn("records message moved to dead letters", "seq", seq, "reason", reason)
	if q.opts.OnDead != nil {
		q.opts.OnDead(ctx, seq, reason)
	}
}

// maxDeliveriesAdvisory is the advisory the server publishes when a
// message of the records stream was delivered MaxDeliver times.
const maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + RecordsStream + "." + WorkerConsumer

// HandleDeadLetters moves the messages that exceeded MaxDeliver to
// INCIDEX_DEAD until ctx is done. A WorkQueue stream keeps such a message
// (by design) and the consumer does not deliver it again, so without this
// it would sit in INCIDEX_RECORDS for good. For each advisory it copies the
// message to INCIDEX_DEAD, deletes it from INCIDEX_RECORDS and calls OnDead.
// One process is enough (the writer runs it); two would store each dead
// letter once (the id is derived from the sequence) but call OnDead twice.
// Advisories are not persisted: one published while no process handled
// them is lost. So it also sweeps, at start and every SweepEvery: a message
// still in INCIDEX_RECORDS at or below the consumer's ack floor is one the
// consumer gave up on (every message there is acknowledged, and the
// work queue deletes those), and is moved the same way.
func (q *JetStream) HandleDeadLetters(ctx context.Context) error {
	ch := make(chan *nats.Msg, 64)
	sub, err := q.nc.ChanSubscribe(maxDeliveriesAdvisory, ch)
	if err != nil {
		return fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := q.nc.FlushTimeout(q.opts.PublishTimeout); err != nil {
		return fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	every := q.opts.SweepEvery
	if every <= 0 {
		every = time.Minute
	}
	sweep := time.NewTimer(0)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sweep.C:
			if n, err := q.sweepAbandoned(ctx); err != nil {
				q.log.Debug("sweep for messages past max deliveries", "err", err)
			} else if n > 0 {
				q.log.Warn("moved messages past max deliveries whose advisory was missed to dead letters", "messages", n)
			}
			sweep.Reset(every)
		case m := <-ch:
			var adv struct {
				StreamSeq  uint64 `json:"stream_seq"`
				Deliveries int    `json:"deliveries"`
			}
			if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq == 0 {
				q.log.Warn("malformed max-deliveries advisory", "err", err)
				continue
			}
			if err := q.buryDelivered(ctx, adv.StreamSeq, adv.Deliveries); err != nil {
				q.log.Warn("move message past max deliveries to dead letters", "seq", adv.StreamSeq, "err", err)
			}
		}
	}
}

// sweepAbandoned moves the messages of INCIDEX_RECORDS the consumer gave
// up on (see HandleDeadLetters) to INCIDEX_DEAD, oldest first, and returns
// how many. A message in flight is above the ack floor, so it is never
// taken.
func (q *JetStream) sweepAbandoned(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		ci, err := q.cons.Info(ctx)
		if err != nil {
			return n, err
		}
		si, err := q.records.Info(ctx)
		if err != nil {
			return n, err
		}
		first := si.State.FirstSeq
		if si.State.Msgs == 0 || first == 0 || first > ci.AckFloor.Stream {
			return n, nil
		}
		if err := q.buryDelivered(ctx, first, q.opts.MaxDeliver); err != nil {
			return n, err
		}
		n++
	}
	return n, ctx.Err()
}

// buryDelivered moves message seq of INCIDEX_RECORDS to INCIDEX_DEAD.
func (q *JetStream) buryDelivered(ctx context.Context, seq uint64, deliveries int) error {
	raw, err := q.records.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // acknowledged late, or already moved
	}
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("delivered %d times without an ack", deliveries)
	if err := q.bury(ctx, seq, raw.Data, raw.Header, reason); err != nil {
		return err
	}
	if err := q.records.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return err
	}
	q.died(ctx, seq, reason)
	return nil
}

// Close implements Queue: Enqueue stops, pulling stops, and Dequeue hands
// out what was already pulled, then io.EOF. Batches handed out can still
// be acknowledged. It does not close the connection.
func (q *JetStream) Close() error {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	q.stop()
	return nil
}

// Len implements Queue, counting messages (requests or chunks), not
// records: those waiting in the consumer plus those out and not yet
// acknowledged, across all workers. The figure is refreshed at most once
// a second; it is the last known one when NATS does not answer.
func (q *JetStream) Len() int {
	q.lenMu.Lock()
	defer q.lenMu.Unlock()
	if time.Since(q.lenAt) < time.Second {
		return q.lenLast
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	q.lenAt = time.Now()
	if ci, err := q.cons.Info(ctx); err == nil {
		q.lenLast = int(ci.NumPending) + ci.NumAckPending
	}
	return q.lenLast
}

// jsMetrics are the queue's Prometheus metrics; a nil *jsMetrics counts
// nothing.
type jsMetrics struct {
	pub       prometheus.Counter
	refusedBy *prometheus.CounterVec
	redeliv   prometheus.Counter
	dead      prometheus.Counter
	dup       prometheus.Counter
}

func newJSMetrics(reg prometheus.Registerer, pending func() int) *jsMetrics {
	m := &jsMetrics{
		pub: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_nats_published_records_total",
			Help: "Records published to the records stream and acknowledged."}),
		refusedBy: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_nats_publish_refused_total",
			Help: "Enqueues refused, by cause (full, timeout, disconnected)."}, []string{"cause"}),
		redeliv: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_nats_redeliveries_total",
			Help: "Records messages received again after a first delivery."}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_nats_dead_letters_total",
			Help: "Records messages moved to the dead-letter stream."}),
		dup: prometheus.NewCounter(prometheus.CounterOpts{Name: "incidex_nats_duplicate_requests_total",
			Help: "Requests answered 2xx whose every chunk the stream already held (same idempotency key within the duplicate window): a sender's retry, or an identical body sent twice."}),
	}
	reg.MustRegister(m.pub, m.refusedBy, m.redeliv, m.dead, m.dup,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_nats_consumer_pending",
			Help: "Records messages waiting in the worker consumer or out unacknowledged."},
			func() float64 { return float64(pending()) }))
	return m
}

func (m *jsMetrics) published(n int) {
	if m != nil {
		m.pub.Add(float64(n))
	}
}

func (m *jsMetrics) duplicate() {
	if m != nil {
		m.dup.Inc()
	}
}

func (m *jsMetrics) refused(cause string) {
	if m != nil {
		m.refusedBy.WithLabelValues(cause).Inc()
	}
}

func (m *jsMetrics) redelivered() {
	if m != nil {
		m.redeliv.Inc()
	}
}

func (m *jsMetrics) deadLetter() {
	if m != nil {
		m.dead.Inc()
	}
}

// Dedupes reports that the queue drops a request enqueued again with the
// same key (WithKey) within the duplicate window.
func (q *JetStream) Dedupes() bool { return true }

// Epoch names the records stream this queue opened: its creation time in
// Unix nanoseconds. A stream deleted and created again numbers its
// messages from 1 again, so a sequence means a message only with its
// epoch (see cluster.Result.Epoch).
func (q *JetStream) Epoch() int64 { return q.records.CachedInfo().Created.UnixNano() }

// Ready reports why the queue cannot take records now: NATS not connected,
// or the records stream full (less than one chunk of room). The stream's
// size is read at most once a second.
func (q *JetStream) Ready() error {
	if !q.nc.IsConnected() {
		return errors.New("NATS is not connected")
	}
	q.lenMu.Lock()
	defer q.lenMu.Unlock()
	if time.Since(q.fullAt) >= time.Second {
		q.fullAt = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if si, err := q.records.Info(ctx); err == nil {
			q.full = si.State.Bytes+uint64(q.opts.ChunkBytes) > uint64(q.opts.MaxBytes)
		}
	}
	if q.full {
		return fmt.Errorf("the records stream %s is full (%d bytes): workers are behind", RecordsStream, q.opts.MaxBytes)
	}
	return nil
}

// DeadLetter is a records message moved to INCIDEX_DEAD.
type DeadLetter struct {
	// Seq is the message's sequence in INCIDEX_RECORDS.
	Seq    uint64    `json:"seq"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
	Bytes  int       `json:"bytes"`
	// Preview is the start of the payload as text (invalid UTF-8 and
	// control characters replaced).
	Preview string `json:"preview"`
}

// DeadLetters returns the newest dead letters (at most limit, newest
// first) and how many INCIDEX_DEAD holds.
func (q *JetStream) DeadLetters(ctx context.Context, limit int) ([]DeadLetter, uint64, error) {
	info, err := q.dead.Info(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("stream %s: %w", DeadStream, err)
	}
	var out []DeadLetter
	for seq := info.State.LastSeq; seq >= info.State.FirstSeq && seq > 0 && len(out) < limit; seq-- {
		m, err := q.dead.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("dead letter %d: %w", seq, err)
		}
		d := DeadLetter{Reason: m.Header.Get(HeaderDeadReason), Time: m.Time, Bytes: len(m.Data), Preview: preview(m.Data, 200)}
		d.Seq, _ = strconv.ParseUint(m.Header.Get(HeaderDeadSeq), 10, 64)
		out = append(out, d)
	}
	return out, info.State.Msgs, nil
}

// preview is the first n bytes of b as printable text.
func preview(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (r < 0x20 && r != '\t') || r == 0x7f {
			return '·'
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
}
