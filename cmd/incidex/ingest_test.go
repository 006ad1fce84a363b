package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ingest says per file what it learned, warns for a write-up without
// signature, and --json carries the same per file.
func TestIngestPerFileReport(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"ingress.md": "# Ingress down\n\nThe pods crashlooped. Its controller log:\n\n```\nF1012 09:14:02.123456 7 main.go:64] port 80 is already in use. Please check the flag --http-port\n```\n\n" +
			"It turned out that a debug pod was holding port 80. We fixed it by deleting the debug pod.\n",
		"slow.md":  "---\ntitle: Slow pages\nkeywords: {a: 1}\n---\nPages were slow on Monday.\n",
		"page.htm": "<html><head><title>Cache</title></head><body><h2>Root cause</h2><p>The cache had no TTL.</p><pre>ERROR: cache: out of memory, evicting keys</pre></body></html>",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	r := incidex(t, dir, "", "ingest", "--no-starter", src)
	if r.code != 0 {
		t.Fatalf("ingest: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"ingress.md: ingress, 1 signature, root cause from a sentence", "slow.md: slow, 0 signatures, no root cause found",
		"page.htm: page, 1 signature, root cause from a heading or field", "ingested 3 incidents from 3 files"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"warning: " + filepath.Join(src, "slow.md") + ": incident slow: no log signature found", `front matter field "keywords"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = incidex(t, t.TempDir(), "", "ingest", "--no-starter", "--json", src)
	var rep struct {
		PerFile []struct {
			Path      string `json:"path"`
			Incidents []struct {
				ID         string `json:"id"`
				Signatures int    `json:"signatures"`
				Cause      string `json:"cause"`
			} `json:"incidents"`
			Warnings []string `json:"warnings"`
		} `json:"per_file"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.PerFile) != 3 {
		t.Fatalf("ingest --json: %v, %d files\n%s", err, len(rep.PerFile), r.stdout)
	}
	for _, f := range rep.PerFile {
		if filepath.Base(f.Path) == "slow.md" && (len(f.Warnings) != 2 || f.Incidents[0].Cause != "none" || f.Incidents[0].Signatures != 0) {
			t.Errorf("slow.md in --json = %+v, want 2 warnings, cause none, 0 signatures", f)
		}
	}
	// show prints the cause and fix of a prose-only write-up instead of
	// stopping at the summary's lead-in line.
	r = incidex(t, dir, "", "show", "ingress")
	for _, want := range []string{"debug pod was holding port 80", "We fixed it by deleting the debug pod"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Its controller log:") || strings.Contains(r.stdout, "Not stated") {
		t.Errorf("show stops at the lead-in or claims 'not stated':\n%s", r.stdout)
	}
	r = incidex(t, dir, "", "show", "slow")
	if !strings.Contains(r.stdout, "Not found in the text") {
		t.Errorf("show slow lacks 'Not found in the text':\n%s", r.stdout)
	}
}
