package decode

import (
	"errors"
	"unicode/utf8"
)

// Errors that Decode and Decompress wrap, so that callers can map them to HTTP statuses
// with errors.Is.
var (
	// ErrTooLarge means a body is larger than Limits.MaxBodyBytes once decompressed (413).
	ErrTooLarge = errors.New("body too large")
	// ErrTooManyRecords means a body holds more than Limits.MaxRecords records (413).
	ErrTooManyRecords = errors.New("too many records")
	// ErrUnsupportedEncoding means a Content-Encoding that Decompress does not know (415).
	ErrUnsupportedEncoding = errors.New("unsupported content encoding")
	// ErrMalformed means nothing in a body could be decoded as the requested format (400).
	ErrMalformed = errors.New("malformed payload")
	// ErrUnknownFormat means a Request names a Format that Decode does not know (404 on an
	// explicit route).
	ErrUnknownFormat = errors.New("unknown format")
)

// Default limits, used for the zero fields of Limits.
const (
	DefaultMaxRecords   = 100000
	DefaultMaxLineBytes = 65536
	DefaultMaxBodyBytes = 64 << 20
	DefaultMaxLabels    = 64
)

// maxErrors is how many rejection reasons a Result keeps.
const maxErrors = 10

// Limits bound the work one request can cause. A zero field means its default.
type Limits struct {
	// MaxRecords is the most records one request may hold (default 100000).
	MaxRecords int
	// MaxLineBytes is the longest message kept; longer ones are cut at a UTF-8
	// boundary and marked Truncated (default 65536).
	MaxLineBytes int
	// MaxBodyBytes is the largest decompressed body accepted (default 64 MiB).
	MaxBodyBytes int64
	// MaxLabels is the most labels kept per record; extra labels are dropped (default 64).
	MaxLabels int
}

func (l Limits) withDefaults() Limits {
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultMaxRecords
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxLabels <= 0 {
		l.MaxLabels = DefaultMaxLabels
	}
	return l
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && cut > n-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = n // not valid UTF-8 around the cut: cut at the byte limit
	}
	return s[:cut], true
}
