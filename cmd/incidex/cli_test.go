package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
)

// incidexEnv is incidex with more environment variables than INCIDEX_DATA.
func incidexEnv(t *testing.T, dir string, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "INCIDEX_DATA" {
			return dir
		}
		return vars[k]
	}}
	code := run(context.Background(), args, e)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// starterDir is a data directory with the starter knowledge base.
func starterDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if r := incidex(t, dir, "", "list"); r.code != 0 {
		t.Fatalf("list: %d %s", r.code, r.stderr)
	}
	return dir
}

func TestColorOnlyOnATerminal(t *testing.T) {
	dir := starterDir(t)
	const esc = "\x1b["
	for _, tt := range []struct {
		name string
		vars map[string]string
		args []string
		want bool
	}{
		{"search in a pipe", nil, []string{"search", "subnet.env"}, false},
		{"match full-text fallback in a pipe", nil, []string{"match", "subnet.env"}, false},
		{"search --color=always", nil, []string{"search", "--color=always", "subnet.env"}, true},
		{"match --color=always", nil, []string{"match", "--color", "always", "subnet.env"}, true},
		{"search --color=never", nil, []string{"search", "--color=never", "subnet.env"}, false},
		{"always wins over NO_COLOR", map[string]string{"NO_COLOR": "1"}, []string{"search", "--color=always", "subnet.env"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := incidexEnv(t, dir, tt.vars, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stdout, esc); got != tt.want {
				t.Errorf("%q: escapes in output = %v, want %v\n%s", tt.args, got, tt.want, r.stdout)
			}
			if !tt.want && !strings.Contains(r.stdout, "subnet.env") {
				t.Errorf("%q: the highlighted words are gone:\n%s", tt.args, r.stdout)
			}
		})
	}
	if r := incidex(t, dir, "", "search", "--color=sometimes", "x"); r.code != 2 || !strings.Contains(r.stderr, "want auto, always or never") {
		t.Errorf("--color=sometimes: exit %d %q", r.code, r.stderr)
	}
}

// A pty master is a terminal: auto turns colour on there, unless NO_COLOR
// or TERM=dumb; /dev/null (a character device) is not a terminal.
func TestColorAuto(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer tty.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	c := DefaultConfig()
	for _, tt := range []struct {
		name string
		vars map[string]string
		out  *os.File
		want bool
	}{
		{"terminal", map[string]string{"TERM": "xterm-256color"}, tty, true},
		{"NO_COLOR", map[string]string{"NO_COLOR": "1"}, tty, false},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, tty, false},
		{"/dev/null", nil, null, false},
	} {
		e := &env{getenv: func(k string) string { return tt.vars[k] }}
		if got := c.colorOn(e, tt.out); got != tt.want {
			t.Errorf("%s: colorOn = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHelpDescribesEachCommand(t *testing.T) {
	for _, c := range commands() {
		r := incidex(t, t.TempDir(), "", c.name, "--help")
		if r.code != 0 {
			t.Errorf("%s --help: exit %d %s", c.name, r.code, r.stderr)
		}
		first := firstLine(r.stdout)
		if first != "incidex "+c.name+": "+c.synopsis {
			t.Errorf("%s --help first line = %q, want the one-line description", c.name, first)
		}
		_, ex, ok := strings.Cut(r.stdout, "\nexamples:\n")
		lines := strings.Split(strings.TrimSpace(ex), "\n")
		if !ok || len(lines) != 2 {
			t.Errorf("%s --help: want two examples, got %q", c.name, ex)
			continue
		}
		for _, l := range lines {
			if !strings.Contains(l, "incidex "+c.name) && !(c.name == "version" && strings.Contains(l, "incidex --version")) {
				t.Errorf("%s --help example %q does not run incidex %s", c.name, l, c.name)
			}
		}
	}
}

func TestCheckStrictLastLineAgreesWithExit(t *testing.T) {
	dir := t.TempDir()
	// One write-up whose example matches it, one with no signature at all
	// (a warning).
	good := "---\nid: broker-disk\n---\n# Broker disk full\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] broker: write segment /data/kafka/log-42: no space left on device\n```\n"
	bare := "---\nid: prose-only\n---\n# A write-up with prose only\n\nNothing here looks like a log line.\n"
	for name, body := range map[string]string{"good.md": good, "bare.md": bare} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	last := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		return l[len(l)-1]
	}
	r := incidex(t, t.TempDir(), "", "check", dir)
	if r.code != 0 || !strings.HasPrefix(last(r.stdout), "ok: ") || !strings.Contains(r.stdout, "1 warnings") {
		t.Errorf("check: exit %d, last line %q; want 0 and ok with 1 warning", r.code, last(r.stdout))
	}
	r = incidex(t, t.TempDir(), "", "check", "--strict", dir)
	if r.code != 1 || !strings.HasPrefix(last(r.stdout), "FAILED") {
		t.Errorf("check --strict: exit %d, last line %q; want 1 and FAILED", r.code, last(r.stdout))
	}
}

func TestConfigPrintsDurations(t *testing.T) {
	r := incidex(t, t.TempDir(), "", "config")
	if r.code != 0 || !strings.Contains(r.stdout, "QuietPeriod  10m0s") || !strings.Contains(r.stdout, "Retention    720h0m0s") {
		t.Errorf("config: exit %d\n%s", r.code, r.stdout)
	}
	r = incidex(t, t.TempDir(), "", "config", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("config --json: %v\n%s", err, r.stdout)
	}
	if got["QuietPeriod"] != "10m0s" || got["Retention"] != "720h0m0s" || got["Workers"] != float64(2) {
		t.Errorf("config --json QuietPeriod=%v Retention=%v Workers=%v, want 10m0s, 720h0m0s, 2", got["QuietPeriod"], got["Retention"], got["Workers"])
	}
}

func TestIngestWarnsAboutCaps(t *testing.T) {
	f := filepath.Join(t.TempDir(), "dump.md")
	if err := os.WriteFile(f, benchgen.BigWriteup(1_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := incidex(t, dir, "", "ingest", "--no-starter", f)
	if r.code != 0 || !strings.Contains(r.stderr, "incidex ingest: warning: "+f+": the write-up is 976 KB: only its first 256 KB is kept and searched (the cap per write-up)") ||
		!strings.Contains(r.stderr, "300 signatures, the cap per write-up") {
		t.Errorf("ingest of a 1 MB write-up: exit %d\n%s", r.code, r.stderr)
	}
	r = incidex(t, dir, "", "ingest", "--force", "--json", f)
	var rep struct{ Warnings []string }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Warnings) == 0 {
		t.Errorf("ingest --json warnings = %v (%v)\n%s", rep.Warnings, err, r.stdout)
	}
}

// TestServeRoleFlags: --role needs --nats (one process runs every role on
// the local queue), an unknown role names the choices, and incidex config
// hides the NATS credentials.
func TestServeRoleFlags(t *testing.T) {
	r := incidex(t, t.TempDir(), "", "serve", "--role", "worker")
	if r.code != 2 || !strings.Contains(r.stderr, "--role=worker needs --nats") {
		t.Errorf("serve --role worker without --nats: exit %d %q", r.code, r.stderr)
	}
	r = incidex(t, t.TempDir(), "", "serve", "--role", "matcher", "--nats", "nats://127.0.0.1:1")
	if r.code != 2 || !strings.Contains(r.stderr, `--role "matcher": want all, or a comma-separated mix of receiver, worker and writer`) {
		t.Errorf("serve --role matcher: exit %d %q", r.code, r.stderr)
	}
	for in, want := range map[string]string{
		"nats://s3cret@nats:4222":             "nats://redacted@nats:4222",
		"nats://u:p@a:4222,nats://u:p@b:4222": "nats://redacted@a:4222,nats://redacted@b:4222",
		"nats://127.0.0.1:4222":               "nats://127.0.0.1:4222",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got, err := parseRoles("receiver, worker"); err != nil || got != roleReceiver|roleWorker {
		t.Errorf(`parseRoles("receiver, worker") = %v, %v`, got, err)
	}
}
