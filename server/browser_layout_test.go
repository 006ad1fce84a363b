package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/incidex/incidex/kb"
)

// layoutCheck runs in the page and lists what does not fit: an element that
// reaches past the viewport or is cut off by a box that clips or scrolls it
// (a code block's own lines may scroll inside it), a page or table that
// scrolls sideways, and a table cell narrower than its longest word (a word
// broken across lines). Text made to break anywhere (signature templates)
// or cut with an ellipsis is not a word to keep whole.
const layoutCheck = `(() => {
  const vw = document.documentElement.clientWidth, out = [];
  const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : "");
  const hidden = e => {
    for (let a = e; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.display === "none" || s.visibility === "hidden" || a.hidden || s.clip === "rect(0px, 0px, 0px, 0px)") return true;
    }
    return false;
  };
  // wordWidth measures a word as the page draws it, in the font of el.
  const wordWidth = (el, w) => {
    const m = document.createElement("span");
    m.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap;padding:0;border:0;margin:0";
    m.textContent = w;
    el.appendChild(m);
    const width = m.getBoundingClientRect().width;
    m.remove();
    return width;
  };
  if (document.documentElement.scrollWidth > vw + 1) out.push("page scrolls sideways: " + document.documentElement.scrollWidth + "px");
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0 || r.right <= 0 || r.left >= vw) continue; // empty, or parked off screen (the skip link)
    if (e.closest("pre") && e.tagName !== "PRE" || e.closest("summary") || hidden(e)) continue;
    if (r.right > vw + 1 || r.left < -1) { out.push(name(e) + " reaches " + Math.round(r.left) + ".." + Math.round(r.right) + " in a " + vw + "px viewport"); continue; }
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === "visible" || a.tagName === "PRE" || s.textOverflow === "ellipsis") continue;
      const ar = a.getBoundingClientRect();
      if (r.right > ar.right + 1 || r.left < ar.left - 1) { out.push(name(e) + " is cut off by " + name(a) + " (" + Math.round(r.right) + " > " + Math.round(ar.right) + ")"); }
      break;
    }
  }
  for (const e of document.querySelectorAll("table, .scroll")) {
    if (!hidden(e) && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible") out.push(name(e) + " scrolls sideways: " + e.scrollWidth + " > " + e.clientWidth);
  }
  for (const cell of document.querySelectorAll("td, th")) {
    if (hidden(cell)) continue;
    const cs = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const p = n.parentElement;
      if (p.closest(".tpl, pre") || hidden(p)) continue;
      let clipped = false;
      for (let a = p; a && a !== cell; a = a.parentElement) { const s = getComputedStyle(a); if (s.textOverflow === "ellipsis" || s.overflowX !== "visible") clipped = true; }
      if (clipped) continue;
      const s = getComputedStyle(p);
      const pad = p === cell ? 0 : parseFloat(s.paddingLeft) + parseFloat(s.paddingRight);
      for (const w of n.textContent.split(/\s+/)) {
        const ww = w ? wordWidth(p, w) + pad : 0;
        if (w && ww > room + 1) { out.push("cell " + name(cell) + " is " + Math.round(room) + "px, narrower than its word " + JSON.stringify(w) + " (" + Math.round(ww) + "px)"); break; }
      }
    }
  }
  return [...new Set(out)].slice(0, 12);
})()`

// TestBrowserLayout: each page fits at 1280 and 375 px (no overflow, no
// clipped element, no word broken in a table cell), and /live groups an
// incident's signatures on one resource into one row.
func TestBrowserLayout(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	// Two signatures of the flannel incident and one of another on the same
	// pod, and an unknown error for /patterns.
	pod := `,"namespace":"shop","node":"worker-3","pod":"web-7d9f8b6c5-x2k4q"}`
	body := `{"msg":"E1201 03:04:05.000001 911 kubelet.go:3012] loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory"` + pod + "\n" +
		`{"msg":"Error registering network: failed to acquire lease: node \"worker-3\" pod cidr not assigned"` + pod + "\n" +
		`{"msg":"Error registering network: failed to acquire lease: node \"worker-3\" pod cidr not assigned"` + pod + "\n" +
		`{"msg":"E1201 03:04:06.000001 911 kubelet.go:3012] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\""` + pod + "\n"
	for i := range 6 {
		body += fmt.Sprintf(`{"level":"error","msg":"quota broker refused reservation r-%d: tenant acme-corporation-international over soft limit","namespace":"billing"}`+"\n", i)
	}
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(body)); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	h.waitOccurrence("cni-not-initialized")
	h.waitPattern("quota broker refused reservation")
	waitOccurrences(t, h, "flannel-subnet-env-missing", 2)

	browserCtx := startBrowser(t, h, 120*time.Second)
	tb := newTab(t, browserCtx)
	pages := []struct{ path, ready string }{
		{"/", ".results"},
		{"/incidents/flannel-subnet-env-missing", ".runbook"},
		{"/analyze?logs=" + strings.ReplaceAll(flannelEvent, " ", "+"), "section.analysis"},
		{"/live", `body[data-live="connected"]`},
		{"/patterns", ".pattern"},
	}
	for _, width := range []int64{1280, 375} {
		var emulate chromedp.Action[chromedp.Void] = chromedp.EmulateViewport(width, 900)
		if width < 600 {
			emulate = chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile)
		}
		tb.do(t, fmt.Sprint(width, "px"), emulate)
		for _, p := range pages {
			tb.do(t, "open "+p.path, chromedp.Navigate(h.http.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)))
			if bad := run(t, tb, "layout of "+p.path, chromedp.Evaluate[[]string](layoutCheck)); len(bad) > 0 {
				t.Errorf("%s at %dpx does not fit:\n  %s", p.path, width, strings.Join(bad, "\n  "))
			}
			layoutScreenshot(t, tb, p.path, width)
		}
	}
	// One row per incident and resource, with its signatures inside.
	tb.do(t, "live", chromedp.Navigate(h.http.URL+"/live"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="connected"]`)))
	rows := run(t, tb, "rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr[data-incident]")].map(tr => tr.dataset.incident + " " + tr.querySelectorAll("ul.sigs li").length + " " + tr.querySelector("td.count").textContent.trim())`))
	if got := strings.Join(rows, ", "); !strings.Contains(got, "flannel-subnet-env-missing 2 3") || len(rows) != 2 {
		t.Errorf("live rows (incident, signatures, count) = %q, want flannel-subnet-env-missing with 2 signatures and count 3, and cni-not-initialized", got)
	}
	// A third signature on the same pod joins the row as it arrives, and the
	// row's Acknowledge acknowledges all three.
	third := `{"msg":"plugin type=\"flannel\" failed (add): failed to load flannel 'subnet.env' file: stat /run/flannel/subnet.env: permission denied"` + pod + "\n"
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(third)); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	flannelRow := `[...document.querySelectorAll("tr[data-incident=flannel-subnet-env-missing]")]`
	tb.do(t, "third signature", chromedp.Poll[chromedp.Void](flannelRow+`.length === 1 && `+flannelRow+`[0].querySelectorAll("ul.sigs li").length === 3 && `+flannelRow+`[0].querySelector("td.count").textContent === "4"`,
		chromedp.WithPollingTimeout(10*time.Second)))
	tb.do(t, "acknowledge the row",
		chromedp.Click(chromedp.CSS(`tr[data-incident="flannel-subnet-env-missing"] form.ack button`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-incident="flannel-subnet-env-missing"] .acked`)),
	)
	list, err := h.occ.List(t.Context(), kb.OccurrenceFilter{Incident: "flannel-subnet-env-missing"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o.AckedAt == nil {
			t.Errorf("occurrence %d (%s) is not acknowledged after the row's Acknowledge", o.ID, o.SignatureID)
		}
	}

	// The Fix card's code shows all of its lines, at both widths.
	for _, width := range []int64{1280, 375} {
		tb.do(t, "incident", chromedp.EmulateViewport(width, 900), chromedp.Navigate(h.http.URL+"/incidents/flannel-subnet-env-missing"), chromedp.WaitVisible(chromedp.CSS(".fix pre")))
		cut := run(t, tb, "fix code", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".card.fix pre, .card.cause pre")].filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.textContent.slice(0, 60))`))
		if len(cut) > 0 {
			t.Errorf("at %dpx the Fix card's code is cut at the side: %q", width, cut)
		}
	}
}

// waitOccurrences waits until incident has n occurrences.
func waitOccurrences(t *testing.T, h *harness, incident string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list, err := h.occ.List(t.Context(), kb.OccurrenceFilter{Incident: incident, Status: "open"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s has fewer than %d occurrences", incident, n)
}

// layoutScreenshot saves the full page as <page>-<width>.png in the folder
// LAYOUT_SCREENSHOTS names, if it is set, to look at.
func layoutScreenshot(t *testing.T, tb *tab, path string, width int64) {
	t.Helper()
	dir := os.Getenv("LAYOUT_SCREENSHOTS")
	if dir == "" {
		return
	}
	name := strings.Trim(strings.NewReplacer("/", "-", "?", "-").Replace(strings.SplitN(path, "=", 2)[0]), "-")
	if name == "" {
		name = "search"
	}
	png := run(t, tb, "screenshot "+path, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
