package decode

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// compressors encode a body as each Content-Encoding does.
var compressors = map[string]func(t testing.TB, p []byte) []byte{
	"gzip": func(t testing.TB, p []byte) []byte {
		return writeAll(t, p, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
	},
	"zlib": func(t testing.TB, p []byte) []byte {
		return writeAll(t, p, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
	},
	"raw deflate": func(t testing.TB, p []byte) []byte {
		return writeAll(t, p, func(w io.Writer) io.WriteCloser {
			fw, err := flate.NewWriter(w, flate.DefaultCompression)
			if err != nil {
				t.Fatal(err)
			}
			return fw
		})
	},
	"zstd": func(t testing.TB, p []byte) []byte {
		return writeAll(t, p, func(w io.Writer) io.WriteCloser {
			zw, err := zstd.NewWriter(w)
			if err != nil {
				t.Fatal(err)
			}
			return zw
		})
	},
	"snappy block":  func(_ testing.TB, p []byte) []byte { return snappy.Encode(nil, p) },
	"snappy framed": func(t testing.TB, p []byte) []byte { return writeAll(t, p, snappyFramedWriter) },
	"identity":      func(_ testing.TB, p []byte) []byte { return p },
}

func snappyFramedWriter(w io.Writer) io.WriteCloser { return snappy.NewBufferedWriter(w) }

func writeAll(t testing.TB, p []byte, newWriter func(io.Writer) io.WriteCloser) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newWriter(&buf)
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecompress(t *testing.T) {
	t.Parallel()
	body := []byte(strings.Repeat(`{"log":"dial tcp 10.0.0.5:5432: connect: connection refused","stream":"stderr"}`+"\n", 200))
	tests := []struct {
		encoding, compressor string
	}{
		{"", "identity"},
		{"identity", "identity"},
		{"gzip", "gzip"},
		{"x-gzip", "gzip"},
		{" GZIP ", "gzip"},
		{"deflate", "zlib"},
		{"deflate", "raw deflate"},
		{"zstd", "zstd"},
		{"snappy", "snappy block"},
		{"snappy", "snappy framed"},
		{"x-snappy-framed", "snappy framed"},
	}
	for _, tt := range tests {
		t.Run(tt.encoding+"/"+tt.compressor, func(t *testing.T) {
			t.Parallel()
			in := compressors[tt.compressor](t, body)
			got, err := Decompress(tt.encoding, bytes.NewReader(in), int64(len(body)))
			if err != nil {
				t.Fatalf("Decompress(%q) error = %v", tt.encoding, err)
			}
			if !bytes.Equal(got, body) {
				t.Errorf("Decompress(%q) = %d bytes, want the %d bytes compressed", tt.encoding, len(got), len(body))
			}
			_, err = Decompress(tt.encoding, bytes.NewReader(in), int64(len(body))-1)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("Decompress(%q) one byte over the limit: error = %v, want ErrTooLarge", tt.encoding, err)
			}
		})
	}
}

func TestDecompressEmpty(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"", "gzip", "deflate", "zstd", "snappy", "x-snappy-framed"} {
		got, err := Decompress(enc, bytes.NewReader(nil), 10)
		if err != nil || len(got) != 0 {
			t.Errorf("Decompress(%q, empty) = %q, %v, want empty", enc, got, err)
		}
	}
}

func TestDecompressErrors(t *testing.T) {
	t.Parallel()
	body := []byte(strings.Repeat("panic: runtime error: index out of range [3] with length 3\n", 100))
	gz := compressors["gzip"](t, body)
	zs := compressors["zstd"](t, body)
	framed := compressors["snappy framed"](t, body)
	tests := []struct {
		name, encoding string
		in             []byte
		want           error  // errors.Is target, or nil for any error
		text           string // substring of the message
	}{
		{"unknown encoding", "br", body, ErrUnsupportedEncoding, `content encoding "br"`},
		{"lz4 is not supported", "lz4", body, ErrUnsupportedEncoding, "unsupported"},
		{"truncated gzip", "gzip", gz[:len(gz)/2], nil, "gzip: unexpected EOF"},
		{"gzip without its trailer", "gzip", gz[:len(gz)-4], nil, "gzip:"},
		{"not gzip", "gzip", body, nil, "gzip: invalid header"},
		{"corrupt zstd", "zstd", append(zs[:8:8], bytes.Repeat([]byte{0xff}, 40)...), nil, "zstd:"},
		{"truncated zstd", "zstd", zs[:len(zs)/2], nil, "zstd:"},
		{"corrupt snappy block", "snappy", []byte{0x20, 0xff, 0xff, 0xff}, nil, "snappy: corrupt input"},
		{"truncated snappy framed", "x-snappy-framed", framed[:len(framed)-3], nil, "snappy framed:"},
		{"corrupt deflate", "deflate", []byte{0x78, 0x9c, 0xff, 0xff, 0xff}, nil, "deflate:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decompress(tt.encoding, bytes.NewReader(tt.in), 1<<20)
			if err == nil {
				t.Fatalf("Decompress(%q) = %d bytes, want an error", tt.encoding, len(got))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Decompress(%q) error = %v, want %v", tt.encoding, err, tt.want)
			}
			if errors.Is(err, ErrTooLarge) {
				t.Errorf("Decompress(%q) error = %v, must not be ErrTooLarge", tt.encoding, err)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("Decompress(%q) error = %q, want it to contain %q", tt.encoding, err, tt.text)
			}
		})
	}
}

// zeros is an endless source of zero bytes, to build bombs without holding them.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.n))
	clear(p[:n])
	z.n -= int64(n)
	return n, nil
}

// bombSize is how many zeros a bomb holds: 1 GiB, or 128 MiB (still 8× the limit)
// under the race detector, which makes compressing a gigabyte take half a minute.
var bombSize int64 = 1 << 30

func init() {
	if raceEnabled {
		bombSize = 128 << 20
	}
}

// bomb compresses bombSize zeros.
func bomb(t *testing.T, newWriter func(io.Writer) io.WriteCloser) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newWriter(&buf)
	if _, err := io.Copy(w, &zeros{n: bombSize}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecompressBomb feeds 1 GiB of zeros, compressed to about 1 MB, with a 16 MiB
// limit: Decompress must stop at the limit, quickly, without allocating the gigabyte.
func TestDecompressBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large bombs")
	}
	const limit = 16 << 20
	bombs := []struct {
		encoding string
		body     []byte
	}{
		{"gzip", bomb(t, func(w io.Writer) io.WriteCloser {
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			return zw
		})},
		{"zstd", bomb(t, func(w io.Writer) io.WriteCloser {
			zw, _ := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
			return zw
		})},
		{"x-snappy-framed", bomb(t, snappyFramedWriter)},
		// A snappy block only declares its length: 4 GiB here.
		{"snappy", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00}},
	}
	for _, b := range bombs {
		t.Run(b.encoding, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			out, err := Decompress(b.encoding, bytes.NewReader(b.body), limit)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Decompress(%s bomb of %d bytes) = %d bytes, %v, want ErrTooLarge", b.encoding, len(b.body), len(out), err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			// The output chunks add up to limit+1; the decompressor's state is small.
			if allocated > limit+8<<20 {
				t.Errorf("Decompress(%s bomb) allocated %d MiB, want at most %d MiB", b.encoding, allocated>>20, (limit+8<<20)>>20)
			}
			if elapsed > 10*time.Second {
				t.Errorf("Decompress(%s bomb) took %v", b.encoding, elapsed)
			}
			t.Logf("%s: %d compressed bytes, stopped after %v, %d MiB allocated", b.encoding, len(b.body), elapsed, allocated>>20)
		})
	}
}
