package writeup

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// Limits on signatures taken from one write-up: a pasted log dump should not
// turn into thousands of signatures.
const (
	maxSignatures   = 300
	maxSignatureLen = 4096
)

type sigCandidate struct {
	text     string
	kind     string
	section  string
	template bool
}

// curated turns front-matter signatures into candidates; those with
// placeholders are templates.
func curated(list []string) []sigCandidate {
	out := make([]sigCandidate, 0, len(list))
	for _, s := range list {
		out = append(out, sigCandidate{text: s, kind: kb.SigCurated, section: "front matter", template: hasPlaceholder(s)})
	}
	return out
}

// hasPlaceholder reports whether s contains <*> or a <mask> placeholder.
func hasPlaceholder(s string) bool {
	p, err := patterns.Parse(s)
	if err != nil {
		return strings.Contains(s, "<") && strings.Contains(s, ">")
	}
	for _, t := range p.Tokens {
		if t.Placeholder {
			return true
		}
	}
	return false
}

// buildSignatures turns candidates into signatures with stable ids: the id
// is derived from the incident id and the template, so re-ingesting the same
// write-up keeps them, and a line that differs only in masked values is the
// same signature.
func buildSignatures(incidentID string, pins []string, cands []sigCandidate) ([]kb.Signature, error) {
	seen := make(map[string]bool)
	out := []kb.Signature{}
	var errs []error
	for i, c := range cands {
		text := strings.TrimSpace(c.text)
		if text == "" || len(text) > maxSignatureLen {
			continue
		}
		var tmpl string
		if c.template {
			p, err := patterns.Parse(text)
			if err != nil {
				errs = append(errs, fmt.Errorf("signature %d %q: %w", i+1, clip(text, 60), err))
				continue
			}
			tmpl = p.Template()
		} else {
			p := patterns.FromExample(text, pins)
			if len(p.Tokens) == 0 {
				continue
			}
			tmpl = p.Template()
		}
		if seen[tmpl] {
			continue
		}
		seen[tmpl] = true
		out = append(out, kb.Signature{
			ID: SignatureID(incidentID, tmpl), IncidentID: incidentID, Kind: c.kind, Text: text,
			Template: tmpl, IsTemplate: c.template, Section: c.section,
		})
		if len(out) == maxSignatures {
			break
		}
	}
	return out, errors.Join(errs...)
}

// SignatureID is the stable id of a signature of an incident.
func SignatureID(incidentID, template string) string { return kb.SignatureID(incidentID, template) }

func contentHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if t := strings.TrimSpace(s); t != "" {
			return t
		}
	}
	return ""
}

func baseName(p string) string {
	b := filepath.Base(p)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

func normTags(tags []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// normDate returns YYYY-MM-DD for the date forms write-ups use, or the
// input trimmed when it is none of them.
func normDate(s string) string {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02", time.RFC3339, "2006-01-02 15:04:05", "2006/01/02", "January 2, 2006", "2 January 2006", "Jan 2, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	if len(s) > 10 {
		if t, err := time.Parse("2006-01-02", s[:10]); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return s
}
