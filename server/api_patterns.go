package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
)

var errNoPatterns = errors.New("emerging patterns are not enabled on this server")

func (s *Server) handleListPatterns(c *gin.Context) {
	limit, _ := strconv.Atoi(c.DefaultQuery("limit", "50"))
	sort := c.DefaultQuery("sort", "count")
	if sort != "count" && sort != "growth" {
		s.writeError(c, &kb.ValidationError{Field: "sort", Msg: "want count or growth"})
		return
	}
	list := s.em.List(c.Request.Context(), kb.PatternFilter{Sort: sort, Limit: limit, IncludeMuted: c.Query("muted") == "1", IncludeSeeded: c.Query("seeded") == "1"})
	c.JSON(http.StatusOK, gin.H{"patterns": list})
}

func (s *Server) handleGetPattern(c *gin.Context) {
	if p, ok := s.pattern(c); ok {
		c.JSON(http.StatusOK, p)
	}
}

// pattern returns the pattern of the :id parameter, or answers the error.
func (s *Server) pattern(c *gin.Context) (kb.EmergingPattern, bool) {
	p, err := s.em.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.writeError(c, err)
		return p, false
	}
	return p, true
}

// needEmerging guards the routes of emerging patterns: a server without
// the miner answers them with errNoPatterns.
func (s *Server) needEmerging(c *gin.Context) {
	if s.em == nil {
		s.writeError(c, errNoPatterns)
		c.Abort()
	}
}

// handleDraftPattern returns a draft write-up (Markdown) for a pattern, to
// edit and save as a new incident.
func (s *Server) handleDraftPattern(c *gin.Context) {
	if p, ok := s.pattern(c); ok {
		c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(kb.Draft(p)))
	}
}

type muteRequest struct {
	Muted *bool `json:"muted"`
}

func (s *Server) handleMutePattern(c *gin.Context) {
	muted := true
	var req muteRequest
	if c.Request.ContentLength > 0 {
		if err := c.ShouldBindJSON(&req); err != nil {
			s.writeError(c, &kb.ValidationError{Field: "body", Msg: "want {\"muted\": true|false}"})
			return
		}
		if req.Muted != nil {
			muted = *req.Muted
		}
	}
	if err := s.em.SetMuted(c.Request.Context(), c.Param("id"), muted); err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "muted": muted})
}

type promoteRequest struct {
	Incident string `json:"incident"`
}

// handlePromotePattern adds the pattern's template as a signature of an
// existing incident; the matcher reloads so the lines match at once.
func (s *Server) handlePromotePattern(c *gin.Context) {
	var req promoteRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Incident == "" {
		s.writeError(c, &kb.ValidationError{Field: "incident", Msg: "want {\"incident\": \"<id>\"}; for a new incident, GET the draft and POST it to /api/v1/incidents"})
		return
	}
	sig, err := s.promote(c, c.Param("id"), req.Incident)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"signature": sig})
}

// promote adds pattern id's template as a signature of incident and
// reloads the matcher.
func (s *Server) promote(c *gin.Context, id, incident string) (kb.Signature, error) {
	ctx := c.Request.Context()
	p, err := s.em.Get(ctx, id)
	if err != nil {
		return kb.Signature{}, err
	}
	sig, err := s.kb.AddSignature(ctx, incident, p.Template)
	if err != nil {
		return kb.Signature{}, err
	}
	if err := s.em.MarkPromoted(ctx, p.ID, incident); err != nil {
		return kb.Signature{}, err
	}
	return sig, s.Reload(ctx)
}

type feedbackRequest struct {
	SignatureID string `json:"signature_id"`
	IncidentID  string `json:"incident_id"`
	Line        string `json:"line"`
	Verdict     string `json:"verdict"`
	Note        string `json:"note"`
	By          string `json:"by"`
}

// handleAddFeedback records a verdict on a match. With an incident id
// instead of a signature id, the line is matched to find which of the
// incident's signatures it was.
func (s *Server) handleAddFeedback(c *gin.Context) {
	var req feedbackRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		s.writeError(c, &kb.ValidationError{Field: "body", Msg: "want {\"signature_id\" or \"incident_id\", \"line\", \"verdict\": \"up\"|\"down\"}"})
		return
	}
	fb, err := s.addFeedback(c, req)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, fb)
}

// addFeedback records a verdict and reloads the matcher so it counts at once.
func (s *Server) addFeedback(c *gin.Context, req feedbackRequest) (kb.Feedback, error) {
	ctx := c.Request.Context()
	if req.SignatureID == "" {
		sig, err := s.signatureFor(req.IncidentID, req.Line)
		if err != nil {
			return kb.Feedback{}, err
		}
		req.SignatureID = sig
	}
	fb, err := s.kb.AddFeedback(ctx, kb.Feedback{SignatureID: req.SignatureID, Line: req.Line, Verdict: req.Verdict, Note: req.Note, By: req.By})
	if err != nil {
		return kb.Feedback{}, err
	}
	return fb, s.Reload(ctx)
}

// signatureFor finds the signature of incident that matches line best.
func (s *Server) signatureFor(incident, line string) (string, error) {
	if incident == "" {
		return "", &kb.ValidationError{Field: "signature_id", Msg: "give signature_id, or incident_id and the line"}
	}
	for _, h := range s.Matcher().Match(line, kb.MatchOptions{MinScore: 0.01}) {
		if h.Incident.ID == incident {
			return h.Signature.ID, nil
		}
	}
	return "", &kb.ValidationError{Field: "line", Msg: "no signature of " + incident + " matches this line"}
}

func (s *Server) handleListFeedback(c *gin.Context) {
	limit, _ := strconv.Atoi(c.DefaultQuery("limit", "100"))
	list, err := s.kb.ListFeedback(c.Request.Context(), c.Query("signature"), limit)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"feedback": list})
}
