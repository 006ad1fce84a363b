package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/incidex/incidex/ingest"
)

// handleIngestFormat serves POST /ingest/v1/{format}.
func (s *Server) handleIngestFormat(c *gin.Context) {
	s.handleIngest(c.Param("format"))(c)
}

// handleIngest is the webhook: token and size checks, decompression, then
// ingest decodes and the queue takes all records or none.
func (s *Server) handleIngest(format string) gin.HandlerFunc {
	return func(c *gin.Context) {
		f, ok := ingestFormat(format)
		if !ok {
			writeErrorStatus(c, http.StatusNotFound, fmt.Sprintf("unknown format %q: want one of %s", format, strings.Join(formatNames(), ", ")))
			return
		}
		if s.draining.Load() {
			s.writeError(c, errDraining)
			return
		}
		res, err := s.decodeRequest(c, f)
		if err != nil {
			s.metrics.rejectedRequests.WithLabelValues(string(f)).Inc()
			s.writeError(c, err)
			return
		}
		if len(res.Records) > 0 {
			if err := s.queue.Enqueue(c.Request.Context(), res.Records); err != nil {
				s.metrics.refused.WithLabelValues(string(res.Format)).Add(float64(len(res.Records)))
				s.writeError(c, err)
				return
			}
		}
		s.metrics.received.WithLabelValues(string(res.Format)).Add(float64(len(res.Records)))
		s.metrics.rejected.WithLabelValues(string(res.Format)).Add(float64(res.Rejected))
		if res.Rejected > 0 {
			s.log.Warn("malformed records skipped", "format", res.Format, "rejected", res.Rejected, "first", firstOr(res.Errors), "request_id", c.GetString(ctxRequestID))
		}
		s.respondIngest(c, res)
	}
}

// decodeRequest reads, decompresses and decodes the body within the limits.
func (s *Server) decodeRequest(c *gin.Context, f ingest.Format) (ingest.Result, error) {
	r := c.Request
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxCompressedBytes+1))
	if err != nil {
		return ingest.Result{}, fmt.Errorf("read body: %w", errBadRequest)
	}
	if int64(len(body)) > s.opts.MaxCompressedBytes {
		return ingest.Result{}, fmt.Errorf("body is over the %d-byte limit: %w", s.opts.MaxCompressedBytes, ingest.ErrTooLarge)
	}
	lim := s.opts.Limits
	if lim.MaxBodyBytes <= 0 {
		lim.MaxBodyBytes = ingest.DefaultMaxBodyBytes
	}
	enc := r.Header.Get("Content-Encoding")
	if f == ingest.FormatLoki && !strings.Contains(r.Header.Get("Content-Type"), "json") {
		enc = "" // Loki protobuf is snappy-compressed whatever the header says; the decoder handles it
	}
	if enc != "" {
		body, err = ingest.Decompress(enc, bytes.NewReader(body), lim.MaxBodyBytes)
		switch {
		case errors.Is(err, ingest.ErrTooLarge), errors.Is(err, ingest.ErrUnsupportedEncoding):
			return ingest.Result{}, err
		case err != nil:
			return ingest.Result{}, fmt.Errorf("Content-Encoding %s: corrupt or truncated body: %v: %w", enc, err, errBadRequest)
		}
	}
	if len(bytes.TrimSpace(body)) == 0 && f != ingest.FormatOTLP && f != ingest.FormatLoki {
		return ingest.Result{}, fmt.Errorf("empty body: %w", errBadRequest)
	}
	return ingest.Decode(ingest.Request{
		Format: f, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), ContentEncoding: r.Header.Get("Content-Encoding"),
		UserAgent: r.UserAgent(), Tag: r.Header.Get("X-Fluent-Tag"), Body: body, Now: s.opts.Now(),
	}, lim)
}

// ingestResponse is the generic webhook answer.
type ingestResponse struct {
	Accepted int      `json:"accepted"`
	Rejected int      `json:"rejected"`
	Format   string   `json:"format"`
	Errors   []string `json:"errors,omitempty"`
}

// respondIngest answers in the shape each sender requires (FORMATS.md):
// Elasticsearch needs errors:false and one item per action, OTLP a response
// message in the request's content type, Loki 204; others get counts.
func (s *Server) respondIngest(c *gin.Context, res ingest.Result) {
	switch res.Format {
	case ingest.FormatElasticsearch:
		c.Header("X-Elastic-Product", "Elasticsearch")
		c.JSON(http.StatusOK, bulkResponse(res))
	case ingest.FormatOTLP:
		s.respondOTLP(c, res)
	case ingest.FormatLoki:
		c.Status(http.StatusNoContent)
	default:
		c.JSON(http.StatusOK, ingestResponse{Accepted: len(res.Records), Rejected: res.Rejected, Format: string(res.Format), Errors: res.Errors})
	}
}

// bulkResponse reports every action. Malformed documents get status 400
// (senders drop them, which is right), but errors stays false: Fluent Bit
// retries a whole chunk when errors is true, and a malformed record must
// never cause a retry.
func bulkResponse(res ingest.Result) map[string]any {
	items := make([]map[string]any, 0, len(res.Bulk))
	for _, it := range res.Bulk {
		item := map[string]any{"_index": it.Index, "status": it.Status}
		if it.ID != "" {
			item["_id"] = it.ID
		}
		if it.Status >= 400 {
			item["error"] = map[string]string{"type": "mapper_parsing_exception", "reason": "malformed document"}
		}
		items = append(items, map[string]any{it.Action: item})
	}
	return map[string]any{"errors": false, "took": 0, "items": items}
}

// respondOTLP answers with an ExportLogsServiceResponse in the request's
// encoding; rejected records are reported as a partial success, which
// senders do not retry.
func (s *Server) respondOTLP(c *gin.Context, res ingest.Result) {
	if strings.Contains(c.GetHeader("Content-Type"), "json") {
		body := map[string]any{}
		if res.Rejected > 0 {
			body["partialSuccess"] = map[string]any{"rejectedLogRecords": fmt.Sprint(res.Rejected), "errorMessage": firstOr(res.Errors)}
		}
		c.JSON(http.StatusOK, body)
		return
	}
	var b []byte
	if res.Rejected > 0 {
		var ps []byte
		ps = protowire.AppendTag(ps, 1, protowire.VarintType)
		ps = protowire.AppendVarint(ps, uint64(res.Rejected))
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, firstOr(res.Errors))
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, ps)
	}
	c.Data(http.StatusOK, "application/x-protobuf", b)
}

func firstOr(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return errs[0]
}

var formatByName = map[string]ingest.Format{
	"": ingest.FormatAuto, "auto": ingest.FormatAuto, "fluentbit": ingest.FormatFluentBit, "fluent-bit": ingest.FormatFluentBit,
	"fluentd": ingest.FormatFluentd, "vector": ingest.FormatVector, "loki": ingest.FormatLoki, "otlp": ingest.FormatOTLP,
	"elasticsearch": ingest.FormatElasticsearch, "alertmanager": ingest.FormatAlertmanager, "k8s-events": ingest.FormatK8sEvents,
	"ndjson": ingest.FormatNDJSON, "text": ingest.FormatText,
}

func ingestFormat(name string) (ingest.Format, bool) {
	f, ok := formatByName[strings.ToLower(name)]
	return f, ok
}

func formatNames() []string {
	return []string{"fluentbit", "fluentd", "vector", "loki", "otlp", "elasticsearch", "alertmanager", "k8s-events", "ndjson", "text"}
}

// Elasticsearch compatibility probes (FORMATS.md §7.3).

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
