package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/web"
)

// Browser tests drive headless Chromium over the real server. Without a
// browser they skip, except under CI=true, where that is a failure.
// UPDATE_SCREENSHOTS=1 rewrites docs/screenshots/*.png.

// findChromium returns the browser to drive, or skips.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("browser tests need Chromium and CI=true: install it (apt-get install chromium)")
	}
	t.Skip("browser tests skipped: no Chromium on PATH (apt-get install chromium)")
	return ""
}

// tab is one browser tab that counts JavaScript dialogs (alert, confirm,
// prompt) and dismisses them.
type tab struct {
	ctx     context.Context
	dialogs atomic.Int32
}

func newTab(t *testing.T, browserCtx context.Context) *tab {
	t.Helper()
	tb := &tab{}
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithListener(func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			tb.dialogs.Add(1)
			go func() { _, _ = chromedp.Call(tb.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}) }()
		}
	}))
	t.Cleanup(cancel)
	tb.ctx = ctx
	return tb
}

func (tb *tab) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func run[T any](t *testing.T, tb *tab, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot saves the viewport as docs/screenshots/name.png when
// UPDATE_SCREENSHOTS=1.
func (tb *tab) screenshot(t *testing.T, name string) {
	t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	png := run(t, tb, "screenshot "+name, chromedp.CaptureScreenshot())
	p := filepath.Join("..", "docs", "screenshots", name+".png")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrowser(t *testing.T) {
	start := time.Now()
	hostile, err := os.ReadFile("../ingest/writeup/testdata/collection/pm-d04-hostile.html")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{extraWriteups: map[string]string{"xss-probe.md": xssWriteup, "hostile-page.html": string(hostile)}})
	browserCtx := startBrowser(t, h, 90*time.Second)
	t.Logf("Chromium started in %v", time.Since(start).Round(time.Millisecond))

	t.Run("search, open an incident, copy a runbook command", func(t *testing.T) { browseSearchAndCopy(t, h, newTab(t, browserCtx)) })
	t.Run("analyze pasted lines", func(t *testing.T) { browseAnalyze(t, h, newTab(t, browserCtx)) })
	t.Run("thumbs down on a match", func(t *testing.T) { browseFeedback(t, h, newTab(t, browserCtx)) })
	t.Run("emerging pattern muted from its page", func(t *testing.T) { browsePatterns(t, h, newTab(t, browserCtx)) })
	t.Run("live occurrence appears without a reload", func(t *testing.T) { browseLive(t, h, newTab(t, browserCtx)) })
	t.Run("XSS write-up fires no dialog", func(t *testing.T) { browseXSS(t, h, newTab(t, browserCtx)) })
	t.Run("hostile HTML write-up renders inert", func(t *testing.T) { browseHostileHTML(t, h, newTab(t, browserCtx), hostile) })
	t.Run("375px wide and dark", func(t *testing.T) { browseNarrowAndDark(t, h, newTab(t, browserCtx)) })
	t.Logf("browser tests took %v", time.Since(start).Round(time.Millisecond))
}

// startBrowser starts headless Chromium for the harness's server; it stops
// when the test ends or after timeout.
func startBrowser(t *testing.T, h *harness, timeout time.Duration) context.Context {
	t.Helper()
	exe := findChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(browserCtx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: perm}, Setting: cdpbrowser.PermissionSettingGranted, Origin: h.http.URL}); err != nil {
			t.Logf("grant %s: %v", perm, err)
		}
	}
	return browserCtx
}

func browseSearchAndCopy(t *testing.T, h *harness, tb *tab) {
	tb.do(t, "search",
		chromedp.Navigate(h.http.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "subnet.env: no such file"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS(`#result-summary q`)),
		chromedp.WaitVisible(chromedp.CSS(`.results a[href="/incidents/flannel-subnet-env-missing"]`)),
	)
	if loc := run(t, tb, "location", chromedp.Location()); !strings.Contains(loc, "q=subnet.env") {
		t.Errorf("the query is not in the URL: %s", loc)
	}
	tb.screenshot(t, "search")
	tb.do(t, "open the incident",
		chromedp.Click(chromedp.CSS(`.results a[href="/incidents/flannel-subnet-env-missing"]`)),
		chromedp.WaitVisible(chromedp.CSS(".runbook button.copy")),
	)
	tb.screenshot(t, "incident")
	want := run(t, tb, "command", chromedp.AttributeValue(chromedp.CSS(".runbook button.copy"), "data-copy"))
	tb.do(t, "copy", chromedp.Click(chromedp.CSS(".runbook button.copy")), chromedp.WaitVisible(chromedp.CSS(".runbook button.copy[data-copied]")))
	label := run(t, tb, "button label", chromedp.Text(chromedp.CSS(".runbook button.copy[data-copied]")))
	copied := run(t, tb, "copied text", chromedp.AttributeValue(chromedp.CSS(".runbook button.copy[data-copied]"), "data-copied"))
	if !want.Exists || !strings.Contains(want.Value, "<node>") || copied.Value != want.Value || label != "Copied" {
		t.Errorf("copy: button says %q and copied %q, want Copied and %q", label, copied.Value, want.Value)
	}
	// With the clipboard permission granted, read the clipboard itself.
	clip, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	switch {
	case err != nil:
		t.Logf("clipboard not readable here (%v); checked the copied text through the button", err)
	case clip != want.Value:
		t.Errorf("clipboard = %q, want %q", clip, want.Value)
	}
}

const (
	flannelEvent = `Warning  FailedCreatePodSandBox  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "x": plugin type="flannel" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory`
	calicoLine   = `Final result of CNI DEL was an error. error=error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`
)

func browseAnalyze(t *testing.T, h *harness, tb *tab) {
	tb.do(t, "analyze",
		chromedp.Navigate(h.http.URL+"/analyze"),
		chromedp.WaitVisible(chromedp.CSS("#logs")),
		chromedp.SetValue(chromedp.CSS("#logs"), flannelEvent+"\n"+calicoLine+"\nE0307 22:43:31.000000 1 foo.go:1] frobnicator: failed to grok the widget"),
		chromedp.Click(chromedp.CSS(`form.analyze button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("section.analysis")),
	)
	ids := run(t, tb, "incidents", chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.group h3 code")].map(e => e.textContent)`))
	got := strings.Join(ids, " ")
	if !strings.Contains(got, "flannel-subnet-env-missing") || !(strings.Contains(got, "calico-apiserver-unreachable") || strings.Contains(got, "meta-cni-apiserver-unreachable-after-reboot")) {
		t.Errorf("analyze shows incidents %v, want flannel-subnet-env-missing and calico-apiserver-unreachable (or its overlap)", ids)
	}
	tb.do(t, "scroll to results", chromedp.ScrollIntoView(chromedp.CSS("section.analysis")))
	tb.screenshot(t, "analyze")
}

// browseFeedback clicks the thumbs-down of a match: the script records it
// without leaving the page, and the knowledge base has it.
func browseFeedback(t *testing.T, h *harness, tb *tab) {
	tb.do(t, "analyze",
		chromedp.Navigate(h.http.URL+"/analyze"),
		chromedp.WaitVisible(chromedp.CSS("#logs")),
		chromedp.SetValue(chromedp.CSS("#logs"), flannelEvent),
		chromedp.Click(chromedp.CSS(`form.analyze button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.group form.fb button[value="down"]`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`),
		chromedp.Click(chromedp.CSS(`section.group form.fb button[value="down"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.group .fb-done`)),
	)
	if ok := run(t, tb, "no reload", chromedp.Evaluate[bool](`window.notReloaded === true`)); !ok {
		t.Error("the feedback left the analyze page")
	}
	done := run(t, tb, "message", chromedp.Text(chromedp.CSS(`section.group .fb-done`)))
	list, err := h.kb.ListFeedback(t.Context(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Verdict != "down" || !strings.Contains(list[0].Line, "subnet.env") || !strings.Contains(done, "wrong match") {
		t.Errorf("after the click: message %q, feedback %+v", done, list)
	}
}

// browsePatterns: an unknown error arrives through the webhook, shows on
// /patterns, and the Mute button takes it off the list.
func browsePatterns(t *testing.T, h *harness, tb *tab) {
	var body strings.Builder
	for i := range 6 {
		fmt.Fprintf(&body, `{"level":"error","msg":"quota broker refused reservation r-%d: tenant acme over soft limit","namespace":"billing"}`+"\n", i)
	}
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(body.String())); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	p := h.waitPattern("quota broker refused reservation")
	sel := "#p-" + p.ID
	tb.do(t, "open patterns", chromedp.Navigate(h.http.URL+"/patterns"), chromedp.WaitVisible(chromedp.CSS(sel)))
	tb.screenshot(t, "patterns")
	tb.do(t, "mute",
		chromedp.Click(chromedp.CSS(sel+` form[action$="/mute"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.status`)),
	)
	if n := run(t, tb, "rows", chromedp.Evaluate[int](`document.querySelectorAll("`+sel+`").length`)); n != 0 {
		t.Error("the muted pattern is still on the page")
	}
	if got, _ := h.em.Get(t.Context(), p.ID); !got.Muted {
		t.Error("the pattern is not muted in the store")
	}
}

func browseLive(t *testing.T, h *harness, tb *tab) {
	tb.do(t, "open live",
		chromedp.Navigate(h.http.URL+"/live?namespace=shop"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="connected"]`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`),
	)
	rec := `{"msg":"E0302 03:04:05.000001 911 kubelet.go:3012] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"","namespace":"shop","node":"worker-3","app":"web"}`
	other := strings.ReplaceAll(rec, `"namespace":"shop"`, `"namespace":"other"`)
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(other+"\n"+rec+"\n")); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	tb.do(t, "wait for the row", chromedp.WaitVisible(chromedp.CSS(`tr[data-incident="cni-not-initialized"] td.count`)))
	if ok := run(t, tb, "no reload", chromedp.Evaluate[bool](`window.notReloaded === true`)); !ok {
		t.Error("the live page reloaded")
	}
	rows := run(t, tb, "rows", chromedp.Evaluate[int](`document.querySelectorAll("tr[data-incident]").length`))
	if rows != 1 {
		t.Errorf("live?namespace=shop shows %d rows, want 1 (the other namespace is filtered out)", rows)
	}
	where := run(t, tb, "labels", chromedp.Text(chromedp.CSS(`tr[data-incident="cni-not-initialized"] td.where`)))
	if !strings.Contains(where, "namespace=shop") || !strings.Contains(where, "node=worker-3") {
		t.Errorf("where = %q, want namespace=shop and node=worker-3", where)
	}
	// A second matching line updates the row in place.
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(rec+"\n")); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	tb.do(t, "count 2", chromedp.Poll[chromedp.Void](`document.querySelector('tr[data-incident="cni-not-initialized"] td.count').textContent === "2"`,
		chromedp.WithPollingTimeout(10*time.Second)))
	title := run(t, tb, "title", chromedp.Poll[string](`(() => { const a = document.querySelector('tr[data-incident="cni-not-initialized"] td a'); return a.textContent !== "cni-not-initialized" && a.textContent; })()`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if !strings.Contains(title, "cni plugin not initialized") {
		t.Errorf("the new row's title = %q", title)
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		tb.do(t, "let the highlight fade", chromedp.Sleep(1700*time.Millisecond))
	}
	tb.screenshot(t, "live")
	tb.do(t, "acknowledge",
		chromedp.Click(chromedp.CSS(`tr[data-incident="cni-not-initialized"] form.ack button`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-incident="cni-not-initialized"] .acked`)),
	)
	occ := h.waitOccurrence("cni-not-initialized")
	if occ.AckedBy != "web" {
		t.Errorf("acked by %q, want web", occ.AckedBy)
	}
}

func browseXSS(t *testing.T, h *harness, tb *tab) {
	for _, path := range []string{"/incidents/xss-probe", "/?q=zorglub+frobnicate", "/?tag=zorglub"} {
		tb.do(t, "open "+path, chromedp.Navigate(h.http.URL+path), chromedp.WaitReady(chromedp.CSS("footer")))
	}
	tb.do(t, "analyze a probe line",
		chromedp.Navigate(h.http.URL+"/analyze"),
		chromedp.SetValue(chromedp.CSS("#logs"), `E0101 00:00:00.000000 1 z.go:1] zorglub: failed to frobnicate <script>alert(20)</script> <img src=x onerror=alert(21)>`),
		chromedp.Click(chromedp.CSS(`form.analyze button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("section.analysis")),
		chromedp.Navigate(h.http.URL+"/incidents/xss-probe"),
		chromedp.WaitReady(chromedp.CSS("footer")),
		chromedp.Sleep(300*time.Millisecond), // give an injected handler time to fire
	)
	if n := tb.dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs opened", n)
	}
	if n := run(t, tb, "scripts", chromedp.Evaluate[int](`document.scripts.length`)); n != 1 {
		t.Errorf("the incident page has %d scripts, want 1 (its own)", n)
	}
}

// browseHostileHTML opens the incident of an HTML write-up full of
// scripts, frames, event handlers and javascript: links, and its search
// results: nothing of it runs, and its text is still there.
func browseHostileHTML(t *testing.T, h *harness, tb *tab, page []byte) {
	incs, err := writeup.ParseWriteup("hostile-page.html", page)
	if err != nil {
		t.Fatal(err)
	}
	id := incs[0].ID
	for _, path := range []string{web.IncidentURL(id), "/?q=hostile+xss+probe", "/?q=pwned"} {
		tb.do(t, "open "+path, chromedp.Navigate(h.http.URL+path), chromedp.WaitReady(chromedp.CSS("footer")),
			chromedp.Sleep(200*time.Millisecond))
		if n := tb.dialogs.Load(); n != 0 {
			t.Errorf("%s: %d JavaScript dialogs opened", path, n)
		}
		probe := `JSON.stringify({pwned: window.pwned === undefined ? 0 : window.pwned, title: document.title === 'pwned',
			scripts: document.scripts.length, frames: document.querySelectorAll('iframe,frame,object,embed').length,
			handlers: [...document.querySelectorAll('main *, article *, .results *')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
			links: [...document.querySelectorAll('a[href]')].filter(a => !/^(https?:|\/|#|mailto:)/i.test(a.getAttribute('href'))).length})`
		got := run(t, tb, "probe "+path, chromedp.Evaluate[string](probe))
		if want := `{"pwned":0,"title":false,"scripts":1,"frames":0,"handlers":0,"links":0}`; got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	tb.do(t, "back to the incident", chromedp.Navigate(h.http.URL+web.IncidentURL(id)), chromedp.WaitReady(chromedp.CSS("footer")))
	text := run(t, tb, "page text", chromedp.Evaluate[string](`document.querySelector('section.writeup').innerText`))
	for _, want := range []string{"<script>window.pwned=11</script>", "webhook token rejected: signature mismatch", "a good link"} {
		if !strings.Contains(text, want) {
			t.Errorf("write-up text lacks %q:\n%s", want, text)
		}
	}
}

func browseNarrowAndDark(t *testing.T, h *harness, tb *tab) {
	tb.do(t, "new write-up", chromedp.Navigate(h.http.URL+"/incidents/new"), chromedp.WaitVisible(chromedp.CSS("#markdown")))
	tb.screenshot(t, "new-writeup")
	tb.do(t, "375px", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	for _, path := range []string{"/", "/incidents/flannel-subnet-env-missing", "/analyze", "/live", "/patterns", "/incidents/new"} {
		tb.do(t, "open "+path, chromedp.Navigate(h.http.URL+path), chromedp.WaitReady(chromedp.CSS("footer")))
		w := run(t, tb, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if w > 375 {
			wide := run(t, tb, "wide", chromedp.Evaluate[[]string](`[...document.querySelectorAll("body *")].filter(e => { if (e.getBoundingClientRect().right <= 376) return false; for (let a = e.parentElement; a; a = a.parentElement) { if (getComputedStyle(a).overflowX !== "visible") return false; } return true; }).slice(0, 8).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`))
			t.Errorf("%s is %dpx wide at a 375px viewport: %v", path, w, wide)
		}
	}
	tb.do(t, "search at 375px", chromedp.Navigate(h.http.URL+"/?q=i/o+timeout"), chromedp.WaitVisible(chromedp.CSS(".results")))
	tb.screenshot(t, "search-mobile")
	if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	tb.do(t, "1280px dark", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(h.http.URL+"/incidents/flannel-subnet-env-missing"),
		chromedp.WaitVisible(chromedp.CSS(".runbook")))
	bg := run(t, tb, "background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if bg != "rgb(21, 24, 28)" {
		t.Errorf("dark background = %s, want rgb(21, 24, 28)", bg)
	}
	tb.screenshot(t, "incident-dark")
}
