package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/server"
	"github.com/incidex/incidex/web"
)

// The occurrence store is the runtime's sink, the miner its unmatched sink.
var (
	_ ingest.Sink      = (*kb.Occurrences)(nil)
	_ ingest.Unmatched = (*kb.Emerging)(nil)
)

func runServe(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "serve", "")
	cfg.common(fs)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address host:port (env INCIDEX_ADDR)")
	fs.StringVar(&cfg.IngestToken, "ingest-token", cfg.IngestToken, "token for the webhook (env INCIDEX_INGEST_TOKEN, or INCIDEX_INGEST_TOKEN_FILE)")
	fs.StringVar(&cfg.AdminToken, "admin-token", cfg.AdminToken, "token for writes (env INCIDEX_ADMIN_TOKEN, or _FILE)")
	fs.StringVar(&cfg.ReadToken, "read-token", cfg.ReadToken, "token for reads; empty leaves reads open (env INCIDEX_READ_TOKEN, or _FILE)")
	fs.BoolVar(&cfg.GenerateTokens, "generate-tokens", cfg.GenerateTokens, "without --ingest-token or --admin-token, use tokens generated into the data directory at the first start, where they are printed once (env INCIDEX_GENERATE_TOKENS; the container image sets it)")
	fs.BoolVar(&cfg.Insecure, "insecure", cfg.Insecure, "allow a non-loopback address without ingest and admin tokens (env INCIDEX_INSECURE)")
	fs.DurationVar(&cfg.QuietPeriod, "quiet-period", cfg.QuietPeriod, "an occurrence closes after this long without matches")
	fs.DurationVar(&cfg.Retention, "retention", cfg.Retention, "closed occurrences are deleted after this long")
	fs.IntVar(&cfg.QueueSize, "queue-size", cfg.QueueSize, "records the queue holds before the webhook answers 503")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "matcher goroutines")
	fs.StringVar(&cfg.NotifyURL, "notify-url", cfg.NotifyURL, "POST a JSON notification here when an occurrence opens (env INCIDEX_NOTIFY_URL)")
	fs.StringVar(&cfg.SlackURL, "slack-url", cfg.SlackURL, "Slack incoming-webhook URL for notifications (env INCIDEX_SLACK_URL)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "this server's URL as people reach it, for links (env INCIDEX_PUBLIC_URL)")
	fs.Int64Var(&cfg.MaxBody, "max-body", cfg.MaxBody, "largest decompressed webhook body in bytes")
	fs.StringVar(&cfg.Spool, "spool", cfg.Spool, "on: accepted records are fsynced to a spool before the 2xx; off: in memory (env INCIDEX_SPOOL)")
	fs.Int64Var(&cfg.SpoolBytes, "spool-bytes", cfg.SpoolBytes, "spool size limit; past it the webhook answers 503")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "auto, text or json (env INCIDEX_LOG_FORMAT)")
	fs.StringVar(&cfg.Role, "role", cfg.Role, "with --nats: all, or a comma-separated mix of receiver, worker and writer (env INCIDEX_ROLE)")
	fs.StringVar(&cfg.NATSURL, "nats", cfg.NATSURL, "NATS server URL(s): run on JetStream instead of the local spool; see docs/scale-out.md (env INCIDEX_NATS_URL)")
	fs.DurationVar(&cfg.AckWait, "ack-wait", cfg.AckWait, "with --nats: a records message a worker took comes back to the others after this long without progress (set the same on every role)")
	fs.Int64Var(&cfg.QueueBytes, "queue-bytes", cfg.QueueBytes, "with --nats: size limit of the records stream; past it receivers answer 503 (env INCIDEX_QUEUE_BYTES)")
	if cfg.LogLevel == "warn" && e.getenv("INCIDEX_LOG_LEVEL") == "" {
		cfg.LogLevel = "info"
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("serve takes no arguments (got %q)", fs.Arg(0))
	}
	if err := cfg.Validate(); err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	r, _ := parseRoles(cfg.Role) // checked by Validate
	addrSet := e.getenv("INCIDEX_ADDR") != ""
	fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
	if r.has(roleWriter) {
		if err := fillTokens(e, &cfg); err != nil {
			return err
		}
	}
	if r.has(roleReceiver|roleWriter) || addrSet {
		if err := checkExposure(cfg); err != nil {
			return &exitErr{code: exitUsage, err: err}
		}
	}
	if cfg.NATSURL != "" {
		return serveScaled(ctx, e, &cfg, r, addrSet)
	}
	return serve(ctx, e, &cfg)
}

// checkExposure refuses a non-loopback address without ingest and admin
// tokens, unless the operator says --insecure.
func checkExposure(cfg Config) error {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if cfg.Insecure || (cfg.IngestToken != "" && cfg.AdminToken != "") {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without --ingest-token and --admin-token: anyone who reaches it could post logs and change the knowledge base (pass --insecure to do it anyway)", cfg.Addr)
}

func serve(ctx context.Context, e *env, cfg *Config) error {
	log := cfg.logger(e)
	k, err := openKB(ctx, e, cfg, indexRequired)
	if err != nil {
		return err
	}
	defer k.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	q, err := openQueue(ctx, k, cfg, reg, log)
	if err != nil {
		return err
	}
	var srv *server.Server
	var notifier *server.Notifier
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{
		QuietPeriod: cfg.QuietPeriod, Retention: cfg.Retention, Logger: log,
		OnEvent: func(ev kb.OccurrenceEvent) { srv.OnOccurrence(ev); notifier.Notify(ev) },
	})
	if err != nil {
		return err
	}
	em, err := k.Emerging(ctx, kb.EmergingOptions{Logger: log})
	if err != nil {
		return err
	}
	pages, err := web.New()
	if err != nil {
		return fmt.Errorf("BUG: web templates: %w", err)
	}
	matchers := ingest.NewMatchers(ingest.MatchersOptions{KB: k, Emerging: em, Logger: log})
	srv = server.New(server.Options{
		KB: k, Queue: q, Matchers: matchers, Occurrences: occ, Emerging: em, IngestToken: cfg.IngestToken, AdminToken: cfg.AdminToken, ReadToken: cfg.ReadToken,
		Limits: decode.Limits{MaxBodyBytes: cfg.MaxBody}, Registry: reg, Logger: log, Web: pages,
	})
	notifier = server.NewNotifier(server.NotifierOptions{WebhookURL: cfg.NotifyURL, SlackURL: cfg.SlackURL, PublicURL: cfg.PublicURL,
		Incident: func(id string) *kb.IncidentRef { return matchers.Matcher().Incident(id) }, Logger: log})
	if err := matchers.Reload(ctx); err != nil {
		return err
	}
	rt := ingest.New(ingest.Options{Queue: q, Matchers: matchers, Sink: occ, Unmatched: em,
		Workers: cfg.Workers, Registry: reg, Logger: log})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	hs := newHTTPServer(srv.Handler(), log)
	url := "http://" + ln.Addr().String()
	removeInfo := writeServeInfo(cfg.DataDir, url)
	defer removeInfo()
	log.Info("incidex serving", "addr", ln.Addr().String(), "data", cfg.DataDir, "signatures", matchers.Matcher().Len(), "version", version)
	fmt.Fprintf(e.stderr, "incidex: serving on %s (data %s)\n", url, cfg.DataDir)

	// Background loops; each stops when its context is cancelled. The
	// runtime (matching, and reloading the matcher) runs until the queue is
	// closed and drained.
	pipeCtx, stopPipe := context.WithCancel(context.WithoutCancel(ctx))
	bgCtx, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	errc := make(chan error, 5)
	run := func(name string, c context.Context, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(c); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	var pipeDone sync.WaitGroup
	pipeDone.Go(func() {
		if err := rt.Run(pipeCtx); err != nil {
			errc <- fmt.Errorf("runtime: %w", err)
		}
	})
	run("occurrences", bgCtx, occ.Run)
	run("emerging", bgCtx, em.Run)
	run("notifier", bgCtx, notifier.Run)
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: draining")
	case runErr = <-errc:
		log.Error("shutting down after an error", "err", runErr)
	}
	// Stop taking records, let in-flight requests finish (their records are
	// queued), then match everything queued, then flush occurrences.
	srv.Drain()
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	_ = q.Close()
	pipeDone.Wait()
	stopPipe()
	stopBG()
	wg.Wait()
	log.Info("stopped", "queued", q.Len())
	return runErr
}

// newHTTPServer is the HTTP server of every serve role: timeouts that a
// slow or stuck client cannot hold a connection past.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
}

// openQueue opens the durable spool (resuming after the last checkpoint
// the occurrences include) or, with --spool=off, an in-memory queue, and
// registers its metrics.
func openQueue(ctx context.Context, k *kb.KB, cfg *Config, reg prometheus.Registerer, log *slog.Logger) (queue.Queue, error) {
	if cfg.Spool == "off" {
		q := queue.NewMemQueue(cfg.QueueSize)
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_queue_capacity", Help: "Queue capacity in records."}, func() float64 { return float64(q.Cap()) }))
		return q, nil
	}
	ckpt, err := k.QueueCheckpoint(ctx)
	if err != nil {
		return nil, err
	}
	sp, err := queue.OpenSpool(filepath.Join(cfg.DataDir, "spool"), ckpt, queue.SpoolOptions{MaxBytes: cfg.SpoolBytes})
	if err != nil {
		return nil, err
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_spool_bytes", Help: "Bytes in the durable spool."}, func() float64 { return float64(sp.Bytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_spool_max_bytes", Help: "The spool's size limit; past it the webhook answers 503."}, func() float64 { return float64(sp.MaxBytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_spool_fsyncs_total", Help: "fsyncs of the spool (one per group commit)."}, func() float64 { return float64(sp.Syncs()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_spool_corrupt_entries", Help: "Damaged spool entries cut at the last start."}, func() float64 { return float64(sp.CorruptEntries) }),
	)
	if sp.CorruptEntries > 0 {
		log.Warn("spool: damaged tail cut (unacknowledged writes of a crash)", "entries", sp.CorruptEntries, "bytes", sp.CorruptBytes)
	}
	if n := sp.Len(); n > 0 {
		log.Info("spool: resuming", "records", n, "checkpoint", ckpt)
	}
	return sp, nil
}

// writeServeInfo records the server's URL in the data directory so CLI
// commands on the same directory can use its API; the returned function
// removes it.
func writeServeInfo(dir, url string) func() {
	p := filepath.Join(dir, serveInfoFile)
	b, _ := json.Marshal(serveInfo{URL: url, PID: os.Getpid()})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(p) }
}

// runHealthcheck checks a running server's /healthz (the Docker
// HEALTHCHECK: the image has no curl).
func runHealthcheck(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "healthcheck", "")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address of the server (env INCIDEX_ADDR)")
	if err := parse(fs, args); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return usageErr("--addr %q: %v", cfg.Addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return &exitErr{code: exitNone, err: fmt.Errorf("not healthy: %w", err)}
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &exitErr{code: exitNone, err: fmt.Errorf("not healthy: HTTP %d", resp.StatusCode)}
	}
	fmt.Fprintln(e.stdout, "ok")
	return nil
}
