package cluster

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestAppliedSetInOrder(t *testing.T) {
	s := NewAppliedSet(0)
	if s.Floor() != 0 || s.Has(1) {
		t.Fatalf("empty set: floor %d, Has(1) %v", s.Floor(), s.Has(1))
	}
	for seq := uint64(1); seq <= 200; seq++ {
		if !s.Add(seq) {
			t.Fatalf("Add(%d) = false on first add", seq)
		}
		if s.Add(seq) {
			t.Fatalf("Add(%d) = true on second add", seq)
		}
		if s.Floor() != seq {
			t.Fatalf("after adding 1..%d floor = %d", seq, s.Floor())
		}
	}
	if got := s.Encode(); got != "applied:200" {
		t.Errorf("Encode() = %q, want applied:200", got)
	}
	if len(s.words) > 1 {
		t.Errorf("contiguous set keeps %d bitmap words, want at most 1", len(s.words))
	}
}

func TestAppliedSetOutOfOrder(t *testing.T) {
	s := NewAppliedSet(0)
	for _, seq := range []uint64{3, 5, 2, 70, 200} {
		s.Add(seq)
	}
	if s.Floor() != 0 {
		t.Fatalf("floor = %d with 1 missing, want 0", s.Floor())
	}
	for seq, want := range map[uint64]bool{1: false, 2: true, 3: true, 4: false, 5: true, 69: false, 70: true, 200: true, 201: false} {
		if s.Has(seq) != want {
			t.Errorf("Has(%d) = %v, want %v", seq, !want, want)
		}
	}
	s.Add(1)
	if s.Floor() != 3 {
		t.Fatalf("floor = %d after adding 1, want 3", s.Floor())
	}
	s.Add(4)
	if s.Floor() != 5 {
		t.Fatalf("floor = %d after adding 4, want 5", s.Floor())
	}
	// Fill up to 69: the floor runs over 70 and stops at 71.
	for seq := uint64(6); seq < 70; seq++ {
		s.Add(seq)
	}
	if s.Floor() != 70 {
		t.Fatalf("floor = %d, want 70", s.Floor())
	}
}

// TestAppliedSetRandomOrder checks the set against a map, adding a
// permutation with duplicates, and round-trips it through Encode at
// every step.
func TestAppliedSetRandomOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	perm := r.Perm(n)
	s := NewAppliedSet(0)
	seen := map[uint64]bool{}
	for i, p := range perm {
		seq := uint64(p + 1)
		if got := s.Add(seq); got != !seen[seq] {
			t.Fatalf("Add(%d) = %v, want %v", seq, got, !seen[seq])
		}
		seen[seq] = true
		if i%3 == 0 { // a duplicate of something added already
			dup := uint64(perm[r.IntN(i+1)] + 1)
			if s.Add(dup) {
				t.Fatalf("Add(%d) of a duplicate = true", dup)
			}
		}
		if i%97 == 0 || i == n-1 {
			back, err := ParseAppliedSet(s.Encode(), 0)
			if err != nil {
				t.Fatalf("ParseAppliedSet(%q): %v", s.Encode(), err)
			}
			if back.Encode() != s.Encode() {
				t.Fatalf("round trip %q -> %q", s.Encode(), back.Encode())
			}
			for q := uint64(1); q <= n+70; q++ {
				if back.Has(q) != seen[q] || s.Has(q) != seen[q] {
					t.Fatalf("after %d adds Has(%d) = %v (parsed %v), want %v", i+1, q, s.Has(q), back.Has(q), seen[q])
				}
			}
		}
	}
	if s.Floor() != n || s.Encode() != "applied:3000" {
		t.Errorf("all added: floor %d, encoded %q", s.Floor(), s.Encode())
	}
}

// TestAppliedSetBounded: a sequence far above a stuck floor forces the
// floor up to keep the bitmap within the bound; the passed sequences
// count as skipped and stay "applied" (dropped, never counted twice).
func TestAppliedSetBounded(t *testing.T) {
	s := NewAppliedSet(256)
	s.Add(2) // 1 is stuck
	for seq := uint64(3); seq <= 256; seq++ {
		s.Add(seq)
	}
	if s.Floor() != 0 || s.Skipped != 0 {
		t.Fatalf("within the bound: floor %d skipped %d", s.Floor(), s.Skipped)
	}
	s.Add(1000)
	if s.Floor() != 1000-256 || s.Skipped != 1+(1000-256-256) {
		t.Fatalf("past the bound: floor %d skipped %d, want floor %d skipped %d", s.Floor(), s.Skipped, 1000-256, 1+1000-256-256)
	}
	if !s.Has(1) || s.Add(1) {
		t.Error("a skipped sequence must stay applied")
	}
	if len(s.words) > 256/64+1 {
		t.Errorf("bitmap holds %d words, want at most %d", len(s.words), 256/64+1)
	}
	for seq := uint64(2000); seq < 10000; seq += 3 {
		s.Add(seq)
		if span := seq - s.Floor(); span > 256 {
			t.Fatalf("span %d above floor past the bound", span)
		}
	}
	if _, err := ParseAppliedSet("applied:0:"+"AP____________________________________________8", 256); err == nil {
		t.Error("ParseAppliedSet accepted a bitmap past the bound")
	}
}

func TestParseAppliedSetErrors(t *testing.T) {
	for _, in := range []string{"", "12345", "applied:", "applied:x", "applied:01", "applied:-1", "applied:5:", "applied:5:AA", "applied:5:AQ", "applied:5:!!", "applied:18446744073709551615",
		"applied:5;epoch=", "applied:5;epoch=0", "applied:5;epoch=x", "applied:5;epoch=07", "applied:5:Ag;epoch=1;epoch=2"} {
		if _, err := ParseAppliedSet(in, 0); err == nil {
			t.Errorf("ParseAppliedSet(%q) = nil error", in)
		}
	}
	if _, err := ParseAppliedSet("12345", 0); !errors.Is(err, ErrNotAppliedSet) {
		t.Errorf("ParseAppliedSet of a spool position: %v, want ErrNotAppliedSet", err)
	}
	s, err := ParseAppliedSet("applied:5:Ag", 0) // bit 1: sequence 7
	if err != nil || s.Floor() != 5 || !s.Has(7) || s.Has(6) || s.Has(8) {
		t.Errorf("ParseAppliedSet(applied:5:Ag) = floor %d, 6 %v 7 %v 8 %v, %v", s.Floor(), s.Has(6), s.Has(7), s.Has(8), err)
	}
	// The epoch goes with the set, bitmap or not.
	for _, in := range []string{"applied:5;epoch=1700000000000000000", "applied:5:Ag;epoch=1700000000000000000"} {
		s, err := ParseAppliedSet(in, 0)
		if err != nil || s.Epoch != 1700000000000000000 || s.Floor() != 5 || s.Encode() != in {
			t.Errorf("ParseAppliedSet(%q) = epoch %d floor %d, encodes %q, %v", in, s.Epoch, s.Floor(), s.Encode(), err)
		}
	}
}
