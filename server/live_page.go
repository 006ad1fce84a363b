package server

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// liveRows bounds the occurrences the live page starts with.
const liveRows = 200

// handleLivePage serves /live: open occurrences, filtered by ?namespace=,
// ?node= and ?incident=; the page's script follows the SSE stream with
// the same filters and updates the rows in place.
func (s *Server) handleLivePage(c *gin.Context) {
	f := kb.OccurrenceFilter{Status: "open", Namespace: c.Query("namespace"), Node: c.Query("node"), Incident: c.Query("incident"), Limit: liveRows}
	list, err := s.occ.List(c.Request.Context(), f)
	if err != nil {
		s.writeError(c, err)
		return
	}
	d := web.LiveData{Page: s.page(c, "Live", "live"), Namespace: f.Namespace, Node: f.Node, Incident: f.Incident,
		StreamURL: "/api/v1/occurrences/stream"}
	q := url.Values{}
	for k, v := range map[string]string{"namespace": f.Namespace, "node": f.Node, "incident": f.Incident} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) > 0 {
		d.StreamURL += "?" + q.Encode()
	}
	for _, o := range list {
		d.Rows = append(d.Rows, web.LiveRow{ID: o.ID, IncidentID: o.IncidentID, Title: s.incidentTitle(o.IncidentID),
			Labels: web.Labels(o.Labels), Count: o.Count, FirstSeen: o.FirstSeen, LastSeen: o.LastSeen,
			Acked: o.AckedAt != nil, AckedBy: o.AckedBy, Sample: firstSample(o.Samples)})
	}
	s.render(c, http.StatusOK, "live", d)
}

func firstSample(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
