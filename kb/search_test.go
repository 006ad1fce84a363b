package kb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// The mapped fields are searched and boosted: a query of an incident's
// tags and organisation puts it above incidents that only mention the
// words in their body, and fragments never show the front matter.
func TestSearchMappedFieldsFacetsAndFragments(t *testing.T) {
	ctx := context.Background()
	k := kbtest.Open(t)
	a := kbtest.Incident("pm-a", "Queue backlog", "")
	a.Tags, a.Organisation, a.Services, a.Date = []string{"rabbitmq", "email"}, "Lumen", []string{"notifications"}, "2020-11-02"
	a.Summary = "Transactional emails were late."
	a.Body = "---\ntags: [rabbitmq, email]\nseverity: high\n---\nThe mailer's prefetch was 1."
	b := kbtest.Incident("pm-b", "Broker upgrade", "")
	b.Tags, b.Organisation, b.Date = []string{"upgrade"}, "Acme", "2021-01-05"
	b.Body = "We upgraded the broker. Email, email, email: rabbitmq rabbitmq rabbitmq was mentioned many times in this long body of text about email."
	c := kbtest.Incident("pm-c", "Disk full", "")
	c.Tags, c.Organisation, c.Date = []string{"postgres", "email"}, "Lumen", "2021-06-01"
	c.Body = "Postgres ran out of disk."
	if err := k.Write(ctx, kb.Write{Incidents: []*kb.Incident{a, b, c}}); err != nil {
		t.Fatal(err)
	}
	res, err := k.Search(ctx, kb.SearchRequest{Query: "rabbitmq email", Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].ID != "pm-a" {
		t.Fatalf("Search(rabbitmq email) = %v, want pm-a first", ids(res.Hits))
	}
	if h := res.Hits[0]; h.Org != "Lumen" || h.Date != "2020-11-02" || strings.Join(h.Tags, ",") != "rabbitmq,email" {
		t.Errorf("hit = org %q date %q tags %q", h.Org, h.Date, h.Tags)
	}
	for _, h := range res.Hits {
		for field, frags := range h.Fragments {
			for _, f := range frags {
				if strings.Contains(f, "severity") || strings.Contains(f, "tags:") || strings.Contains(f, "---") {
					t.Errorf("%s fragment %s shows front matter: %q", h.ID, field, f)
				}
			}
		}
	}
	want := map[string][]kb.FacetCount{
		"tags":         {{Value: "email", Count: 2}, {Value: "postgres", Count: 1}, {Value: "rabbitmq", Count: 1}, {Value: "upgrade", Count: 1}},
		"organisation": {{Value: "Lumen", Count: 2}, {Value: "Acme", Count: 1}},
		"year":         {{Value: "2021", Count: 2}, {Value: "2020", Count: 1}},
	}
	for name, w := range want {
		if got := res.Facets[name]; !sameFacets(got, w) {
			t.Errorf("facet %s = %v, want %v", name, got, w)
		}
	}
	res, err = k.Search(ctx, kb.SearchRequest{Query: "email", Orgs: []string{"Lumen"}, Years: []string{"2021"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Hits); strings.Join(got, ",") != "pm-c" {
		t.Errorf("Search(email, org Lumen, year 2021) = %v, want [pm-c]", got)
	}
	// The index is derived: reindex keeps the mapped fields searchable.
	if err := k.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = k.Search(ctx, kb.SearchRequest{Query: "notifications lumen"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].ID != "pm-a" {
		t.Errorf("after reindex, Search(notifications lumen) = %v, want pm-a first", ids(res.Hits))
	}
}

// Extra fields, duration and how the cause was found survive a round trip.
func TestIncidentNewFieldsRoundTrip(t *testing.T) {
	ctx := context.Background()
	k := kbtest.Open(t)
	a := kbtest.Incident("pm-x", "X", "")
	a.Duration, a.CauseFrom, a.CauseSource = "1h45m", kb.CauseFromSentence, "It turned out the cache was cold."
	a.Extra = []kb.Field{{Key: "uuid", Value: "u-1"}, {Key: "ticket", Value: "INC-1"}}
	if err := k.Write(ctx, kb.Write{Incidents: []*kb.Incident{a}}); err != nil {
		t.Fatal(err)
	}
	got, err := k.Get(ctx, "pm-x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Duration != a.Duration || got.CauseFrom != a.CauseFrom || got.CauseSource != a.CauseSource || len(got.Extra) != 2 || got.Extra[1] != a.Extra[1] {
		t.Errorf("Get = duration %q from %q source %q extra %v", got.Duration, got.CauseFrom, got.CauseSource, got.Extra)
	}
}

func ids(hits []kb.SearchHit) []string {
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func sameFacets(a, b []kb.FacetCount) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x.Value] = x.Count
	}
	for _, x := range b {
		if m[x.Value] != x.Count {
			return false
		}
	}
	return true
}

// TestSearchPhraseInSignaturesRanksFirst: a multi-word query that an
// incident's log line holds word for word, in order, puts that incident
// above one that has the words more often but apart, or in another order,
// or split over two lines.
func TestSearchPhraseInSignaturesRanksFirst(t *testing.T) {
	ctx := context.Background()
	k := kbtest.Open(t)
	phrase := kbtest.Incident("phrase", "Sandbox", "Warning FailedCreatePodSandBox kubelet failed to set up sandbox container network")
	apart := kbtest.Incident("apart", "Sandbox container network: set up", "Warning network up failed, set the sandbox of container network: network network")
	apart.Body = "sandbox network failed network sandbox network container network set up"
	split := kbtest.Incident("split", "Split", "error: failed to set up\nsandbox container network was missing")
	if err := k.Write(ctx, kb.Write{Incidents: []*kb.Incident{phrase, apart, split}}); err != nil {
		t.Fatal(err)
	}
	res, err := k.Search(ctx, kb.SearchRequest{Query: "set up sandbox container network"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) < 3 || res.Hits[0].ID != "phrase" {
		t.Fatalf("Search = %v, want phrase first of 3", ids(res.Hits))
	}
}
