package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
)

// Config is incidex's configuration: defaults, then INCIDEX_* environment
// variables, then flags.
type Config struct {
	DataDir     string
	NoStarter   bool
	LogLevel    string
	LogFormat   string
	Server      string // URL of a running incidex serve, for CLI commands
	Addr        string
	IngestToken string
	AdminToken  string
	ReadToken   string
	Insecure    bool
	// GenerateTokens makes serve generate missing ingest and admin tokens
	// into the data directory (the container image sets it).
	GenerateTokens bool
	QuietPeriod    time.Duration
	Retention      time.Duration
	QueueSize      int
	Workers        int
	NotifyURL      string
	SlackURL       string
	PublicURL      string
	Spool          string
	SpoolBytes     int64
	MaxBody        int64
	Color          string // auto, always or never
	// Role is what serve runs: all, or a comma-separated mix of receiver,
	// worker and writer (only with NATSURL).
	Role string
	// NATSURL, when set, runs serve on NATS JetStream instead of the local
	// spool (see docs/scale-out.md).
	NATSURL string
	// QueueBytes bounds the JetStream records stream.
	QueueBytes int64
	// AckWait is how long a records message taken by a worker stays
	// invisible to the others without a sign of progress.
	AckWait time.Duration
}

// DefaultConfig returns the defaults, before environment and flags.
func DefaultConfig() Config {
	return Config{
		DataDir:     defaultDataDir(),
		LogLevel:    "warn",
		LogFormat:   "auto",
		Addr:        "127.0.0.1:8080",
		QuietPeriod: 10 * time.Minute,
		Retention:   30 * 24 * time.Hour,
		QueueSize:   65536,
		Workers:     2,
		Spool:       "on",
		SpoolBytes:  1 << 30,
		MaxBody:     64 << 20,
		Color:       "auto",
		Role:        "all",
		QueueBytes:  1 << 30,
		AckWait:     30 * time.Second,
	}
}

// defaultDataDir is $XDG_DATA_HOME/incidex, else ~/.local/share/incidex,
// else ./incidex-data.
func defaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "incidex")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "share", "incidex")
	}
	return "incidex-data"
}

// fromEnv applies INCIDEX_* variables. Secrets may come from *_FILE.
func (c *Config) fromEnv(getenv func(string) string) error {
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	str("INCIDEX_DATA", &c.DataDir)
	str("INCIDEX_LOG_LEVEL", &c.LogLevel)
	str("INCIDEX_LOG_FORMAT", &c.LogFormat)
	str("INCIDEX_SERVER", &c.Server)
	str("INCIDEX_ADDR", &c.Addr)
	str("INCIDEX_NOTIFY_URL", &c.NotifyURL)
	str("INCIDEX_SLACK_URL", &c.SlackURL)
	str("INCIDEX_PUBLIC_URL", &c.PublicURL)
	str("INCIDEX_SPOOL", &c.Spool)
	str("INCIDEX_ROLE", &c.Role)
	str("INCIDEX_NATS_URL", &c.NATSURL)
	var errs []error
	if v := getenv("INCIDEX_QUEUE_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("INCIDEX_QUEUE_BYTES=%q: want a positive number of bytes", v))
		} else {
			c.QueueBytes = n
		}
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"INCIDEX_INGEST_TOKEN", &c.IngestToken}, {"INCIDEX_ADMIN_TOKEN", &c.AdminToken}, {"INCIDEX_READ_TOKEN", &c.ReadToken}} {
		str(s.name, s.dst)
		if f := getenv(s.name + "_FILE"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s_FILE: %w", s.name, err))
				continue
			}
			*s.dst = strings.TrimSpace(string(b))
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"INCIDEX_NO_STARTER", &c.NoStarter}, {"INCIDEX_INSECURE", &c.Insecure}, {"INCIDEX_GENERATE_TOKENS", &c.GenerateTokens}} {
		if v := getenv(b.name); v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: want true or false", b.name, v))
				continue
			}
			*b.dst = x
		}
	}
	return errors.Join(errs...)
}

// common registers the flags every command that opens the knowledge base has.
func (c *Config) common(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory (env INCIDEX_DATA)")
	fs.BoolVar(&c.NoStarter, "no-starter", c.NoStarter, "create a new data directory without the starter knowledge base (env INCIDEX_NO_STARTER=1)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn, error (env INCIDEX_LOG_LEVEL)")
	fs.StringVar(&c.Color, "color", c.Color, "bold and colour: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always or never")
}

// Validate checks the configuration once, at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data directory is empty"))
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log format %q: want auto, text or json", c.LogFormat))
	}
	switch c.Color {
	case "auto", "always", "never":
	default:
		errs = append(errs, fmt.Errorf("--color %q: want auto, always or never", c.Color))
	}
	switch c.Spool {
	case "on", "off":
	default:
		errs = append(errs, fmt.Errorf("spool %q: want on or off", c.Spool))
	}
	if c.QueueSize <= 0 {
		errs = append(errs, fmt.Errorf("queue size %d: must be positive", c.QueueSize))
	}
	if c.Workers <= 0 {
		errs = append(errs, fmt.Errorf("workers %d: must be positive", c.Workers))
	}
	if c.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("--ack-wait %s: must be at least 1s", c.AckWait))
	}
	if c.QueueBytes <= 0 {
		errs = append(errs, fmt.Errorf("--queue-bytes %d: must be positive", c.QueueBytes))
	}
	roles, err := parseRoles(c.Role)
	switch {
	case err != nil:
		errs = append(errs, err)
	case c.NATSURL == "" && roles != roleAll:
		errs = append(errs, fmt.Errorf("--role=%s needs --nats (env INCIDEX_NATS_URL): without NATS, serve runs every role in one process", c.Role))
	}
	return errors.Join(errs...)
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// loadConfig returns defaults overridden by the environment; flags come after.
func loadConfig(e *env) (Config, error) {
	c := DefaultConfig()
	err := c.fromEnv(e.getenv)
	return c, err
}

// logger builds the slog handler: text on a terminal, JSON otherwise.
func (c *Config) logger(e *env) *slog.Logger {
	lvl, _ := parseLevel(c.LogLevel)
	opts := &slog.HandlerOptions{Level: lvl}
	format := c.LogFormat
	if format == "auto" {
		format = "json"
		if f, ok := e.stderr.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(e.stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(e.stderr, opts))
}

// colorOn reports whether output to w gets bold and colour: --color=always
// or never decide; auto means w is a terminal, NO_COLOR is unset (see
// no-color.org) and TERM is not dumb.
func (c *Config) colorOn(e *env, w io.Writer) bool {
	switch c.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one too).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// redacted returns the config with secrets replaced, for printing.
func (c Config) redacted() Config {
	for _, p := range []*string{&c.IngestToken, &c.AdminToken, &c.ReadToken} {
		if *p != "" {
			*p = "(set)"
		}
	}
	c.NATSURL = redactURL(c.NATSURL)
	return c
}

// configField is one setting as incidex config prints it.
type configField struct {
	Key   string
	Value any
}

// configFields is the config in field order, durations as durations
// ("10m0s", not nanoseconds).
type configFields []configField

func (c Config) fields() configFields {
	v := reflect.ValueOf(c)
	out := make(configFields, 0, v.NumField())
	for i := range v.NumField() {
		val := v.Field(i).Interface()
		if d, ok := val.(time.Duration); ok {
			val = d.String()
		}
		out = append(out, configField{Key: v.Type().Field(i).Name, Value: val})
	}
	return out
}

// MarshalJSON writes the fields as one object, in order.
func (fs configFields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// roles is a set of serve roles.
type roles uint8

const (
	roleReceiver roles = 1 << iota
	roleWorker
	roleWriter
	roleAll = roleReceiver | roleWorker | roleWriter
)

// parseRoles reads --role: all, or a comma-separated mix of receiver,
// worker and writer.
func parseRoles(s string) (roles, error) {
	var r roles
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(strings.ToLower(name)) {
		case "all":
			r |= roleAll
		case "receiver":
			r |= roleReceiver
		case "worker":
			r |= roleWorker
		case "writer":
			r |= roleWriter
		default:
			return 0, fmt.Errorf("--role %q: want all, or a comma-separated mix of receiver, worker and writer", s)
		}
	}
	return r, nil
}

func (r roles) has(x roles) bool { return r&x != 0 }

// redactURL hides the user and password (or token) of a URL, or of each
// URL of a comma-separated list (NATS servers).
func redactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("redacted")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
