package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/cluster"
	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/server"
	"github.com/incidex/incidex/web"
)

// The scaled-out worker publishes results; the writer's occurrence store
// and miner apply them.
var (
	_ ingest.Sink      = (*cluster.Publisher)(nil)
	_ ingest.Unmatched = cluster.UnmatchedCollector{}
)

// scaled is one process of the scaled-out topology: some of the receiver,
// worker and writer roles on NATS JetStream.
type scaled struct {
	e     *env
	cfg   *Config
	roles roles
	// addrSet: --addr or INCIDEX_ADDR was given (a worker then serves
	// /metrics there).
	addrSet bool
	log     *slog.Logger
	reg     *prometheus.Registry
	nc      *nats.Conn
	js      jetstream.JetStream
	q       *queue.JetStream
	pub     *cluster.Publisher
	// http listens from the start (see listenEarly); nil for a worker
	// without --addr.
	http *earlyHTTP

	// The writer's parts (nil without the writer role).
	k        *kb.KB
	occ      *kb.Occurrences
	em       *kb.Emerging
	matchers *ingest.Matchers
}

// serveScaled runs the roles of cfg on the NATS server at cfg.NATSURL.
func serveScaled(ctx context.Context, e *env, cfg *Config, r roles, addrSet bool) error {
	s := &scaled{e: e, cfg: cfg, roles: r, addrSet: addrSet, log: cfg.logger(e).With("role", cfg.Role), reg: prometheus.NewRegistry()}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if r.has(roleReceiver|roleWriter) || addrSet {
		h, err := listenEarly(cfg.Addr, s.reg, s.log)
		if err != nil {
			return err
		}
		defer h.close()
		s.http = h
		fmt.Fprintf(e.stderr, "incidex: listening on %s, waiting for NATS %s\n", h.url, redactURL(cfg.NATSURL))
	}
	if err := s.connect(ctx); err != nil {
		return err
	}
	defer s.nc.Close()
	var err error
	s.q, err = queue.OpenJetStream(ctx, s.nc, queue.JetStreamOptions{MaxBytes: cfg.QueueBytes, AckWait: cfg.AckWait, Logger: s.log, Registry: s.reg,
		OnDead: func(ctx context.Context, seq uint64, reason string) {
			if s.pub == nil {
				return // a receiver never dequeues nor buries
			}
			if err := s.pub.Tombstone(ctx, seq, reason); err != nil {
				s.log.Warn("tombstone for a dead letter", "seq", seq, "err", err)
			}
		}})
	if err != nil {
		return err
	}
	// Workers publish results, and the writer tombstones for the dead letters
	// it finds; a receiver publishes none. Results name the records stream
	// they are of (its epoch).
	if r.has(roleWorker | roleWriter) {
		if s.pub, err = cluster.NewPublisher(s.js, cluster.PublisherOptions{Epoch: s.q.Epoch(), Logger: s.log}); err != nil {
			return err
		}
	}
	if r.has(roleWriter) {
		k, err := openKB(ctx, e, cfg, indexRequired)
		if err != nil {
			return err
		}
		defer k.Close()
		s.k = k
	}
	return s.run(ctx)
}

// connect dials NATS, waiting for it while it is not up yet (pods start in
// any order). Publishing must fail fast while NATS is away, so nothing is
// buffered across a reconnect.
func (s *scaled) connect(ctx context.Context) error {
	opts := []nats.Option{nats.Name("incidex " + s.cfg.Role), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond), nats.Timeout(5 * time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { s.log.Warn("NATS disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { s.log.Info("NATS reconnected", "server", c.ConnectedUrlRedacted()) })}
	for {
		nc, err := nats.Connect(s.cfg.NATSURL, opts...)
		if err == nil {
			s.nc = nc
			s.js, err = jetstream.New(nc)
			return err
		}
		s.log.Warn("NATS not reachable yet", "url", redactURL(s.cfg.NATSURL), "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("connect to NATS %s: %w", redactURL(s.cfg.NATSURL), err)
		case <-time.After(time.Second):
		}
	}
}

// run starts the roles' loops and serves until ctx is done, then drains:
// the webhook refuses, the queue closes, the worker finishes what it took,
// the writer flushes.
func (s *scaled) run(ctx context.Context) error {
	bgCtx, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	goRun := func(name string, c context.Context, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(c); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}

	var srv *server.Server
	var notifier *server.Notifier
	if s.roles.has(roleWriter) {
		if err := s.startWriter(ctx, bgCtx, goRun, &srv, &notifier); err != nil {
			return err
		}
	}

	// The worker: snapshots in (unless the writer is in this process), results out.
	var workerDone sync.WaitGroup
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	if s.roles.has(roleWorker) {
		matchers := s.matchers
		if matchers == nil {
			matchers = ingest.NewMatchers(ingest.MatchersOptions{Logger: s.log})
			goRun("snapshots", bgCtx, func(c context.Context) error { return cluster.WatchSnapshots(c, s.js, matchers, s.log) })
			s.log.Info("waiting for the writer's first signature snapshot")
			if err := cluster.WaitMatcher(ctx, matchers); err != nil {
				return fmt.Errorf("no signature snapshot from the writer: %w", err)
			}
		}
		rt := ingest.New(ingest.Options{Queue: s.q, Matchers: matchers, Sink: s.pub, Unmatched: s.pub.Unmatched(),
			Workers: s.cfg.Workers, Registry: s.reg, Logger: s.log})
		workerDone.Go(func() {
			if err := rt.Run(workCtx); err != nil {
				errc <- fmt.Errorf("worker: %w", err)
			}
		})
	}

	// HTTP: the receiver's webhook, the writer's UI and API, or a worker's
	// /metrics when --addr was given.
	var hs *http.Server
	if s.roles.has(roleReceiver|roleWriter) || s.addrSet {
		var h http.Handler
		if s.roles.has(roleReceiver | roleWriter) {
			opts := server.Options{IngestToken: s.cfg.IngestToken, AdminToken: s.cfg.AdminToken, ReadToken: s.cfg.ReadToken,
				Limits: decode.Limits{MaxBodyBytes: s.cfg.MaxBody}, Registry: s.reg, Logger: s.log, PublicURL: s.cfg.PublicURL}
			if s.roles.has(roleReceiver) {
				opts.Queue, opts.Ready = s.q, s.q.Ready
			}
			if s.roles.has(roleWriter) {
				pages, err := web.New()
				if err != nil {
					return fmt.Errorf("BUG: web templates: %w", err)
				}
				opts.KB, opts.Matchers, opts.Occurrences, opts.Emerging, opts.Web = s.k, s.matchers, s.occ, s.em, pages
				opts.DeadLetters = s.q.DeadLetters
			}
			srv = server.New(opts)
			h = srv.Handler()
		} else {
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
			mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"status":"ok"}`)) })
			h = mux
		}
		hs = s.http.serve(h)
		url := s.http.url
		if s.roles.has(roleWriter) {
			defer writeServeInfo(s.cfg.DataDir, url)()
		}
		fmt.Fprintf(s.e.stderr, "incidex: serving on %s (role %s, NATS %s)\n", url, s.cfg.Role, redactURL(s.cfg.NATSURL))
	} else {
		fmt.Fprintf(s.e.stderr, "incidex: worker running (NATS %s)\n", redactURL(s.cfg.NATSURL))
	}
	if notifier != nil {
		goRun("notifier", bgCtx, notifier.Run)
	}
	s.log.Info("incidex running", "version", version)

	var runErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down: draining")
	case runErr = <-errc:
		s.log.Error("shutting down after an error", "err", runErr)
	}
	if srv != nil {
		srv.Drain()
	}
	if hs != nil {
		shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := hs.Shutdown(shutCtx); err != nil {
			s.log.Warn("http shutdown", "err", err)
		}
		cancel()
	}
	// The worker finishes the batches it took (their results are published
	// and acknowledged); what it had not taken stays in the stream.
	_ = s.q.Close()
	waitOr(&workerDone, 30*time.Second)
	stopWork()
	stopBG()
	wg.Wait()
	return runErr
}

// startWriter opens the writer's parts: occurrences, miner, matcher, the
// results applier, snapshot publishing and the dead-letter handler.
func (s *scaled) startWriter(ctx, bgCtx context.Context, goRun func(string, context.Context, func(context.Context) error), srv **server.Server, notifier **server.Notifier) error {
	var err error
	s.occ, err = s.k.Occurrences(ctx, kb.OccurrenceOptions{QuietPeriod: s.cfg.QuietPeriod, Retention: s.cfg.Retention, Logger: s.log,
		OnEvent: func(ev kb.OccurrenceEvent) {
			if *srv != nil {
				(*srv).OnOccurrence(ev)
			}
			(*notifier).Notify(ev)
		}})
	if err != nil {
		return err
	}
	if s.em, err = s.k.Emerging(ctx, kb.EmergingOptions{Logger: s.log}); err != nil {
		return err
	}
	s.matchers = ingest.NewMatchers(ingest.MatchersOptions{KB: s.k, Emerging: s.em, Logger: s.log})
	if err := s.matchers.Reload(ctx); err != nil {
		return err
	}
	*notifier = server.NewNotifier(server.NotifierOptions{WebhookURL: s.cfg.NotifyURL, SlackURL: s.cfg.SlackURL, PublicURL: s.cfg.PublicURL,
		Incident: func(id string) *kb.IncidentRef { return s.matchers.Matcher().Incident(id) }, Logger: s.log})
	applier, err := cluster.NewApplier(s.js, s.k, s.occ, s.em, cluster.ApplierOptions{Registry: s.reg, Logger: s.log,
		NoAppliedSet: s.e.getenv("INCIDEX_TEST_NO_APPLIED_SET") == "1"})
	if err != nil {
		return err
	}
	goRun("occurrences", bgCtx, s.occ.Run)
	goRun("emerging", bgCtx, s.em.Run)
	goRun("matcher reload", bgCtx, s.matchers.Run)
	goRun("results", bgCtx, applier.Run)
	goRun("snapshots", bgCtx, func(c context.Context) error { return cluster.PublishSnapshots(c, s.js, s.matchers, s.log) })
	goRun("dead letters", bgCtx, s.q.HandleDeadLetters)
	return nil
}

// waitOr waits for wg, or gives up after d.
func waitOr(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// earlyHTTP is the HTTP listener of a scaled-out process, opened before
// NATS is reached: pods start in any order, and until NATS answers the
// process is alive (/healthz 200) but not ready. /readyz, the webhook and
// every other route answer 503 with Retry-After, which forwarders retry,
// rather than a refused connection. Once the roles are set up, serve puts
// their handler in place on the same listener.
type earlyHTTP struct {
	ln  net.Listener
	hs  *http.Server
	url string
	h   atomic.Pointer[http.Handler]
}

func listenEarly(addr string, reg *prometheus.Registry, log *slog.Logger) (*earlyHTTP, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	e := &earlyHTTP{ln: ln, url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","nats":"connecting"}`))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"not ready: waiting for NATS"}` + "\n"))
	})
	var waiting http.Handler = mux
	e.h.Store(&waiting)
	e.hs = newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*e.h.Load()).ServeHTTP(w, r) }), log)
	go func() {
		if err := e.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http", "err", err)
		}
	}()
	return e, nil
}

// serve puts h in place of the waiting handler and returns the server
// (the caller shuts it down).
func (e *earlyHTTP) serve(h http.Handler) *http.Server {
	e.h.Store(&h)
	return e.hs
}

// close stops the listener if the process ends before serve (NATS never
// came, a bad data directory); after serve, the caller's Shutdown has
// closed it already and this does nothing.
func (e *earlyHTTP) close() { _ = e.hs.Close() }
