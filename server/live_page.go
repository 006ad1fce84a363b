package server

import (
	"cmp"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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
	d.Rows = s.liveRows(list)
	s.render(c, http.StatusOK, "live", d)
}

// liveRows groups occurrences by incident and resource, most recent first:
// one failure on one pod shows as one row, with the signatures it matched
// inside.
func (s *Server) liveRows(list []kb.Occurrence) []web.LiveRow {
	var rows []web.LiveRow
	index := map[string]int{}
	for _, o := range list {
		key := liveKey(o.IncidentID, o.Resource)
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, web.LiveRow{ID: o.ID, Key: key, IncidentID: o.IncidentID, Title: s.incidentTitle(o.IncidentID),
				Labels: web.Labels(o.Labels), FirstSeen: o.FirstSeen, LastSeen: o.LastSeen, Sample: firstSample(o.Samples), Acked: true})
		}
		r := &rows[i]
		r.Count += o.Count
		if o.LastSeen.After(r.LastSeen) {
			r.LastSeen, r.Sample = o.LastSeen, firstSample(o.Samples)
		}
		if o.FirstSeen.Before(r.FirstSeen) {
			r.FirstSeen = o.FirstSeen
		}
		acked := o.AckedAt != nil
		r.Signatures = append(r.Signatures, web.LiveSignature{ID: o.ID, SignatureID: o.SignatureID, Count: o.Count, Acked: acked})
		if acked {
			r.AckedBy = cmp.Or(r.AckedBy, o.AckedBy)
			continue
		}
		if r.Acked {
			r.ID, r.Acked = o.ID, false
		}
		r.Unacked = strings.TrimSpace(r.Unacked + " " + strconv.FormatInt(o.ID, 10))
	}
	return rows
}

// liveKey names a live row: an incident on a resource. The page's script
// builds the same key from an occurrence's JSON.
func liveKey(incident, resource string) string { return incident + " " + resource }

func firstSample(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
