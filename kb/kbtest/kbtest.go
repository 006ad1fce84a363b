// Package kbtest opens real knowledge bases for tests.
package kbtest

import (
	"context"
	"testing"

	"github.com/incidex/incidex/kb"
)

// Open opens a fresh knowledge base in a temporary directory and closes it
// when the test ends.
func Open(t testing.TB) *kb.KB {
	t.Helper()
	return OpenDir(t, t.TempDir())
}

// OpenDir opens the knowledge base in dir and closes it when the test ends.
func OpenDir(t testing.TB, dir string) *kb.KB {
	t.Helper()
	k, err := kb.Open(context.Background(), kb.Options{Dir: dir})
	if err != nil {
		t.Fatalf("kb.Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// Incident returns a minimal valid incident with one signature.
func Incident(id, title, sig string) *kb.Incident {
	inc := &kb.Incident{
		ID: id, Title: title, Source: "test:" + id, Format: "markdown", CauseStatus: kb.CauseKnown,
		RootCause: "cause of " + id, Tags: []string{"test"}, Body: "# " + title + "\n\n" + sig,
	}
	if sig != "" {
		inc.Signatures = []kb.Signature{{ID: "s-" + id, IncidentID: id, Kind: kb.SigCode, Text: sig, Template: sig}}
	}
	return inc
}
