package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
)

// handleIngestFormat serves POST /ingest/v1/{format}.
func (s *Server) handleIngestFormat(c *gin.Context) {
	s.handleIngest(c.Param("format"))(c)
}

// handleIngest is the webhook: token and size checks are middleware; here
// the body is read within its limit, decoded, and the queue takes all its
// records or none. The answer is the one the sender expects (decode.Reply).
func (s *Server) handleIngest(format string) gin.HandlerFunc {
	f, ferr := decode.ParseFormat(format)
	return func(c *gin.Context) {
		if ferr != nil {
			s.writeError(c, ferr)
			return
		}
		if s.draining.Load() {
			s.metrics.unavailable.WithLabelValues("draining").Inc()
			s.writeError(c, errDraining)
			return
		}
		res, key, err := s.decodeRequest(c, f)
		if err != nil {
			s.metrics.rejectedRequests.WithLabelValues(string(f)).Inc()
			s.writeError(c, err)
			return
		}
		if len(res.Records) > 0 {
			ctx := c.Request.Context()
			if key != "" {
				ctx = queue.WithKey(ctx, key)
			}
			if err := s.queue.Enqueue(ctx, res.Records); err != nil {
				s.metrics.refused.WithLabelValues(string(res.Format)).Add(float64(len(res.Records)))
				s.metrics.unavailable.WithLabelValues(refusalCause(err)).Inc()
				s.writeError(c, err)
				return
			}
		}
		s.metrics.received.WithLabelValues(string(res.Format)).Add(float64(len(res.Records)))
		s.metrics.rejected.WithLabelValues(string(res.Format)).Add(float64(res.Rejected))
		if res.Rejected > 0 {
			s.log.Warn("malformed records skipped", "format", res.Format, "rejected", res.Rejected, "first", firstOr(res.Errors), "request_id", c.GetString(ctxRequestID))
		}
		rep := res.Reply(c.GetHeader("Content-Type"))
		for k, v := range rep.Header {
			c.Header(k, v)
		}
		if rep.ContentType == "" && len(rep.Body) == 0 {
			c.Status(rep.Status)
			return
		}
		c.Data(rep.Status, rep.ContentType, rep.Body)
	}
}

// decodeRequest reads the body within the compressed-size limit and hands
// it to the decoders.
func (s *Server) decodeRequest(c *gin.Context, f decode.Format) (decode.Result, string, error) {
	r := c.Request
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxCompressedBytes+1))
	if err != nil {
		return decode.Result{}, "", fmt.Errorf("read body: %w", errBadRequest)
	}
	if int64(len(body)) > s.opts.MaxCompressedBytes {
		return decode.Result{}, "", fmt.Errorf("body is over the %d-byte limit: %w", s.opts.MaxCompressedBytes, decode.ErrTooLarge)
	}
	now := s.opts.Now().UTC()
	res, err := decode.Receive(decode.Request{
		Format: f, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), ContentEncoding: r.Header.Get("Content-Encoding"),
		UserAgent: r.UserAgent(), Tag: r.Header.Get("X-Fluent-Tag"), Body: body, Now: now,
	}, s.opts.Limits)
	if err != nil || !dedupes(s.queue) {
		return res, "", err
	}
	return res, requestKey(f, res, now), nil
}

// dedupes reports whether q drops a repeated request key (JetStream does).
func dedupes(q queue.Queue) bool {
	d, ok := q.(interface{ Dedupes() bool })
	return ok && d.Dedupes()
}

// requestKey is the idempotency key of a request (queue.WithKey): a hash of
// the route's format and the decompressed body, so a sender's retry of the
// same body is recognised. Only when every record carries its own time: a
// body without times (plain text, say) can legitimately be sent twice.
func requestKey(f decode.Format, res decode.Result, received time.Time) string {
	for _, r := range res.Records {
		if r.Time.Equal(received) { // the decoder's default: the body gave none
			return ""
		}
	}
	h := sha256.New()
	h.Write([]byte(f))
	h.Write([]byte{0})
	h.Write(res.Body)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// refusalCause names why the queue refused a request, for the 503 metric.
func refusalCause(err error) string {
	switch {
	case errors.Is(err, queue.ErrFull):
		return "queue_full"
	case errors.Is(err, queue.ErrClosed):
		return "draining"
	case errors.Is(err, queue.ErrUnavailable):
		return "queue_unavailable"
	}
	return "error"
}

func firstOr(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return errs[0]
}

// Elasticsearch compatibility probes: shippers that speak the bulk API
// (Fluent Bit, Vector, Logstash, Filebeat) first check that a cluster
// answers GET / with a version, HEAD /, _nodes and _cluster/health.

func (s *Server) handleESHead(c *gin.Context) {
	c.Header("X-Elastic-Product", "Elasticsearch")
	c.Status(http.StatusOK)
}

func (s *Server) esInfo(c *gin.Context) {
	c.Header("X-Elastic-Product", "Elasticsearch")
	c.JSON(http.StatusOK, gin.H{
		"name": "incidex", "cluster_name": "incidex", "cluster_uuid": "incidex",
		"version": gin.H{"number": "8.11.0", "build_flavor": "default", "lucene_version": "9.8.0",
			"minimum_wire_compatibility_version": "7.17.0", "minimum_index_compatibility_version": "7.0.0"},
		"tagline": "You Know, for Search",
	})
}

func (s *Server) handleESNodes(c *gin.Context) {
	c.Header("X-Elastic-Product", "Elasticsearch")
	c.JSON(http.StatusOK, gin.H{"_nodes": gin.H{"total": 1, "successful": 1, "failed": 0}, "cluster_name": "incidex", "nodes": gin.H{}})
}

func (s *Server) handleESHealth(c *gin.Context) {
	c.Header("X-Elastic-Product", "Elasticsearch")
	c.JSON(http.StatusOK, gin.H{"cluster_name": "incidex", "status": "green", "number_of_nodes": 1})
}

func (s *Server) handleESEmpty(c *gin.Context) {
	c.Header("X-Elastic-Product", "Elasticsearch")
	c.JSON(http.StatusOK, gin.H{})
}

// handleRoot serves GET /: the Elasticsearch root document to log shippers
// probing for a cluster, the web UI to everyone else (browsers, curl).
func (s *Server) handleRoot(c *gin.Context) {
	c.Header("Vary", "Accept, User-Agent, X-Elastic-Client-Meta")
	if s.kb == nil && s.opts.PublicURL != "" && !esClient(c.Request) {
		// A receiver has no pages: send people to the writer's UI.
		c.Redirect(http.StatusFound, s.opts.PublicURL)
		return
	}
	if s.web == nil || esClient(c.Request) {
		s.esInfo(c)
		return
	}
	if s.pageGate(c, scopeRead, true) {
		s.handleSearchPage(c)
	}
}

// esClient reports whether a GET / comes from an Elasticsearch client. Their probes
// send no Accept header (Logstash, Vector), ask for JSON (Filebeat), or send */*
// with a client's User-Agent or the metadata header of Elastic's client libraries.
// A browser asks for text/html and curl sends */* with its own User-Agent.
func esClient(r *http.Request) bool {
	accept := strings.ToLower(r.Header.Get("Accept"))
	switch {
	case strings.Contains(accept, "text/html"):
		return false
	case strings.TrimSpace(accept) == "", strings.Contains(accept, "application/json"):
		return true
	}
	if r.Header.Get("X-Elastic-Client-Meta") != "" || r.Header.Get("X-Elastic-Product-Origin") != "" {
		return true
	}
	ua := strings.ToLower(r.UserAgent())
	for _, name := range esUserAgents {
		if strings.Contains(ua, name) {
			return true
		}
	}
	return false
}

// esUserAgents are User-Agent fragments of the shippers and client libraries that
// talk to Elasticsearch (lowercase).
var esUserAgents = []string{"elastic", "logstash", "beat/", "beats", "vector/", "fluent-bit", "fluentd", "manticore", "opensearch"}

func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
