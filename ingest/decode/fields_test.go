package decode

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	t.Parallel()
	want := time.Date(2024, 6, 1, 10, 0, 0, 123456000, time.UTC)
	f := func(in any, want time.Time) {
		t.Helper()
		got, ok := parseTime(in)
		if ok != !want.IsZero() || !got.Equal(want) {
			t.Errorf("parseTime(%#v) = %v, %v, want %v", in, got, ok, want)
		}
	}
	f(json.Number("1717236000.123456"), want)                        // Fluent Bit double
	f(1717236000.123456, want)                                       // msgpack float
	f(json.Number("1717236000123"), want.Truncate(time.Millisecond)) // epoch_ms
	f(json.Number("1717236000123456"), want)                         // µs
	f(json.Number("1717236000123456000"), want)                      // ns
	f("1717236000123456000", want)                                   // Loki ns string
	f(json.Number("1717236000"), want.Truncate(time.Second))         // epoch
	f(int64(1717236000), want.Truncate(time.Second))
	f(uint64(1717236000), want.Truncate(time.Second))
	f(json.Number("1.717236000123456e9"), want)
	f("2024-06-01T10:00:00.123456Z", want)      // iso8601
	f("2024-06-01T12:00:00.123456+02:00", want) // offset
	f("2024-06-01 10:00:00.123456", want)       // java_sql_timestamp
	f("2024-06-01T10:00:00.123456", want)       // no zone
	f("2024-06-01 10:00:00.123456 +0000 UTC", want)
	f("2024-06-01 10:00:00.123456 +0000 UTC m=+12.5", want) // time.Time.String with monotonic
	f(eventTime{sec: 1717236000, nsec: 123456000}, want)
	f("", time.Time{})
	f("yesterday", time.Time{})
	f(json.Number("-5"), time.Time{})
	f(json.Number("0"), time.Time{})
	f(json.Number("99999999999999999999999"), time.Time{})
	f(nil, time.Time{})
	f(map[string]any{}, time.Time{})
	f(true, time.Time{})
}

func TestNormLevel(t *testing.T) {
	t.Parallel()
	f := func(in any, want string) {
		t.Helper()
		if got := normLevel(in); got != want {
			t.Errorf("normLevel(%#v) = %q, want %q", in, got, want)
		}
	}
	f("ERROR", "error")
	f("err", "error")
	f(" Warning ", "warn")
	f("WARN", "warn")
	f("notice", "info")
	f("Normal", "info")
	f("TRACE", "debug")
	f("CRIT", "fatal")
	f("critical", "fatal")
	f("panic", "fatal")
	f("E", "error")
	f(json.Number("3"), "error")  // syslog err
	f("6", "info")                // journald PRIORITY
	f(json.Number("50"), "error") // pino
	f(int64(60), "fatal")
	f(json.Number("30"), "info")
	f("page", "")
	f("", "")
	f(nil, "")
	f(json.Number("1000"), "")
}

func TestInferLevel(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := inferLevel(in); got != want {
			t.Errorf("inferLevel(%q) = %q, want %q", in, got, want)
		}
	}
	f("E0601 10:00:00.123456       1 main.go:42] dial tcp: connection refused", "error")
	f("W0601 10:00:00.123456 1 reflector.go:535] watch ended", "warn")
	f("F0601 10:00:00.000000 1 main.go:1] fatal", "fatal")
	f(`level=warn ts=2024-06-01T10:00:01Z msg="slow"`, "warn")
	f(`ts=2024 lvl=error msg=x`, "error")
	f(`ts=2024 level="info" msg=x`, "info")
	f("loglevel=error", "")
	f("Error: something", "")
	f("E06 short", "")
	f("", "")
}

func TestUnwrapJSON(t *testing.T) {
	t.Parallel()
	f := func(in, wantMsg, wantLevel string, wantOK bool) {
		t.Helper()
		msg, level, ok := unwrapJSON(in)
		if msg != wantMsg || level != wantLevel || ok != wantOK {
			t.Errorf("unwrapJSON(%q) = %q, %q, %v, want %q, %q, %v", in, msg, level, ok, wantMsg, wantLevel, wantOK)
		}
	}
	f(`{"level":"error","msg":"redis: timeout"}`, "redis: timeout", "error", true)
	f(`{"log":"{\"severity\":\"WARNING\",\"message\":\"slow\"}\n","stream":"stdout"}`, "slow", "warn", true)
	f(`{"log":"plain\n"}`, "plain\n", "", true)
	f(`{"no":"message"}`, `{"no":"message"}`, "", false)
	f(`{broken`, `{broken`, "", false)
	f(`plain text`, `plain text`, "", false)
}

func TestParseLabelSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want map[string]string
	}{
		{`{app="api", namespace="prod"}`, map[string]string{"app": "api", "namespace": "prod"}},
		{`{msg="a \"quoted\" \\ value"}`, map[string]string{"msg": `a "quoted" \ value`}},
		{`{msg="say "hi", ok", path="C:\logs"}`, map[string]string{"msg": `say "hi", ok`, "path": `C:\logs`}},
		{`{a="1",b="2"}`, map[string]string{"a": "1", "b": "2"}},
		{`{a=""}`, map[string]string{"a": ""}},
		{`{}`, map[string]string{}},
		{``, map[string]string{}},
		{`{a="unterminated`, map[string]string{"a": "unterminated"}},
		{`{a=unquoted}`, map[string]string{}},
	}
	for _, tt := range tests {
		got := parseLabelSet(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("parseLabelSet(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("parseLabelSet(%q)[%q] = %q, want %q", tt.in, k, got[k], v)
			}
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	f := func(in string, n int, want string, wantCut bool) {
		t.Helper()
		got, cut := truncate(in, n)
		if got != want || cut != wantCut {
			t.Errorf("truncate(%q, %d) = %q, %v, want %q, %v", in, n, got, cut, want, wantCut)
		}
	}
	f("abc", 3, "abc", false)
	f("abcd", 3, "abc", true)
	f("aé", 2, "a", true)
	f("日本語", 4, "日", true)
	f("日本語", 0, "", true)
	f("\xff\xff\xff\xff\xff", 2, "\xff\xff", true)
}
