package decode

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file holds the helpers that read records decoded into map[string]any, from JSON
// (numbers as json.Number) or msgpack (int64, uint64, float64, []byte).

// scalarString renders a scalar value as text; maps, slices and nil give false.
func scalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return string(t), true
	case []byte:
		return string(t), true
	case bool:
		return strconv.FormatBool(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case int:
		return strconv.Itoa(t), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	}
	return "", false
}

// lookup follows a path of map keys; a path of one key may also be a flattened dotted key.
func lookup(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// lookupString is lookup for a scalar rendered as text.
func lookupString(m map[string]any, path ...string) string {
	s, _ := scalarString(lookup(m, path...))
	return s
}

// messageOf returns the first key of keys that holds a scalar. bad names the first
// key present with a non-scalar value, for the rejection reason.
func messageOf(m map[string]any, keys []string) (msg string, ok bool, bad string) {
	for _, k := range keys {
		v, present := m[k]
		if !present || v == nil {
			continue
		}
		if s, isScalar := scalarString(v); isScalar {
			return s, true, ""
		}
		if bad == "" {
			bad = k
		}
	}
	return "", false, bad
}

// timeOf returns the first parsable time among keys, or the zero time.
func timeOf(m map[string]any, keys []string) time.Time {
	for _, k := range keys {
		if t, ok := parseTime(m[k]); ok {
			return t
		}
	}
	return time.Time{}
}

// parseTime reads a timestamp: epoch numbers in s, ms, µs or ns (chosen by magnitude),
// RFC 3339, Fluent Bit java_sql_timestamp, and Go's time.Time.String layout.
func parseTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case string:
		return parseTimeString(t)
	case json.Number:
		return parseEpoch(string(t))
	case []byte:
		return parseTimeString(string(t))
	case float64:
		return parseEpoch(strconv.FormatFloat(t, 'f', -1, 64))
	case int64:
		return parseEpoch(strconv.FormatInt(t, 10))
	case uint64:
		return parseEpoch(strconv.FormatUint(t, 10))
	case time.Time:
		return t, !t.IsZero()
	case eventTime:
		return time.Unix(int64(t.sec), int64(t.nsec)).UTC(), t.sec != 0
	}
	return time.Time{}, false
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700 MST",
	"2006-01-02 15:04:05.999999999",
}

func parseTimeString(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if c := s[0]; c >= '0' && c <= '9' && !strings.ContainsAny(s, "-:") {
		return parseEpoch(s)
	}
	if i := strings.Index(s, " m="); i > 0 { // monotonic clock suffix of time.Time.String
		s = s[:i]
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// parseEpoch reads a decimal epoch timestamp exactly, picking the unit by the number of
// integer digits: up to 11 seconds, 12-14 milliseconds, 15-17 microseconds, else nanoseconds.
func parseEpoch(s string) (time.Time, bool) {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 || f > math.MaxInt64 {
			return time.Time{}, false
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	scale := unitNanos(len(intPart))
	if n > math.MaxInt64/scale {
		return time.Time{}, false
	}
	ns := n * scale
	ns += fracNanos(frac, scale)
	return time.Unix(0, ns).UTC(), true
}

func unitNanos(digits int) int64 {
	switch {
	case digits <= 11:
		return int64(time.Second)
	case digits <= 14:
		return int64(time.Millisecond)
	case digits <= 17:
		return int64(time.Microsecond)
	}
	return 1
}

// fracNanos converts the fractional digits of a value in a unit of scale nanoseconds.
func fracNanos(frac string, scale int64) int64 {
	var ns int64
	for i := 0; i < len(frac) && scale > 1; i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0
		}
		scale /= 10
		ns += int64(c-'0') * scale
	}
	return ns
}

// levelKeys are where records keep their severity, in order of preference.
var levelKeys = [][]string{
	{"level"}, {"severity"}, {"lvl"}, {"loglevel"}, {"log_level"}, {"levelname"},
	{"severity_text"}, {"log.level"}, {"log", "level"}, {"PRIORITY"}, {"priority"},
}

// levelOf returns the normalised level of a record, or "".
func levelOf(m map[string]any) string {
	for _, path := range levelKeys {
		if l := normLevel(lookup(m, path...)); l != "" {
			return l
		}
	}
	return ""
}

// normLevel maps a severity name or number to debug, info, warn, error, fatal or "".
// Numbers up to 7 are syslog severities; 10-60 are pino/bunyan levels.
func normLevel(v any) string {
	s, ok := scalarString(v)
	if !ok {
		return ""
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		return numericLevel(n)
	}
	return levelNames[s]
}

var levelNames = map[string]string{
	"trace": "debug", "debug": "debug", "dbg": "debug", "verbose": "debug", "t": "debug", "d": "debug",
	"info": "info", "information": "info", "informational": "info", "notice": "info", "normal": "info", "i": "info",
	"warn": "warn", "warning": "warn", "w": "warn",
	"error": "error", "err": "error", "eror": "error", "e": "error",
	"fatal": "fatal", "critical": "fatal", "crit": "fatal", "panic": "fatal", "dpanic": "fatal",
	"emerg": "fatal", "emergency": "fatal", "alert": "fatal", "f": "fatal", "c": "fatal",
}

func numericLevel(n int) string {
	switch {
	case n < 0:
		return ""
	case n <= 2:
		return "fatal"
	case n == 3:
		return "error"
	case n == 4:
		return "warn"
	case n <= 6:
		return "info"
	case n == 7:
		return "debug"
	case n >= 10 && n < 30:
		return "debug"
	case n >= 30 && n < 40:
		return "info"
	case n >= 40 && n < 50:
		return "warn"
	case n >= 50 && n < 60:
		return "error"
	case n >= 60 && n <= 100:
		return "fatal"
	}
	return ""
}

// unwrapKeys are the message keys looked for inside a message that is itself JSON.
var unwrapKeys = []string{"message", "msg", "log", "MESSAGE"}

// unwrapJSON looks inside a message that is a JSON object (an application's structured
// line, or a record that Fluent Bit's loki output encoded as the line) and returns its
// message and level. It looks at most two objects deep.
func unwrapJSON(msg string) (inner, level string, ok bool) {
	for range 2 {
		m := jsonObject(msg)
		if m == nil {
			break
		}
		s, found, _ := messageOf(m, unwrapKeys)
		if !found {
			break
		}
		msg, ok = s, true
		if l := levelOf(m); l != "" && level == "" {
			level = l
		}
	}
	return msg, level, ok
}

// jsonObject parses s when it looks like a JSON object, else returns nil.
func jsonObject(s string) map[string]any {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil
	}
	return m
}

// inferLevel reads the level of a plain-text line that states it in a well-known way: a
// klog header ("E0601 10:00:00.123456 ...") or a logfmt level/lvl key.
func inferLevel(msg string) string {
	if len(msg) > 6 && msg[5] == ' ' && isDigits(msg[1:5]) {
		if l := klogLevels[msg[0]]; l != "" {
			return l
		}
	}
	for _, key := range []string{"level=", "lvl="} {
		i := strings.Index(msg, key)
		if i < 0 || (i > 0 && msg[i-1] != ' ') {
			continue
		}
		v := msg[i+len(key):]
		v = strings.TrimPrefix(v, `"`)
		if end := strings.IndexAny(v, " \"\t"); end >= 0 {
			v = v[:end]
		}
		return normLevel(v)
	}
	return ""
}

var klogLevels = map[byte]string{'I': "info", 'W': "warn", 'E': "error", 'F': "fatal"}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
