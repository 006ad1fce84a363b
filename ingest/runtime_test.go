package ingest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

// heldSink keeps the durable callbacks until the test releases them, as an
// occurrence store does until its next flush.
type heldSink struct {
	mu      sync.Mutex
	ckpts   []string
	held    []func()
	matched int
}

func (s *heldSink) Observe(_ context.Context, obs []kb.Observation, ckpt string, durable func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ckpts = append(s.ckpts, ckpt)
	s.held = append(s.held, durable)
	s.matched += len(obs)
	return nil
}

func (s *heldSink) release() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, f := range held {
		f()
	}
}

// ackCounter wraps a queue and counts the acks of the batches it hands out.
type ackCounter struct {
	queue.Queue
	mu    sync.Mutex
	acked []string
}

func (q *ackCounter) Dequeue(ctx context.Context, max int) (*queue.Batch, error) {
	b, err := q.Queue.Dequeue(ctx, max)
	if err != nil {
		return nil, err
	}
	return queue.NewBatch(b.Records, b.Checkpoint, func(ctx context.Context) error {
		q.mu.Lock()
		q.acked = append(q.acked, b.Checkpoint)
		q.mu.Unlock()
		return b.Ack(ctx)
	}), nil
}

func (q *ackCounter) acks() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.acked...)
}

// TestRuntimeAcksOnlyWhatTheSinkMadeDurable: over a spool, every batch
// reaches the sink in queue order with its checkpoint, and the queue hears
// the batch's Ack only after the sink said it is durable, not when it was
// matched. Unmatched error lines reach the miner's side.
func TestRuntimeAcksOnlyWhatTheSinkMadeDurable(t *testing.T) {
	ctx := context.Background()
	k := kbtest.Open(t)
	if err := k.Write(ctx, kb.Write{Source: kb.Source{Path: "a.md"}, Incidents: []*kb.Incident{kbtest.Incident("disk", "Disk full", "no space left on device while writing <path>")}}); err != nil {
		t.Fatal(err)
	}
	sp, err := queue.OpenSpool(t.TempDir(), "", queue.SpoolOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	q := &ackCounter{Queue: sp}
	const requests = 5
	for i := range requests {
		recs := []decode.Record{
			{Time: time.Now(), Message: fmt.Sprintf("no space left on device while writing /var/lib/x%d", i), Labels: map[string]string{"pod": "db-0"}},
			{Time: time.Now(), Message: fmt.Sprintf("payment gateway handshake failed for shard %d", i), Level: "error"},
		}
		if err := sp.Enqueue(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	matchers := ingest.NewMatchers(ingest.MatchersOptions{KB: k})
	if err := matchers.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	sink := &heldSink{}
	var unmatched unmatchedCount
	rt := ingest.New(ingest.Options{Queue: q, Matchers: matchers, Sink: sink, Unmatched: &unmatched, Workers: 2})
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sink.mu.Lock()
		n := len(sink.ckpts)
		sink.mu.Unlock()
		if n == requests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink saw %d batches, want %d", n, requests)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a := q.acks(); len(a) != 0 {
		t.Fatalf("acked %v before the sink made anything durable", a)
	}
	sink.release()
	want := []string{"1", "2", "3", "4", "5"}
	if got := q.acks(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("acks after durable = %v, want %v (queue order)", got, want)
	}
	if fmt.Sprint(sink.ckpts) != fmt.Sprint(want) {
		t.Errorf("sink saw checkpoints %v, want %v", sink.ckpts, want)
	}
	if sink.matched != requests || unmatched.n() != requests {
		t.Errorf("matched %d, unmatched %d; want %d each", sink.matched, unmatched.n(), requests)
	}
	_ = sp.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type unmatchedCount struct {
	mu    sync.Mutex
	lines int
}

func (u *unmatchedCount) Observe(lines []kb.UnmatchedLine) {
	u.mu.Lock()
	u.lines += len(lines)
	u.mu.Unlock()
}

func (u *unmatchedCount) n() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lines
}
