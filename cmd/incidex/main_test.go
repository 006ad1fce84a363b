package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type result struct {
	code           int
	stdout, stderr string
}

// incidex runs one command line in-process against data directory dir.
func incidex(t *testing.T, dir string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "INCIDEX_DATA" {
			return dir
		}
		return ""
	}}
	code := run(context.Background(), args, e)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// writeupsDir holds two write-ups in the two input formats, messy parts
// included: a Markdown postmortem whose later section revises its root
// cause, and an incident-library entry with glued tags and fields.
const writeupsDir = "../../testdata/writeups"

// seeded is a data directory with just those two write-ups.
func seeded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := incidex(t, dir, "", "ingest", "--no-starter", writeupsDir)
	if r.code != 0 || !strings.Contains(r.stdout, "ingested 2 incidents from 2 files") {
		t.Fatalf("ingest seeds: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return dir
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func TestWriteupsSearchRanking(t *testing.T) {
	dir := seeded(t)
	for q, want := range map[string]string{"subnet.env": "postgres-sandbox-race", "10.43.0.1": "IL-0311"} {
		r := incidex(t, dir, "", "search", q)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "1. "+want+" ") {
			t.Errorf("search %q: code %d, first line %q, want %s first", q, r.code, firstLine(r.stdout), want)
		}
	}
}

type jsonLine struct {
	Line    int    `json:"line"`
	Input   string `json:"input"`
	Matches []struct {
		Incident struct {
			ID, Title, Source string
		} `json:"incident"`
		Score     float64 `json:"score"`
		Signature struct {
			ID, Template string
		} `json:"signature"`
		Explain *struct {
			Tokens  []map[string]any `json:"tokens"`
			Missing []string         `json:"missing"`
		} `json:"explain"`
		Captures map[string]string `json:"captures"`
	} `json:"matches"`
}

func matchJSON(t *testing.T, dir string, args ...string) ([]jsonLine, int) {
	t.Helper()
	r := incidex(t, dir, "", append([]string{"match", "--json"}, args...)...)
	if r.code == 2 {
		t.Fatalf("match %q: %s", args, r.stderr)
	}
	var out []jsonLine
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var jl jsonLine
		if err := json.Unmarshal([]byte(l), &jl); err != nil {
			t.Fatalf("match output line %q is not JSON: %v", l, err)
		}
		out = append(out, jl)
	}
	return out, r.code
}

func TestWriteupsMatch(t *testing.T) {
	dir := seeded(t)
	top := func(line string) (string, float64, int) {
		t.Helper()
		res, code := matchJSON(t, dir, line)
		if len(res) == 0 || len(res[0].Matches) == 0 {
			return "", 0, code
		}
		return res[0].Matches[0].Incident.ID, res[0].Matches[0].Score, code
	}
	for _, tt := range []struct{ line, want string }{
		{"subnet.env: no such file", "postgres-sandbox-race"},
		{"dial tcp 10.43.0.1:443: i/o timeout", "IL-0311"},
		{`E0412 03:12:45.120931    2211 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"4f1c0a9be3d2c7a8b1e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8\": plugin type=\"flannel\" failed (add): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory" pod="shop/web-7d9f8b6c4-x2kq9" podUID="1f0e2d3c-4b5a-4968-8776-5a4b3c2d1e0f"`, "postgres-sandbox-race"},
	} {
		if got, score, code := top(tt.line); got != tt.want || code != 0 {
			t.Errorf("match %q = %s (%.2f, exit %d), want %s and exit 0", tt.line, got, score, code, tt.want)
		}
	}
	exact := `CNI DEL failed with error: error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`
	calico := strings.ReplaceAll(exact, "10.43.0.1", "10.96.0.1")
	id1, s1, _ := top(exact)
	id2, s2, _ := top(calico)
	if id1 != "IL-0311" || id2 != "IL-0311" || !(s2 < s1) {
		t.Errorf("exact-IP form %s %.3f, Calico 10.96.0.1 form %s %.3f: want both IL-0311, the second lower", id1, s1, id2, s2)
	}
	if got, _, code := top("Wrote subnet file to /run/flannel/subnet.env"); got != "" || code != 1 {
		t.Errorf("match 'Wrote subnet file...' = %q exit %d, want no match and exit 1", got, code)
	}
}

func TestMatchJSONSchema(t *testing.T) {
	dir := seeded(t)
	res, code := matchJSON(t, dir, "dial tcp 10.43.0.1:443: i/o timeout")
	if code != 0 || len(res) != 1 {
		t.Fatalf("code %d, %d lines", code, len(res))
	}
	r := res[0]
	m := r.Matches[0]
	if r.Line != 1 || r.Input == "" || m.Incident.Source == "" || m.Incident.Title == "" || m.Signature.ID == "" || m.Signature.Template == "" || m.Explain == nil || len(m.Explain.Tokens) == 0 || m.Captures["ip"] != "10.43.0.1" {
		t.Errorf("JSON line lacks fields: %+v", r)
	}
	// --all prints unmatched lines too, with empty matches.
	all, code := matchJSON(t, dir, "--all", "nothing to see here")
	if code != 1 || len(all) != 1 || all[0].Matches == nil || len(all[0].Matches) != 0 {
		t.Errorf("--all on an unmatched line = %+v exit %d, want one line with empty matches and exit 1", all, code)
	}
}

func TestMatchStream(t *testing.T) {
	dir := seeded(t)
	in := strings.Join([]string{
		"I0412 03:12:40.000001 1 server.go:1] \"Started kubelet\"",
		"Warning  FailedCreatePodSandBox  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox: plugin type=\"flannel\" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory",
		"Wrote subnet file to /run/flannel/subnet.env",
		"loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory",
	}, "\n")
	r := incidex(t, dir, in, "match", "-")
	if r.code != 0 || !strings.Contains(r.stdout, "2: postgres-sandbox-race") || !strings.Contains(r.stdout, "4: postgres-sandbox-race") || strings.Contains(r.stdout, "\n3: ") {
		t.Errorf("stream output:\n%s", r.stdout)
	}
	if strings.Count(r.stdout, "why:") != 1 {
		t.Errorf("incident details printed %d times, want once:\n%s", strings.Count(r.stdout, "why:"), r.stdout)
	}
	if !strings.Contains(r.stdout, "2 of 4 lines matched 1 known incidents") || !strings.Contains(r.stdout, "first line 2, last line 4") {
		t.Errorf("summary missing:\n%s", r.stdout)
	}
	q := incidex(t, dir, in, "match", "--quiet", "-")
	if strings.Contains(q.stdout, "why:") || !strings.Contains(q.stdout, "2 of 4 lines matched") {
		t.Errorf("--quiet output:\n%s", q.stdout)
	}
	jl, _ := matchJSON(t, dir, "-")
	_ = jl
}

func TestIngestBadFilesAndUnchanged(t *testing.T) {
	dir := t.TempDir()
	src := t.TempDir()
	files := map[string]string{
		"good.md":  "---\nid: good\ntitle: Good one\n---\n# Good\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] dial tcp 10.0.0.1:443: i/o timeout\n```\n",
		"bin.md":   "PK\x03\x04\x00binary",
		"bad.md":   "# x \xff\xfe",
		"empty.md": "",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := incidex(t, dir, "", "ingest", "--no-starter", src)
	if r.code != 1 {
		t.Errorf("exit %d, want 1 when some files failed", r.code)
	}
	for _, n := range []string{"bin.md: binary file", "bad.md: not valid UTF-8", "empty.md: file is empty"} {
		if !strings.Contains(r.stderr, n) {
			t.Errorf("stderr lacks %q:\n%s", n, r.stderr)
		}
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 2 {
		t.Errorf("want one line per bad file:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "ingested 1 incidents from 4 files (0 unchanged, 3 failed)") {
		t.Errorf("stdout: %s", r.stdout)
	}
	again := incidex(t, dir, "", "ingest", filepath.Join(src, "good.md"))
	if again.code != 0 || !strings.Contains(again.stdout, "(1 unchanged, 0 failed)") {
		t.Errorf("re-ingest of an unchanged file: %d %s %s", again.code, again.stdout, again.stderr)
	}
	l := incidex(t, dir, "", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(l.stdout), &list); err != nil || len(list) != 1 {
		t.Errorf("list --json = %s (%v), want exactly the good incident", l.stdout, err)
	}
}

func TestStarterOnNewDataDirectory(t *testing.T) {
	dir := t.TempDir()
	r := incidex(t, dir, "", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stderr)
	}
	if len(list) < 40 || !strings.Contains(r.stderr, "starter knowledge base") {
		t.Errorf("new data directory has %d incidents, want the starter knowledge base (40+)", len(list))
	}
	c := incidex(t, dir, "", "check")
	if c.code != 0 {
		t.Errorf("check on the starter knowledge base: exit %d\n%s", c.code, c.stdout)
	}
	m := incidex(t, dir, "", "match", `Mar 02 03:04:05 node-3 kubelet[911]: E0302 03:04:05.000001 911 kubelet.go:3012] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"`)
	if m.code != 0 || !strings.Contains(firstLine(m.stdout), "cni-not-initialized") {
		t.Errorf("match on the starter knowledge base: exit %d\n%s", m.code, m.stdout)
	}
	empty := t.TempDir()
	n := incidex(t, empty, "", "list", "--no-starter", "--json")
	if strings.TrimSpace(n.stdout) != "[]" {
		t.Errorf("--no-starter list = %s, want []", n.stdout)
	}
}

func TestShowAndErrors(t *testing.T) {
	dir := seeded(t)
	r := incidex(t, dir, "", "show", "IL-0311")
	if r.code != 0 || !strings.Contains(r.stdout, "Root cause\n  Not stated") || !strings.Contains(r.stdout, "Harbor Systems") {
		t.Errorf("show IL-0311:\n%s", r.stdout)
	}
	f := incidex(t, dir, "", "show", "postgres-sandbox-race")
	if !strings.Contains(f.stdout, "Earlier guess (superseded)") || !strings.Contains(f.stdout, "$ crictl pods --name pg-ledger-0") {
		t.Errorf("show postgres-sandbox-race:\n%s", f.stdout)
	}
	j := incidex(t, dir, "", "show", "--json", "IL-0311")
	var inc map[string]any
	if err := json.Unmarshal([]byte(j.stdout), &inc); err != nil || inc["root_cause_status"] != "unknown" {
		t.Errorf("show --json: %v %v", err, inc["root_cause_status"])
	}
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"show", "nope"}, 2, `incidex show: incident "nope": not found`},
		{[]string{"show"}, 2, "want exactly one incident id"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"match", "--min-score", "7", "x"}, 2, "--min-score 7"},
		{[]string{"search", "--syntax", `title:"unclosed`}, 2, "bad query syntax"},
		{[]string{"match", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
	} {
		r := incidex(t, dir, "", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("%q: exit %d stderr %q, want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
	}
}

func TestReindexAndVersion(t *testing.T) {
	dir := seeded(t)
	if r := incidex(t, dir, "", "reindex"); r.code != 0 || !strings.Contains(r.stdout, "index rebuilt: 2 incidents") {
		t.Errorf("reindex: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := incidex(t, dir, "", "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "incidex ") {
		t.Errorf("version: %q", r.stdout)
	}
}

// TestTypedLookupIgnoresStopWords: a typed lookup that no signature
// explains finds the write-up by its words, whatever stop words and
// punctuation the person put between them; a pasted log line does not
// fall back to full text.
func TestTypedLookupIgnoresStopWords(t *testing.T) {
	dir := seeded(t)
	for _, q := range []string{"flanneld lease", "flanneld and the lease", "flanneld, lease?"} {
		r := incidex(t, dir, "", "match", q)
		if r.code != 0 || !strings.Contains(firstLine(r.stdout), "postgres-sandbox-race") {
			t.Errorf("match %q: exit %d, first line %q, want postgres-sandbox-race", q, r.code, firstLine(r.stdout))
		}
	}
	r := incidex(t, dir, "", "match", `{"level":"info","msg":"flanneld acquired the lease"}`)
	if r.code != 1 {
		t.Errorf("a JSON log record fell back to full text: exit %d\n%s", r.code, r.stdout)
	}
}

// TestShowListsOtherWordings: show lists, under a pasted signature, the
// other wordings of its failure that it matches too (Java's and curl's
// for Go's x509 error).
func TestShowListsOtherWordings(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	doc := "# Registry pulls fail on the new nodes\n\n```\nError response from daemon: Get \"https://harbor.corp.example/v2/\": x509: certificate signed by unknown authority\n```\n\n## Root cause\n\nThe corporate CA was missing from the nodes' trust store.\n"
	if err := os.WriteFile(filepath.Join(src, "registry-ca.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := incidex(t, dir, "", "ingest", "--no-starter", src); r.code != 0 {
		t.Fatalf("ingest: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r := incidex(t, dir, "", "show", "registry-ca")
	if r.code != 0 || !strings.Contains(r.stdout, "also matches other wordings of the failure (tls-unknown-authority): ") || !strings.Contains(r.stdout, "PKIX path building failed") {
		t.Errorf("show registry-ca:\n%s", r.stdout)
	}
}
