package decode

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestJSONErrorOffsets: every JSON error names the byte offset in the body where
// decoding failed (not the start of the body or of the value), and the record
// number where the body holds records.
func TestJSONErrorOffsets(t *testing.T) {
	t.Parallel()
	const js = "application/json"
	truncated := `{"msg": "x", "a": [1,2` // 22 bytes, ends inside the array
	tests := []struct {
		name string
		req  Request
		// err is the whole-body error, or "" when the body is accepted in part;
		// rejected is then the first rejection reason.
		err, rejected string
	}{
		{"truncated record", Request{Format: FormatNDJSON, Body: []byte(truncated)},
			"body is not JSON: unexpected end of JSON input at offset 22 (record 1)", ""},
		{"bad character", Request{Format: FormatFluentBit, Body: []byte(`{"log": "a", "n": nope}`)},
			"body is not JSON: invalid character 'o' in literal null (expecting 'u') at offset 19 (record 1)", ""},
		{"byte order mark counts", Request{Format: FormatNDJSON, Body: []byte("\xef\xbb\xbf" + `{"msg": x}`)},
			"body is not JSON: invalid character 'x' looking for beginning of value at offset 11 (record 1)", ""},
		{"third record of an array", Request{Format: FormatVector, Body: []byte(`[{"message":"a"},{"message":"b"},{"message":"c",]`)},
			"", "record 3: invalid JSON: invalid character ']' looking for beginning of object key string at offset 48"},
		{"second NDJSON line truncated", Request{Format: FormatNDJSON, Body: []byte(`{"msg":"a"}` + "\n" + truncated)},
			"", "record 2: invalid JSON: unexpected end of JSON input at offset 34"},
		{"auto, text that claims JSON", Request{ContentType: js, Body: []byte("hello world\n")},
			"body is not JSON: invalid character 'h' looking for beginning of value at offset 0 (record 1)", ""},
		{"auto, broken first object", Request{ContentType: js + "; charset=utf-8", Body: []byte(`{"message": "a" "b"}`)},
			"body is not JSON: invalid character '\"' after object key:value pair at offset 16 (record 1)", ""},
		{"loki", Request{Format: FormatLoki, ContentType: js, Body: []byte(`{"streams": [{"stream": {}, "values": [["1", brok]]}]}`)},
			"loki push: body is not a JSON push request: invalid character 'b' looking for beginning of value at offset 45", ""},
		{"loki truncated", Request{Format: FormatLoki, ContentType: js, Body: []byte(`{"streams": [{"stream": {}`)},
			"loki push: body is not a JSON push request: unexpected end of JSON input at offset 26", ""},
		{"otlp", Request{Format: FormatOTLP, ContentType: js, Body: []byte(`{"resourceLogs": [{]}`)},
			"otlp: body is not an OTLP-JSON logs request: invalid character ']' looking for beginning of object key string at offset 19", ""},
		{"alertmanager, second message", Request{Format: FormatAlertmanager, Body: []byte(`{"version":"4","alerts":[]}` + "\n" + `{"version":"4","alerts":[}`)},
			"alertmanager: body is not a webhook message: invalid character '}' looking for beginning of value at offset 53", ""},
		{"bulk action line", Request{Format: FormatElasticsearch, Body: []byte(`{"index":{}}` + "\n" + `{"message":"ok"}` + "\n" + `  {"index": {]` + "\n" + `{"message":"x"}` + "\n")},
			"", "record 2: action line: invalid character ']' looking for beginning of object key string at offset 43"},
		{"bulk source line", Request{Format: FormatElasticsearch, Body: []byte(`{"index":{}}` + "\n" + `{"message": tru}` + "\n")},
			"", "record 1: source: invalid character '}' in literal true (expecting 'e') at offset 28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Decode(tt.req, Limits{})
			if tt.err != "" {
				if !errors.Is(err, ErrMalformed) || err.Error() != tt.err {
					t.Fatalf("Decode(%q) error = %v, want %q", tt.req.Body, err, tt.err)
				}
				return
			}
			if err != nil || len(res.Errors) == 0 || res.Errors[0] != tt.rejected {
				t.Fatalf("Decode(%q) = %v, errors %q, want a first rejection %q", tt.req.Body, err, res.Errors, tt.rejected)
			}
		})
	}
}

// TestJSONErrorOffsetsPointAtTheError: the reported offset is the byte that
// broke the JSON, deep inside a long array (the decoder's own offsets leave out
// the bytes it reads between elements), and no record is decoded twice.
func TestJSONErrorOffsetsPointAtTheError(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[\n")
	for range 50 {
		b.WriteString(`  {"msg": "line of a healthy service"},` + "\n")
	}
	at := b.Len() + len(`  {"msg":`)
	b.WriteString(`  {"msg":?}` + "\n]")
	res, err := Decode(Request{Format: FormatNDJSON, Body: []byte(b.String())}, Limits{})
	want := "record 51: invalid JSON: invalid character '?' looking for beginning of value at offset " + strconv.Itoa(at)
	if err != nil || len(res.Errors) != 1 || res.Errors[0] != want {
		t.Fatalf("Decode() = %v %q, want %q", err, res.Errors, want)
	}
	// Decoding resumes after the error, not at the array's start again.
	if len(res.Records) != 50 {
		t.Errorf("Decode() kept %d records, want the 50 before the error", len(res.Records))
	}
	if got := b.String()[at]; got != '?' {
		t.Fatalf("BUG: byte %d is %q", at, got)
	}
}
