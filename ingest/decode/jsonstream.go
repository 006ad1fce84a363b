package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// eachJSON calls fn for every top-level JSON value in body, unrolling top-level arrays:
// a JSON array, a single value, NDJSON, or values back to back with no separator
// (Fluent Bit json_stream). After a syntax error the value is rejected and decoding
// resumes at the next line that starts with '{' or '['. It returns an error when the
// body holds no JSON value at all, or when fn does.
func eachJSON(b *batch, body []byte, fn func(v any) error) error {
	var firstErr error
	firstRecord, decoded := 0, 0
	// Offsets count from the body as sent, byte order mark included.
	for off := len(body) - len(trimBOM(body)); off < len(body); {
		n, next, err := decodeJSONFrom(body, off, fn)
		decoded += n
		if err == nil {
			break
		}
		var se *jsonSyntaxError
		if !errors.As(err, &se) {
			return err
		}
		if firstErr == nil {
			firstErr, firstRecord = err, b.seq+1
		}
		b.reject("%v", err)
		off = resync(body, next)
	}
	if decoded == 0 && firstErr != nil {
		var se *jsonSyntaxError
		errors.As(firstErr, &se)
		return fmt.Errorf("body is not JSON: %s at offset %d (record %d)", jsonErrorText(se.err), se.offset, firstRecord)
	}
	return nil
}

// jsonSyntaxError is a JSON value that did not parse, with its offset in the body.
type jsonSyntaxError struct {
	err    error
	offset int64
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON: %s at offset %d", jsonErrorText(e.err), e.offset)
}

// jsonErrorText describes a JSON decoding error without Go type names.
func jsonErrorText(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field == "" {
			return fmt.Sprintf("got a JSON %s, want %s", ute.Value, jsonKind(ute.Type))
		}
		return fmt.Sprintf("%s is a JSON %s, want %s", ute.Field, ute.Value, jsonKind(ute.Type))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number"
}

// decodeJSONFrom decodes values from body[off:] until the end or a syntax error. It
// returns how many values reached fn and, on error, where the error is.
func decodeJSONFrom(body []byte, off int, fn func(v any) error) (n, badAt int, err error) {
	dec := json.NewDecoder(bytes.NewReader(body[off:]))
	dec.UseNumber()
	for {
		start := off + int(dec.InputOffset())
		c := firstNonSpace(body, start)
		if c < 0 {
			return n, 0, nil
		}
		var k int
		if body[c] == '[' {
			k, err = decodeArray(dec, fn)
		} else {
			k, err = decodeOne(dec, fn)
		}
		n += k
		if err != nil {
			err = syntaxAt(err, body, c)
			var se *jsonSyntaxError
			if errors.As(err, &se) && se.offset >= 0 {
				return n, int(se.offset), err
			}
			return n, c, err
		}
	}
}

// syntaxAt marks JSON parse errors with their body offset; fn's errors pass through.
// The value that failed starts at body[start:].
func syntaxAt(err error, body []byte, start int) error {
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		off := errOffset(err, body, start)
		if off < 0 {
			off = int64(start)
		}
		return &jsonSyntaxError{err: err, offset: off}
	}
	return err
}

func decodeOne(dec *json.Decoder, fn func(v any) error) (int, error) {
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, err
	}
	return 1, fn(v)
}

// decodeArray passes each element of an array to fn.
func decodeArray(dec *json.Decoder, fn func(v any) error) (int, error) {
	if _, err := dec.Token(); err != nil {
		return 0, err
	}
	n := 0
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return n, err
		}
		n++
		if err := fn(v); err != nil {
			return n, err
		}
	}
	_, err := dec.Token()
	return n, err
}

// firstNonSpace returns the index of the first non-whitespace byte at or after i, or -1.
func firstNonSpace(body []byte, i int) int {
	for ; i < len(body); i++ {
		switch body[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return i
		}
	}
	return -1
}

// resync returns the start of the next line after i that begins (after blanks) with
// '{' or '[', or len(body).
func resync(body []byte, i int) int {
	for {
		nl := bytes.IndexByte(body[i:], '\n')
		if nl < 0 {
			return len(body)
		}
		i += nl + 1
		if c := firstNonSpace(body, i); c >= 0 && (body[c] == '{' || body[c] == '[') {
			return c
		}
	}
}

// jsonError gives a JSON decoding error the wording of jsonErrorText and, when it
// is known, the byte offset in the body where decoding failed.
type jsonError struct {
	err    error
	offset int64 // -1 when unknown
}

func (e *jsonError) Error() string {
	if e.offset < 0 {
		return jsonErrorText(e.err)
	}
	var ute *json.UnmarshalTypeError
	if errors.As(e.err, &ute) {
		return fmt.Sprintf("%s, at offset %d", jsonErrorText(e.err), e.offset)
	}
	return fmt.Sprintf("%s at offset %d", jsonErrorText(e.err), e.offset)
}

func (e *jsonError) Unwrap() error { return e.err }

// jsonErr wraps an error from decoding the value at data[start:], data starting at
// offset base of the body; a negative base means data's place in the body is not known.
func jsonErr(err error, data []byte, start, base int) error {
	if err == nil {
		return nil
	}
	off := errOffset(err, data, start)
	if off < 0 || base < 0 {
		return &jsonError{err: err, offset: -1}
	}
	return &jsonError{err: err, offset: off + int64(base)}
}

// errOffset is where in data a JSON error happened while decoding the value at
// data[start:], or -1.
func errOffset(err error, data []byte, start int) int64 {
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return int64(len(data))
	case errors.As(err, &ute):
		return int64(start) + ute.Offset
	case errors.As(err, &se):
		return syntaxOffset(data, start)
	}
	return -1
}

// syntaxOffset re-reads the value at data[start:] to find its first syntax error,
// or -1. A decoder that called Token or More, or decoded values before, reports
// offsets that leave out bytes; a fresh decoder's first value has exact ones.
func syntaxOffset(data []byte, start int) int64 {
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(data))
	case errors.As(err, &se):
		// Offset counts the bytes read, including the offending one.
		return int64(start) + max(se.Offset-1, 0)
	}
	return -1
}

// trimBOM drops a UTF-8 byte order mark, which some Windows senders put before JSON.
func trimBOM(body []byte) []byte {
	return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
}
