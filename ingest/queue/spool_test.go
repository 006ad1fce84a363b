package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/ingest/decode"
)

var bg = context.Background()

func recsN(prefix string, n int) []decode.Record {
	out := make([]decode.Record, n)
	for i := range out {
		out[i] = decode.Record{Time: time.Unix(1717236000, int64(i)).UTC(), Message: fmt.Sprintf("%s line %d", prefix, i), Level: "error",
			Source: decode.FormatText, Labels: map[string]string{"namespace": "ns", "pod": fmt.Sprint("p", i)}, Truncated: i%2 == 0}
	}
	return out
}

func drain(t *testing.T, s *Spool) ([]decode.Record, string) {
	t.Helper()
	var got []decode.Record
	var last string
	for s.Len() > 0 {
		b, err := s.Dequeue(bg, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Records...)
		last = b.Checkpoint
	}
	return got, last
}

func TestSpoolRoundTripAndResume(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSpool(dir, "", SpoolOptions{SegmentBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	a, b := recsN("a", 3), recsN("b", 2)
	if err := s.Enqueue(bg, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(bg, b); err != nil {
		t.Fatal(err)
	}
	first, err := s.Dequeue(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, first.Records); d != "" {
		t.Fatalf("first batch (-want +got):\n%s", d)
	}
	_ = s.Close()
	// The consumer stored the first batch's checkpoint: a restart resumes
	// at the second entry.
	s2, err := OpenSpool(dir, first.Checkpoint, SpoolOptions{SegmentBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, s2)
	if d := cmp.Diff(b, got); d != "" {
		t.Errorf("after restart (-want +got):\n%s", d)
	}
	if err := s2.Enqueue(bg, recsN("c", 1)); err != nil {
		t.Fatal(err)
	}
	c, err := s2.Dequeue(bg, 0)
	if err != nil || c.Records[0].Message != "c line 0" {
		t.Fatalf("Dequeue after resume = %v, %v; want the c entry", c, err)
	}
	// Acknowledged segments are deleted; unacknowledged ones stay.
	before, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err := c.Ack(bg); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(after) >= len(before) {
		t.Errorf("Ack kept %d of %d segments", len(after), len(before))
	}
	// A checkpoint the spool did not make is refused at open.
	if _, err := OpenSpool(t.TempDir(), "js:12", SpoolOptions{}); err == nil {
		t.Error("OpenSpool with a foreign checkpoint: no error")
	}
	_ = s2.Close()
	if _, err := s2.Dequeue(bg, 0); !errors.Is(err, io.EOF) {
		t.Errorf("Dequeue after Close and drain = %v, want EOF", err)
	}
	if err := s2.Enqueue(bg, recsN("d", 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Enqueue after Close = %v, want ErrClosed", err)
	}
}

// TestSpoolTornTail: a crash in the middle of a write leaves a partial
// entry; the spool cuts it, counts it, keeps the good entries and goes on.
func TestSpoolTornTail(t *testing.T) {
	for _, damage := range []string{"truncated", "garbage", "bitflip"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenSpool(dir, "", SpoolOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := s.Enqueue(bg, recsN(fmt.Sprint(i), 2)); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Close()
			segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
			p := segs[len(segs)-1]
			b, _ := os.ReadFile(p)
			switch damage {
			case "truncated":
				b = b[:len(b)-7]
			case "garbage":
				b = append(b, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3)
			case "bitflip":
				b[len(b)-3] ^= 0x40
			}
			if err := os.WriteFile(p, b, 0o640); err != nil {
				t.Fatal(err)
			}
			s2, err := OpenSpool(dir, "", SpoolOptions{})
			if err != nil {
				t.Fatalf("open after %s tail: %v", damage, err)
			}
			want := 6
			if damage != "garbage" {
				want = 4 // the last entry is lost: it was never acknowledged
			}
			got, _ := drain(t, s2)
			if len(got) != want || s2.CorruptEntries != 1 {
				t.Errorf("%s: %d records, %d corrupt entries; want %d and 1", damage, len(got), s2.CorruptEntries, want)
			}
			if err := s2.Enqueue(bg, recsN("after", 1)); err != nil {
				t.Fatalf("append after repair: %v", err)
			}
			if b, err := s2.Dequeue(bg, 0); err != nil || b.Records[0].Message != "after line 0" {
				t.Errorf("entry after repair = %v %v", b, err)
			}
		})
	}
}

func TestSpoolFull(t *testing.T) {
	s, err := OpenSpool(t.TempDir(), "", SpoolOptions{MaxBytes: 600, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var full bool
	for range 20 {
		if err := s.Enqueue(bg, recsN("x", 2)); errors.Is(err, ErrFull) {
			full = true
			break
		}
	}
	if !full {
		t.Errorf("a 600-byte spool never filled up")
	}
}

// TestSpoolGroupCommit: concurrent writers share fsyncs, and every entry is
// readable afterwards.
func TestSpoolGroupCommit(t *testing.T) {
	s, err := OpenSpool(t.TempDir(), "", SpoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Enqueue(bg, recsN(fmt.Sprint(w, "-", i), 1)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, _ := drain(t, s)
	if len(got) != writers*each {
		t.Errorf("read %d records, want %d", len(got), writers*each)
	}
	if s.Syncs() >= writers*each {
		t.Errorf("%d fsyncs for %d entries: no group commit", s.Syncs(), writers*each)
	}
	t.Logf("%d entries, %d fsyncs", writers*each, s.Syncs())
}

func FuzzSpoolDecode(f *testing.F) {
	f.Add(encodeRecords(recsN("seed", 2)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeRecords(b)
		if err == nil {
			_ = encodeRecords(recs)
		}
	})
}

func BenchmarkSpoolEnqueue(b *testing.B) {
	s, err := OpenSpool(b.TempDir(), "", SpoolOptions{})
	if err != nil {
		b.Fatal(err)
	}
	batch := recsN("bench", 500)
	go func() {
		for {
			if _, err := s.Dequeue(bg, 0); err != nil {
				return
			}
		}
	}()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Enqueue(bg, batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "records/s")
	_ = s.Close()
}
