package ingest

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
	src, err := readLimited(br, int64(snappy.MaxEncodedLen(int(min(limit, 1<<40)))))
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
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, err
}

// readLimited reads r to the end into a buffer that never grows past limit+1 bytes,
// and returns ErrTooLarge if r holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, 32<<10))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("body exceeds %d bytes: %w", limit, ErrTooLarge)
			}
			next := min(int64(cap(buf))*2, limit+1)
			buf = append(make([]byte, 0, next), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("body exceeds %d bytes: %w", limit, ErrTooLarge)
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
