package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// routes lists every route.
func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(s.recovery(), s.requestID(), s.accessLog())
	r.NoRoute(func(c *gin.Context) {
		if s.web != nil && wantsHTML(c.Request) {
			setPageHeaders(c)
			c.Set(ctxPageServer, s)
		}
		writeErrorStatus(c, http.StatusNotFound, "no such route: "+c.Request.Method+" "+c.Request.URL.Path)
	})
	r.NoMethod(func(c *gin.Context) {
		writeErrorStatus(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" not allowed on "+c.Request.URL.Path)
	})

	r.GET("/healthz", s.handleHealthz)
	r.GET("/readyz", s.handleReadyz)
	r.GET("/metrics", s.handleMetrics)

	// GET / is the web UI for browsers and the Elasticsearch root for log shippers.
	r.GET("/", s.handleRoot)
	if s.queue != nil {
		s.ingestRoutes(r)
	}
	if s.kb == nil {
		return r // a webhook receiver: no API, no pages
	}
	read := r.Group("/api/v1", s.sameOrigin(), s.auth(scopeRead))

	read.GET("/search", s.handleSearch)
	read.GET("/incidents", s.handleListIncidents)
	read.GET("/incidents/:id", s.handleGetIncident)
	read.POST("/match", s.handleMatch)
	read.GET("/signatures", s.handleListSignatures)
	read.GET("/occurrences", s.handleListOccurrences)
	read.GET("/occurrences/stream", s.handleOccurrenceStream)
	read.GET("/patterns", s.needEmerging, s.handleListPatterns)
	read.GET("/patterns/:id", s.needEmerging, s.handleGetPattern)
	read.GET("/patterns/:id/draft", s.needEmerging, s.handleDraftPattern)
	read.GET("/feedback", s.handleListFeedback)
	read.GET("/dead-letters", s.handleListDeadLetters)

	admin := r.Group("/api/v1", s.sameOrigin(), s.auth(scopeAdmin))
	admin.POST("/incidents", s.handleCreateIncident)
	admin.PUT("/incidents/:id", s.handleUpdateIncident)
	admin.DELETE("/incidents/:id", s.handleDeleteIncident)
	admin.POST("/occurrences/:id/ack", s.handleAckOccurrence)
	admin.POST("/patterns/:id/mute", s.needEmerging, s.handleMutePattern)
	admin.POST("/patterns/:id/promote", s.needEmerging, s.handlePromotePattern)
	admin.POST("/feedback", s.handleAddFeedback)

	if s.web != nil {
		s.pageRoutes(r)
	}
	return r
}

// ingestRoutes lists the webhook: explicit routes per format, an
// auto-detecting one, the senders' native paths and the Elasticsearch
// probes.
func (s *Server) ingestRoutes(r *gin.Engine) {
	ing := r.Group("", s.auth(scopeIngest))
	ing.POST("/ingest/v1", s.handleIngest(""))
	ing.PUT("/ingest/v1", s.handleIngest(""))
	ing.POST("/ingest/v1/:format", s.handleIngestFormat)
	ing.PUT("/ingest/v1/:format", s.handleIngestFormat)
	ing.POST("/loki/api/v1/push", s.handleIngest("loki"))
	ing.POST("/v1/logs", s.handleIngest("otlp"))
	ing.POST("/_bulk", s.handleIngest("elasticsearch"))
	ing.PUT("/_bulk", s.handleIngest("elasticsearch"))
	ing.POST("/:index/_bulk", s.handleIngest("elasticsearch"))
	ing.PUT("/:index/_bulk", s.handleIngest("elasticsearch"))
	// Elasticsearch probes that Logstash, Filebeat and Vector make first.
	ing.HEAD("/", s.handleESHead)
	ing.GET("/_nodes/http", s.handleESNodes)
	ing.GET("/_cluster/health", s.handleESHealth)
	ing.GET("/_license", s.handleESEmpty)
	ing.GET("/_xpack", s.handleESEmpty)
	ing.GET("/_index_template/*name", s.handleESEmpty)
	ing.PUT("/_index_template/*name", s.handleESEmpty)
	ing.GET("/_ilm/*path", s.handleESEmpty)
	ing.PUT("/_ilm/*path", s.handleESEmpty)
}

// pageRoutes lists the web pages. Forms that change something carry a
// CSRF token (pageGate); /analyze only reads, so a form elsewhere may post to it.
func (s *Server) pageRoutes(r *gin.Engine) {
	r.GET("/static/*filepath", s.handleStatic)
	r.HEAD("/static/*filepath", s.handleStatic)

	open := r.Group("", s.pages(scopeNone, true))
	open.GET("/login", s.handleLoginPage)
	open.POST("/login", s.handleLogin)
	open.GET("/logout", s.handleLogoutPage)
	open.POST("/logout", s.handleLogout)

	read := r.Group("", s.pages(scopeRead, true))
	read.GET("/incidents/:id", s.handleIncidentPage)
	read.GET("/analyze", s.handleAnalyzePage)
	read.GET("/live", s.handleLivePage)
	read.GET("/patterns", s.handlePatternsPage)
	read.GET("/dead-letters", s.handleDeadLettersPage)
	r.POST("/analyze", s.pages(scopeRead, false), s.handleAnalyze)

	// gin routes /incidents/new beside /incidents/:id (a static segment
	// wins over a parameter; tested in pages_test.go).
	admin := r.Group("", s.pages(scopeAdmin, true))
	admin.GET("/incidents/new", s.handleNewIncidentPage)
	admin.POST("/incidents/new", s.handleSaveIncidentPage)
	admin.GET("/incidents/:id/edit", s.handleEditIncidentPage)
	admin.POST("/incidents/:id/edit", s.handleSaveIncidentPage)
	admin.POST("/patterns/:id/mute", s.needEmerging, s.handleMutePatternPage)
	admin.POST("/patterns/:id/promote", s.needEmerging, s.handlePromotePatternPage)
	admin.POST("/feedback", s.handleFeedbackPage)
	// With POST routes under /incidents/, gin no longer falls back to
	// /:index/_bulk for an Elasticsearch index named "incidents".
	if s.queue != nil {
		r.POST("/incidents/_bulk", s.auth(scopeIngest), s.handleIngest("elasticsearch"))
	}
}
