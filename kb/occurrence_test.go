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
// current do this) loses no count, every batch is reported durable exactly
// once and in order, and the stored checkpoint is the last one observed.
// Under -race it also proves the flush state is guarded.
func TestOccurrencesConcurrentFlush(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "connection refused to the database"))
	var mu sync.Mutex
	var acked []int
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{})
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
		durable := func() {
			mu.Lock()
			acked = append(acked, i)
			mu.Unlock()
		}
		if err := occ.Observe(ctx, obs, fmt.Sprint(i), durable); err != nil {
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
	for j, i := range acked {
		if i != j+1 {
			t.Fatalf("durable callbacks ran in the order %v, want 1..%d once each", acked, n)
		}
	}
	if len(acked) != n {
		t.Errorf("%d batches reported durable, want %d", len(acked), n)
	}
	if ck, err := k.QueueCheckpoint(ctx); err != nil || ck != fmt.Sprint(n) {
		t.Errorf("QueueCheckpoint = %q, %v; want %q", ck, err, fmt.Sprint(n))
	}
}
