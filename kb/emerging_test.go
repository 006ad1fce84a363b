package kb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// TestEmergingSurvivesRestart: patterns and the miner's clusters are
// persisted; after reopening, the same lines join the same pattern.
func TestEmergingSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	k := kbtest.OpenDir(t, dir)
	em, err := k.Emerging(ctx, kb.EmergingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range 5 {
		em.Observe([]kb.UnmatchedLine{{Time: now, Message: "ledger sync aborted: shard " + string(rune('a'+i)) + "7 replica lag 120s over budget", Labels: map[string]string{"namespace": "ledger"}}})
	}
	if err := em.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list := em.List(ctx, kb.PatternFilter{})
	if len(list) != 1 || list[0].Count != 5 || list[0].Labels["namespace"][0] != "ledger" {
		t.Fatalf("patterns = %+v", list)
	}
	id := list[0].ID
	_ = k.Close()

	k2 := kbtest.OpenDir(t, dir)
	em2, err := k2.Emerging(ctx, kb.EmergingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	em2.Observe([]kb.UnmatchedLine{{Time: now, Message: "ledger sync aborted: shard z9 replica lag 300s over budget"}})
	got := em2.List(ctx, kb.PatternFilter{})
	if len(got) != 1 || got[0].ID != id || got[0].Count != 6 {
		t.Errorf("after restart = %+v, want pattern %s with 6 lines", got, id)
	}
	md := kb.Draft(got[0])
	if !strings.Contains(md, "## Root Cause") || !strings.Contains(md, "signatures:") {
		t.Errorf("draft:\n%s", md)
	}
}

// TestPromotedSignatureSurvivesReingest: a signature added from an
// emerging pattern stays when the incident's file is ingested again.
func TestPromotedSignatureSurvivesReingest(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "alpha failed"))
	if _, err := k.AddSignature(ctx, "a", "ledger sync aborted: shard <*> replica lag <duration> over budget"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.AddSignature(ctx, "nope", "x <*>"); err == nil {
		t.Errorf("AddSignature to a missing incident succeeded")
	}
	if _, err := k.AddSignature(ctx, "a", "bad <ipp>"); err == nil {
		t.Errorf("AddSignature with a bad template succeeded")
	}
	write(t, k, "a.md", kbtest.Incident("a", "alpha again", "alpha failed"))
	inc, _ := k.Get(ctx, "a")
	if len(inc.Signatures) != 2 || inc.Signatures[1].Kind != kb.SigPromoted {
		t.Errorf("signatures after re-ingest = %+v", inc.Signatures)
	}
}

// TestEmergingCountedLines: an unmatched line with a Count counts as that
// many lines, in the total and in the recent window.
func TestEmergingCountedLines(t *testing.T) {
	k := kbtest.Open(t)
	now := time.Now()
	em, err := k.Emerging(ctx, kb.EmergingOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	em.Observe([]kb.UnmatchedLine{
		{Time: now, Message: "ledger sync aborted: shard a7 replica lag 120s over budget", Count: 40},
		{Time: now, Message: "ledger sync aborted: shard a7 replica lag 120s over budget"},
	})
	if err := em.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list := em.List(ctx, kb.PatternFilter{})
	if len(list) != 1 || list[0].Count != 41 || list[0].Recent != 41 {
		t.Fatalf("patterns = %+v, want one pattern counting 41 lines, 41 recent", list)
	}
}
