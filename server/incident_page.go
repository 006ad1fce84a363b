package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// occurrencesOnIncidentPage is how many recent occurrences the incident page lists.
const occurrencesOnIncidentPage = 10

// handleIncidentPage serves /incidents/:id: root cause, fix, runbook,
// signatures and recent occurrences first, then the rendered write-up.
func (s *Server) handleIncidentPage(c *gin.Context) {
	ctx := c.Request.Context()
	inc, err := s.kb.Get(ctx, c.Param("id"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	occs, err := s.occ.List(ctx, kb.OccurrenceFilter{Incident: inc.ID, Limit: occurrencesOnIncidentPage})
	if err != nil {
		s.writeError(c, err)
		return
	}
	d := web.IncidentData{Page: s.page(c, inc.Title, "search"), Incident: inc, Occurrences: occs}
	for _, id := range inc.Overlaps {
		d.Overlaps = append(d.Overlaps, web.Link{ID: id, Title: s.incidentTitle(id)})
	}
	s.render(c, http.StatusOK, "incident", d)
}

// incidentTitle returns the title of an incident the matcher knows, else "".
func (s *Server) incidentTitle(id string) string {
	if m := s.Matcher(); m != nil {
		if ref := m.Incident(id); ref != nil {
			return ref.Title
		}
	}
	return ""
}
