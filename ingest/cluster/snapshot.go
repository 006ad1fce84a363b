package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
)

// Signatures reach the workers as matcher snapshots (kb.Matcher.Snapshot).
// The writer stores each generation's snapshot as an object named
// gen-<generation> in the object store INCIDEX_SNAPSHOTS, then points the
// key "snapshot" of the KV bucket INCIDEX_KB at it, then deletes the older
// objects. A worker watches the key, fetches the object it names, builds a
// matcher from it and swaps it in; it keeps the last one it built while the
// writer or NATS is down.
const (
	snapshotStore = "INCIDEX_SNAPSHOTS"
	kbBucket      = "INCIDEX_KB"
	snapshotKey   = "snapshot"
)

// Timings of the snapshot loops; variables so that tests can shorten them.
var (
	// snapshotRetryMin and snapshotRetryMax bound the backoff between
	// failed attempts (publishing, fetching, watching).
	snapshotRetryMin = time.Second
	snapshotRetryMax = 30 * time.Second
	// snapshotResyncEvery is how often a worker also reads the key, in
	// case its watch missed an update: after a NATS restart, the watch's
	// consumer is only recreated when heartbeats have been missing for
	// 10 to 20 s.
	snapshotResyncEvery = 5 * time.Second
	// snapshotOpTimeout bounds one JetStream operation.
	snapshotOpTimeout = 30 * time.Second
)

// PublishSnapshots runs on the writer: it publishes m's matcher at start
// (once there is one) and after every new load, until ctx is done. It
// creates the object store and the KV bucket (file storage, one value of
// history) if they are missing. A failed publish is logged and retried
// with backoff; a newer generation replaces the one being retried. It
// returns nil when ctx is done.
func PublishSnapshots(ctx context.Context, js jetstream.JetStream, m *ingest.Matchers, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &snapshotPublisher{js: js, log: log.With("component", "snapshots")}
	loaded := make(chan struct{}, 1)
	m.OnLoad(func(*kb.Matcher) {
		select {
		case loaded <- struct{}{}:
		default:
		}
	})
	var retry <-chan time.Time
	backoff := snapshotRetryMin
	attempt := func() {
		mt := m.Matcher()
		if mt == nil || mt == p.last {
			return
		}
		if err := p.publish(ctx, mt); err != nil {
			if ctx.Err() != nil {
				return
			}
			p.kv, p.obj = nil, nil // look the stores up again: one may have been deleted
			p.log.Warn("publish snapshot", "generation", mt.Generation(), "err", err, "retry_in", backoff)
			retry = time.After(backoff)
			backoff = min(2*backoff, snapshotRetryMax)
			return
		}
		retry, backoff = nil, snapshotRetryMin
	}
	attempt()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-loaded:
			attempt()
		case <-retry:
			attempt()
		}
	}
}

type snapshotPublisher struct {
	js   jetstream.JetStream
	log  *slog.Logger
	kv   jetstream.KeyValue
	obj  jetstream.ObjectStore
	last *kb.Matcher // the matcher last published
}

func (p *snapshotPublisher) stores(ctx context.Context) error {
	if p.kv != nil {
		return nil
	}
	obj, err := p.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: snapshotStore, Description: "incidex matcher snapshots, one per knowledge-base generation",
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("object store %s: %w", snapshotStore, err)
	}
	kv, err := p.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: kbBucket, Description: "incidex knowledge base: the current matcher snapshot",
		History: 1, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("kv bucket %s: %w", kbBucket, err)
	}
	p.obj, p.kv = obj, kv
	return nil
}

func (p *snapshotPublisher) publish(ctx context.Context, mt *kb.Matcher) error {
	ctx, cancel := context.WithTimeout(ctx, snapshotOpTimeout)
	defer cancel()
	if err := p.stores(ctx); err != nil {
		return err
	}
	snap, err := mt.Snapshot()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("gen-%d", mt.Generation())
	// A restarted writer finds its generation already published: leave
	// it, so the workers do not rebuild the matcher they have.
	if e, err := p.kv.Get(ctx, snapshotKey); err == nil && string(e.Value()) == name {
		h := sha256.New()
		h.Write(snap)
		if info, err := p.obj.GetInfo(ctx, name); err == nil && info.Digest == jetstream.GetObjectDigestValue(h) {
			p.last = mt
			p.deleteOlder(ctx, name)
			return nil
		}
	}
	if _, err := p.obj.PutBytes(ctx, name, snap); err != nil {
		return fmt.Errorf("store %s: %w", name, err)
	}
	if _, err := p.kv.Put(ctx, snapshotKey, []byte(name)); err != nil {
		return fmt.Errorf("point %s at %s: %w", snapshotKey, name, err)
	}
	p.last = mt
	p.log.Info("snapshot published", "generation", mt.Generation(), "object", name, "bytes", len(snap))
	p.deleteOlder(ctx, name)
	return nil
}

// deleteOlder deletes the objects other than keep. A failure is logged
// only: the next publish deletes them.
func (p *snapshotPublisher) deleteOlder(ctx context.Context, keep string) {
	infos, err := p.obj.List(ctx)
	if err != nil {
		if !errors.Is(err, jetstream.ErrNoObjectsFound) {
			p.log.Warn("list snapshots", "err", err)
		}
		return
	}
	for _, info := range infos {
		if info.Name == keep {
			continue
		}
		if err := p.obj.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			p.log.Warn("delete old snapshot", "object", info.Name, "err", err)
		}
	}
}

// WatchSnapshots runs on a worker: it watches the snapshot key and, for
// each new value, fetches the object it names, builds a matcher from it
// and puts it in m (the runtime picks it up between batches). Until the
// writer has published, there is no matcher: start the worker's runtime
// after WaitMatcher. A snapshot that fails to decode is logged and
// skipped; a fetch that fails is retried. While the writer or NATS is
// down, m keeps the last matcher built. It returns nil when ctx is done.
//
// The connection should reconnect forever (nats.MaxReconnects(-1)):
// WatchSnapshots starts its watch again when it ends, but cannot revive
// a closed connection.
func WatchSnapshots(ctx context.Context, js jetstream.JetStream, m *ingest.Matchers, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &snapshotWatcher{js: js, m: m, log: log.With("component", "snapshots")}
	backoff := snapshotRetryMin
	waitLogged := false
	for {
		w.watching = false
		err := w.watch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		// A worker waiting for its writer looks again every second.
		if w.watching || errors.Is(err, jetstream.ErrBucketNotFound) {
			backoff = snapshotRetryMin
		}
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			if !waitLogged {
				w.log.Info("no snapshot published yet, waiting for the writer")
				waitLogged = true
			}
		} else {
			w.log.Warn("watch snapshots", "err", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, snapshotRetryMax)
	}
}

type snapshotWatcher struct {
	js  jetstream.JetStream
	m   *ingest.Matchers
	log *slog.Logger

	watching bool     // the current watch got started
	rev      uint64   // revision of the key last taken
	pending  string   // object to load, "" when none
	sum      [32]byte // SHA-256 of the snapshot in place
}

// watch follows the key until the watch ends or ctx is done.
func (w *snapshotWatcher) watch(ctx context.Context) error {
	kv, err := w.js.KeyValue(ctx, kbBucket)
	if err != nil {
		return err
	}
	obj, err := w.js.ObjectStore(ctx, snapshotStore)
	if err != nil {
		return err
	}
	kw, err := kv.Watch(ctx, snapshotKey)
	if err != nil {
		return err
	}
	defer func() { _ = kw.Stop() }()
	w.watching = true
	resync := time.NewTicker(snapshotResyncEvery)
	defer resync.Stop()
	var retry <-chan time.Time
	backoff := snapshotRetryMin
	for {
		stale := false
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-kw.Updates():
			if !ok {
				return errors.New("watch ended")
			}
			w.offer(e)
		case <-resync.C:
			gctx, cancel := context.WithTimeout(ctx, snapshotOpTimeout)
			e, err := kv.Get(gctx, snapshotKey)
			cancel()
			if err == nil && w.offer(e) {
				stale = true
			}
		case <-retry:
		}
		if w.pending != "" {
			if err := w.load(ctx, obj); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				w.log.Warn("fetch snapshot", "object", w.pending, "err", err, "retry_in", backoff)
				retry = time.After(backoff)
				backoff = min(2*backoff, snapshotRetryMax)
			} else {
				retry, backoff = nil, snapshotRetryMin
			}
		}
		if stale {
			return errors.New("the watch missed an update of the key")
		}
	}
}

// offer takes a value of the key: the object it names is loaded next. It
// reports whether the value is new.
func (w *snapshotWatcher) offer(e jetstream.KeyValueEntry) bool {
	// nil marks the end of the initial values.
	if e == nil || e.Operation() != jetstream.KeyValuePut || e.Revision() == w.rev {
		return false
	}
	w.rev, w.pending = e.Revision(), string(e.Value())
	return true
}

// load fetches the pending object and puts its matcher in place. It
// returns an error only for a fetch worth retrying; a snapshot that does
// not decode is logged and dropped, and the matcher in place stays.
func (w *snapshotWatcher) load(ctx context.Context, obj jetstream.ObjectStore) error {
	name := w.pending
	gctx, cancel := context.WithTimeout(ctx, snapshotOpTimeout)
	data, err := obj.GetBytes(gctx, name)
	cancel()
	if err != nil {
		return err
	}
	w.pending = ""
	sum := sha256.Sum256(data)
	if sum == w.sum {
		return nil
	}
	start := time.Now()
	mt, err := kb.MatcherFromSnapshot(data)
	if err != nil {
		w.log.Warn("snapshot skipped, keeping the matcher in place", "object", name, "err", err)
		return nil
	}
	w.sum = sum
	w.m.Set(mt)
	w.log.Info("snapshot loaded", "object", name, "generation", mt.Generation(), "bytes", len(data), "took", time.Since(start))
	return nil
}

// WaitMatcher returns once m has a matcher, or ctx's error wrapped when
// ctx is done first. A worker calls it, with a timeout, between starting
// WatchSnapshots and starting its runtime, so that it never matches
// without signatures.
func WaitMatcher(ctx context.Context, m *ingest.Matchers) error {
	ready := make(chan struct{})
	var once sync.Once
	m.OnLoad(func(*kb.Matcher) { once.Do(func() { close(ready) }) })
	if m.Matcher() != nil {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no matcher snapshot from the writer yet: %w", ctx.Err())
	}
}
