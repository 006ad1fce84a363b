package queue

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/incidex/incidex/ingest/decode"
)

// Spool is a durable queue on local disk: every accepted request is an
// entry appended to segments and fsynced before Enqueue returns, so a 2xx
// answer means the records survive a crash. Concurrent Enqueue calls share
// one fsync (group commit). Entries are consumed in order, one per Batch.
//
// Guarantee: exactly once, when the consumer stores each batch's
// Checkpoint in the same transaction as the batch's results and passes the
// last one stored to OpenSpool (kb keeps it with the occurrences): a
// restart then resumes right after the last batch counted, and Ack lets
// the segments of counted batches go. A consumer that does not store it
// gets at least once.
//
// Entry layout: u32 length of the payload, u32 CRC-32C of seq and payload,
// u64 sequence number, payload (the request's records). A torn or corrupt
// tail is detected at open by its length or checksum and cut off; the
// damage is counted, never fatal.
type Spool struct {
	dir  string
	opts SpoolOptions

	mu       sync.Mutex
	cond     *sync.Cond
	segs     []*segment // oldest first
	active   *os.File   // the last segment, open for appending
	nextSeq  uint64     // sequence number of the next entry appended
	pending  []byte     // encoded entries waiting for the group commit
	pendRecs int
	flushing bool
	synced   uint64 // entries with seq < synced are durable
	writeErr error

	readSeq  uint64 // next entry to hand to Dequeue
	readSeg  int    // index in segs of the segment holding readSeq
	readOff  int64  // its offset there
	released uint64 // entries below this are processed and persisted by the caller
	queued   int    // records appended and not yet dequeued
	bytes    int64  // bytes on disk
	closed   bool

	// Damage found at open.
	CorruptEntries int
	CorruptBytes   int64

	syncs int64 // fsyncs done, for tests and metrics
}

// SpoolOptions configure a Spool. The zero value gives the defaults.
type SpoolOptions struct {
	// MaxBytes bounds the spool on disk; past it Enqueue returns
	// ErrFull. Default 1 GiB.
	MaxBytes int64
	// SegmentBytes is the size past which a new segment starts. Default 64 MiB.
	SegmentBytes int64
	// NoSync skips fsync (tests of logic only).
	NoSync bool
}

type segment struct {
	path     string
	firstSeq uint64
	size     int64
}

const (
	entryHeader = 16
	segExt      = ".seg"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// OpenSpool opens (creating) the spool in dir. checkpoint is the last
// Batch.Checkpoint whose results were stored ("" when none): entries up to
// it were processed and are skipped.
func OpenSpool(dir string, checkpoint string, opts SpoolOptions) (*Spool, error) {
	start, err := parseCheckpoint(checkpoint)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 30
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = 64 << 20
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	s := &Spool{dir: dir, opts: opts}
	s.cond = sync.NewCond(&s.mu)
	if err := s.load(start); err != nil {
		return nil, err
	}
	return s, nil
}

// load scans the segments: it checks every entry, cuts a damaged tail,
// finds the first entry to consume and counts the records still queued.
func (s *Spool) load(start uint64) error {
	names, err := filepath.Glob(filepath.Join(s.dir, "*"+segExt))
	if err != nil {
		return err
	}
	slices.Sort(names)
	seq := start
	for _, name := range names {
		first, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(name), segExt), 10, 64)
		if err != nil {
			continue
		}
		seg := &segment{path: name, firstSeq: first}
		last, recs, size, err := s.scanSegment(seg, start)
		if err != nil {
			return err
		}
		seg.size = size
		if last == 0 && size == 0 {
			_ = os.Remove(name) // empty
			continue
		}
		s.segs = append(s.segs, seg)
		s.queued += recs
		s.bytes += size
		if last > seq {
			seq = last
		}
	}
	s.nextSeq, s.synced, s.released = seq, seq, start
	if err := s.seekRead(start); err != nil {
		return err
	}
	s.dropBelow(start)
	if len(s.segs) == 0 || s.segs[len(s.segs)-1].size >= s.opts.SegmentBytes {
		return s.rotate()
	}
	f, err := os.OpenFile(s.segs[len(s.segs)-1].path, os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	s.active = f
	return nil
}

// scanSegment validates a segment's entries. It returns the sequence
// number after its last good entry, the records of entries at or past
// start, and the good size (a damaged rest is cut off and counted).
func (s *Spool) scanSegment(seg *segment, start uint64) (uint64, int, int64, error) {
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	var off int64
	var next uint64
	recs := 0
	hdr := make([]byte, entryHeader)
	for off < st.Size() {
		seq, payload, err := readEntry(f, off, hdr)
		if err != nil {
			s.CorruptEntries++
			s.CorruptBytes += st.Size() - off
			if err := f.Truncate(off); err != nil {
				return 0, 0, 0, fmt.Errorf("cut damaged spool tail of %s: %w", seg.path, err)
			}
			break
		}
		if seq >= start {
			n, _ := binary.Uvarint(payload)
			recs += int(n)
		}
		next = seq + 1
		off += int64(entryHeader + len(payload))
	}
	return next, recs, off, nil
}

// readEntry reads and checks the entry at off.
func readEntry(r io.ReaderAt, off int64, hdr []byte) (uint64, []byte, error) {
	if _, err := r.ReadAt(hdr, off); err != nil {
		return 0, nil, fmt.Errorf("entry header at %d: %w", off, err)
	}
	n := binary.LittleEndian.Uint32(hdr[0:4])
	sum := binary.LittleEndian.Uint32(hdr[4:8])
	seq := binary.LittleEndian.Uint64(hdr[8:16])
	if n > 1<<30 {
		return 0, nil, fmt.Errorf("entry at %d: length %d is damage", off, n)
	}
	payload := make([]byte, n)
	if _, err := r.ReadAt(payload, off+entryHeader); err != nil {
		return 0, nil, fmt.Errorf("entry at %d: %w", off, err)
	}
	crc := crc32.Update(crc32.Checksum(hdr[8:16], crcTable), crcTable, payload)
	if crc != sum {
		return 0, nil, fmt.Errorf("entry at %d: checksum mismatch", off)
	}
	return seq, payload, nil
}

// seekRead positions the reader on the first entry with seq >= start.
func (s *Spool) seekRead(start uint64) error {
	s.readSeq, s.readSeg, s.readOff = start, 0, 0
	hdr := make([]byte, entryHeader)
	for i, seg := range s.segs {
		if i+1 < len(s.segs) && s.segs[i+1].firstSeq <= start {
			continue
		}
		f, err := os.Open(seg.path)
		if err != nil {
			return err
		}
		var off int64
		for off < seg.size {
			seq, payload, err := readEntry(f, off, hdr)
			if err != nil || seq >= start {
				break
			}
			off += int64(entryHeader + len(payload))
		}
		_ = f.Close()
		s.readSeg, s.readOff = i, off
		if len(s.segs) > 0 && off >= seg.size && i+1 < len(s.segs) {
			s.readSeg, s.readOff = i+1, 0
		}
		return nil
	}
	return nil
}

func (s *Spool) rotate() error {
	if s.active != nil {
		if err := s.active.Close(); err != nil {
			return err
		}
	}
	name := filepath.Join(s.dir, fmt.Sprintf("%020d%s", s.nextSeq, segExt))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("spool segment: %w", err)
	}
	s.active = f
	s.segs = append(s.segs, &segment{path: name, firstSeq: s.nextSeq})
	if !s.opts.NoSync {
		if d, err := os.Open(s.dir); err == nil {
			_ = d.Sync()
			_ = d.Close()
		}
	}
	return nil
}

// Enqueue implements Queue: the records are one entry, durable when
// Enqueue returns nil.
func (s *Spool) Enqueue(_ context.Context, recs []decode.Record) error {
	payload := encodeRecords(recs)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.writeErr != nil {
		err := s.writeErr
		s.mu.Unlock()
		return fmt.Errorf("spool: %w", err)
	}
	size := int64(entryHeader + len(payload))
	if s.bytes+int64(len(s.pending))+size > s.opts.MaxBytes {
		s.mu.Unlock()
		return ErrFull
	}
	seq := s.nextSeq
	s.nextSeq++
	s.pending = appendEntry(s.pending, seq, payload)
	s.pendRecs += len(recs)
	leader := !s.flushing
	s.flushing = true
	if leader {
		s.commitLoop()
	}
	for s.synced <= seq && s.writeErr == nil {
		s.cond.Wait()
	}
	err := s.writeErr
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// commitLoop writes and syncs pending entries until none are left; the
// caller holds mu and leads the group.
func (s *Spool) commitLoop() {
	for len(s.pending) > 0 && s.writeErr == nil {
		buf, recs, upto := s.pending, s.pendRecs, s.nextSeq
		s.pending, s.pendRecs = nil, 0
		s.mu.Unlock()
		err := s.write(buf)
		s.mu.Lock()
		if err != nil {
			s.writeErr = err
			break
		}
		s.synced = upto
		s.queued += recs
		s.bytes += int64(len(buf))
		s.segs[len(s.segs)-1].size += int64(len(buf))
		if s.segs[len(s.segs)-1].size >= s.opts.SegmentBytes {
			if err := s.rotate(); err != nil {
				s.writeErr = err
			}
		}
		s.cond.Broadcast()
	}
	s.flushing = false
	s.cond.Broadcast()
}

func (s *Spool) write(buf []byte) error {
	if _, err := s.active.Write(buf); err != nil {
		return err
	}
	if s.opts.NoSync {
		return nil
	}
	s.syncs++ // only the group leader writes, so no race
	return s.active.Sync()
}

// Syncs returns how many fsyncs the spool has done.
func (s *Spool) Syncs() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs
}

func appendEntry(dst []byte, seq uint64, payload []byte) []byte {
	var hdr [entryHeader]byte
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(hdr[8:16], seq)
	crc := crc32.Update(crc32.Checksum(hdr[8:16], crcTable), crcTable, payload)
	binary.LittleEndian.PutUint32(hdr[4:8], crc)
	return append(append(dst, hdr[:]...), payload...)
}

// Dequeue implements Queue: it returns the next entry's records. The
// checkpoint is the sequence number of the entry after it, in decimal.
func (s *Spool) Dequeue(ctx context.Context, _ int) (*Batch, error) {
	defer wakeOnDone(ctx, &s.mu, s.cond)()
	s.mu.Lock()
	for s.readSeq >= s.synced {
		if s.closed && !s.flushing {
			s.mu.Unlock()
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.cond.Wait()
	}
	for s.readOff >= s.segs[s.readSeg].size && s.readSeg+1 < len(s.segs) {
		s.readSeg, s.readOff = s.readSeg+1, 0
	}
	seg := s.segs[s.readSeg]
	off := s.readOff
	s.mu.Unlock()
	f, err := os.Open(seg.path)
	if err != nil {
		return nil, err
	}
	seq, payload, err := readEntry(f, off, make([]byte, entryHeader))
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("spool read: %w", err)
	}
	recs, err := decodeRecords(payload)
	if err != nil {
		return nil, fmt.Errorf("spool entry %d: %w", seq, err)
	}
	s.mu.Lock()
	s.readSeq = seq + 1
	s.readOff = off + int64(entryHeader+len(payload))
	if s.readOff >= s.segs[s.readSeg].size && s.readSeg+1 < len(s.segs) {
		s.readSeg, s.readOff = s.readSeg+1, 0
	}
	s.queued -= len(recs)
	s.mu.Unlock()
	next := seq + 1
	return NewBatch(recs, strconv.FormatUint(next, 10), func(context.Context) error {
		s.release(next)
		return nil
	}), nil
}

// parseCheckpoint reads a checkpoint made by Dequeue.
func parseCheckpoint(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(c, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("checkpoint %q is not one of this spool's", c)
	}
	return n, nil
}

// release tells the spool that entries below pos are processed and that the
// consumer has stored their checkpoint: their segments can go.
func (s *Spool) release(pos uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pos > s.released {
		s.released = pos
	}
	s.dropBelow(s.released)
}

// dropBelow deletes segments whose entries are all below pos (never the
// active one, never one the reader is in).
func (s *Spool) dropBelow(pos uint64) {
	for len(s.segs) > 1 && s.segs[1].firstSeq <= pos && s.readSeg > 0 {
		_ = os.Remove(s.segs[0].path)
		s.bytes -= s.segs[0].size
		s.segs = s.segs[1:]
		s.readSeg--
	}
}

// Close implements Queue: Enqueue stops; Dequeue drains what is durable.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	for s.flushing {
		s.cond.Wait()
	}
	if s.active != nil {
		return s.active.Close()
	}
	return nil
}

// Len implements Queue: records durable and not yet dequeued.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// MaxBytes returns the spool's size limit.
func (s *Spool) MaxBytes() int64 { return s.opts.MaxBytes }

// Bytes returns the spool's size on disk.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// encodeRecords writes records as: uvarint count, then per record uvarint
// unix-nano time, level, source, id, message, truncated byte, uvarint
// label count and key/value strings. Strings are uvarint length + bytes.
func encodeRecords(recs []decode.Record) []byte {
	b := binary.AppendUvarint(nil, uint64(len(recs)))
	for _, r := range recs {
		b = binary.AppendVarint(b, r.Time.UnixNano())
		b = appendString(b, r.Level)
		b = appendString(b, string(r.Source))
		b = appendString(b, r.ID)
		b = appendString(b, r.Message)
		t := byte(0)
		if r.Truncated {
			t = 1
		}
		b = append(b, t)
		b = binary.AppendUvarint(b, uint64(len(r.Labels)))
		for k, v := range r.Labels {
			b = appendString(b, k)
			b = appendString(b, v)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errBadEntry = errors.New("malformed spool entry")

func decodeRecords(b []byte) ([]decode.Record, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errBadEntry
	}
	b = b[k:]
	recs := make([]decode.Record, 0, n)
	for range n {
		var r decode.Record
		ns, k := binary.Varint(b)
		if k <= 0 {
			return nil, errBadEntry
		}
		b = b[k:]
		r.Time = time.Unix(0, ns).UTC()
		var src string
		var err error
		for _, dst := range []*string{&r.Level, &src, &r.ID, &r.Message} {
			if *dst, b, err = readString(b); err != nil {
				return nil, err
			}
		}
		r.Source = decode.Format(src)
		if len(b) == 0 {
			return nil, errBadEntry
		}
		r.Truncated, b = b[0] == 1, b[1:]
		nl, k := binary.Uvarint(b)
		if k <= 0 || nl > uint64(len(b)) {
			return nil, errBadEntry
		}
		b = b[k:]
		if nl > 0 {
			r.Labels = make(map[string]string, nl)
		}
		for range nl {
			var key, val string
			if key, b, err = readString(b); err != nil {
				return nil, err
			}
			if val, b, err = readString(b); err != nil {
				return nil, err
			}
			r.Labels[key] = val
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func readString(b []byte) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, errBadEntry
	}
	return string(b[k : k+int(n)]), b[k+int(n):], nil
}
