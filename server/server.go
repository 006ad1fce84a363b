// Package server is incidex's HTTP side: the JSON API, the log-forwarder
// webhook in every native format, and the web pages. It is the only package
// that imports gin.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// Options configure a Server. Queue is required.
type Options struct {
	// Queue takes the webhook's records.
	Queue queue.Queue
	// KB, Matchers and Occurrences serve the API and the pages (the
	// knowledge-base writer). Without them the server is a webhook
	// receiver: ingest routes, health, metrics and the Elasticsearch probes.
	KB *kb.KB
	// Matchers holds the matcher the API and pages use (the runtime shares
	// it); the server reloads it after edits.
	Matchers    *ingest.Matchers
	Occurrences *kb.Occurrences
	// Emerging, when set, serves emerging patterns.
	Emerging *kb.Emerging
	// Tokens: IngestToken guards the webhook, AdminToken writes, ReadToken
	// (when set) reads. An empty token leaves its routes open.
	IngestToken, AdminToken, ReadToken string
	// Limits on webhook requests; zero values take ingest's defaults.
	Limits decode.Limits
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
	// PublicURL is where people reach the UI; a receiver (no KB) redirects
	// a browser's GET / there.
	PublicURL string
	// DeadLetters, when set, lists the newest dead letters of a distributed
	// queue and their total (the writer on JetStream).
	DeadLetters func(ctx context.Context, limit int) ([]queue.DeadLetter, uint64, error)
	// Ready, when set, is an extra readiness check for /readyz (a receiver:
	// NATS connected and the stream not full).
	Ready func() error
}

// Server holds the dependencies of the handlers.
type Server struct {
	opts    Options
	kb      *kb.KB
	queue   queue.Queue
	occ     *kb.Occurrences
	em      *kb.Emerging
	log     *slog.Logger
	engine  *gin.Engine
	metrics *metrics
	broker  *broker
	web     *web.Engine // nil: no pages
	cat     catalogCache

	matchers *ingest.Matchers
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
	s := &Server{opts: opts, kb: opts.KB, queue: opts.Queue, matchers: opts.Matchers, occ: opts.Occurrences, em: opts.Emerging,
		log: log.With("component", "server"), broker: newBroker(), web: opts.Web}
	if s.web != nil && s.matchers != nil {
		s.matchers.OnLoad(s.warmCatalog)
	}
	s.metrics = newMetrics(opts.Registry, s)
	s.engine = s.routes()
	return s
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Matcher returns the current matcher, nil when the server has none (a
// webhook-only receiver).
func (s *Server) Matcher() *kb.Matcher {
	if s.matchers == nil {
		return nil
	}
	return s.matchers.Matcher()
}

// Reload rebuilds the matcher after the knowledge base changed.
func (s *Server) Reload(ctx context.Context) error {
	if s.matchers == nil {
		return nil
	}
	return s.matchers.Reload(ctx)
}

// warmCatalog rebuilds the pages' incident list after a reload, so that no
// visitor waits for it (0.8 s at 10,000 incidents).
func (s *Server) warmCatalog(*kb.Matcher) {
	go func() {
		if _, err := s.catalog(context.Background()); err != nil {
			s.log.Debug("warm incident list", "err", err)
		}
	}()
}

// Drain makes the webhook refuse new records (503) and readiness fail,
// ahead of shutdown.
func (s *Server) Drain() { s.draining.Store(true) }

// OnOccurrence publishes an occurrence change to live views; the
// occurrence store calls it after each flush.
func (s *Server) OnOccurrence(ev kb.OccurrenceEvent) { s.broker.publish(ev) }
