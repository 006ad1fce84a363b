package server_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestLoginGuardsWritePages(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm-secret"})
	b := h.browser()
	r := b.get("/incidents/new")
	if r.status != 303 || r.header.Get("Location") != "/login?next=%2Fincidents%2Fnew" {
		t.Fatalf("GET /incidents/new without login = %d %q, want 303 to /login", r.status, r.header.Get("Location"))
	}
	wantPage(t, "search without login", b.get("/"), 200, `href="/login?next=%2f">Log in</a>`)
	if strings.Contains(string(b.get("/incidents/oom-killed").body), "Edit write-up") {
		t.Error("the incident page offers Edit before login")
	}
	wantPage(t, "wrong token", b.postForm("/login", url.Values{"token": {"nope"}, "next": {"/incidents/new"}}), 401, "not valid")
	r = b.postForm("/login", url.Values{"token": {"adm-secret"}, "next": {"/incidents/new"}})
	if r.status != 303 || r.header.Get("Location") != "/incidents/new" {
		t.Fatalf("POST /login = %d %q, want 303 to /incidents/new", r.status, r.header.Get("Location"))
	}
	ck := cookieHeader(r.header, "incidex_session")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("session cookie %q lacks %s", ck, want)
		}
	}
	if strings.Contains(ck, "Secure") {
		t.Errorf("session cookie %q is Secure over plain HTTP", ck)
	}
	wantPage(t, "new after login", b.get("/incidents/new"), 200, "New write-up", "Log out")
	// The cookie is also a token for the API's reads, not for its writes without CSRF.
	r = b.postForm("/logout", url.Values{})
	if r.status != 303 || !strings.Contains(cookieHeader(r.header, "incidex_session"), "Max-Age=0") {
		t.Errorf("POST /logout = %d %v", r.status, r.header.Values("Set-Cookie"))
	}
	if r := b.get("/incidents/new"); r.status != 303 {
		t.Errorf("GET /incidents/new after logout = %d, want 303", r.status)
	}
}

func TestLoginRedirectStaysLocal(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"} {
		r := h.browser().postForm("/login", url.Values{"token": {"adm"}, "next": {next}})
		if r.status != 303 || r.header.Get("Location") != "/" {
			t.Errorf("login with next=%q redirects to %q, want /", next, r.header.Get("Location"))
		}
	}
}

func TestReadTokenGuardsPages(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm", readTok: "rd"})
	b := h.browser()
	if r := b.get("/?q=oom"); r.status != 303 {
		t.Errorf("GET /?q=oom without the read token = %d, want 303 to /login", r.status)
	}
	if r := b.postForm("/login", url.Values{"token": {"rd"}}); r.status != 303 {
		t.Fatalf("login with the read token = %d", r.status)
	}
	wantPage(t, "search with the read token", b.get("/?q=oom"), 200, "oom-killed")
	if r := b.get("/incidents/new"); r.status != 303 {
		t.Errorf("GET /incidents/new with the read token = %d, want 303 to /login", r.status)
	}
	// The live page's stream takes the cookie.
	req, _ := http.NewRequest("GET", h.http.URL+"/api/v1/occurrences?status=all", nil)
	if r := b.do(req); r.status != 200 {
		t.Errorf("API read with the session cookie = %d", r.status)
	}
}

func TestCSRF(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true})
	b := h.browser()
	md := "---\nid: csrf-probe\ntitle: CSRF probe\n---\n# CSRF probe\n\n```log\nE0101 00:00:00.000000 1 a.go:1] probe: write /data/x: no space left on device\n```\n"
	if r := b.postMultipart("/incidents/new", map[string]string{"csrf": "forged", "action": "save", "markdown": md}, "", ""); r.status != 403 {
		t.Errorf("save with a forged CSRF token = %d, want 403", r.status)
	}
	if r := b.postMultipart("/incidents/new", map[string]string{"csrf": "", "action": "save", "markdown": md}, "", ""); r.status != 403 {
		t.Errorf("save without a CSRF token = %d, want 403", r.status)
	}
	r := b.postForm("/logout", url.Values{}, "Sec-Fetch-Site", "cross-site")
	if r.status != 403 || !strings.Contains(string(r.body), "another site") {
		t.Errorf("cross-site POST /logout = %d, want 403", r.status)
	}
	// Open writes (no admin token): a cross-site browser request to the API is refused too.
	if r := h.do("POST", "/api/v1/incidents", "text/plain", []byte(md), "Sec-Fetch-Site", "cross-site"); r.status != 403 {
		t.Errorf("cross-site POST /api/v1/incidents = %d, want 403", r.status)
	}
	if r := h.do("POST", "/api/v1/incidents", "text/plain", []byte(md), "Origin", "https://evil.example"); r.status != 403 {
		t.Errorf("POST /api/v1/incidents from another Origin = %d, want 403", r.status)
	}
	if r := b.postMultipart("/incidents/new", map[string]string{"action": "save", "markdown": md}, "", ""); r.status != 303 {
		t.Errorf("save with the CSRF token = %d %s, want 303", r.status, firstN(r.body, 300))
	}
}

func TestWriteupPreviewAndSave(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, adminTok: "adm"})
	b := h.browser()
	b.postForm("/login", url.Values{"token": {"adm"}})
	md := "# Broker disk full\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] broker: write segment /data/kafka/log-42: no space left on device\n```\n\n## Root Cause\n\nThe broker's volume filled up.\n"
	r := b.postMultipart("/incidents/new", map[string]string{"action": "preview", "markdown": md}, "", "")
	wantPage(t, "preview", r, 200, "Preview: Broker disk full <code>broker-disk-full-", `broker: write segment /data/kafka/<var class="ph">&lt;id&gt;</var>: no space left on device`,
		"<p>The broker's volume filled up.</p>", "# Broker disk full\n")
	if list := h.do("GET", "/api/v1/incidents", "", nil); strings.Contains(string(list.body), "broker-disk-full") {
		t.Error("preview stored the write-up")
	}
	r = b.postMultipart("/incidents/new", map[string]string{"action": "save"}, "broker.md", md)
	if r.status != 303 || r.header.Get("Location") != "/incidents/broker" {
		t.Fatalf("save an uploaded file = %d %q, want 303 to /incidents/broker\n%s", r.status, r.header.Get("Location"), firstN(r.body, 400))
	}
	m := h.do("POST", "/api/v1/match", "application/json", []byte(`{"lines":["broker: write segment /data/kafka/log-7: no space left on device"]}`))
	if !strings.Contains(string(m.body), `"id":"broker"`) {
		t.Errorf("the saved write-up does not match at once: %s", m.body)
	}
	wantPage(t, "saved incident", b.get("/incidents/broker"), 200, "The broker's volume filled up.")
	// Edit: the id stays; another id in front matter is refused.
	r = b.postMultipart("/incidents/broker/edit", map[string]string{"action": "save", "markdown": strings.Replace(md, "filled up", "filled up with logs", 1)}, "", "")
	if r.status != 303 || r.header.Get("Location") != "/incidents/broker" {
		t.Errorf("edit = %d %q", r.status, r.header.Get("Location"))
	}
	wantPage(t, "edited incident", b.get("/incidents/broker"), 200, "filled up with logs")
	r = b.postMultipart("/incidents/broker/edit", map[string]string{"action": "save", "markdown": "---\nid: other\n---\n" + md}, "", "")
	wantPage(t, "edit to another id", r, 400, "write-up defines other, not broker")
	wantPage(t, "empty", b.postMultipart("/incidents/new", map[string]string{"action": "save", "markdown": "  "}, "", ""), 400, "file is empty")
}

func TestAnalyzePage(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	b := h.browser()
	flannel := `Warning  FailedCreatePodSandBox  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "x": plugin type="flannel" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory`
	calico := `Final result of CNI DEL was an error. error=error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`
	healthy := `I0307 22:43:30.512881       1 main.go:433] Wrote subnet file to /run/flannel/subnet.env`
	unknown := `E0307 22:43:31.000000       1 foo.go:1] frobnicator: failed to grok the widget`
	r := b.postMultipart("/analyze", map[string]string{"logs": strings.Join([]string{flannel, calico, healthy, unknown}, "\r\n")}, "", "")
	wantPage(t, "analyze", r, 200, "4 lines read", `href="/incidents/flannel-subnet-env-missing"`, `href="/incidents/calico-apiserver-unreachable"`,
		`<span class="t-lit">subnet.env</span>`, "failed to grok the widget", "Error lines no incident explains")
	if n := strings.Count(string(r.body), "Wrote subnet file"); n != 1 { // the text box echoes it once
		t.Error("the healthy line is listed as a match or an unmatched error")
	}
	// The same from a file, and from a link.
	wantPage(t, "analyze a file", b.postMultipart("/analyze", nil, "kubelet.log", flannel+"\n"), 200, `href="/incidents/flannel-subnet-env-missing"`)
	wantPage(t, "analyze a link", b.get("/analyze?logs="+url.QueryEscape(calico)), 200, `href="/incidents/calico-apiserver-unreachable"`)
	// Past explainAllLines, the shown lines are explained in a second pass.
	many := strings.Repeat(flannel+"\n", 2100)
	wantPage(t, "analyze 2100 lines", b.postForm("/analyze", url.Values{"logs": {many}}), 200, "2100 lines read", "and 2000 more lines", `<span class="t-lit">subnet.env</span>`)
	// Limits.
	wantPage(t, "too many lines", b.postForm("/analyze", url.Values{"logs": {strings.Repeat("x\n", 50001)}}), 413, "over the limit of 50000")
	wantPage(t, "too large", b.postMultipart("/analyze", nil, "big.log", strings.Repeat("y", 5<<20+10)), 413, "over the 5 MB limit")
	wantPage(t, "empty", b.postForm("/analyze", url.Values{"logs": {"\n\n"}}), 400, "paste log lines or choose a file first")
}

func TestLiveAcknowledge(t *testing.T) {
	h := newHarness(t, harnessOpts{adminTok: "adm"})
	line := `{"msg":"E0302 03:04:05.000001 911 kubelet.go:3012] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"","namespace":"shop","node":"worker-3"}`
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(line+"\n")); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	occ := h.waitOccurrence("cni-not-initialized")
	b := h.browser()
	wantPage(t, "live", b.get("/live?namespace=shop"), 200, `data-incident="cni-not-initialized"`, "Log in to acknowledge", "worker-3")
	wantPage(t, "live, other namespace", b.get("/live?namespace=other"), 200, "No open occurrences")
	b.postForm("/login", url.Values{"token": {"adm"}})
	ack := "/api/v1/occurrences/" + strconv.FormatInt(occ.ID, 10) + "/ack?by=web"
	req, _ := http.NewRequest("POST", h.http.URL+ack, nil)
	if r := b.do(req); r.status != 403 {
		t.Errorf("ack with the session cookie and no CSRF token = %d, want 403", r.status)
	}
	req, _ = http.NewRequest("POST", h.http.URL+ack, nil)
	req.Header.Set("X-CSRF-Token", b.csrf())
	if r := b.do(req); r.status != 200 {
		t.Errorf("ack with the session cookie and the CSRF token = %d %s", r.status, r.body)
	}
	// Without JavaScript the form posts and comes back to the page.
	r := b.postForm(ack, url.Values{"next": {"/live?namespace=shop"}})
	if r.status != 303 || r.header.Get("Location") != "/live?namespace=shop" {
		t.Errorf("ack form = %d %q, want 303 back to the live page", r.status, r.header.Get("Location"))
	}
	wantPage(t, "live after ack", b.get("/live"), 200, "Acknowledged by web")
	wantPage(t, "incident occurrences", b.get("/incidents/cni-not-initialized"), 200, `<span class="k">namespace</span>=<span class="v">shop</span>`, "acknowledged by web")
}

func cookieHeader(h http.Header, name string) string {
	for _, v := range h.Values("Set-Cookie") {
		if strings.HasPrefix(v, name+"=") {
			return v
		}
	}
	return ""
}
