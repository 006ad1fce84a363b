package cluster

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// DefaultMaxSpan is the default bound of an AppliedSet: how far above its
// floor it tracks sequences (1,048,576, a bitmap of 128 KiB at most).
//
// The span is the distance between the oldest records message not yet
// applied and the newest one applied. Records in flight are bounded by the
// records consumer's MaxAckPending, and a message that keeps failing is
// dead-lettered (with a tombstone result) after MaxDeliver deliveries of
// AckWait each, so the span stays below the messages the workers finish in
// AckWait × MaxDeliver: 30 s × 5 deliveries at 7,000 messages/s (3.5
// million records/s) still fits. Past the bound the floor is forced up,
// see Add.
const DefaultMaxSpan = 1 << 20

// appliedPrefix marks an encoded applied set, so that a spool position
// stored by the single-process mode is not mistaken for one.
const appliedPrefix = "applied:"

// AppliedSet is the set of records-stream sequences whose results the
// writer has applied: a floor (every sequence up to it is applied) plus a
// bitmap of the sequences applied above it. The floor advances over
// contiguous applied sequences, so the bitmap only spans the records still
// in flight. The zero value is not usable: use NewAppliedSet.
type AppliedSet struct {
	// base is the first sequence the bitmap covers: every sequence below
	// it is applied. words[i] bit j is sequence base+64i+j.
	base    uint64
	words   []uint64
	maxSpan uint64
	// Skipped counts the sequences treated as applied because the span
	// passed its bound.
	Skipped uint64
	// Epoch is the records stream the sequences are of (Result.Epoch; 0
	// until a result says).
	Epoch int64
}

// NewAppliedSet returns an empty set (floor 0) that tracks at most maxSpan
// sequences above its floor (0 means DefaultMaxSpan).
func NewAppliedSet(maxSpan int) *AppliedSet {
	if maxSpan <= 0 {
		maxSpan = DefaultMaxSpan
	}
	return &AppliedSet{base: 1, maxSpan: uint64(maxSpan)}
}

// Floor returns the highest sequence up to which every sequence is applied.
func (s *AppliedSet) Floor() uint64 {
	if len(s.words) == 0 {
		return s.base - 1
	}
	return s.base - 1 + uint64(bits.TrailingZeros64(^s.words[0]))
}

// Has reports whether seq is in the set. Sequence 0 (no JetStream message
// has it) always is.
func (s *AppliedSet) Has(seq uint64) bool {
	if seq < s.base {
		return true
	}
	i := (seq - s.base) / 64
	if i >= uint64(len(s.words)) {
		return false
	}
	return s.words[i]&(1<<((seq-s.base)%64)) != 0
}

// Add puts seq in the set and reports whether it was new. When seq lies
// more than the span bound above the floor, the floor is forced up to seq
// minus the bound: the sequences it passes are treated as applied (counted
// in Skipped), so a result that arrives for one of them later is dropped
// rather than counted twice.
func (s *AppliedSet) Add(seq uint64) bool {
	if s.Has(seq) {
		return false
	}
	if seq-s.Floor() > s.maxSpan {
		s.forceFloor(seq - s.maxSpan)
	}
	off := seq - s.base
	i := int(off / 64)
	if i >= len(s.words) {
		s.words = append(s.words, make([]uint64, i+1-len(s.words))...)
	}
	s.words[i] |= 1 << (off % 64)
	s.trim()
	return true
}

// trim drops the leading words that are full, so the floor sits in the
// first word.
func (s *AppliedSet) trim() {
	n := 0
	for n < len(s.words) && s.words[n] == ^uint64(0) {
		n++
	}
	if n == 0 {
		return
	}
	s.base += 64 * uint64(n)
	s.words = s.words[n:]
}

// forceFloor makes every sequence up to floor applied.
func (s *AppliedSet) forceFloor(floor uint64) {
	for len(s.words) > 0 && s.base+63 <= floor {
		s.Skipped += uint64(bits.OnesCount64(^s.words[0]))
		s.words = s.words[1:]
		s.base += 64
	}
	if len(s.words) == 0 {
		if floor >= s.base {
			s.Skipped += floor - s.base + 1
			s.base = floor + 1
		}
		return
	}
	for seq := s.base; seq <= floor; seq++ {
		if bit := uint64(1) << (seq - s.base); s.words[0]&bit == 0 {
			s.Skipped++
			s.words[0] |= bit
		}
	}
	s.trim()
}

// Encode returns the set as text for the knowledge base's queue checkpoint:
// "applied:<floor>", plus ":<bitmap>" (unpadded base64url, bit i of byte j
// is sequence floor+1+8j+i) when sequences above the floor are applied,
// plus ";epoch=<epoch>" once the epoch is known.
func (s *AppliedSet) Encode() string {
	floor := s.Floor()
	var b []byte
	for seq := floor + 2; seq < s.base+64*uint64(len(s.words)); seq++ {
		if s.Has(seq) {
			i := seq - floor - 1
			for uint64(len(b)) <= i/8 {
				b = append(b, 0)
			}
			b[i/8] |= 1 << (i % 8)
		}
	}
	out := appliedPrefix + strconv.FormatUint(floor, 10)
	if len(b) > 0 {
		out += ":" + base64.RawURLEncoding.EncodeToString(b)
	}
	if s.Epoch != 0 {
		out += epochSep + strconv.FormatInt(s.Epoch, 10)
	}
	return out
}

// epochSep comes before the epoch in an encoded set (base64url has no ';').
const epochSep = ";epoch="

// ErrNotAppliedSet is returned by ParseAppliedSet for a checkpoint that is
// not an encoded applied set (such as a spool position).
var ErrNotAppliedSet = errors.New("not an applied set")

// ParseAppliedSet reads a set written by Encode, tracking at most maxSpan
// sequences above its floor (0 means DefaultMaxSpan).
func ParseAppliedSet(text string, maxSpan int) (*AppliedSet, error) {
	rest, ok := strings.CutPrefix(text, appliedPrefix)
	if !ok {
		return nil, ErrNotAppliedSet
	}
	var epoch int64
	if r, e, ok := strings.Cut(rest, epochSep); ok {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil || n == 0 || e != strconv.FormatInt(n, 10) {
			return nil, fmt.Errorf("applied set epoch %q: not a non-zero decimal", e)
		}
		rest, epoch = r, n
	}
	num, bitmap, hasBitmap := strings.Cut(rest, ":")
	floor, err := strconv.ParseUint(num, 10, 64)
	if err != nil || num != strconv.FormatUint(floor, 10) {
		return nil, fmt.Errorf("applied set floor %q: not a decimal sequence", num)
	}
	s := NewAppliedSet(maxSpan)
	if floor == ^uint64(0) {
		return nil, fmt.Errorf("applied set floor %d: out of range", floor)
	}
	s.base, s.Epoch = floor+1, epoch
	if !hasBitmap {
		return s, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(bitmap)
	if err != nil {
		return nil, fmt.Errorf("applied set bitmap: %w", err)
	}
	if len(b) == 0 || b[len(b)-1] == 0 || b[0]&1 != 0 {
		return nil, errors.New("applied set bitmap: not canonical")
	}
	if uint64(len(b))*8 > s.maxSpan || floor > ^uint64(0)-uint64(len(b))*8-1 {
		return nil, fmt.Errorf("applied set bitmap: %d sequences above the floor, more than the bound %d", len(b)*8, s.maxSpan)
	}
	for i, x := range b {
		for j := range 8 {
			if x&(1<<j) != 0 {
				s.Add(floor + 1 + uint64(8*i+j))
			}
		}
	}
	return s, nil
}
