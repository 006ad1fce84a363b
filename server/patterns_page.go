package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// patternsShown bounds the patterns page.
const patternsShown = 100

// handlePatternsPage serves GET /patterns: the emerging patterns by count
// or growth (?sort=), muted ones with ?muted=1.
func (s *Server) handlePatternsPage(c *gin.Context) {
	d := web.PatternsData{Page: s.page(c, "Emerging patterns", "patterns"), Enabled: s.em != nil, Sort: c.DefaultQuery("sort", "count"),
		ShowMuted: c.Query("muted") == "1"}
	if d.Sort != "count" && d.Sort != "growth" {
		d.Sort = "count"
	}
	switch c.Query("done") {
	case "muted":
		d.Notice = "Muted: the pattern no longer shows here (see muted patterns to undo)."
	case "unmuted":
		d.Notice = "Unmuted."
	}
	if s.em == nil {
		s.render(c, http.StatusOK, "patterns", d)
		return
	}
	ctx := c.Request.Context()
	for _, p := range s.em.List(ctx, kb.PatternFilter{Sort: d.Sort, Limit: patternsShown, IncludeMuted: d.ShowMuted}) {
		flat := make(map[string]string, len(p.Labels))
		for k, vs := range p.Labels {
			flat[k] = strings.Join(vs, ", ")
		}
		d.Patterns = append(d.Patterns, web.PatternRow{ID: p.ID, Template: p.Template, Count: p.Count, Recent: p.Recent,
			Growth: p.Growth, Growing: p.Growth >= 2 && p.Recent >= 10, FirstSeen: p.FirstSeen, LastSeen: p.LastSeen,
			Samples: p.Samples, Labels: web.Labels(flat), Muted: p.Muted, Seeded: p.Seeded, Promoted: p.Promoted})
	}
	if d.CanWrite && len(d.Patterns) > 0 {
		cat, err := s.catalog(ctx)
		if err != nil {
			s.writeError(c, err)
			return
		}
		for _, sm := range cat.list {
			d.Incidents = append(d.Incidents, web.Link{ID: sm.ID, Title: sm.Title})
		}
	}
	s.render(c, http.StatusOK, "patterns", d)
}

// handleMutePatternPage serves POST /patterns/:id/mute: mute=0 unmutes.
func (s *Server) handleMutePatternPage(c *gin.Context) {
	muted := c.PostForm("mute") != "0"
	if err := s.em.SetMuted(c.Request.Context(), c.Param("id"), muted); err != nil {
		s.writeError(c, err)
		return
	}
	done := "muted"
	if !muted {
		done = "unmuted"
	}
	q := url.Values{"done": {done}}
	if sort := c.PostForm("sort"); sort == "growth" {
		q.Set("sort", sort)
	}
	c.Redirect(http.StatusSeeOther, "/patterns?"+q.Encode())
}

// handlePromotePatternPage serves POST /patterns/:id/promote: the
// pattern's template becomes a signature of the chosen incident, and the
// visitor lands on that incident.
func (s *Server) handlePromotePatternPage(c *gin.Context) {
	incident := strings.TrimSpace(c.PostForm("incident"))
	if incident == "" {
		s.writeError(c, &kb.ValidationError{Field: "incident", Msg: "choose the incident this pattern belongs to"})
		return
	}
	if _, err := s.promote(c, c.Param("id"), incident); err != nil {
		s.writeError(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, web.IncidentURL(incident))
}

// handleFeedbackPage serves POST /feedback, the thumbs on the analyze
// page: signature (or incident), line, verdict up|down. The page's script
// sends it with Accept: application/json and gets JSON; a plain form post
// gets a confirmation page.
func (s *Server) handleFeedbackPage(c *gin.Context) {
	fb, err := s.addFeedback(c, feedbackRequest{SignatureID: c.PostForm("signature"), IncidentID: c.PostForm("incident"),
		Line: c.PostForm("line"), Verdict: c.PostForm("verdict"), By: "web"})
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !wantsHTML(c.Request) {
		c.JSON(http.StatusCreated, fb)
		return
	}
	s.render(c, http.StatusOK, "feedback", web.FeedbackData{Page: s.page(c, "Feedback recorded", "analyze"),
		Verdict: fb.Verdict, IncidentID: c.PostForm("incident"), Line: fb.Line})
}
