package kb

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"
)

// SearchRequest is a knowledge-base search.
type SearchRequest struct {
	// Query is plain text: words, log fragments, paths, IPs, with optional
	// tag:X, service:X and org:X filters. With Syntax it is bleve query
	// string syntax instead (+field:term, "phrases", -exclusions).
	Query  string
	Syntax bool
	// All requires every term of a plain query to occur in the incident.
	All      bool
	Tags     []string
	Services []string
	Orgs     []string
	Years    []string
	// Facets asks for the counts of tags, organisations and years over all
	// the incidents that match, not only the page returned.
	Facets bool
	// Size is the number of hits to return (default 10, at most 1000); From skips.
	Size, From int
}

// SearchResult is one page of hits, best first.
type SearchResult struct {
	Total uint64        `json:"total"`
	Took  time.Duration `json:"took_ns"`
	Hits  []SearchHit   `json:"hits"`
	// Facets, when asked for: "tags", "organisation" and "year", each a
	// list of values with their counts, most frequent first.
	Facets map[string][]FacetCount `json:"facets,omitempty"`
}

// FacetCount is a value of a facet and the number of matching incidents
// that have it.
type FacetCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// facetFields are the keyword fields faceted on, with the number of values kept.
var facetFields = []struct {
	name string
	size int
}{{"tags", 15}, {"organisation", 15}, {"year", 20}}

// SearchHit is an incident that matched a search. Fragments hold the text
// around matched terms, with MarkStart/MarkEnd around each term; they are
// plain text and must be escaped before being shown as HTML.
type SearchHit struct {
	ID        string              `json:"id"`
	Title     string              `json:"title"`
	Date      string              `json:"date,omitempty"`
	Org       string              `json:"organisation,omitempty"`
	Tags      []string            `json:"tags"`
	RootCause string              `json:"root_cause"`
	Score     float64             `json:"score"`
	Fragments map[string][]string `json:"fragments,omitempty"`
}

// Search runs a search against the index.
func (k *KB) Search(ctx context.Context, r SearchRequest) (*SearchResult, error) {
	if k.idx == nil {
		return nil, fmt.Errorf("search: %w", ErrIndexLocked)
	}
	q, err := buildQuery(r)
	if err != nil {
		return nil, err
	}
	size := r.Size
	if size <= 0 {
		size = 10
	}
	if size > 1000 {
		size = 1000
	}
	// Rank first, without term locations (costly over many matches), then
	// highlight only the page of hits with a second search restricted to them.
	// A multi-word plain query ranks the incidents whose log lines have it
	// as an exact phrase higher; the phrase is checked on the best few
	// candidates only, because a phrase search over the whole index costs
	// many times the term search.
	text, _, _, _ := splitFilters(r.Query)
	rerank := !r.Syntax && len(strings.Fields(text)) > 1
	want, from := size, max(r.From, 0)
	if rerank {
		size, from = max(3*(want+from), 30), 0
	}
	req := bleve.NewSearchRequestOptions(q, size, from, false)
	req.Fields = []string{"title", "date", "tags", "organisation", "root_cause"}
	if r.Facets {
		for _, f := range facetFields {
			req.AddFacet(f.name, bleve.NewFacetRequest(f.name, f.size))
		}
	}
	res, err := k.idx.SearchInContext(ctx, req)
	if err != nil {
		if r.Syntax {
			return nil, &ValidationError{Field: "q", Msg: "bad query syntax: " + oneLine(err.Error())}
		}
		return nil, fmt.Errorf("search: %w", err)
	}
	out := &SearchResult{Total: res.Total, Took: res.Took, Hits: make([]SearchHit, 0, len(res.Hits))}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, SearchHit{
			ID: h.ID, Score: h.Score, Title: str(h.Fields["title"]), Date: str(h.Fields["date"]),
			Org: str(h.Fields["organisation"]), Tags: strs(h.Fields["tags"]), RootCause: str(h.Fields["root_cause"]),
		})
	}
	if r.Facets {
		out.Facets = facets(res)
	}
	if rerank {
		if err := k.phraseBonus(ctx, text, out.Hits); err != nil {
			return nil, err
		}
		first := min(max(r.From, 0), len(out.Hits))
		out.Hits = out.Hits[first:min(first+want, len(out.Hits))]
	}
	if err := k.highlight(ctx, q, out.Hits); err != nil {
		return nil, err
	}
	out.Took = res.Took
	return out, nil
}

func facets(res *bleve.SearchResult) map[string][]FacetCount {
	out := make(map[string][]FacetCount, len(facetFields))
	for _, f := range facetFields {
		fr := res.Facets[f.name]
		list := []FacetCount{}
		if fr != nil && fr.Terms != nil {
			for _, t := range fr.Terms.Terms() {
				if t.Term != "" {
					list = append(list, FacetCount{Value: t.Term, Count: t.Count})
				}
			}
		}
		out[f.name] = list
	}
	return out
}

// phraseBonus adds to the score of each hit whose signatures contain text
// as a phrase, and re-sorts the hits. The phrase is checked on the hits'
// stored signatures, analysed as the index analyses them: a phrase query
// restricted to the hits would still walk every document holding all the
// words (bleve's phrase searcher advances past a document that lacks the
// phrase by scanning on), 20 ms at 10,000 incidents for common words.
func (k *KB) phraseBonus(ctx context.Context, text string, hits []SearchHit) error {
	if len(hits) == 0 {
		return nil
	}
	an := k.idx.Mapping().AnalyzerNamed(logAnalyzerName)
	if an == nil {
		return fmt.Errorf("search phrase: no analyzer %s", logAnalyzerName)
	}
	want := termsOf(an.Analyze([]byte(text)))
	if len(want) < 2 {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = []string{"signatures"}
	res, err := k.idx.SearchInContext(ctx, req)
	if err != nil {
		return fmt.Errorf("search phrase: %w", err)
	}
	phrase := make(map[string]bool, len(res.Hits))
	for _, h := range res.Hits {
		phrase[h.ID] = slices.ContainsFunc(strs(h.Fields["signatures"]), func(sigs string) bool {
			return hasPhrase(an, sigs, want)
		})
	}
	if len(phrase) == 0 {
		return nil
	}
	top := hits[0].Score
	for i := range hits {
		if phrase[hits[i].ID] {
			hits[i].Score += top // a phrase match ranks above every term-only match
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score > hits[b].Score })
	return nil
}

// hasPhrase reports whether one line of text has the terms of want in a
// row, once analysed. Only lines holding every term as a substring are
// analysed (the analyser lowercases, so the substrings are looked up in
// the lowercased line): most lines are ruled out without it.
func hasPhrase(an analysis.Analyzer, text string, want []string) bool {
	for line := range strings.Lines(text) {
		low := strings.ToLower(line)
		if !allSubstrings(low, want) {
			continue
		}
		if containsRun(termsOf(an.Analyze([]byte(line))), want) {
			return true
		}
	}
	return false
}

func allSubstrings(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// termsOf lists a token stream's terms in order.
func termsOf(ts analysis.TokenStream) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t.Term)
	}
	return out
}

// containsRun reports whether want occurs in terms as consecutive terms.
func containsRun(terms, want []string) bool {
	for i := 0; i+len(want) <= len(terms); i++ {
		if slices.Equal(terms[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// highlight fills the fragments of hits.
func (k *KB) highlight(ctx context.Context, q query.Query, hits []SearchHit) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(q, bleve.NewDocIDQuery(ids)), len(ids), 0, false)
	req.Highlight = bleve.NewHighlightWithStyle(markHighlighter)
	req.Highlight.Fields = []string{"root_cause", "signatures", "body"}
	res, err := k.idx.SearchInContext(ctx, req)
	if err != nil {
		return fmt.Errorf("search highlight: %w", err)
	}
	frags := make(map[string]map[string][]string, len(res.Hits))
	for _, h := range res.Hits {
		frags[h.ID] = h.Fragments
	}
	for i := range hits {
		hits[i].Fragments = frags[hits[i].ID]
	}
	return nil
}

func buildQuery(r SearchRequest) (query.Query, error) {
	text, tags, services, orgs := splitFilters(r.Query)
	tags = append(tags, r.Tags...)
	services = append(services, r.Services...)
	orgs = append(orgs, r.Orgs...)
	var must []query.Query
	switch {
	case strings.TrimSpace(text) == "" && len(tags)+len(services)+len(orgs)+len(r.Years) == 0:
		return nil, &ValidationError{Field: "q", Msg: "query is empty"}
	case strings.TrimSpace(text) == "":
		must = append(must, bleve.NewMatchAllQuery())
	case r.Syntax:
		qs := bleve.NewQueryStringQuery(text)
		if _, err := qs.Parse(); err != nil {
			return nil, &ValidationError{Field: "q", Msg: "bad query syntax: " + oneLine(err.Error())}
		}
		must = append(must, qs)
	case r.All:
		must = append(must, allTermsQuery(text))
	default:
		must = append(must, textQuery(text))
	}
	for _, f := range []struct {
		field  string
		values []string
	}{{"tags", tags}, {"services", services}, {"organisation", orgs}, {"year", r.Years}} {
		for _, v := range f.values {
			tq := bleve.NewTermQuery(v)
			tq.SetField(f.field)
			must = append(must, tq)
		}
	}
	if len(must) == 1 {
		return must[0], nil
	}
	return bleve.NewConjunctionQuery(must...), nil
}

// textQuery matches plain text in every analysed field, with per-field
// boosts, and ranks exact phrases higher.
func textQuery(text string) query.Query {
	var qs []query.Query
	for _, f := range textFields {
		m := bleve.NewMatchQuery(text)
		m.SetField(f.name)
		m.SetBoost(f.boost)
		m.Analyzer = queryAnalyzerName
		qs = append(qs, m)
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// allTermsQuery finds incidents with every word of a typed lookup. Stop
// words and bare punctuation are not words here: "tmpfs and flanneld" is
// "tmpfs flanneld", and a partial phrase finds what the whole does. A word
// off is not allowed: "Wrote subnet file to /run/flannel/subnet.env" has
// every word but one of the missing-file incident and is not it.
func allTermsQuery(text string) query.Query {
	var each []query.Query
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, ".,;:!?()[]{}\"'`")
		if w == "" || lookupStopWords[strings.ToLower(w)] {
			continue
		}
		var any []query.Query
		for _, f := range textFields {
			m := bleve.NewMatchQuery(w)
			m.SetField(f.name)
			m.Analyzer = queryAnalyzerName
			m.SetOperator(query.MatchQueryOperatorAnd)
			m.SetBoost(f.boost)
			any = append(any, m)
		}
		each = append(each, bleve.NewDisjunctionQuery(any...))
	}
	if len(each) == 0 {
		return bleve.NewMatchNoneQuery()
	}
	return bleve.NewConjunctionQuery(each...)
}

// lookupStopWords are left out of a typed lookup's required words.
var lookupStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true,
	"on": true, "at": true, "for": true, "with": true, "is": true, "are": true, "was": true, "it": true,
	"by": true, "from": true, "as": true, "be": true, "this": true, "that": true, "not": false,
}

// splitFilters takes tag:, service: and org: terms out of a plain query.
func splitFilters(q string) (text string, tags, services, orgs []string) {
	var rest []string
	for _, w := range strings.Fields(q) {
		switch k, v, ok := strings.Cut(w, ":"); {
		case ok && v != "" && (k == "tag" || k == "tags"):
			tags = append(tags, v)
		case ok && v != "" && (k == "service" || k == "services"):
			services = append(services, v)
		case ok && v != "" && (k == "org" || k == "organisation"):
			orgs = append(orgs, v)
		default:
			rest = append(rest, w)
		}
	}
	return strings.Join(rest, " "), tags, services, orgs
}

func newMatchAllRequest(size int) *bleve.SearchRequest {
	return bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), size, 0, false)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strs(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, str(x))
		}
		return out
	}
	return []string{}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
