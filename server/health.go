package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func (s *Server) handleHealthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// handleReadyz: ready when a matcher is loaded and the server is not
// draining for shutdown.
func (s *Server) handleReadyz(c *gin.Context) {
	var notReady error
	if s.opts.Ready != nil {
		notReady = s.opts.Ready()
	}
	queued := 0
	if s.queue != nil {
		queued = s.queue.Len()
	}
	switch {
	case s.draining.Load():
		writeErrorStatus(c, http.StatusServiceUnavailable, "shutting down")
	case notReady != nil:
		writeErrorStatus(c, http.StatusServiceUnavailable, notReady.Error())
	case s.matchers != nil && s.Matcher() == nil:
		writeErrorStatus(c, http.StatusServiceUnavailable, "matcher not loaded yet")
	case s.matchers == nil:
		c.JSON(http.StatusOK, gin.H{"status": "ready", "queue": queued})
	default:
		c.JSON(http.StatusOK, gin.H{"status": "ready", "signatures": s.Matcher().Len(), "queue": queued})
	}
}

func (s *Server) handleMetrics(c *gin.Context) {
	promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{}).ServeHTTP(c.Writer, c.Request)
}

// metrics are incidex's Prometheus metrics.
type metrics struct {
	requests         *prometheus.CounterVec
	received         *prometheus.CounterVec
	rejected         *prometheus.CounterVec
	refused          *prometheus.CounterVec
	rejectedRequests *prometheus.CounterVec
	unavailable      *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_http_requests_total", Help: "HTTP requests by route and status."}, []string{"route", "code"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_received_total", Help: "Records accepted by the webhook, by format."}, []string{"format"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_rejected_total", Help: "Malformed records skipped by the webhook, by format."}, []string{"format"}),
		refused:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_refused_total", Help: "Records refused with 503 (queue full or shutting down), by format; senders retry them."}, []string{"format"}),
		unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_webhook_unavailable_total",
			Help: "Webhook requests answered 503 + Retry-After, by cause: queue_full, queue_unavailable (a distributed queue cannot be reached), draining."}, []string{"cause"}),
		rejectedRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_requests_rejected_total",
			Help: "Webhook requests refused as a whole (bad body, too large, unsupported encoding), by format."}, []string{"format"}),
	}
	reg.MustRegister(m.requests, m.received, m.rejected, m.refused, m.rejectedRequests, m.unavailable)
	if s.queue != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_queue_depth", Help: "Records waiting to be matched."}, func() float64 { return float64(s.queue.Len()) }))
	}
	if s.occ != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_occurrences_open", Help: "Open occurrences."}, func() float64 { return float64(s.occ.OpenCount()) }))
	}
	if s.matchers != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_signatures", Help: "Signatures in the loaded matcher."}, func() float64 {
			if m := s.Matcher(); m != nil {
				return float64(m.Len())
			}
			return 0
		}))
	}
	return m
}
