package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// maxUploadBytes bounds a write-up uploaded through the API.
const maxUploadBytes = writeup.MaxWriteupBytes

func (s *Server) handleSearch(c *gin.Context) {
	n, _ := strconv.Atoi(c.DefaultQuery("n", "10"))
	from, _ := strconv.Atoi(c.DefaultQuery("from", "0"))
	req := kb.SearchRequest{
		Query: c.Query("q"), Syntax: c.Query("syntax") == "bleve", All: c.Query("all") == "1",
		Tags: c.QueryArray("tag"), Services: c.QueryArray("service"), Size: n, From: from,
	}
	res, err := s.kb.Search(c.Request.Context(), req)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) handleListIncidents(c *gin.Context) {
	list, err := s.kb.List(c.Request.Context(), c.Query("tag"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	if list == nil {
		list = []kb.Summary{}
	}
	c.JSON(http.StatusOK, gin.H{"incidents": list})
}

func (s *Server) handleGetIncident(c *gin.Context) {
	inc, err := s.kb.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, inc)
}

func (s *Server) handleListSignatures(c *gin.Context) {
	sigs, err := s.kb.Signatures(c.Request.Context())
	if err != nil {
		s.writeError(c, err)
		return
	}
	out := make([]kb.Signature, 0, len(sigs))
	for _, sg := range sigs {
		if id := c.Query("incident"); id == "" || sg.IncidentID == id {
			out = append(out, sg)
		}
	}
	c.JSON(http.StatusOK, gin.H{"signatures": out})
}

// handleCreateIncident stores a write-up uploaded as Markdown (the raw
// body, or the "file" field of a form). Its id comes from the write-up; an
// id that already exists answers 409 with that id, unless ?replace=1.
func (s *Server) handleCreateIncident(c *gin.Context) {
	s.putWriteup(c, "", c.Query("replace") == "1")
}

// handleUpdateIncident replaces incident :id with the uploaded write-up,
// which must have the same id.
func (s *Server) handleUpdateIncident(c *gin.Context) {
	s.putWriteup(c, c.Param("id"), true)
}

func (s *Server) putWriteup(c *gin.Context, wantID string, replace bool) {
	data, name, err := readUpload(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	incs, err := s.StoreWriteup(c.Request.Context(), name, data, wantID, replace)
	if err != nil {
		s.writeError(c, err)
		return
	}
	status := http.StatusCreated
	if wantID != "" {
		status = http.StatusOK
	}
	c.JSON(status, gin.H{"incidents": incs})
}

// existsError is a create whose incident id is already taken.
type existsError struct{ id string }

func (e *existsError) Error() string {
	return fmt.Sprintf("incident %q already exists: PUT /api/v1/incidents/%s (or POST with ?replace=1) replaces it", e.id, e.id)
}

func (e *existsError) Unwrap() error { return kb.ErrConflict }

// StoreWriteup parses and stores a write-up (API and web forms), then
// reloads the matcher so its signatures match at once. Without replace, an
// incident id that already exists is an *existsError (409).
func (s *Server) StoreWriteup(ctx context.Context, name string, data []byte, wantID string, replace bool) ([]*kb.Incident, error) {
	if err := writeup.CheckText(data, maxUploadBytes); err != nil {
		return nil, &kb.ValidationError{Field: "body", Msg: err.Error()}
	}
	incs, err := writeup.ParseWriteup(name, data)
	if err != nil {
		return nil, &kb.ValidationError{Field: "body", Msg: err.Error()}
	}
	if wantID != "" && (len(incs) != 1 || incs[0].ID != wantID) {
		return nil, &kb.ValidationError{Field: "id", Msg: fmt.Sprintf("write-up defines %s, not %s", idsOf(incs), wantID)}
	}
	if !replace {
		for _, inc := range incs {
			_, err := s.kb.Get(ctx, inc.ID)
			if err == nil {
				return nil, &existsError{id: inc.ID}
			}
			if !errors.Is(err, kb.ErrNotFound) {
				return nil, err
			}
		}
	}
	for _, inc := range incs {
		inc.Source = "api:" + inc.ID
		if err := s.kb.Put(ctx, inc); err != nil {
			return nil, err
		}
	}
	if err := s.Reload(ctx); err != nil {
		return nil, err
	}
	return incs, nil
}

func idsOf(incs []*kb.Incident) string {
	ids := make([]string, len(incs))
	for i, inc := range incs {
		ids[i] = inc.ID
	}
	return strings.Join(ids, ", ")
}

// readUpload reads a write-up from a multipart "file" field or the raw body.
func readUpload(c *gin.Context) ([]byte, string, error) {
	r := c.Request
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		fh, err := c.FormFile("file")
		if err != nil {
			return nil, "", &kb.ValidationError{Field: "file", Msg: "multipart upload has no file field"}
		}
		if fh.Size > maxUploadBytes {
			return nil, "", fmt.Errorf("write-up is %d bytes, over the %d-byte limit: %w", fh.Size, maxUploadBytes, decode.ErrTooLarge)
		}
		f, err := fh.Open()
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxUploadBytes+1))
		return b, fh.Filename, err
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxUploadBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read body: %w", errBadRequest)
	}
	if len(b) > maxUploadBytes {
		return nil, "", fmt.Errorf("write-up is over the %d-byte limit: %w", maxUploadBytes, decode.ErrTooLarge)
	}
	return b, "", nil // a bare body has no name: its id comes from its content
}

func (s *Server) handleDeleteIncident(c *gin.Context) {
	if err := s.kb.Delete(c.Request.Context(), c.Param("id")); err != nil {
		s.writeError(c, err)
		return
	}
	if err := s.Reload(c.Request.Context()); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// matchRequest is the body of POST /api/v1/match: lines, or a text blob
// split into lines.
type matchRequest struct {
	Lines    []string `json:"lines"`
	Text     string   `json:"text"`
	Mode     string   `json:"mode"` // "stream" (default) or "query"
	MinScore float64  `json:"min_score"`
	Top      int      `json:"top"`
	Explain  bool     `json:"explain"`
}

type lineResult struct {
	Line    int      `json:"line"`
	Input   string   `json:"input"`
	Matches []kb.Hit `json:"matches"`
	// Possible are matches in the possible band (kb.PossibleMinScore up
	// to the threshold) of a line without a confident one, when the
	// request left min_score at its default.
	Possible []kb.Hit `json:"possible,omitempty"`
}

// maxMatchLines bounds one match request.
const maxMatchLines = 100000

func (s *Server) handleMatch(c *gin.Context) {
	var req matchRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		s.writeError(c, &kb.ValidationError{Field: "body", Msg: "want JSON {\"lines\": [...]} or {\"text\": \"...\"}: " + err.Error()})
		return
	}
	lines := req.Lines
	if req.Text != "" {
		lines = append(lines, strings.Split(strings.ReplaceAll(req.Text, "\r\n", "\n"), "\n")...)
	}
	if len(lines) > maxMatchLines {
		s.writeError(c, fmt.Errorf("%d lines, limit %d: %w", len(lines), maxMatchLines, decode.ErrTooManyRecords))
		return
	}
	mode := patterns.Stream
	switch req.Mode {
	case "", "stream":
	case "query":
		mode = patterns.Query
	default:
		s.writeError(c, &kb.ValidationError{Field: "mode", Msg: fmt.Sprintf("%q: want stream or query", req.Mode)})
		return
	}
	if req.MinScore < 0 || req.MinScore > 1 {
		s.writeError(c, &kb.ValidationError{Field: "min_score", Msg: "want a number from 0 to 1"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"results": s.MatchLines(lines, mode, req.MinScore, req.Top, req.Explain)})
}

// MatchLines matches lines with the current matcher; every line gets a
// result (empty matches when nothing matched). With minScore 0 (the
// matcher's threshold), a line without a confident match gets its
// possible ones.
func (s *Server) MatchLines(lines []string, mode patterns.Mode, minScore float64, top int, explain bool) []lineResult {
	m := s.Matcher()
	out := make([]lineResult, len(lines))
	for i, l := range lines {
		var hits, possible []kb.Hit
		if minScore == 0 {
			hits, possible = m.MatchBands(l, kb.MatchOptions{Mode: mode, Top: top, Explain: explain})
		} else {
			hits = m.Match(l, kb.MatchOptions{Mode: mode, MinScore: minScore, Top: top, Explain: explain})
		}
		if hits == nil {
			hits = []kb.Hit{}
		}
		out[i] = lineResult{Line: i + 1, Input: l, Matches: hits, Possible: possible}
	}
	return out
}

func (s *Server) handleListOccurrences(c *gin.Context) {
	f, err := occurrenceFilter(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	list, err := s.occ.List(c.Request.Context(), f)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"occurrences": list})
}

func occurrenceFilter(c *gin.Context) (kb.OccurrenceFilter, error) {
	f := kb.OccurrenceFilter{Incident: c.Query("incident"), Signature: c.Query("signature"), Namespace: c.Query("namespace"), Node: c.Query("node"), Status: c.Query("status")}
	switch f.Status {
	case "", "open", "closed":
	case "all":
		f.Status = ""
	default:
		return f, &kb.ValidationError{Field: "status", Msg: "want open, closed or all"}
	}
	if v := c.Query("since"); v != "" {
		t, err := parseSince(v)
		if err != nil {
			return f, &kb.ValidationError{Field: "since", Msg: err.Error()}
		}
		f.Since = t
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return f, &kb.ValidationError{Field: "limit", Msg: "want 1 to 10000"}
		}
		f.Limit = n
	}
	return f, nil
}

// parseSince accepts RFC 3339 or a duration back from now ("15m").
func parseSince(v string) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, errors.New("want RFC 3339 or a duration such as 15m")
	}
	return t, nil
}

func (s *Server) handleAckOccurrence(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		s.writeError(c, &kb.ValidationError{Field: "id", Msg: "not a number"})
		return
	}
	by := c.Query("by")
	if by == "" {
		by = "api"
	}
	occ, err := s.occ.Ack(c.Request.Context(), id, by)
	if err != nil {
		s.writeError(c, err)
		return
	}
	// The live page's form, posted without JavaScript: back to the page.
	if next := c.PostForm("next"); next != "" && wantsHTML(c.Request) {
		c.Redirect(http.StatusSeeOther, localPath(next))
		return
	}
	c.JSON(http.StatusOK, occ)
}
