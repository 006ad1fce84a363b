package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
)

// TestEmergingPatternToIncident: error lines no incident knows go through
// the webhook, become an emerging pattern, the pattern's draft write-up is
// saved as a new incident, and the same lines then match it.
func TestEmergingPatternToIncident(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	var body strings.Builder
	for i := range 12 {
		fmt.Fprintf(&body, `{"level":"error","msg":"payment gateway handshake rejected: merchant profile m-%d locked by fraud rule FR-%d","namespace":"pay","pod":"gateway-7d9f8b6c4-x%dkq9"}`+"\n", 4000+i, 20+i, i%10)
	}
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(body.String())); r.status != 200 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	var pat struct {
		ID, Template string
		Count        int64
		Labels       map[string][]string
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := h.do("GET", "/api/v1/patterns", "", nil)
		var list struct {
			Patterns []json.RawMessage `json:"patterns"`
		}
		_ = json.Unmarshal(r.body, &list)
		if len(list.Patterns) > 0 {
			_ = json.Unmarshal(list.Patterns[0], &pat)
			if pat.Count == 12 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no emerging pattern with 12 lines: %s", r.body)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if !strings.Contains(pat.Template, "payment gateway handshake rejected") || pat.Labels["namespace"][0] != "pay" {
		t.Errorf("pattern = %+v", pat)
	}
	draft := h.do("GET", "/api/v1/patterns/"+pat.ID+"/draft", "", nil)
	md := string(draft.body)
	if draft.status != 200 || !strings.Contains(md, "## Root Cause") || !strings.Contains(md, "## Fix") || !strings.Contains(md, "payment gateway handshake rejected") {
		t.Fatalf("draft = %d\n%s", draft.status, md)
	}
	// The author fills in the cause and saves it.
	md = strings.Replace(md, "TBD: what goes wrong, and why.", "The fraud service locks merchant profiles after chargebacks.", 1)
	r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte(md), "Authorization", "Bearer adm")
	if r.status != 201 {
		t.Fatalf("save draft = %d %s", r.status, r.body)
	}
	var saved struct {
		Incidents []struct{ ID string } `json:"incidents"`
	}
	_ = json.Unmarshal(r.body, &saved)
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["payment gateway handshake rejected: merchant profile m-9999 locked by fraud rule FR-77"]}`))
	if !strings.Contains(string(m.body), `"id":"`+saved.Incidents[0].ID+`"`) {
		t.Errorf("the saved draft does not match its lines: %s", m.body)
	}
	if r := h.do("POST", "/api/v1/patterns/"+pat.ID+"/mute", "", nil, "Authorization", "Bearer adm"); r.status != 200 {
		t.Errorf("mute = %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/v1/patterns", "", nil); strings.Contains(string(r.body), pat.ID) {
		t.Errorf("a muted pattern is still listed: %s", r.body)
	}
}

// TestPromotePatternToExistingIncident adds a pattern as a signature of an
// incident that exists; its lines then match that incident.
func TestPromotePatternToExistingIncident(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	line := `{"level":"error","msg":"cache client gave up: pool exhausted after 30s wait, all 64 connections to cache-0 busy","pod":"api-0"}`
	h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(line+"\n"+line+"\n"))
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		for _, p := range h.em.List(t.Context(), kb.PatternFilter{Limit: 10}) {
			if strings.Contains(p.Template, "pool exhausted") {
				id = p.ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("no emerging pattern")
	}
	r := h.do("POST", "/api/v1/patterns/"+id+"/promote", "application/json", []byte(`{"incident":"redis-connection-refused"}`))
	if r.status != 200 {
		t.Fatalf("promote = %d %s", r.status, r.body)
	}
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["cache client gave up: pool exhausted after 10s wait, all 8 connections to cache-1 busy"]}`))
	if !strings.Contains(string(m.body), `"id":"redis-connection-refused"`) {
		t.Errorf("promoted pattern does not match: %s", m.body)
	}
	inc := h.do("GET", "/api/v1/incidents/redis-connection-refused", "", nil)
	if !strings.Contains(string(inc.body), `"kind":"promoted"`) {
		t.Errorf("the incident lacks the promoted signature")
	}
}

// TestFeedbackChangesRanking: two incidents explain a line about equally;
// marking the first wrong for lines like it puts the other first, and the
// explanation says why.
func TestFeedbackChangesRanking(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, extraWriteups: map[string]string{
		"a.md": "---\nid: disk-a\ntitle: Disk A\n---\n# Disk A\n\n## Symptoms\n\n```log\nwrite /var/lib/db/wal: no space left on device\n```\n",
		"b.md": "---\nid: disk-b\ntitle: Disk B\nlikelihood: occasional\n---\n# Disk B\n\n## Symptoms\n\n```log\nwrite /var/lib/db/wal: no space left on device\n```\n",
	}})
	line := "write /var/lib/db/wal: no space left on device"
	top := func() (string, string) {
		r := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["`+line+`"],"explain":true}`))
		var res struct {
			Results []struct {
				Matches []struct {
					Incident struct{ ID string }
					Explain  struct{ Notes []string }
				}
			}
		}
		_ = json.Unmarshal(r.body, &res)
		ms := res.Results[0].Matches
		notes := ""
		for _, m := range ms {
			notes += strings.Join(m.Explain.Notes, " ")
		}
		return ms[0].Incident.ID, notes
	}
	if first, _ := top(); first != "disk-a" {
		t.Fatalf("before feedback the first is %s, want disk-a", first)
	}
	r := h.do("POST", "/api/v1/feedback", "application/json", []byte(`{"incident_id":"disk-a","line":"write /var/lib/db/wal: no space left on device","verdict":"down","note":"it was B"}`))
	if r.status != 201 {
		t.Fatalf("feedback = %d %s", r.status, r.body)
	}
	first, notes := top()
	if first != "disk-b" || !strings.Contains(notes, "down-weighted x0.50: marked wrong for lines like this 1 more time(s) than right") {
		t.Errorf("after feedback: first %s, notes %q", first, notes)
	}
	list := h.do("GET", "/api/v1/feedback", "", nil)
	if !strings.Contains(string(list.body), `"note":"it was B"`) {
		t.Errorf("feedback list = %s", list.body)
	}
}
