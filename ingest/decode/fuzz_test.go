package decode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzLimits are small, so that fuzzing reaches the limits too.
var fuzzLimits = Limits{MaxRecords: 1000, MaxLineBytes: 256, MaxBodyBytes: 1 << 20, MaxLabels: 8}

// fuzzContentTypes are the Content-Types a format's decoder switches on.
var fuzzContentTypes = map[Format][]string{
	FormatFluentBit: {"application/json", "application/x-ndjson", "application/msgpack", ""},
	FormatFluentd:   {"application/x-ndjson", "application/json", "application/x-msgpack", "text/plain"},
	FormatVector:    {"application/json", "application/x-ndjson", "text/plain"},
	FormatLoki:      {"application/json", "application/x-protobuf", ""},
	FormatOTLP:      {"application/json", "application/x-protobuf", ""},
}

// fuzzDecode seeds a fuzz target with testdata/<format>/*.in and checks Decode's
// invariants on every input.
func fuzzDecode(f *testing.F, format Format) {
	cts := fuzzContentTypes[format]
	if cts == nil {
		cts = []string{"application/json"}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", string(format), "*.in"))
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for i := range cts {
			f.Add(uint8(i), body)
		}
	}
	f.Fuzz(func(t *testing.T, ct uint8, body []byte) {
		req := Request{
			Format: format, Path: goldenPaths[format], ContentType: cts[int(ct)%len(cts)],
			Body: body, Now: goldenNow,
		}
		res, err := Decode(req, fuzzLimits)
		checkDecodeInvariants(t, format, res, err)
	})
}

func checkDecodeInvariants(t *testing.T, format Format, res Result, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTooManyRecords) {
			t.Fatalf("Decode() error = %v, wraps no sentinel", err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("Decode() error %q is not one line", err)
		}
		return
	}
	if len(res.Records) > fuzzLimits.MaxRecords {
		t.Fatalf("Decode() = %d records, limit %d", len(res.Records), fuzzLimits.MaxRecords)
	}
	if res.Rejected < len(res.Errors) || len(res.Errors) > maxErrors {
		t.Fatalf("Decode() rejected %d with %d reasons", res.Rejected, len(res.Errors))
	}
	for _, e := range res.Errors {
		if strings.Contains(e, "\n") {
			t.Fatalf("rejection reason %q is not one line", e)
		}
	}
	for i, r := range res.Records {
		checkRecord(t, i, format, r)
	}
	for _, item := range res.Bulk {
		if item.Status != 200 && item.Status != 201 && item.Status != 400 {
			t.Fatalf("bulk item %+v has status %d", item, item.Status)
		}
	}
}

func checkRecord(t *testing.T, i int, format Format, r Record) {
	t.Helper()
	switch {
	case !utf8.ValidString(r.Message):
		t.Fatalf("record %d: message %q is not UTF-8", i, r.Message)
	case len(r.Message) > fuzzLimits.MaxLineBytes:
		t.Fatalf("record %d: message of %d bytes, limit %d", i, len(r.Message), fuzzLimits.MaxLineBytes)
	case len(r.Labels) > fuzzLimits.MaxLabels:
		t.Fatalf("record %d: %d labels, limit %d", i, len(r.Labels), fuzzLimits.MaxLabels)
	case r.Time.IsZero():
		t.Fatalf("record %d has no time", i)
	case r.Source != format:
		t.Fatalf("record %d: source %q, want %q", i, r.Source, format)
	}
	switch r.Level {
	case "", "debug", "info", "warn", "error", "fatal":
	default:
		t.Fatalf("record %d: level %q is not normalised", i, r.Level)
	}
}

func FuzzDecodeFluentBit(f *testing.F)     { fuzzDecode(f, FormatFluentBit) }
func FuzzDecodeFluentd(f *testing.F)       { fuzzDecode(f, FormatFluentd) }
func FuzzDecodeVector(f *testing.F)        { fuzzDecode(f, FormatVector) }
func FuzzDecodeLoki(f *testing.F)          { fuzzDecode(f, FormatLoki) }
func FuzzDecodeOTLP(f *testing.F)          { fuzzDecode(f, FormatOTLP) }
func FuzzDecodeElasticsearch(f *testing.F) { fuzzDecode(f, FormatElasticsearch) }
func FuzzDecodeAlertmanager(f *testing.F)  { fuzzDecode(f, FormatAlertmanager) }
func FuzzDecodeK8sEvents(f *testing.F)     { fuzzDecode(f, FormatK8sEvents) }
func FuzzDecodeNDJSON(f *testing.F)        { fuzzDecode(f, FormatNDJSON) }
func FuzzDecodeText(f *testing.F)          { fuzzDecode(f, FormatText) }

// FuzzDetect checks that auto-detection never panics and that its pick decodes cleanly.
func FuzzDetect(f *testing.F) {
	for _, path := range goldenInputsF(f) {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add("", "", body)
		f.Add(goldenPaths[Format(filepath.Base(filepath.Dir(path)))], "application/json", body)
	}
	f.Fuzz(func(t *testing.T, path, ct string, body []byte) {
		req := Request{Path: path, ContentType: ct, Body: body, Now: goldenNow}
		format := Detect(req)
		if _, ok := decoders[format]; !ok {
			t.Fatalf("Detect() = %q, not a decodable format", format)
		}
		res, err := Decode(req, fuzzLimits)
		checkDecodeInvariants(t, format, res, err)
	})
}

func goldenInputsF(f *testing.F) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.in"))
	if err != nil {
		f.Fatal(err)
	}
	return files
}

var fuzzEncodings = []string{"", "gzip", "deflate", "zstd", "snappy", "x-snappy-framed", "identity", "br"}

// FuzzDecompress checks that Decompress never panics, never returns more than the
// limit, and reports only known errors for the encodings it supports.
func FuzzDecompress(f *testing.F) {
	seed := []byte(`{"log":"dial tcp 10.0.0.5:5432: connect: connection refused","stream":"stderr"}`)
	names := map[string]string{
		"gzip": "gzip", "deflate": "zlib", "zstd": "zstd", "snappy": "snappy block", "x-snappy-framed": "snappy framed", "": "identity",
	}
	for i, enc := range fuzzEncodings {
		if c, ok := names[enc]; ok {
			f.Add(uint8(i), uint16(1000), compressors[c](f, seed))
			f.Add(uint8(i), uint16(10), compressors[c](f, bytes.Repeat(seed, 10)))
		}
	}
	f.Add(uint8(3), uint16(100), []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58})
	f.Add(uint8(4), uint16(100), []byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, enc uint8, limit uint16, body []byte) {
		encoding := fuzzEncodings[int(enc)%len(fuzzEncodings)]
		max := int64(limit) + 1
		out, err := Decompress(encoding, bytes.NewReader(body), max)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Decompress(%q) error %q is not one line", encoding, err)
			}
			if encoding == "br" && !errors.Is(err, ErrUnsupportedEncoding) {
				t.Fatalf("Decompress(br) error = %v, want ErrUnsupportedEncoding", err)
			}
			return
		}
		if int64(len(out)) > max {
			t.Fatalf("Decompress(%q) = %d bytes, limit %d", encoding, len(out), max)
		}
		if (encoding == "" || encoding == "identity") && !bytes.Equal(out, body) {
			t.Fatalf("Decompress(%q) changed the body", encoding)
		}
	})
}
