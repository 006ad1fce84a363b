package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
)

// waitPattern waits until the miner has a pattern whose template contains
// sub, and returns it.
func (h *harness) waitPattern(sub string) kb.EmergingPattern {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range h.em.List(h.t.Context(), kb.PatternFilter{Limit: 50, IncludeMuted: true}) {
			if strings.Contains(p.Template, sub) {
				return p
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("no emerging pattern with %q", sub)
	return kb.EmergingPattern{}
}

// TestPatternsPageWorkflow: an unknown error arriving through the webhook
// shows on /patterns with its samples and labels; a logged-in admin opens
// its draft in the write-up form, mutes and unmutes it, and adds it to an
// existing incident, after which the lines match that incident.
func TestPatternsPageWorkflow(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	var body strings.Builder
	for i := range 8 {
		fmt.Fprintf(&body, `{"level":"error","msg":"ledger sync aborted: shard %d lease <held> by replica r-%d","namespace":"fin","pod":"ledger-%d"}`+"\n", i, 100+i, i)
	}
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(body.String())); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	p := h.waitPattern("ledger sync aborted")
	b := h.browser()

	// Anonymous: read-only, with a login link and the untrusted text escaped.
	r := b.get("/patterns")
	wantPage(t, "patterns", r, 200, "ledger sync aborted", "lease &lt;held&gt;", `<span class="k">namespace</span>=<span class="v">fin</span>`,
		"Log in</a> to write up", `aria-current="page"`)
	if strings.Contains(string(r.body), `action="/patterns/`+p.ID+`/mute"`) {
		t.Error("an anonymous visitor gets the mute form")
	}
	if r := b.postForm("/patterns/"+p.ID+"/mute", url.Values{}); r.status != 401 {
		t.Errorf("anonymous mute = %d, want 401", r.status)
	}

	b.postForm("/login", url.Values{"token": {"adm"}})
	wantPage(t, "patterns as admin", b.get("/patterns?sort=growth"), 200, `action="/patterns/`+p.ID+`/promote"`,
		`<option value="redis-connection-refused">`, `href="/incidents/new?pattern=`+p.ID+`"`)
	wantPage(t, "draft in the form", b.get("/incidents/new?pattern="+p.ID), 200, "## Root Cause", "ledger sync aborted")
	wantPage(t, "draft of a missing pattern", b.get("/incidents/new?pattern=nope"), 404)

	// Mute: gone from the list, back with ?muted=1, then unmuted.
	if r := b.postForm("/patterns/"+p.ID+"/mute", url.Values{"csrf": {"forged"}}); r.status != 403 {
		t.Errorf("mute with a forged CSRF token = %d, want 403", r.status)
	}
	r = b.postForm("/patterns/"+p.ID+"/mute", url.Values{"sort": {"growth"}})
	if r.status != 303 || r.header.Get("Location") != "/patterns?done=muted&sort=growth" {
		t.Fatalf("mute = %d %q", r.status, r.header.Get("Location"))
	}
	if r := b.get("/patterns"); strings.Contains(string(r.body), "ledger sync aborted") {
		t.Error("a muted pattern is still listed")
	}
	wantPage(t, "muted shown", b.get("/patterns?muted=1"), 200, "ledger sync aborted", ">Unmute<")
	b.postForm("/patterns/"+p.ID+"/mute", url.Values{"mute": {"0"}})
	wantPage(t, "unmuted", b.get("/patterns"), 200, "ledger sync aborted")

	// Promote to an existing incident.
	wantPage(t, "promote without an incident", b.postForm("/patterns/"+p.ID+"/promote", url.Values{}), 400, "choose the incident")
	r = b.postForm("/patterns/"+p.ID+"/promote", url.Values{"incident": {"redis-connection-refused"}})
	if r.status != 303 || r.header.Get("Location") != "/incidents/redis-connection-refused" {
		t.Fatalf("promote = %d %q %s", r.status, r.header.Get("Location"), regexpFind(t, string(r.body), `(?s)<main[^>]*>(.*)</main>`))
	}
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["ledger sync aborted: shard 42 lease <held> by replica r-7"]}`))
	if !strings.Contains(string(m.body), `"id":"redis-connection-refused"`) {
		t.Errorf("the promoted pattern does not match: %s", m.body)
	}
	wantPage(t, "promoted shown", b.get("/patterns"), 200, `added to <a href="/incidents/redis-connection-refused">`)
}

// TestPatternsPageWithoutMiner: a server that mines nothing says so.
func TestPatternsPageWithoutMiner(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutEmerging: true})
	wantPage(t, "patterns", h.browser().get("/patterns"), 200, "does not run it")
}

// TestAnalyzeFeedbackButtons: the analyze page offers thumbs on each
// match to an admin; a thumbs-down sent the way the page's script sends
// it is recorded and changes the ranking, and a plain form post gets a
// confirmation page.
func TestAnalyzeFeedbackButtons(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, extraWriteups: map[string]string{
		"a.md": "---\nid: disk-a\ntitle: Disk A\n---\n# Disk A\n\n## Symptoms\n\n```log\nwrite /var/lib/db/wal: no space left on device\n```\n",
		"b.md": "---\nid: disk-b\ntitle: Disk B\nlikelihood: occasional\n---\n# Disk B\n\n## Symptoms\n\n```log\nwrite /var/lib/db/wal: no space left on device\n```\n",
	}})
	line := "write /var/lib/db/wal: no space left on device"
	b := h.browser()
	r := b.postForm("/analyze", url.Values{"logs": {line}})
	wantPage(t, "analyze", r, 200, `action="/feedback"`, `name="incident" value="disk-a"`, `name="verdict" value="down"`)
	sig := regexpFind(t, string(r.body), `name="signature" value="([^"]+)"`)

	// The script's request: form fields, X-CSRF-Token, Accept JSON.
	req, _ := http.NewRequest("POST", h.http.URL+"/feedback", strings.NewReader(url.Values{"signature": {sig}, "incident": {"disk-a"},
		"line": {line}, "verdict": {"down"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", b.csrf())
	req.Header.Set("Accept", "application/json")
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var fb struct{ Verdict, SignatureID string }
	_ = json.NewDecoder(resp.Body).Decode(&fb)
	resp.Body.Close()
	if resp.StatusCode != 201 || fb.Verdict != "down" {
		t.Fatalf("feedback = %d %+v", resp.StatusCode, fb)
	}
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["`+line+`"]}`))
	if i, j := strings.Index(string(m.body), `"id":"disk-b"`), strings.Index(string(m.body), `"id":"disk-a"`); i < 0 || j >= 0 && j < i {
		t.Errorf("after a thumbs-down disk-b is not first: %s", m.body)
	}
	wantPage(t, "feedback without script", b.postForm("/feedback", url.Values{"incident": {"disk-b"}, "line": {line}, "verdict": {"up"}}), 200,
		"Marked as a correct match", `href="/incidents/disk-b"`)
	wantPage(t, "bad verdict", b.postForm("/feedback", url.Values{"signature": {sig}, "line": {line}, "verdict": {"meh"}}), 400)
}

func regexpFind(t *testing.T, s, expr string) string {
	t.Helper()
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in the page", expr)
	}
	return m[1]
}
