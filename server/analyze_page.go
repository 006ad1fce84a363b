package server

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
	"github.com/incidex/incidex/web"
)

// Limits of the analyze page, and what it shows of a large input.
const (
	maxAnalyzeBytes = 5 << 20
	maxAnalyzeLines = 50000
	// echoBytes: a larger input is not echoed back into the text box.
	echoBytes         = 256 << 10
	linesPerGroup     = 100
	maxUnmatchedShown = 200
	analyzeTop        = 3
	// explainAllLines: up to this many lines, one matching pass explains
	// every match; past it, only the shown lines are matched again with
	// explanations.
	explainAllLines = 2000
)

// handleAnalyzePage serves GET /analyze: the form, or the analysis of
// ?logs= so that an analysis can be linked to.
func (s *Server) handleAnalyzePage(c *gin.Context) {
	d := web.AnalyzeData{Page: s.page(c, "Analyze", "analyze"), MaxBytes: maxAnalyzeBytes, MaxLines: maxAnalyzeLines}
	status := http.StatusOK
	if text := c.Query("logs"); text != "" {
		status = s.analyzeInto(c, &d, text, nil)
	}
	s.render(c, status, "analyze", d)
}

// handleAnalyze serves POST /analyze: a pasted block of logs (logs) or an
// uploaded file (file), as a plain form post.
func (s *Server) handleAnalyze(c *gin.Context) {
	d := web.AnalyzeData{Page: s.page(c, "Analyze", "analyze"), MaxBytes: maxAnalyzeBytes, MaxLines: maxAnalyzeLines}
	text, err := analyzeInput(c.Request)
	s.render(c, s.analyzeInto(c, &d, text, err), "analyze", d)
}

// analyzeInto analyzes text into d unless err is set; an error becomes the
// page's message and status.
func (s *Server) analyzeInto(c *gin.Context, d *web.AnalyzeData, text string, err error) int {
	if err == nil {
		err = s.analyze(d, text)
	}
	if err == nil {
		return http.StatusOK
	}
	status, body := s.errorResponse(c, err)
	d.Error = body.Error
	return status
}

var errTooLargeInput = fmt.Errorf("the logs are over the %d MB limit: paste or upload a smaller part: %w", maxAnalyzeBytes>>20, decode.ErrTooLarge)

// analyzeInput reads the uploaded file when one was chosen, else the text.
func analyzeInput(r *http.Request) (string, error) {
	if err := parseForm(r); err != nil {
		if errors.Is(err, decode.ErrTooLarge) {
			return "", errTooLargeInput
		}
		return "", err
	}
	if r.MultipartForm != nil && len(r.MultipartForm.File["file"]) > 0 && r.MultipartForm.File["file"][0].Size > 0 {
		return readFormFile(r.MultipartForm.File["file"][0])
	}
	text := r.PostFormValue("logs")
	if len(text) > maxAnalyzeBytes {
		return "", errTooLargeInput
	}
	return text, nil
}

func readFormFile(fh *multipart.FileHeader) (string, error) {
	if fh.Size > maxAnalyzeBytes {
		return "", errTooLargeInput
	}
	f, err := fh.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAnalyzeBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxAnalyzeBytes {
		return "", errTooLargeInput
	}
	return string(b), nil
}

// analyze matches every line and fills the page: matched lines grouped by
// incident, with explanations, and the error lines nothing explains.
func (s *Server) analyze(d *web.AnalyzeData, text string) error {
	if len(text) <= echoBytes {
		d.Text = text
	}
	lines := splitLines(text)
	switch {
	case len(lines) == 0:
		return &kb.ValidationError{Field: "logs", Msg: "paste log lines or choose a file first"}
	case len(lines) > maxAnalyzeLines:
		return fmt.Errorf("%d lines, over the limit of %d: paste or upload a smaller part of the logs: %w", len(lines), maxAnalyzeLines, decode.ErrTooManyRecords)
	}
	d.Submitted = true
	d.Lines = len(lines)
	explainAll := len(lines) <= explainAllLines
	results := s.MatchLines(lines, patterns.Stream, 0, analyzeTop, explainAll)
	groups := map[string]*web.AnalyzeGroup{}
	possible := map[string]*web.AnalyzeGroup{}
	var explain []int // lines whose explanations are shown
	var unex unexplained
	for i, r := range results {
		if len(r.Matches) == 0 && len(r.Possible) > 0 {
			h := r.Possible[0]
			g := groupFor(possible, h.Incident)
			g.Count++
			g.Best = max(g.Best, h.Score)
			if len(g.Lines) < linesPerGroup {
				l := web.AnalyzeLine{N: r.Line, Text: lines[i], Score: h.Score, SigID: h.Signature.ID}
				explained(&l, h)
				g.Lines = append(g.Lines, l)
			} else {
				g.More++
			}
			continue
		}
		if len(r.Matches) == 0 {
			unex.add(r.Line, lines[i])
			continue
		}
		d.Matched++
		// A line counts for its best incident only; the runners-up are
		// named beside it, so that three lines do not read as six incidents.
		h := r.Matches[0]
		g := groupFor(groups, h.Incident)
		g.Count++
		g.Best = max(g.Best, h.Score)
		shown := false
		if len(g.Lines) < linesPerGroup {
			l := web.AnalyzeLine{N: r.Line, Text: lines[i], Score: h.Score, SigID: h.Signature.ID}
			for _, alt := range r.Matches[1:] {
				l.Alternatives = append(l.Alternatives, web.Alternative{ID: alt.Incident.ID, Title: alt.Incident.Title, Score: alt.Score})
			}
			explained(&l, h)
			g.Lines = append(g.Lines, l)
			shown = true
		} else {
			g.More++
		}
		if shown && !explainAll {
			explain = append(explain, i)
		}
	}
	if !explainAll {
		s.explainLines(groups, lines, explain)
	}
	d.Groups = sortGroups(groups)
	d.Possible = sortGroups(possible)
	d.Unmatched, d.UnmatchedMore = unex.shown, unex.more
	return nil
}

func groupFor(groups map[string]*web.AnalyzeGroup, ref *kb.IncidentRef) *web.AnalyzeGroup {
	g := groups[ref.ID]
	if g == nil {
		g = &web.AnalyzeGroup{ID: ref.ID, Title: ref.Title, RootCause: causeLine(ref.RootCause), CauseUnknown: ref.CauseStatus == kb.CauseUnknown}
		groups[ref.ID] = g
	}
	return g
}

// explainLines matches the shown lines again, with explanations, and fills
// in each shown line's explanation for its incident.
func (s *Server) explainLines(groups map[string]*web.AnalyzeGroup, lines []string, idx []int) {
	sub := make([]string, len(idx))
	for k, i := range idx {
		sub[k] = lines[i]
	}
	type key struct {
		line int
		sig  string
	}
	ex := map[key]kb.Hit{}
	for k, r := range s.MatchLines(sub, patterns.Stream, 0, analyzeTop, true) {
		for _, h := range r.Matches {
			ex[key{idx[k] + 1, h.Signature.ID}] = h
		}
	}
	for _, g := range groups {
		for j := range g.Lines {
			l := &g.Lines[j]
			if h, ok := ex[key{l.N, l.SigID}]; ok {
				explained(l, h)
			}
		}
	}
}

// explained fills a line's explanation from its hit.
func explained(l *web.AnalyzeLine, h kb.Hit) {
	if h.Explain == nil {
		return
	}
	l.Template, l.Direction, l.Missing, l.Notes = h.Signature.Template, h.Explain.Direction, h.Explain.Missing, h.Explain.Notes
	l.Segments = segments(h.Explain)
}

// segments cuts an explained text into its tokens, marked by status, and
// the separators between them.
func segments(ex *patterns.Explanation) []web.Segment {
	var out []web.Segment
	pos := 0
	for _, t := range ex.Tokens {
		if t.Start < pos || t.End > len(ex.Text) || t.Start > t.End {
			continue
		}
		if t.Start > pos {
			out = append(out, web.Segment{Text: ex.Text[pos:t.Start]})
		}
		cls := "extra"
		switch t.Status {
		case patterns.Literal:
			cls = "lit"
		case patterns.Masked:
			cls = "mask"
		}
		out = append(out, web.Segment{Text: ex.Text[t.Start:t.End], Class: cls})
		pos = t.End
	}
	if pos < len(ex.Text) {
		out = append(out, web.Segment{Text: ex.Text[pos:]})
	}
	return out
}

// sortGroups orders incidents by the number of lines they explain, then
// by best score.
func sortGroups(groups map[string]*web.AnalyzeGroup) []web.AnalyzeGroup {
	out := make([]web.AnalyzeGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Best != out[j].Best {
			return out[i].Best > out[j].Best
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// splitLines splits text into lines, dropping a final empty line.
func splitLines(text string) []string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
