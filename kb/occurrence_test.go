package kb_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// TestOccurrencesConcurrentFlush: Flush from several goroutines at once
// (the server's ticker, shutdown and callers that want the database
// current do this) loses no count, and the checkpoint never goes back.
// Under -race it also proves the flush state is guarded.
func TestOccurrencesConcurrentFlush(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "connection refused to the database"))
	var mu sync.Mutex
	var last uint64
	backwards := 0
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{OnCheckpoint: func(pos uint64) {
		mu.Lock()
		if pos < last {
			backwards++
		}
		last = pos
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Go(func() {
			for i := 0; i < n; i++ {
				if err := occ.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := 1; i <= n; i++ {
		obs := []kb.Observation{{Time: time.Now(), IncidentID: "a", SignatureID: "s-a", Score: 1,
			Message: fmt.Sprintf("connection refused to the database (%d)", i), Labels: map[string]string{"pod": "db-0"}}}
		if err := occ.Observe(ctx, obs, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if err := occ.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := occ.List(ctx, kb.OccurrenceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, o := range list {
		total += int(o.Count)
	}
	if total != n {
		t.Errorf("occurrences count %d lines, want %d: %+v", total, n, list)
	}
	if backwards > 0 {
		t.Errorf("the checkpoint went back %d times", backwards)
	}
}
