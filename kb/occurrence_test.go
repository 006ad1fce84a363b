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

// TestOccurrencesAggregatedObservations: observations that stand for
// several lines (Count, Last, Samples, as a scaled-out worker sends them)
// produce the same occurrences as the lines observed one by one.
func TestOccurrencesAggregatedObservations(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	labels := map[string]string{"namespace": "pay", "pod": "db-0"}
	var lines []kb.Observation
	for i := range 12 {
		lines = append(lines, kb.Observation{Time: t0.Add(time.Duration(i) * 10 * time.Second), IncidentID: "a", SignatureID: "s-a",
			Score: 1, Message: fmt.Sprintf("connection refused (%d)", i), Labels: labels, Resource: "namespace=pay,pod=db-0"})
	}
	// Two aggregates per minute, as two workers would send them.
	var aggs []kb.Observation
	for _, part := range [][2]int{{0, 4}, {4, 6}, {6, 12}} {
		a := lines[part[0]]
		a.Count = int64(part[1] - part[0])
		a.Last = lines[part[1]-1].Time
		a.Samples = nil
		for _, l := range lines[part[0]:part[1]] {
			a.Samples = append(a.Samples, l.Message)
		}
		aggs = append(aggs, a)
	}
	got := func(obs []kb.Observation) []kb.Occurrence {
		k := kbtest.Open(t)
		occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		if err := occ.Observe(ctx, obs, "", nil); err != nil {
			t.Fatal(err)
		}
		if err := occ.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		list, err := occ.List(ctx, kb.OccurrenceFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	one, agg := got(lines), got(aggs)
	if len(agg) != 1 || agg[0].Count != 12 || !agg[0].FirstSeen.Equal(t0) || !agg[0].LastSeen.Equal(lines[11].Time) || len(agg[0].Samples) != 5 {
		t.Fatalf("aggregated occurrences = %+v, want one of 12 lines from %v to %v with 5 samples", agg, t0, lines[11].Time)
	}
	if len(one) != 1 || one[0].Count != agg[0].Count || !one[0].FirstSeen.Equal(agg[0].FirstSeen) || !one[0].LastSeen.Equal(agg[0].LastSeen) ||
		fmt.Sprint(one[0].Samples) != fmt.Sprint(agg[0].Samples) || fmt.Sprint(one[0].Labels) != fmt.Sprint(agg[0].Labels) {
		t.Errorf("line by line %+v, aggregated %+v: want the same occurrence", one, agg)
	}
}
