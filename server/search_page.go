package server

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// Page sizes of the search page.
const (
	searchPerPage = 20
	listPerPage   = 50
)

// handleSearchPage serves / for browsers: search results for ?q= (with
// ?tag= and ?service= filters), or the list of incidents without a query.
func (s *Server) handleSearchPage(c *gin.Context) {
	ctx := c.Request.Context()
	cat, err := s.catalog(ctx)
	if err != nil {
		s.writeError(c, err)
		return
	}
	f := filters{tag: c.Query("tag"), svc: c.Query("service"), org: c.Query("org"), year: c.Query("year")}
	q := strings.TrimSpace(c.Query("q"))
	pageNum, _ := strconv.Atoi(c.Query("page"))
	pageNum = max(pageNum, 1)
	d := web.SearchData{Page: s.page(c, "Search", "search"), Query: q, Tag: f.tag, Service: f.svc, Org: f.org, Year: f.year,
		Tags: withSelected(cat.tags, f.tag), Services: withSelected(cat.services, f.svc), PageNum: pageNum}
	status, per := http.StatusOK, searchPerPage
	if q == "" {
		per = listPerPage
		d.Listing = true
		var counts map[string][]kb.FacetCount
		d.Results, d.Total, counts = listPage(cat, f, pageNum)
		d.Facets = facetGroups(counts, c.Request.URL.Query(), f)
	} else if res, err := s.kb.Search(ctx, searchRequest(q, f, pageNum)); err != nil {
		var ve *kb.ValidationError
		if !errors.As(err, &ve) {
			s.writeError(c, err)
			return
		}
		status, d.Error = http.StatusBadRequest, ve.Msg
	} else {
		d.Total, d.Took = int(res.Total), res.Took.Round(10*time.Microsecond)
		for _, h := range res.Hits {
			d.Results = append(d.Results, searchResult(h, cat))
		}
		d.Facets = facetGroups(res.Facets, c.Request.URL.Query(), f)
	}
	paginate(&d, per, c.Request.URL.Query())
	s.render(c, status, "search", d)
}

// filters are the search page's facet filters.
type filters struct{ tag, svc, org, year string }

func searchRequest(q string, f filters, page int) kb.SearchRequest {
	r := kb.SearchRequest{Query: q, Size: searchPerPage, From: (page - 1) * searchPerPage, Facets: true}
	for _, p := range []struct {
		v   string
		dst *[]string
	}{{f.tag, &r.Tags}, {f.svc, &r.Services}, {f.org, &r.Orgs}, {f.year, &r.Years}} {
		if p.v != "" {
			*p.dst = []string{p.v}
		}
	}
	return r
}

// listPage returns one page of the incident list, filtered, and the facet
// counts over every incident that passes the filters.
func listPage(cat *catalog, f filters, page int) ([]web.SearchResult, int, map[string][]kb.FacetCount) {
	var out []web.SearchResult
	n := 0
	from := (page - 1) * listPerPage
	counts := map[string]map[string]int{"tags": {}, "organisation": {}, "year": {}}
	for _, sm := range cat.list {
		year := yearOf(sm.Date)
		if (f.tag != "" && !slices.Contains(sm.Tags, f.tag)) || (f.svc != "" && !slices.Contains(sm.Services, f.svc)) ||
			(f.org != "" && sm.Org != f.org) || (f.year != "" && year != f.year) {
			continue
		}
		for _, t := range sm.Tags {
			counts["tags"][t]++
		}
		if sm.Org != "" {
			counts["organisation"][sm.Org]++
		}
		if year != "" {
			counts["year"][year]++
		}
		if n >= from && n < from+listPerPage {
			out = append(out, web.SearchResult{ID: sm.ID, Title: sm.Title, Date: sm.Date, Org: sm.Org, Tags: sm.Tags,
				RootCause: causeLine(sm.RootCause), CauseUnknown: sm.CauseStatus == kb.CauseUnknown,
				CauseNotFound: sm.CauseStatus == kb.CauseUnknown && sm.CauseFrom == kb.CauseFromNone})
		}
		n++
	}
	fc := make(map[string][]kb.FacetCount, len(counts))
	for name, m := range counts {
		fs := facets(m)
		list := make([]kb.FacetCount, 0, min(len(fs), 15))
		for _, x := range fs[:min(len(fs), 15)] {
			list = append(list, kb.FacetCount{Value: x.Value, Count: x.Count})
		}
		fc[name] = list
	}
	return out, n, fc
}

func yearOf(date string) string {
	if len(date) >= 4 {
		return date[:4]
	}
	return ""
}

// facetGroups turns facet counts into links: each value filters the
// current query by it, a selected value's link removes the filter.
func facetGroups(counts map[string][]kb.FacetCount, q url.Values, f filters) []web.FacetGroup {
	groups := []struct{ name, field, param, sel string }{
		{"Tag", "tags", "tag", f.tag}, {"Organisation", "organisation", "org", f.org}, {"Year", "year", "year", f.year},
	}
	var out []web.FacetGroup
	for _, g := range groups {
		fg := web.FacetGroup{Name: g.name}
		for _, fc := range counts[g.field] {
			v := url.Values{}
			for k, vs := range q {
				if k != "page" && k != g.param {
					v[k] = vs
				}
			}
			sel := fc.Value == g.sel
			if !sel {
				v.Set(g.param, fc.Value)
			}
			fg.Values = append(fg.Values, web.FacetLink{Value: fc.Value, Count: fc.Count, URL: "/?" + v.Encode(), Selected: sel})
		}
		out = append(out, fg)
	}
	return out
}

// fragmentFields are the highlighted fields, in the order shown; the root
// cause has its own line.
var fragmentFields = []string{"signatures", "body", "root_cause"}

// maxFragments bounds the excerpts shown per result.
const maxFragments = 2

func searchResult(h kb.SearchHit, cat *catalog) web.SearchResult {
	r := web.SearchResult{ID: h.ID, Title: h.Title, Date: h.Date, Org: h.Org, Tags: h.Tags, RootCause: causeLine(h.RootCause)}
	if sm, ok := cat.summary(h.ID); ok {
		r.CauseUnknown = sm.CauseStatus == kb.CauseUnknown
		r.CauseNotFound = r.CauseUnknown && sm.CauseFrom == kb.CauseFromNone
	}
	for _, f := range fragmentFields {
		for _, frag := range h.Fragments[f] {
			if len(r.Fragments) < maxFragments {
				r.Fragments = append(r.Fragments, web.Fragment{Field: f, Text: frag})
			}
		}
	}
	return r
}

// causeLine shortens a root cause to its first paragraph, without Markdown
// list or heading markers: the lines of a hard-wrapped paragraph are joined,
// and past causeRunes it is cut at a word with an ellipsis.
func causeLine(s string) string {
	var para []string
	for line := range strings.SplitSeq(s, "\n") {
		t := strings.TrimSpace(line)
		starts := strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ">")
		if t == "" || (starts && len(para) > 0) {
			if len(para) > 0 {
				break
			}
			continue
		}
		if t = markdownMarks.Replace(strings.TrimLeft(t, "-*#> ")); t != "" {
			para = append(para, t)
		}
	}
	return cutAtWord(strings.Join(para, " "), causeRunes)
}

// causeRunes is the longest root cause a list shows.
const causeRunes = 220

// cutAtWord shortens s to at most n runes, at a space, with an ellipsis.
func cutAtWord(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	if i := strings.LastIndexFunc(string(r), unicode.IsSpace); i > n/2 {
		return strings.TrimRight(string(r)[:i], " ,;:") + "…"
	}
	return string(r) + "…"
}

// markdownMarks are the inline Markdown marks a one-line root cause drops.
var markdownMarks = strings.NewReplacer("**", "", "__", "", "`", "")

// paginate sets the page count and the previous and next links.
func paginate(d *web.SearchData, per int, q url.Values) {
	d.Pages = max(1, (d.Total+per-1)/per)
	link := func(p int) string {
		q.Set("page", strconv.Itoa(p))
		return "/?" + q.Encode()
	}
	if d.PageNum > 1 {
		d.PrevURL = link(d.PageNum - 1)
	}
	if d.PageNum < d.Pages {
		d.NextURL = link(d.PageNum + 1)
	}
}
