package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// workerBatch is a 512-record message's matches as a worker sees them:
// 16 signatures on 4 resources each, in one minute.
func workerBatch(seq uint64) []kb.Observation {
	obs := make([]kb.Observation, 0, 512)
	at := t0.Add(time.Duration(seq) * 100 * time.Millisecond)
	for i := range 512 {
		sig, res := i%16, (i/16)%4
		obs = append(obs, kb.Observation{Time: at, IncidentID: fmt.Sprintf("inc-%d", sig), SignatureID: fmt.Sprintf("s-%d", sig),
			Score: 1, Message: fmt.Sprintf("upstream %d refused connection on port %d", sig, 8000+i),
			Labels: map[string]string{"namespace": "shop", "pod": fmt.Sprintf("api-%d", res)}, Resource: fmt.Sprintf("namespace=shop,pod=api-%d", res)})
	}
	return obs
}

// BenchmarkApplier measures the writer alone: results already in the
// stream (512 records each, pre-aggregated to 64 aggregates), applied,
// flushed every 100 ms and acknowledged until the stream is empty.
func BenchmarkApplier(b *testing.B) {
	n := startNATS(b)
	js := n.connect(b)
	k := kbtest.Open(b)
	p, err := NewPublisher(js, PublisherOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	occ, err := k.Occurrences(ctx, kb.OccurrenceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewApplier(js, k, occ, nil, ApplierOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var seq uint64
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		seq++
		if err := p.Observe(ctx, workerBatch(seq), fmt.Sprint(seq), nil); err != nil {
			b.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	b.StartTimer()
	go func() { _ = a.Run(runCtx) }()
	go func() {
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tk.C:
				_ = occ.Flush(runCtx)
			}
		}
	}()
	st, err := js.Stream(ctx, ResultsStream)
	if err != nil {
		b.Fatal(err)
	}
	for {
		info, err := st.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if info.State.Msgs == 0 && a.Stats().Applied.Load() >= int64(b.N) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/el, "results/s")
	b.ReportMetric(float64(b.N)*512/el, "records/s")
}
