package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/incidex/incidex/kb"
)

// NotifierOptions configure outbound notifications.
type NotifierOptions struct {
	// WebhookURL receives a generic JSON payload; SlackURL a Slack
	// incoming-webhook message. Either may be empty.
	WebhookURL, SlackURL string
	// PublicURL is this server's address as people reach it, for links.
	PublicURL string
	// Incident looks up what a notification says about an incident.
	Incident func(id string) *kb.IncidentRef
	// Attempts per message (default 5), with backoff from 1s doubling.
	Attempts int
	Client   *http.Client
	Logger   *slog.Logger
}

// Notifier sends a notification when an occurrence opens. Sending never
// blocks matching: events wait in a bounded buffer and are dropped (and
// counted) when it is full.
type Notifier struct {
	opts    NotifierOptions
	ch      chan kb.OccurrenceEvent
	log     *slog.Logger
	sent    atomic.Int64
	failed  atomic.Int64
	dropped atomic.Int64
}

// NewNotifier returns a notifier; Run sends.
func NewNotifier(opts NotifierOptions) *Notifier {
	if opts.Attempts <= 0 {
		opts.Attempts = 5
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{opts: opts, ch: make(chan kb.OccurrenceEvent, 1024), log: log.With("component", "notifier")}
}

// Enabled reports whether any destination is configured.
func (n *Notifier) Enabled() bool { return n.opts.WebhookURL != "" || n.opts.SlackURL != "" }

// Notify queues an event; only "opened" events are sent.
func (n *Notifier) Notify(ev kb.OccurrenceEvent) {
	if ev.Type != "opened" || !n.Enabled() {
		return
	}
	select {
	case n.ch <- ev:
	default:
		n.dropped.Add(1)
	}
}

// Run sends queued notifications until ctx is done.
func (n *Notifier) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-n.ch:
			n.send(ctx, ev)
		}
	}
}

// Payload is the generic webhook body.
type Payload struct {
	Event      string          `json:"event"`
	Incident   *kb.IncidentRef `json:"incident"`
	Occurrence kb.Occurrence   `json:"occurrence"`
	URL        string          `json:"url,omitempty"`
}

func (n *Notifier) send(ctx context.Context, ev kb.OccurrenceEvent) {
	inc := n.opts.Incident(ev.Occurrence.IncidentID)
	if inc == nil {
		inc = &kb.IncidentRef{ID: ev.Occurrence.IncidentID, Title: ev.Occurrence.IncidentID}
	}
	url := ""
	if n.opts.PublicURL != "" {
		url = strings.TrimRight(n.opts.PublicURL, "/") + "/incidents/" + inc.ID
	}
	if n.opts.WebhookURL != "" {
		n.post(ctx, n.opts.WebhookURL, Payload{Event: "occurrence.opened", Incident: inc, Occurrence: ev.Occurrence, URL: url})
	}
	if n.opts.SlackURL != "" {
		n.post(ctx, n.opts.SlackURL, slackMessage(inc, ev.Occurrence, url))
	}
}

func slackMessage(inc *kb.IncidentRef, o kb.Occurrence, url string) map[string]any {
	var labels []string
	for _, k := range []string{"cluster", "namespace", "pod", "container", "node"} {
		if v := o.Labels[k]; v != "" {
			labels = append(labels, k+"="+v)
		}
	}
	cause := inc.RootCause
	if inc.CauseStatus == kb.CauseUnknown {
		cause = "root cause not stated in the write-up"
	}
	title := inc.Title
	if url != "" {
		title = "<" + url + "|" + inc.Title + ">"
	}
	text := fmt.Sprintf("*Known incident seen:* %s\n*Where:* %s (%d so far)\n*Root cause:* %s", title, strings.Join(labels, " "), o.Count, clipText(cause, 400))
	return map[string]any{"text": text}
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// post sends body as JSON with retries: network errors, 429 and 5xx are
// retried with backoff, other statuses are final.
func (n *Notifier) post(ctx context.Context, url string, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		n.failed.Add(1)
		return
	}
	wait := time.Second
	for attempt := 1; attempt <= n.opts.Attempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		if err != nil {
			n.failed.Add(1)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := n.opts.Client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				n.sent.Add(1)
				return
			}
			if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
				break
			}
		}
		if attempt == n.opts.Attempts {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
	n.failed.Add(1)
	n.log.Warn("notification not delivered", "url_host", hostOf(url), "attempts", n.opts.Attempts)
}

func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	if i := strings.IndexByte(u, '/'); i >= 0 {
		u = u[:i]
	}
	return u
}

// Stats returns notifications sent, failed and dropped.
func (n *Notifier) Stats() (sent, failed, dropped int64) {
	return n.sent.Load(), n.failed.Load(), n.dropped.Load()
}
