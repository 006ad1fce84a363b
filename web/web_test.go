package web_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

func newEngine(t testing.TB) *web.Engine {
	t.Helper()
	e, err := web.New()
	if err != nil {
		t.Fatalf("web.New() = %v", err)
	}
	return e
}

func render(t *testing.T, e *web.Engine, page string, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := e.Render(&b, page, data); err != nil {
		t.Fatalf("Render(%s) = %v", page, err)
	}
	return b.String()
}

var page = web.Page{Title: "T", Nav: "search", CSRF: "tok123", CanWrite: true, Path: "/x"}

func sampleIncident() *kb.Incident {
	return &kb.Incident{
		ID: "flannel-subnet-env-missing", Title: "Flannel CNI cannot read subnet.env", Format: "markdown", Source: "starter:x.md",
		Date: "2024-02-19", Tags: []string{"cni", "flannel"}, CauseStatus: kb.CauseKnown, RootCause: "flanneld never wrote `subnet.env`.",
		Superseded: []string{"Flannel is broken."}, Fix: "Restart flannel.",
		Runbook:    []kb.Step{{Heading: "Confirm", Comment: "Is flannel running?", Command: "kubectl -n <namespace> get pods -o wide --field-selector spec.nodeName=<node>"}},
		Signatures: []kb.Signature{{ID: "s-1", Kind: kb.SigCurated, Template: "open /run/flannel/subnet.env: no such file or directory"}},
		Body:       "---\nid: x\n---\n# Flannel\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```bash\nls /run/flannel\n```\n",
	}
}

func TestEveryPageRenders(t *testing.T) {
	e := newEngine(t)
	now := time.Date(2026, 3, 7, 22, 41, 9, 0, time.UTC)
	tests := []struct {
		page string
		data any
		want []string
	}{
		{"search", web.SearchData{Page: page, Query: "subnet.env", Total: 1, PageNum: 1, Pages: 1, Tags: []web.Facet{{Value: "cni", Count: 3}}, Tag: "cni",
			Results: []web.SearchResult{{ID: "a-b", Title: "A B", Tags: []string{"cni"}, CauseUnknown: true,
				Fragments: []web.Fragment{{Field: "body", Text: "x " + kb.MarkStart + "subnet.env" + kb.MarkEnd + " y"}}}}},
			[]string{`value="subnet.env"`, `<a href="/incidents/a-b">A B</a>`, "Root cause not stated", "<mark>subnet.env</mark>", `<option value="cni" selected>`, `aria-current="page"`}},
		{"search", web.SearchData{Page: page, Listing: true, Total: 0, PageNum: 1, Pages: 1}, []string{"0 incidents"}},
		{"incident", web.IncidentData{Page: page, Incident: sampleIncident(), Overlaps: []web.Link{{ID: "cni-startup-race"}},
			Occurrences: []kb.Occurrence{{ID: 7, Labels: map[string]string{"node": "worker-3", "namespace": "shop"}, Count: 42, LastSeen: now, Status: "open"}}},
			[]string{"Root cause", "<code>subnet.env</code>", "Superseded guess", `<var class="ph">&lt;namespace&gt;</var>`,
				`data-copy="kubectl -n &lt;namespace&gt; get pods`, "open /run/flannel/subnet.env", "<table>", `<span class="k">namespace</span>=<span class="v">shop</span>`,
				">42<", "2026-03-07 22:41:09 UTC", `href="/incidents/cni-startup-race"`, `href="/incidents/flannel-subnet-env-missing/edit"`, `<code class="language-bash">`}},
		{"incident", web.IncidentData{Page: page, Incident: &kb.Incident{ID: "IL-0087", Title: "Fyra", Format: "library", CauseStatus: kb.CauseUnknown, Body: "IL-0087 Fyra\nline two"}},
			[]string{"Root cause not stated", "<p>line two</p>", "No runbook commands", "Not seen in the logs"}},
		{"analyze", web.AnalyzeData{Page: page, MaxBytes: 5 << 20, MaxLines: 50000, Submitted: true, Lines: 3, Matched: 1,
			Groups: []web.AnalyzeGroup{{ID: "g", Title: "G", Count: 1, Best: 0.9, Lines: []web.AnalyzeLine{{N: 2, Text: "dial 10.0.0.1", SigID: "sig-7", Score: 0.9, Alternatives: []web.Alternative{{ID: "h", Title: "H <x>", Score: 0.8}}, Template: "dial tcp <ip>:443", Direction: "stream",
				Segments: []web.Segment{{Text: "dial", Class: "lit"}, {Text: " "}, {Text: "10.0.0.1", Class: "mask"}}, Missing: []string{"timeout"}, Notes: []string{"score halved: <the line>"}}}}},
			Unmatched: []web.AnalyzeLine{{N: 3, Text: "error: <b>"}}},
			[]string{"5 MB", `<span class="t-lit">dial</span> <span class="t-mask">10.0.0.1</span>`, `<del class="missing">timeout</del>`, `<em class="note">score halved: &lt;the line&gt;</em>`, "score <strong>0.90</strong>", "error: &lt;b&gt;", "1 unmatched error line",
				`action="/feedback"`, `name="signature" value="sig-7"`, `name="incident" value="g"`, `name="verdict" value="down"`,
				`Also possible: <a href="/incidents/h">H &lt;x&gt;</a> <span class="muted">(0.80)</span>`}},
		{"live", web.LiveData{Page: page, Namespace: "shop", StreamURL: "/api/v1/occurrences/stream?namespace=shop",
			Rows: []web.LiveRow{{ID: 9, Key: "oom-killed pod/shop/a", IncidentID: "oom-killed", Title: "OOM", Count: 5, LastSeen: now, Labels: []web.Label{{"node", "n1"}}, Unacked: "9 4",
				Signatures: []web.LiveSignature{{ID: 9, SignatureID: "s-1", Count: 3}, {ID: 4, SignatureID: "s-2", Count: 2}}}}},
			[]string{`data-stream="/api/v1/occurrences/stream?namespace=shop"`, `data-group="oom-killed pod/shop/a"`, `<li data-id="9" data-count="3"><code>s-1</code> <span class="n">×3</span></li>`,
				`<li data-id="4" data-count="2">`, `action="/api/v1/occurrences/9/ack?by=web" class="ack" data-ids="9 4"`, `name="csrf" value="tok123"`, `<template id="live-row">`}},
		{"patterns", web.PatternsData{Page: page, Enabled: true, Sort: "growth", Incidents: []web.Link{{ID: "oom-killed", Title: "OOM <kill>"}},
			Patterns: []web.PatternRow{{ID: "p-1a2b", Template: "volume <*> failed: <b>bad</b>", Count: 120, Recent: 40, Growth: 4.5, Growing: true,
				FirstSeen: now, LastSeen: now, Samples: []string{"volume pvc-1 failed: <script>x</script>"}, Labels: []web.Label{{"namespace", "shop, ci"}}}}},
			[]string{"volume &lt;*&gt; failed: &lt;b&gt;bad&lt;/b&gt;", "120 lines", "growing ×4.5", `<option value="growth" selected>`,
				`action="/patterns/p-1a2b/promote"`, `<option value="oom-killed">OOM &lt;kill&gt; (oom-killed)</option>`, `action="/patterns/p-1a2b/mute"`,
				`href="/incidents/new?pattern=p-1a2b"`, "&lt;script&gt;x&lt;/script&gt;", `name="csrf" value="tok123"`}},
		{"patterns", web.PatternsData{Page: page}, []string{"does not run it"}},
		{"feedback", web.FeedbackData{Page: page, Verdict: "down", IncidentID: "oom-killed", Line: "<i>x</i>"},
			[]string{"Marked as a wrong match", `href="/incidents/oom-killed"`, "&lt;i&gt;x&lt;/i&gt;"}},
		{"edit", web.EditData{Page: page, Action: "/incidents/new", Text: "# <b>x</b>", Preview: []*kb.Incident{sampleIncident()}},
			[]string{`action="/incidents/new"`, "# &lt;b&gt;x&lt;/b&gt;</textarea>", "Signatures that would be learned", `name="csrf" value="tok123"`}},
		{"login", web.LoginData{Page: web.Page{AuthEnabled: true, CSRF: "c"}, Next: "/live", Error: "bad"}, []string{`type="password"`, `name="next" value="/live"`, "bad"}},
		{"logout", web.Page{LoggedIn: true, CSRF: "c"}, []string{`action="/logout"`}},
		{"deadletters", web.DeadLettersData{Page: page, Enabled: true, Total: 2, Rows: []web.DeadLetterRow{{Seq: 41, Reason: "payload does not decode", Time: now, Bytes: 11, Preview: "<script>x"}}},
			[]string{"2 records messages could not be processed", "<td>41</td>", "payload does not decode", "<code>&lt;script&gt;x</code>", "2026-03-07 22:41:09"}},
		{"deadletters", web.DeadLettersData{Page: page}, []string{"does not run on NATS JetStream"}},
		{"error", web.ErrorData{Page: page, Status: 404, Message: "incident \"x\": not found", RequestID: "r1"}, []string{"404", "incident &#34;x&#34;: not found", "r1"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.page] = true
		out := render(t, e, tt.page, tt.data)
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("Render(%s) lacks %q", tt.page, w)
			}
		}
		for _, w := range []string{"<!doctype html>", `<main id="main"`, e.AssetURL("app.css"), e.AssetURL("app.js")} {
			if !strings.Contains(out, w) {
				t.Errorf("Render(%s) lacks the layout's %q", tt.page, w)
			}
		}
		if strings.Contains(out, " style=") || strings.Contains(out, "<style") {
			t.Errorf("Render(%s) has inline style, which the CSP blocks", tt.page)
		}
	}
	for _, p := range web.Pages {
		if !seen[p] {
			t.Errorf("page %s has no render test", p)
		}
	}
}

func TestRenderUnknownPage(t *testing.T) {
	if err := newEngine(t).Render(&bytes.Buffer{}, "nope", nil); err == nil {
		t.Error(`Render("nope") = nil, want an error`)
	}
}

func TestStaticAssetsAreHashed(t *testing.T) {
	e := newEngine(t)
	u := e.AssetURL("app.css")
	if !strings.HasPrefix(u, "/static/app.") || !strings.HasSuffix(u, ".css") || u == "/static/app.css" {
		t.Fatalf("AssetURL(app.css) = %q, want a hashed name", u)
	}
	name := strings.TrimPrefix(u, "/static/")
	if !e.Immutable(name) || e.Immutable("app.css") {
		t.Errorf("Immutable(%q), Immutable(app.css) = %v, %v; want true, false", name, e.Immutable(name), e.Immutable("app.css"))
	}
	a, err1 := fs.ReadFile(e.Static(), name)
	b, err2 := fs.ReadFile(e.Static(), "app.css")
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("Static() hashed and plain app.css differ: %v %v", err1, err2)
	}
}
