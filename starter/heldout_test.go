package starter_test

import (
	"os"
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// TestHeldOut measures on a held-out set when HELDOUT_DIR points at one
// (variants.tsv, healthy.log); it asserts nothing and only reports.
func TestHeldOut(t *testing.T) {
	dir := os.Getenv("HELDOUT_DIR")
	if dir == "" {
		t.Skip("HELDOUT_DIR not set")
	}
	incs := starterIncidents(t)
	m := starterMatcher(t, incs)
	accept := acceptable(incs)
	ok, none, wrong := topOne(t, m, accept, dir+"/variants.tsv")
	fp := 0
	healthy := lines(t, dir+"/healthy.log")
	for _, l := range healthy {
		if hits := m.Match(l, kb.MatchOptions{Mode: patterns.Stream}); len(hits) > 0 {
			fp++
			t.Logf("false match %s (%.2f): %.150s", hits[0].Incident.ID, hits[0].Score, l)
		}
	}
	total := ok + none + wrong
	t.Logf("held-out: top-1 %d/%d = %.3f, no match %d, wrong %d; healthy false matches %d/%d", ok, total, float64(ok)/float64(total), none, wrong, fp, len(healthy))
}
