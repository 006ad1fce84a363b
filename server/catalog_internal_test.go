package server

import (
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
	"github.com/incidex/incidex/web"
)

// TestReloadWarmsIncidentList: after the matcher reloads for a new
// generation, the pages' incident list is rebuilt in the background, so
// the first visitor of the search page does not pay for it.
func TestReloadWarmsIncidentList(t *testing.T) {
	k := kbtest.Open(t)
	if err := k.Write(t.Context(), kb.Write{Source: kb.Source{Path: "a.md"}, Incidents: []*kb.Incident{{ID: "disk-a", Title: "Disk A", Format: "markdown", CauseStatus: kb.CauseUnknown, Tags: []string{"disk"}}}}); err != nil {
		t.Fatal(err)
	}
	pages, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{KB: k, Matchers: ingest.NewMatchers(ingest.MatchersOptions{KB: k}), Web: pages, Mode: gin.TestMode})
	if err := s.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.cat.mu.Lock()
		c := s.cat.cur
		s.cat.mu.Unlock()
		if c != nil {
			if _, ok := c.summary("disk-a"); !ok || len(c.tags) != 1 {
				t.Errorf("warmed list = %+v", c)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the incident list was not rebuilt after Reload")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
