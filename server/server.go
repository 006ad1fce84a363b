// Package server is incidex's HTTP side: the JSON API, the log-forwarder
// webhook in every native format, and the web pages. It is the only package
// that imports gin.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// Options configure a Server. KB, Queue and Occurrences are required.
type Options struct {
	KB          *kb.KB
	Queue       ingest.Queue
	Occurrences *kb.Occurrences
	// Emerging, when set, serves emerging patterns and is seeded with the
	// knowledge base's signatures on every reload.
	Emerging *kb.Emerging
	// Tokens: IngestToken guards the webhook, AdminToken writes, ReadToken
	// (when set) reads. An empty token leaves its routes open.
	IngestToken, AdminToken, ReadToken string
	// Limits on webhook requests; zero values take ingest's defaults.
	Limits ingest.Limits
	// MaxCompressedBytes limits the body as sent. Default 32 MiB.
	MaxCompressedBytes int64
	// RetryAfter is the Retry-After sent with 503. Default 2s.
	RetryAfter time.Duration
	// Registry receives the Prometheus metrics; nil makes a new one.
	Registry *prometheus.Registry
	Logger   *slog.Logger
	Now      func() time.Time
	// Mode is gin's mode; default release.
	Mode string
	// Web renders the pages; nil serves the API and webhook only.
	Web *web.Engine
}

// Server holds the dependencies of the handlers.
type Server struct {
	opts    Options
	kb      *kb.KB
	queue   ingest.Queue
	occ     *kb.Occurrences
	em      *kb.Emerging
	log     *slog.Logger
	engine  *gin.Engine
	metrics *metrics
	broker  *broker
	web     *web.Engine // nil: no pages
	cat     catalogCache

	matcher  atomic.Pointer[kb.Matcher]
	reloadMu sync.Mutex
	draining atomic.Bool
}

// New builds the server and its routes. Call Reload before serving so a
// matcher is loaded.
func New(opts Options) *Server {
	if opts.MaxCompressedBytes <= 0 {
		opts.MaxCompressedBytes = 32 << 20
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Mode == "" {
		opts.Mode = gin.ReleaseMode
	}
	gin.SetMode(opts.Mode)
	s := &Server{opts: opts, kb: opts.KB, queue: opts.Queue, occ: opts.Occurrences, em: opts.Emerging, log: log.With("component", "server"), broker: newBroker(), web: opts.Web}
	s.metrics = newMetrics(opts.Registry, s)
	s.engine = s.routes()
	return s
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Matcher returns the current matcher (for the pipeline).
func (s *Server) Matcher() *kb.Matcher { return s.matcher.Load() }

// Reload rebuilds the matcher when the knowledge base changed since the
// current one was built (by this process or another), indexing writes
// other processes left pending.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	gen, err := s.kb.Generation(ctx)
	if err != nil {
		return err
	}
	if cur := s.matcher.Load(); cur != nil && cur.Generation() == gen {
		return nil
	}
	if _, err := s.kb.SyncPending(ctx); err != nil {
		return err
	}
	m, err := s.kb.Matcher(ctx, 0)
	if err != nil {
		return err
	}
	if s.em != nil {
		s.em.Seed(m.Signatures())
	}
	s.matcher.Store(m)
	s.log.Info("matcher loaded", "signatures", m.Len(), "generation", m.Generation())
	if s.web != nil {
		// Rebuild the pages' incident list now, so that no visitor waits
		// for it (0.8 s at 10,000 incidents).
		go func() {
			if _, err := s.catalog(context.WithoutCancel(ctx)); err != nil {
				s.log.Debug("warm incident list", "err", err)
			}
		}()
	}
	return nil
}

// RunReloader reloads the matcher every interval until ctx is done, so
// incidents ingested by another process (incidex ingest) take effect.
func (s *Server) RunReloader(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.Reload(ctx); err != nil && !errors.Is(err, context.Canceled) {
				s.log.Warn("reload matcher", "err", err)
			}
		}
	}
}

// Drain makes the webhook refuse new records (503) and readiness fail,
// ahead of shutdown.
func (s *Server) Drain() { s.draining.Store(true) }

// OnOccurrence publishes an occurrence change to live views; the
// occurrence store calls it after each flush.
func (s *Server) OnOccurrence(ev kb.OccurrenceEvent) { s.broker.publish(ev) }

// OnBatch records a processed batch in the metrics; the pipeline calls it.
func (s *Server) OnBatch(b ingest.BatchStats) {
	for f, c := range b.ByFormat {
		s.metrics.processed.WithLabelValues(string(f)).Add(float64(c[0]))
		s.metrics.matched.WithLabelValues(string(f)).Add(float64(c[1]))
	}
	s.metrics.batchSeconds.Observe(b.Duration.Seconds())
	if b.Records > 0 {
		s.metrics.lineSeconds.Observe(b.Duration.Seconds() / float64(b.Records))
	}
}

// OnUnmatched feeds records that matched nothing to the emerging-pattern
// miner; only lines at warning level or above count.
func (s *Server) OnUnmatched(_ context.Context, recs []ingest.Record) {
	if s.em == nil {
		return
	}
	var lines []kb.UnmatchedLine
	for _, r := range recs {
		if ingest.IsErrorRecord(r) {
			lines = append(lines, kb.UnmatchedLine{Time: r.Time, Message: r.Message, Labels: r.Labels})
		}
	}
	if len(lines) > 0 {
		s.em.Observe(lines)
	}
}
