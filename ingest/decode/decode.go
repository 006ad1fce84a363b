package decode

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Request is one webhook request as the decoders see it.
type Request struct {
	// Format is the explicit route's format, or FormatAuto to detect it.
	Format Format
	// Path is the URL path the sender posted to, e.g. "/loki/api/v1/push".
	Path string
	// ContentType is the Content-Type header.
	ContentType string
	// ContentEncoding is the Content-Encoding header. Receive decompresses
	// Body by it; Decode takes Body as already decompressed.
	ContentEncoding string
	// UserAgent is the User-Agent header.
	UserAgent string
	// Tag is the Fluent Bit record tag from its header_tag header, or "".
	Tag string
	// Body is the request body.
	Body []byte
	// Now is the receive time, used for records that carry no time.
	Now time.Time
}

// Result is what Decode made of a request.
type Result struct {
	// Format is the format the body was decoded as.
	Format Format
	// Records are the valid records, in body order.
	Records []Record
	// Rejected counts malformed records that were skipped.
	Rejected int
	// Errors holds the first few rejection reasons, one line each.
	Errors []string
	// Bulk has one item per Elasticsearch bulk action, in order; nil for other formats.
	Bulk []BulkItem
	// Body is the decompressed body the records came from (set by Receive),
	// so that a caller can recognise a retry of the same request.
	Body []byte `json:"-"`
}

// BulkItem is the outcome of one Elasticsearch bulk action, for the bulk response.
type BulkItem struct {
	// Action is index, create, update or delete.
	Action string
	// Index is the target index from the action line or the URL.
	Index string
	// ID is the document _id, or "".
	ID string
	// Status is the HTTP status to report for the item: 201 accepted, 200 delete, 400 rejected.
	Status int
}

// decoders maps each format to its body decoder.
var decoders = map[Format]func(*batch) error{
	FormatFluentBit:     decodeFluentBit,
	FormatFluentd:       decodeFluentd,
	FormatVector:        decodeVector,
	FormatNDJSON:        decodeNDJSON,
	FormatLoki:          decodeLoki,
	FormatOTLP:          decodeOTLP,
	FormatElasticsearch: decodeBulk,
	FormatAlertmanager:  decodeAlertmanager,
	FormatK8sEvents:     decodeK8sEvents,
	FormatText:          decodeText,
}

// Receive is what the webhook does with a request body as sent: it
// decompresses it as its Content-Encoding says (a Loki protobuf push is
// snappy whatever the header), refuses an empty body where the format
// needs one, then decodes it. Errors wrap ErrMalformed for a corrupt or
// empty body, ErrTooLarge past lim.MaxBodyBytes decompressed, and
// ErrUnsupportedEncoding, besides those of Decode.
func Receive(req Request, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	enc := req.ContentEncoding
	if req.Format.alwaysSnappy(req.ContentType) {
		enc = "" // the Loki decoder undoes the snappy itself
	}
	if enc != "" {
		body, err := Decompress(enc, bytes.NewReader(req.Body), lim.MaxBodyBytes)
		switch {
		case errors.Is(err, ErrTooLarge), errors.Is(err, ErrUnsupportedEncoding):
			return Result{Format: req.Format}, err
		case err != nil:
			return Result{Format: req.Format}, fmt.Errorf("Content-Encoding %s: corrupt or truncated body: %v: %w", enc, err, ErrMalformed)
		}
		req.Body = body
	}
	if len(bytes.TrimSpace(req.Body)) == 0 && !req.Format.emptyBodyOK() {
		return Result{Format: req.Format}, fmt.Errorf("empty body: %w", ErrMalformed)
	}
	res, err := Decode(req, lim)
	res.Body = req.Body
	return res, err
}

// Decode decodes req.Body as req.Format, detecting the format when it is FormatAuto.
// Malformed records are skipped and counted in Result.Rejected. The error wraps
// ErrMalformed when nothing in the body could be decoded, ErrTooLarge or
// ErrTooManyRecords when a limit is exceeded, and ErrUnknownFormat for an unknown format.
func Decode(req Request, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	if int64(len(req.Body)) > lim.MaxBodyBytes {
		return Result{Format: req.Format}, fmt.Errorf("body of %d bytes, limit %d: %w", len(req.Body), lim.MaxBodyBytes, ErrTooLarge)
	}
	f := req.Format
	if f == FormatAuto {
		f = Detect(req)
	}
	dec, ok := decoders[f]
	if !ok {
		return Result{Format: f}, fmt.Errorf("format %q: %w", f, ErrUnknownFormat)
	}
	b := newBatch(req, lim, f)
	return b.finish(dec(b))
}

// batch collects the records of one request and applies the limits to them.
type batch struct {
	req Request
	lim Limits
	now time.Time
	res Result
	seq int // ordinal of the last record seen, valid or not
}

func newBatch(req Request, lim Limits, f Format) *batch {
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &batch{req: req, lim: lim, now: now.UTC(), res: Result{Format: f}}
}

// add appends a valid record, applying the line limit and defaults.
func (b *batch) add(r Record) error {
	if len(b.res.Records) >= b.lim.MaxRecords {
		return fmt.Errorf("more than %d records: %w", b.lim.MaxRecords, ErrTooManyRecords)
	}
	b.seq++
	r.Source = b.res.Format
	if r.Time.IsZero() {
		r.Time = b.now
	}
	r.Time = r.Time.UTC()
	msg := strings.TrimRight(r.Message, "\r\n")
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	r.Message, r.Truncated = truncate(msg, b.lim.MaxLineBytes)
	if r.Level == "" {
		r.Level = inferLevel(r.Message)
	}
	b.res.Records = append(b.res.Records, r)
	return nil
}

// reject counts a malformed record and keeps its reason if there is room.
func (b *batch) reject(format string, args ...any) {
	b.seq++
	b.res.Rejected++
	if len(b.res.Errors) < maxErrors {
		reason := oneLine(fmt.Sprintf(format, args...))
		b.res.Errors = append(b.res.Errors, fmt.Sprintf("record %d: %s", b.seq, reason))
	}
}

// labels returns an empty label set bounded by the label limit.
func (b *batch) labels() *labelSet {
	return &labelSet{max: b.lim.MaxLabels}
}

// finish turns the decoder's outcome into Decode's results.
func (b *batch) finish(err error) (Result, error) {
	if err != nil {
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTooManyRecords) {
			return Result{Format: b.res.Format}, err
		}
		return b.res, malformed(err)
	}
	if len(b.res.Records) == 0 && b.res.Rejected > 0 && b.res.Format != FormatElasticsearch {
		return b.res, malformed(fmt.Errorf("no valid records: %s", b.res.Errors[0]))
	}
	return b.res, nil
}

// malformedError keeps a decoder's one-line message and adds ErrMalformed to its chain.
type malformedError struct{ err error }

func (e *malformedError) Error() string   { return oneLine(e.err.Error()) }
func (e *malformedError) Unwrap() []error { return []error{e.err, ErrMalformed} }

func malformed(err error) error {
	if errors.Is(err, ErrMalformed) {
		return err
	}
	return &malformedError{err: err}
}

// oneLine keeps an error reason on one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if t, cut := truncate(s, 200); cut {
		return t + "…"
	}
	return s
}

// labelSet builds a record's labels: the first value set for a key wins, empty values
// are ignored, and keys past the limit are dropped.
type labelSet struct {
	m   map[string]string
	max int
}

func (l *labelSet) set(key, value string) {
	if key == "" || value == "" {
		return
	}
	if _, ok := l.m[key]; ok {
		return
	}
	if len(l.m) >= l.max {
		return
	}
	if l.m == nil {
		l.m = make(map[string]string, 8)
	}
	l.m[key] = value
}
