package kb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// A writer that closes right after writing leaves an index that a
// read-only process sees whole: Close waits for the index to be persisted
// (the batches return before that), since a read-only open cannot replay
// index_pending.
func TestCloseLeavesTheIndexWholeForReadOnlyOpens(t *testing.T) {
	ctx := context.Background()
	for round := range 10 {
		dir := t.TempDir()
		k, err := kb.Open(ctx, kb.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		const n = 60
		for i := range n {
			id := fmt.Sprintf("inc-%02d", i)
			if err := k.Put(ctx, kbtest.Incident(id, "Incident "+id, fmt.Sprintf("error %d: connection refused by upstream", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		ro, err := kb.Open(ctx, kb.Options{Dir: dir, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ro.Search(ctx, kb.SearchRequest{Query: "connection refused", Size: 100})
		_ = ro.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != n {
			t.Fatalf("round %d: a read-only open right after the writer closed finds %d of %d incidents", round, len(res.Hits), n)
		}
	}
}
