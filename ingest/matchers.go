package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/incidex/incidex/kb"
)

// MatchersOptions configure Matchers.
type MatchersOptions struct {
	// KB is where signatures are loaded from. Nil: the matcher is set from
	// outside with Set (a worker that receives snapshots).
	KB *kb.KB
	// Emerging, when set, is seeded with the signatures on every load, so
	// the miner does not propose what the knowledge base already knows.
	Emerging *kb.Emerging
	// ReloadEvery is how often Run checks the knowledge base's generation
	// (another process may have edited it). Default 2s.
	ReloadEvery time.Duration
	Logger      *slog.Logger
}

// Matchers holds the current matcher and rebuilds it when the knowledge
// base changes. Readers get an immutable *kb.Matcher that stays valid while
// they use it; a reload swaps in a new one between batches.
type Matchers struct {
	opts MatchersOptions
	log  *slog.Logger
	cur  atomic.Pointer[kb.Matcher]
	mu   sync.Mutex // one reload at a time

	subMu  sync.Mutex
	onLoad []func(*kb.Matcher)
}

// OnLoad registers f to be called after each new matcher is in place (the
// pages rebuild their incident list, for instance).
func (m *Matchers) OnLoad(f func(*kb.Matcher)) {
	m.subMu.Lock()
	m.onLoad = append(m.onLoad, f)
	m.subMu.Unlock()
}

// NewMatchers returns Matchers with no matcher loaded; call Reload (or
// Set) before matching.
func NewMatchers(opts MatchersOptions) *Matchers {
	if opts.ReloadEvery <= 0 {
		opts.ReloadEvery = 2 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Matchers{opts: opts, log: log.With("component", "matcher")}
}

// Matcher returns the current matcher, nil before the first load.
func (m *Matchers) Matcher() *kb.Matcher { return m.cur.Load() }

// Set puts a matcher in place (built elsewhere, such as from a snapshot).
func (m *Matchers) Set(mt *kb.Matcher) {
	m.cur.Store(mt)
	m.loaded(mt)
}

func (m *Matchers) loaded(mt *kb.Matcher) {
	if m.opts.Emerging != nil {
		m.opts.Emerging.Seed(mt.Signatures())
	}
	m.log.Info("matcher loaded", "signatures", mt.Len(), "generation", mt.Generation())
	m.subMu.Lock()
	subs := m.onLoad
	m.subMu.Unlock()
	for _, f := range subs {
		f(mt)
	}
}

// Reload rebuilds the matcher when the knowledge base changed since the
// current one was built (by this process or another), indexing writes
// other processes left pending.
func (m *Matchers) Reload(ctx context.Context) error {
	if m.opts.KB == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	gen, err := m.opts.KB.Generation(ctx)
	if err != nil {
		return err
	}
	if cur := m.cur.Load(); cur != nil && cur.Generation() == gen {
		return nil
	}
	if _, err := m.opts.KB.SyncPending(ctx); err != nil {
		return err
	}
	mt, err := m.opts.KB.Matcher(ctx, 0)
	if err != nil {
		return err
	}
	m.cur.Store(mt)
	m.loaded(mt)
	return nil
}

// Run reloads every ReloadEvery until ctx is done.
func (m *Matchers) Run(ctx context.Context) error {
	if m.opts.KB == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(m.opts.ReloadEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := m.Reload(ctx); err != nil && !errors.Is(err, context.Canceled) {
				m.log.Warn("reload matcher", "err", err)
			}
		}
	}
}
