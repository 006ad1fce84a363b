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
	q, tag, svc := strings.TrimSpace(c.Query("q")), c.Query("tag"), c.Query("service")
	pageNum, _ := strconv.Atoi(c.Query("page"))
	pageNum = max(pageNum, 1)
	d := web.SearchData{Page: s.page(c, "Search", "search"), Query: q, Tag: tag, Service: svc,
		Tags: withSelected(cat.tags, tag), Services: withSelected(cat.services, svc), PageNum: pageNum}
	status, per := http.StatusOK, searchPerPage
	if q == "" {
		per = listPerPage
		d.Listing = true
		d.Results, d.Total = listPage(cat, tag, svc, pageNum)
	} else if res, err := s.kb.Search(ctx, searchRequest(q, tag, svc, pageNum)); err != nil {
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
	}
	paginate(&d, per, c.Request.URL.Query())
	s.render(c, status, "search", d)
}

func searchRequest(q, tag, svc string, page int) kb.SearchRequest {
	r := kb.SearchRequest{Query: q, Size: searchPerPage, From: (page - 1) * searchPerPage}
	if tag != "" {
		r.Tags = []string{tag}
	}
	if svc != "" {
		r.Services = []string{svc}
	}
	return r
}

// listPage returns one page of the incident list, filtered by tag and service.
func listPage(cat *catalog, tag, svc string, page int) ([]web.SearchResult, int) {
	var out []web.SearchResult
	n := 0
	from := (page - 1) * listPerPage
	for _, sm := range cat.list {
		if (tag != "" && !slices.Contains(sm.Tags, tag)) || (svc != "" && !slices.Contains(sm.Services, svc)) {
			continue
		}
		if n >= from && n < from+listPerPage {
			out = append(out, web.SearchResult{ID: sm.ID, Title: sm.Title, Date: sm.Date, Tags: sm.Tags,
				RootCause: causeLine(sm.RootCause), CauseUnknown: sm.CauseStatus == kb.CauseUnknown})
		}
		n++
	}
	return out, n
}

// fragmentFields are the highlighted fields, in the order shown; the root
// cause has its own line.
var fragmentFields = []string{"signatures", "body", "root_cause"}

// maxFragments bounds the excerpts shown per result.
const maxFragments = 2

func searchResult(h kb.SearchHit, cat *catalog) web.SearchResult {
	r := web.SearchResult{ID: h.ID, Title: h.Title, Date: h.Date, Tags: h.Tags, RootCause: causeLine(h.RootCause)}
	if sm, ok := cat.summary(h.ID); ok {
		r.CauseUnknown = sm.CauseStatus == kb.CauseUnknown
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
