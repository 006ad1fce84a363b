package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// snappyFrameHeader starts every framed snappy stream: the stream identifier chunk.
var snappyFrameHeader = []byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}

// Decompress reads r, decoded by a Content-Encoding: "" or "identity", "gzip" or
// "x-gzip", "deflate" (zlib-wrapped, or raw deflate), "zstd", "snappy" (block, or framed
// when the body starts with the framed stream header) and "x-snappy-framed". It returns
// an error wrapping ErrUnsupportedEncoding for any other encoding, and ErrTooLarge as soon
// as the decoded body would pass max bytes; the output buffer never grows past max+1.
// For snappy block, which is decoded in one piece, the declared length is checked first.
func Decompress(encoding string, r io.Reader, max int64) ([]byte, error) {
	limit := max
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	enc := strings.ToLower(strings.TrimSpace(encoding))
	br := bufio.NewReader(r)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) && isKnownEncoding(enc) {
		return []byte{}, nil
	}
	switch enc {
	case "", "identity":
		return readLimited(br, limit)
	case "gzip", "x-gzip":
		return gunzip(br, limit)
	case "deflate":
		return inflate(br, limit)
	case "zstd":
		return unzstd(br, limit)
	case "snappy":
		return unsnappy(br, limit)
	case "x-snappy-framed":
		return unsnappyFramed(br, limit)
	}
	return nil, fmt.Errorf("content encoding %q: %w", encoding, ErrUnsupportedEncoding)
}

func isKnownEncoding(enc string) bool {
	switch enc {
	case "", "identity", "gzip", "x-gzip", "deflate", "zstd", "snappy", "x-snappy-framed":
		return true
	}
	return false
}

func gunzip(r io.Reader, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	defer zr.Close()
	return readDecoded("gzip", zr, limit)
}

// inflate decodes zlib-wrapped deflate, as HTTP specifies, or raw deflate, which some
// clients send instead.
func inflate(br *bufio.Reader, limit int64) ([]byte, error) {
	hdr, _ := br.Peek(2)
	if len(hdr) == 2 && isZlibHeader(hdr[0], hdr[1]) {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("deflate: %w", err)
		}
		defer zr.Close()
		return readDecoded("deflate", zr, limit)
	}
	fr := flate.NewReader(br)
	defer fr.Close()
	return readDecoded("deflate", fr, limit)
}

// isZlibHeader checks the RFC 1950 header: method 8 (deflate), window ≤ 32K, check bits.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

func unzstd(r io.Reader, limit int64) ([]byte, error) {
	window := min(max(uint64(limit), zstd.MinWindowSize), 1<<30)
	zr, err := zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(window),
		zstd.WithDecoderMaxMemory(uint64(limit)+1),
	)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	defer zr.Close()
	return readDecoded("zstd", zr, limit)
}

// unsnappy decodes a snappy block, or a framed stream if the body starts with the
// stream header (older OpenTelemetry Collectors send framed snappy as "snappy").
func unsnappy(br *bufio.Reader, limit int64) ([]byte, error) {
	if hdr, _ := br.Peek(len(snappyFrameHeader)); bytes.Equal(hdr, snappyFrameHeader) {
		return unsnappyFramed(br, limit)
	}
	srcLimit := int64(snappy.MaxEncodedLen(int(min(limit, 1<<31))))
	src, err := readLimited(br, srcLimit)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return snappyBlock(src, limit)
}

// snappyBlock decodes a snappy block after checking its declared length against limit.
func snappyBlock(src []byte, limit int64) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, snappyError(err)
	}
	if int64(n) > limit {
		return nil, fmt.Errorf("snappy block declares %d bytes, limit %d: %w", n, limit, ErrTooLarge)
	}
	out, err := snappy.Decode(nil, src)
	if err != nil {
		return nil, snappyError(err)
	}
	return out, nil
}

var errSnappyCorrupt = errors.New("snappy: corrupt input")

// snappyError names snappy's errors without the "s2:" prefix of the implementation.
func snappyError(err error) error {
	if errors.Is(err, snappy.ErrCorrupt) {
		return errSnappyCorrupt
	}
	return fmt.Errorf("snappy: %w", err)
}

func unsnappyFramed(r io.Reader, limit int64) ([]byte, error) {
	return readDecoded("snappy framed", snappy.NewReader(r), limit)
}

// readDecoded reads a decompressing reader, naming the encoding in its errors.
func readDecoded(name string, r io.Reader, limit int64) ([]byte, error) {
	out, err := readLimited(r, limit)
	switch {
	case err == nil || errors.Is(err, ErrTooLarge):
		return out, err
	case errors.Is(err, zstd.ErrDecoderSizeExceeded), errors.Is(err, zstd.ErrWindowSizeExceeded):
		return nil, fmt.Errorf("%s: body exceeds %d bytes: %w", name, limit, ErrTooLarge)
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// Chunk sizes for readLimited: small first, so that small bodies stay cheap.
const (
	firstChunk = 32 << 10
	maxChunk   = 4 << 20
)

// readLimited reads r to the end and returns ErrTooLarge if it holds more than limit
// bytes. It reads into chunks whose sizes add up to at most limit+1, so that a body
// over the limit never costs more than that; a body within it is joined into one slice.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	var chunks [][]byte
	var total int64
	size := int64(firstChunk)
	for {
		buf := make([]byte, min(size, limit+1-total))
		n, err := fill(r, buf)
		total += int64(n)
		chunks = append(chunks, buf[:n])
		switch {
		case total > limit:
			return nil, fmt.Errorf("body exceeds %d bytes: %w", limit, ErrTooLarge)
		case errors.Is(err, io.EOF):
			return joinChunks(chunks, total), nil
		case err != nil:
			return nil, err
		}
		size = min(size*2, maxChunk)
	}
}

// fill reads until buf is full or r fails; unlike io.ReadFull it passes r's own
// io.ErrUnexpectedEOF (a truncated stream) through as it is.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func joinChunks(chunks [][]byte, total int64) []byte {
	if len(chunks) == 1 {
		return chunks[0]
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out
}
