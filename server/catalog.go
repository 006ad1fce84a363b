package server

import (
	"context"
	"sort"
	"sync"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// catalog is the list of incidents with their tag and service counts, for
// the search page's list and filters. It is rebuilt when the knowledge
// base's generation changes, so a page does not decode every incident.
type catalog struct {
	gen      int64
	list     []kb.Summary
	byID     map[string]int
	tags     []web.Facet
	services []web.Facet
}

type catalogCache struct {
	mu  sync.Mutex
	cur *catalog
}

// maxFacets bounds the values offered in a filter menu.
const maxFacets = 60

// catalog returns the current catalog.
func (s *Server) catalog(ctx context.Context) (*catalog, error) {
	gen, err := s.kb.Generation(ctx)
	if err != nil {
		return nil, err
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if c := s.cat.cur; c != nil && c.gen == gen {
		return c, nil
	}
	list, err := s.kb.List(ctx, "")
	if err != nil {
		return nil, err
	}
	c := &catalog{gen: gen, list: list, byID: make(map[string]int, len(list))}
	tags, services := map[string]int{}, map[string]int{}
	for i, sm := range list {
		c.byID[sm.ID] = i
		for _, t := range sm.Tags {
			tags[t]++
		}
		for _, sv := range sm.Services {
			services[sv]++
		}
	}
	c.tags, c.services = facets(tags), facets(services)
	s.cat.cur = c
	return c, nil
}

// summary returns the summary of incident id.
func (c *catalog) summary(id string) (kb.Summary, bool) {
	i, ok := c.byID[id]
	if !ok {
		return kb.Summary{}, false
	}
	return c.list[i], true
}

// facets orders values by count, then name, keeping the first maxFacets.
func facets(counts map[string]int) []web.Facet {
	out := make([]web.Facet, 0, len(counts))
	for v, n := range counts {
		out = append(out, web.Facet{Value: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Value < out[j].Value
	})
	if len(out) > maxFacets {
		out = out[:maxFacets]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// withSelected makes sure the selected value is offered.
func withSelected(fs []web.Facet, sel string) []web.Facet {
	if sel == "" {
		return fs
	}
	for _, f := range fs {
		if f.Value == sel {
			return fs
		}
	}
	return append([]web.Facet{{Value: sel}}, fs...)
}
