package server_test

import (
	"strings"
	"testing"
)

// The search page shows each result's date, organisation and tags, facets
// for tag, organisation and year with their counts, and fragments without
// the front matter; an incident page shows the fields no column holds.
func TestSearchPageFacetsAndFields(t *testing.T) {
	a := "---\ntitle: Mailer backlog\nstart_time: 2020-11-02T09:30:00Z\nend_time: 2020-11-02T15:40:00Z\nkeywords: [zorblax, email]\ncompany: Lumen Post\nseverity: high\nuuid: u-123\n---\n" +
		"The zorblax queue grew. It turned out the prefetch was 1.\n"
	b := "---\ntitle: Broker upgrade\ndate: 2021-01-05\nlabels: [zorblax]\norg: Acme\n---\nThe zorblax broker was upgraded.\n"
	h := newHarness(t, harnessOpts{extraWriteups: map[string]string{"a.md": a, "b.md": b}})
	br := h.browser()
	page := br.get("/?q=zorblax")
	wantPage(t, "search", page, 200, `<time datetime="2020-11-02">`, `<span class="org">Lumen Post</span>`, `aria-label="Refine by"`,
		`href="/?org=Lumen&#43;Post&amp;q=zorblax">Lumen Post <span class="count">1</span>`, `zorblax <span class="count">2</span>`,
		`2021 <span class="count">1</span>`)
	if s := string(page.body); strings.Contains(s, "severity") || strings.Contains(s, "keywords:") {
		t.Errorf("search page shows front matter:\n%s", s)
	}
	filtered := br.get("/?q=zorblax&org=Acme")
	wantPage(t, "filtered", filtered, 200, `href="/incidents/b"`, `aria-current="true"`)
	if strings.Contains(string(filtered.body), `href="/incidents/a"`) {
		t.Error("org=Acme still lists the Lumen Post incident")
	}
	list := br.get("/?year=2020")
	wantPage(t, "list by year", list, 200, `href="/incidents/a"`)
	inc := br.get("/incidents/a")
	wantPage(t, "incident", inc, 200, "<dt>uuid</dt><dd>u-123</dd>", "lasted 6h10m", `class="cause-source"`, "It turned out the prefetch was 1.")
}
