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
	switch {
	case s.draining.Load():
		writeErrorStatus(c, http.StatusServiceUnavailable, "shutting down")
	case s.matchers != nil && s.Matcher() == nil:
		writeErrorStatus(c, http.StatusServiceUnavailable, "matcher not loaded yet")
	case s.matchers == nil:
		c.JSON(http.StatusOK, gin.H{"status": "ready", "queue": s.queue.Len()})
	default:
		c.JSON(http.StatusOK, gin.H{"status": "ready", "signatures": s.Matcher().Len(), "queue": s.queue.Len()})
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
}

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_http_requests_total", Help: "HTTP requests by route and status."}, []string{"route", "code"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_received_total", Help: "Records accepted by the webhook, by format."}, []string{"format"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_rejected_total", Help: "Malformed records skipped by the webhook, by format."}, []string{"format"}),
		refused:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_records_refused_total", Help: "Records refused with 503 (queue full or shutting down), by format; senders retry them."}, []string{"format"}),
		rejectedRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "incidex_requests_rejected_total",
			Help: "Webhook requests refused as a whole (bad body, too large, unsupported encoding), by format."}, []string{"format"}),
	}
	reg.MustRegister(m.requests, m.received, m.rejected, m.refused, m.rejectedRequests,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "incidex_queue_depth", Help: "Records waiting to be matched."}, func() float64 { return float64(s.queue.Len()) }))
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
