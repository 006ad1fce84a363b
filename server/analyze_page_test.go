package server_test

import (
	"html"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnalyzeUnexplainedLines: of a kubectl describe paste and journald
// lines, "Error lines no incident explains" lists only the lines whose level
// or words say error or warning, once each, with a count for repeats. The
// toleration line, Normal events and kubelet info lines are not listed, even
// when their words are alarming ("killed", "Error syncing pod").
func TestAnalyzeUnexplainedLines(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	logs, err := os.ReadFile("testdata/describe-journald.log")
	if err != nil {
		t.Fatal(err)
	}
	r := h.browser().postForm("/analyze", map[string][]string{"logs": {string(logs)}})
	wantPage(t, "analyze", r, 200, "51 lines read")
	sec := regexp.MustCompile(`(?s)<section class="card unmatched".*?</section>`).Find(r.body)
	items := regexp.MustCompile(`<span class="ln">(\d+)</span> <code>(.*?)</code>(?: <span class="repeats"[^>]*>×(\d+)</span>)?`).FindAllSubmatch(sec, -1)
	var got []string
	for _, m := range items {
		line := html.UnescapeString(string(m[2]))
		line = strings.Join(strings.Fields(line), " ")
		entry := string(m[1]) + " " + line
		if len(m[3]) > 0 {
			entry += " ×" + string(m[3])
		}
		got = append(got, entry)
	}
	want := []string{
		"31 Warning FrobnicateFailed 30s (x2 over 1m) widget-controller frobnicator could not grok widget web-tls",
		`34 Dec 01 03:04:06 worker-3 kubelet[911]: E1201 03:04:06.000101 911 widget.go:88] "Frobnicator failed" err="widget 17 not groked" pod="shop/web-7d9f8b6c5-x2k4q" ×5`,
		`40 Dec 01 03:04:11 worker-3 containerd[812]: time="2026-12-01T03:04:11.123456789Z" level=error msg="frobnicate shim 4411 exited badly" namespace=k8s.io`,
		"43 Dec 01 03:04:12 worker-3 widgetd[77]: panic: runtime error: index out of range [3] with length 3",
		"47 Dec 01 03:04:13 worker-3 widgetd[78]: WARN frobnicator pool low on widgets",
		"48 Dec 01 03:04:14 worker-3 widgetd[78]: Traceback (most recent call last):",
		"50 Dec 01 03:04:14 worker-3 widgetd[78]: ValueError: widget count must be positive",
		"51 Dec 01 03:04:15 worker-3 kubelet[911]: W1201 03:04:15.000000 911 widget.go:99] frobnicator queue at 90% of capacity",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexplained lines (-want +got):\n%s\nsection:\n%s", diff, sec)
	}
}

// TestIncidentRunbookSteps: the flannel write-up numbers its fix steps in
// comments ("# 1. Get flanneld running") and has commands without a comment
// of their own. The page's steps are not numbered twice, and no heading is a
// step of its own.
func TestIncidentRunbookSteps(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	r := h.browser().get("/incidents/flannel-subnet-env-missing")
	wantPage(t, "incident", r, 200, `<h3 class="step-group">Fix</h3>`, `<p class="step-ctx">Get flanneld running on the node`)
	for _, m := range regexp.MustCompile(`<p class="step-ctx">([^<]*)</p>`).FindAllSubmatch(r.body, -1) {
		text := string(m[1])
		if regexp.MustCompile(`^\d+[.)] `).MatchString(text) || text == "Fix" || text == "How to confirm" {
			t.Errorf("runbook step %q: numbered in its text, or a heading", text)
		}
	}
}

// TestLivePageGroups: /live shows one row per incident and resource, with
// the signatures it matched inside and their total count.
func TestLivePageGroups(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	pod := `,"namespace":"shop","node":"worker-3","pod":"web-1"}`
	body := `{"msg":"loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory"` + pod + "\n" +
		`{"msg":"Error registering network: failed to acquire lease: node \"worker-3\" pod cidr not assigned"` + pod + "\n" +
		`{"msg":"Error registering network: failed to acquire lease: node \"worker-3\" pod cidr not assigned"` + pod + "\n" +
		`{"msg":"loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory","namespace":"shop","node":"worker-4","pod":"web-2"}` + "\n"
	if r := h.do("POST", "/ingest/v1/ndjson", "application/x-ndjson", []byte(body)); r.status != 200 {
		t.Fatalf("webhook = %d %s", r.status, r.body)
	}
	waitOccurrences(t, h, "flannel-subnet-env-missing", 3)
	page := h.browser().get("/live").body
	rows := regexp.MustCompile(`(?s)<tr data-group="[^"]*" data-incident="flannel-subnet-env-missing" data-id="\d+">.*?</tr>`).FindAll(page, -1)
	if len(rows) != 2 {
		t.Fatalf("/live has %d flannel rows, want 2 (web-1 on worker-3, web-2 on worker-4)", len(rows))
	}
	var got []string
	for _, row := range rows {
		sigs := len(regexp.MustCompile(`<li data-id=`).FindAll(row, -1))
		count := regexp.MustCompile(`<td class="num count"[^>]*>(\d+)</td>`).FindSubmatch(row)
		pod := regexp.MustCompile(`pod</span>=<span class="v">([^<]*)<`).FindSubmatch(row)
		if count == nil || pod == nil {
			t.Fatalf("row without count or pod: %s", row)
		}
		got = append(got, string(pod[1])+" "+strconv.Itoa(sigs)+" signatures, count "+string(count[1]))
	}
	slices.Sort(got)
	want := []string{"web-1 2 signatures, count 3", "web-2 1 signatures, count 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/live flannel rows (-want +got):\n%s", diff)
	}
}
