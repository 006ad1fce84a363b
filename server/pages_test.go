package server_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	h *harness
	c *http.Client
}

func (h *harness) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{h: h, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) response {
	b.h.t.Helper()
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := b.c.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (b *browser) get(path string) response {
	req, _ := http.NewRequest("GET", b.h.http.URL+path, nil)
	return b.do(req)
}

// csrf returns the CSRF token of this browser (visiting a page first when
// it has none).
func (b *browser) csrf() string {
	u, _ := url.Parse(b.h.http.URL)
	for _, ck := range b.c.Jar.Cookies(u) {
		if ck.Name == "incidex_csrf" {
			return ck.Value
		}
	}
	b.get("/login")
	for _, ck := range b.c.Jar.Cookies(u) {
		if ck.Name == "incidex_csrf" {
			return ck.Value
		}
	}
	b.h.t.Fatal("no CSRF cookie")
	return ""
}

// postForm posts a urlencoded form with the CSRF token (unless it has one).
func (b *browser) postForm(path string, form url.Values, header ...string) response {
	if !form.Has("csrf") {
		form.Set("csrf", b.csrf())
	}
	req, _ := http.NewRequest("POST", b.h.http.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// postMultipart posts a multipart form with a file field and the CSRF token.
func (b *browser) postMultipart(path string, fields map[string]string, fileName, file string) response {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if _, ok := fields["csrf"]; !ok {
		_ = w.WriteField("csrf", b.csrf())
	}
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if fileName != "" {
		fw, _ := w.CreateFormFile("file", fileName)
		_, _ = io.WriteString(fw, file)
	}
	_ = w.Close()
	req, _ := http.NewRequest("POST", b.h.http.URL+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

func wantPage(t *testing.T, name string, r response, status int, contains ...string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s = %d, want %d\n%s", name, r.status, status, firstN(r.body, 600))
	}
	if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s Content-Type = %q, want text/html; charset=utf-8", name, ct)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") ||
		strings.Contains(csp, "unsafe-inline") {
		t.Errorf("%s Content-Security-Policy = %q", name, csp)
	}
	for _, c := range contains {
		if !strings.Contains(string(r.body), c) {
			t.Errorf("%s lacks %q", name, c)
		}
	}
}

func firstN(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func TestPagesRender(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	b := h.browser()
	tests := []struct {
		path     string
		status   int
		contains []string
	}{
		{"/", 200, []string{"44 incidents", `href="/incidents/flannel-subnet-env-missing"`, `<option value="networking"`}},
		{"/?q=subnet.env", 200, []string{`value="subnet.env"`, "Flannel CNI cannot read /run/flannel/subnet.env", "<mark>subnet.env</mark>"}},
		{"/?q=&tag=dns", 200, []string{`href="/incidents/dns-upstream-timeout"`, "with this filter"}},
		{"/?q=timeout&service=etcd", 200, []string{`href="/incidents/etcd-request-timeout"`}},
		{"/?q=zzzqqq-nothing", 200, []string{"0 incidents match", "analyze the log lines"}},
		{"/incidents/flannel-subnet-env-missing", 200, []string{"Root cause", "flanneld writes the file only after", "Runbook",
			`<var class="ph">&lt;node&gt;</var>`, `class="copy" data-copy="kubectl get pods -A -o wide -l app=flannel --field-selector spec.nodeName=&lt;node&gt;"`,
			"Signatures", "open /run/flannel/subnet.env: no such file or directory", "Recent occurrences", "Write-up", `href="/incidents/cni-startup-race"`}},
		{"/incidents/nope", 404, []string{`incident &#34;nope&#34;: not found`}},
		{"/incidents/newer", 404, []string{"not found"}},
		{"/analyze", 200, []string{`enctype="multipart/form-data"`, `<textarea id="logs" name="logs"`, `type="file"`}},
		{"/live", 200, []string{"Live occurrences", `data-stream="/api/v1/occurrences/stream"`, "No open occurrences"}},
		{"/live?namespace=shop&node=worker-3", 200, []string{`data-stream="/api/v1/occurrences/stream?namespace=shop&amp;node=worker-3"`, `value="shop"`}},
		{"/incidents/new", 200, []string{"New write-up", `action="/incidents/new"`, `name="csrf"`}},
		{"/incidents/oom-killed/edit", 200, []string{"Edit <code>oom-killed</code>", `action="/incidents/oom-killed/edit"`, "id: oom-killed"}},
		{"/login", 200, []string{"No admin token is configured"}},
		{"/patterns-not-built", 404, []string{"no such route"}},
	}
	for _, tt := range tests {
		wantPage(t, "GET "+tt.path, b.get(tt.path), tt.status, tt.contains...)
	}
}

func TestRootServesElasticsearchToShippers(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	r := h.do("GET", "/", "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"tagline":"You Know, for Search"`) {
		t.Errorf("GET / without Accept: text/html = %d %s, want the Elasticsearch root", r.status, firstN(r.body, 200))
	}
	// An Elasticsearch index named like a page route still takes _bulk.
	bulk := `{"create":{}}` + "\n" + `{"message":"hello"}` + "\n"
	if r := h.do("POST", "/incidents/_bulk", "application/x-ndjson", []byte(bulk)); r.status != 200 {
		t.Errorf("POST /incidents/_bulk = %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/analyze/_bulk", "application/x-ndjson", []byte(bulk)); r.status != 200 {
		t.Errorf("POST /analyze/_bulk = %d %s", r.status, r.body)
	}
}

func TestStaticAssets(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	page := h.browser().get("/")
	css := regexp.MustCompile(`/static/app\.[0-9a-f]+\.css`).Find(page.body)
	if css == nil {
		t.Fatal("no hashed stylesheet link on /")
	}
	r := h.do("GET", string(css), "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Errorf("GET %s = %d %q %q", css, r.status, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
	}
	if r := h.do("GET", "/static/app.js", "", nil); r.status != 200 || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /static/app.js = %d %q", r.status, r.header.Get("Cache-Control"))
	}
	for _, p := range []string{"/static/", "/static/nope.css", "/static/../server.go"} {
		if r := h.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("GET %s = %d, want 404", p, r.status)
		}
	}
}

// xssWriteup tries every way to run script from a write-up.
const xssWriteup = `---
id: xss-probe
title: 'Zorglub <script>alert("title")</script> failure'
tags: [zorglub]
---
# Zorglub <script>alert(1)</script>

<script>alert(2)</script>
<img src=x onerror="alert(3)">
<a href="javascript:alert(4)">raw link</a>
<svg onload=alert(5)></svg><iframe src="https://example.com"></iframe>

[md link](javascript:alert(6)) [upper](JaVaScRiPt:alert(7)) ![img](javascript:alert(8))
Zorglub <b onmouseover=alert(9)>bold</b> and ` + "`<script>alert(10)</script>`" + `.

## Root Cause

The zorglub daemon <script>alert(11)</script> crashed.

## Symptoms

` + "```log\nE0101 00:00:00.000000 1 z.go:1] zorglub: failed to frobnicate <script>alert(12)</script> <img src=x onerror=alert(13)>\n```\n" + `
## Fix

` + "```bash\nkubectl -n <namespace> delete pod zorglub-0 <script>alert(14)</script>\n```\n"

// assertInert fails when a page has a script other than the page's own,
// an event-handler attribute, an element that embeds content, or a URL
// that runs script.
func assertInert(t *testing.T, name string, body []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				if src := attrOf(n, "src"); !strings.HasPrefix(src, "/static/") || n.FirstChild != nil {
					t.Errorf("%s: <script src=%q> with content %v survived", name, src, n.FirstChild != nil)
				}
			case "iframe", "object", "embed", "svg", "style", "base":
				t.Errorf("%s: <%s> survived", name, n.Data)
			}
			for _, a := range n.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(strings.ToLower(a.Key), "on") ||
					((a.Key == "href" || a.Key == "src" || a.Key == "action") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:text"))) {
					t.Errorf("%s: <%s %s=%q> survived", name, n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if n := strings.Count(strings.ToLower(string(body)), "<script"); n != 1 {
		t.Errorf("%s: %d <script tags, want only the page's own", name, n)
	}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestXSSWriteupIsInert(t *testing.T) {
	h := newHarness(t, harnessOpts{extraWriteups: map[string]string{"xss-probe.md": xssWriteup}})
	b := h.browser()
	inc := b.get("/incidents/xss-probe")
	wantPage(t, "incident page", inc, 200, "&lt;script&gt;alert(10)&lt;/script&gt;", "raw HTML omitted", "zorglub-0 &lt;script&gt;alert(14)")
	assertInert(t, "incident page", inc.body)

	search := b.get("/?q=zorglub+frobnicate")
	wantPage(t, "search results", search, 200, `href="/incidents/xss-probe"`, "<mark>")
	if !strings.Contains(string(search.body), "&lt;script&gt;") {
		t.Error("search results do not show the write-up's <script> as escaped text")
	}
	assertInert(t, "search results", search.body)
	assertInert(t, "incident list", b.get("/?tag=zorglub").body)

	line := `E0302 03:04:05.000001 1 z.go:1] zorglub: failed to frobnicate <script>alert(20)</script> <img src=x onerror=alert(21)>`
	an := b.postForm("/analyze", url.Values{"logs": {line + "\nerror: <svg onload=alert(22)>"}})
	wantPage(t, "analyze", an, 200, `href="/incidents/xss-probe"`, "&lt;script&gt;")
	assertInert(t, "analyze", an.body)

	preview := b.postMultipart("/incidents/new", map[string]string{"action": "preview", "markdown": xssWriteup}, "", "")
	wantPage(t, "preview", preview, 200, "Signatures that would be learned")
	assertInert(t, "preview", preview.body)
}
