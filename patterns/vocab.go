package patterns

// vocab is an open-addressing hash table from token hash to what the set
// knows about the word: its weight, whether it is an anchor or an error
// word, and the signatures that have it. It also holds the stop and common
// words that no signature has, so one probe per token answers everything
// the prefilter needs. It is immutable after Compile.
type vocab struct {
	keys    []uint64
	vals    []int32
	shift   uint
	entries []vocabEntry
	posts   []posting // postings of all entries, each entry's contiguous
}

// vocabEntry is a word the set knows.
type vocabEntry struct {
	weight         float32 // the word's weight; for words no signature has, their weight as unknown words
	known          bool    // some signature has the word
	anchor         bool
	isErr          bool
	failure        bool  // the word says a line reports a failure (textFailure)
	shaped         bool  // it does so by its shape (failureShape: OutOfMemoryError)
	errBit         uint8 // this error word's bit in error masks (isErr only)
	postOff, postN int32
}

// errMask is a set of error words, one bit per word (words past 256 share
// bits, which only makes the error gate let more through).
type errMask [4]uint64

func (m *errMask) set(bit uint8)              { m[bit>>6] |= 1 << (bit & 63) }
func (m *errMask) intersects(o *errMask) bool { return m[0]&o[0]|m[1]&o[1]|m[2]&o[2]|m[3]&o[3] != 0 }

const goldenMul = 0x9E3779B97F4A7C15

func newVocab(n int) *vocab {
	size, shift := 1, uint(64)
	for size < 2*n+16 {
		size <<= 1
		shift--
	}
	return &vocab{keys: make([]uint64, size), vals: make([]int32, size), shift: shift}
}

func (v *vocab) slot(h uint64) uint64 {
	if h == 0 {
		h = 1
	}
	return (h * goldenMul) >> v.shift
}

// index returns the index of the entry of hash h, or -1.
func (v *vocab) index(h uint64) int32 {
	if h == 0 {
		h = 1
	}
	mask := uint64(len(v.keys) - 1)
	for i := v.slot(h); ; i = (i + 1) & mask {
		k := v.keys[i]
		if k == h {
			return v.vals[i]
		}
		if k == 0 {
			return -1
		}
	}
}

// get returns the entry of hash h, or nil.
func (v *vocab) get(h uint64) *vocabEntry {
	if i := v.index(h); i >= 0 {
		return &v.entries[i]
	}
	return nil
}

// put adds an entry for h unless it exists, and returns the entry's index.
func (v *vocab) put(h uint64, e vocabEntry) int32 {
	i, ok := v.find(h)
	if !ok {
		v.keys[i], v.vals[i] = max(h, 1), int32(len(v.entries))
		v.entries = append(v.entries, e)
	}
	return v.vals[i]
}

// alias makes hash h another key of entry idx, unless h has one.
func (v *vocab) alias(h uint64, idx int32) {
	if i, ok := v.find(h); !ok {
		v.keys[i], v.vals[i] = max(h, 1), idx
	}
}

// find returns the slot of hash h and true, or the empty slot it would
// take and false (building only: index is the lookup).
func (v *vocab) find(h uint64) (uint64, bool) {
	h = max(h, 1)
	mask := uint64(len(v.keys) - 1)
	for i := v.slot(h); ; i = (i + 1) & mask {
		switch v.keys[i] {
		case h:
			return i, true
		case 0:
			return i, false
		}
	}
}

// postings returns the postings of an entry.
func (v *vocab) postings(e *vocabEntry) []posting {
	return v.posts[e.postOff : e.postOff+e.postN]
}
