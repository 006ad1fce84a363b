package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// OTLP-JSON differs from protobuf-JSON: trace and span ids are hex, enums integers,
// 64-bit integers usually strings, and unknown fields must be ignored. protojson gets the
// ids wrong and stops at the first bad value, so the few fields needed are read here with
// encoding/json, one log record at a time so that a bad record is only that record.

type otlpJSONRequest struct {
	ResourceLogs []struct {
		Resource struct {
			Attributes []otlpJSONKeyValue `json:"attributes"`
		} `json:"resource"`
		ScopeLogs []struct {
			LogRecords []json.RawMessage `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

type otlpJSONLogRecord struct {
	TimeUnixNano         flexNumber         `json:"timeUnixNano"`
	ObservedTimeUnixNano flexNumber         `json:"observedTimeUnixNano"`
	SeverityNumber       flexNumber         `json:"severityNumber"`
	SeverityText         string             `json:"severityText"`
	Body                 *otlpJSONAnyValue  `json:"body"`
	Attributes           []otlpJSONKeyValue `json:"attributes"`
}

type otlpJSONKeyValue struct {
	Key   string            `json:"key"`
	Value *otlpJSONAnyValue `json:"value"`
}

type otlpJSONAnyValue struct {
	StringValue *string    `json:"stringValue"`
	BoolValue   *bool      `json:"boolValue"`
	IntValue    flexNumber `json:"intValue"`
	DoubleValue flexNumber `json:"doubleValue"`
	BytesValue  *string    `json:"bytesValue"`
	ArrayValue  *struct {
		Values []*otlpJSONAnyValue `json:"values"`
	} `json:"arrayValue"`
	KvlistValue *struct {
		Values []otlpJSONKeyValue `json:"values"`
	} `json:"kvlistValue"`
}

// flexNumber is a JSON number or a string holding one (or an enum name); "" when absent.
type flexNumber string

func (n *flexNumber) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if len(data) > 0 && data[0] == '"' {
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
	} else {
		var num json.Number
		if err := json.Unmarshal(data, &num); err != nil {
			return fmt.Errorf("%s is not a number", data)
		}
		s = string(num)
	}
	*n = flexNumber(strings.TrimSpace(s))
	return nil
}

func (n flexNumber) uint64() uint64 {
	t, ok := parseEpoch(string(n))
	if !ok {
		return 0
	}
	return uint64(t.UnixNano())
}

func decodeOTLPJSON(b *batch) error {
	var req otlpJSONRequest
	body := trimBOM(b.req.Body)
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("otlp: body is not an OTLP-JSON logs request: %w", jsonErr(err, body, 0, len(b.req.Body)-len(body)))
	}
	for _, rl := range req.ResourceLogs {
		res := jsonKVMap(rl.Resource.Attributes)
		for _, sl := range rl.ScopeLogs {
			for _, raw := range sl.LogRecords {
				if err := b.addOTLPJSONRecord(res, raw); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (b *batch) addOTLPJSONRecord(res map[string]string, raw json.RawMessage) error {
	var lr otlpJSONLogRecord
	if err := json.Unmarshal(raw, &lr); err != nil {
		b.reject("log record: %v", jsonErr(err, raw, 0, -1))
		return nil
	}
	rec := otlpRecord{
		timeNanos:     lr.TimeUnixNano.uint64(),
		observedNanos: lr.ObservedTimeUnixNano.uint64(),
		severity:      severityNumber(string(lr.SeverityNumber)),
		severityText:  lr.SeverityText,
		attrs:         jsonKVMap(lr.Attributes),
	}
	if lr.Body != nil {
		rec.body = lr.Body.value(0)
	}
	return b.addOTLPRecord(res, rec)
}

// value converts an AnyValue to a Go value, as anyValue does for protobuf.
func (v *otlpJSONAnyValue) value(depth int) any {
	switch {
	case v == nil || depth > maxDepth:
		return nil
	case v.StringValue != nil:
		return *v.StringValue
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.IntValue != "":
		return json.Number(v.IntValue)
	case v.DoubleValue != "":
		return json.Number(v.DoubleValue)
	case v.BytesValue != nil:
		p, err := base64.StdEncoding.DecodeString(*v.BytesValue)
		if err != nil {
			return *v.BytesValue
		}
		return bytesText(p)
	case v.ArrayValue != nil:
		out := make([]any, 0, len(v.ArrayValue.Values))
		for _, e := range v.ArrayValue.Values {
			out = append(out, e.value(depth+1))
		}
		return out
	case v.KvlistValue != nil:
		out := make(map[string]any, len(v.KvlistValue.Values))
		for _, kv := range v.KvlistValue.Values {
			out[kv.Key] = kv.Value.value(depth + 1)
		}
		return out
	}
	return nil
}

func jsonKVMap(kvs []otlpJSONKeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if s, ok := scalarString(kv.Value.value(0)); ok {
			m[kv.Key] = s
		}
	}
	return m
}
