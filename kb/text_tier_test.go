package kb_test

import (
	"strings"
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// A line of the user-style development set that no signature of its
// write-up explains (the write-up pasted Logstash's 403, not the disk
// monitor's warning), but whose words the write-up's prose has.
const floodLine = `flood stage disk watermark [95%] exceeded on ..., all indices on this node will be marked read-only`

// A line of the third development set that no signature of its write-up
// explains (the write-up pasted chokidar's "System limit for number of
// file watchers reached"; io.js printed "watch ENOSPC"), but whose words
// the write-up's prose has. (The development set's flood-stage line above
// now matches through another wording of its signature's failure: see
// patterns.Equivalents.)
const watchLine = `Error watching for file: /home/dev/app/config/runtime.json { [Error: watch ENOSPC] code: 'ENOSPC', errno: 'ENOSPC', syscall: 'watch' }`

func TestTextTierMatchesThroughTheWriteupsWords(t *testing.T) {
	m := devSetMatcher(t, "dev3")
	hits := m.Match(watchLine, kb.MatchOptions{Mode: patterns.Stream, Explain: true})
	if len(hits) == 0 {
		t.Fatal("no match")
	}
	h := hits[0]
	if h.Incident.ID != "w22-inotify-watchers-dev-server" || h.Signature.Kind != kb.SigText || h.Signature.ID != h.Incident.ID+kb.TextSignatureSuffix {
		t.Fatalf("hit %s through %s (%s), want w22-inotify-watchers-dev-server through its text", h.Incident.ID, h.Signature.ID, h.Signature.Kind)
	}
	if h.Score < m.Set().MinScore() {
		t.Errorf("score %.3f, want a confident match", h.Score)
	}
	ex := h.Explain
	if ex == nil || ex.Direction != "writeup" || len(ex.Notes) == 0 || !strings.Contains(ex.Notes[0], "write-up's own text") {
		t.Fatalf("explanation %+v: want direction writeup and a note saying where the evidence is", ex)
	}
	words := map[string]bool{}
	for _, tt := range ex.Terms {
		words[tt.Word] = tt.Distinct
	}
	if !words["enospc"] || !words["watch"] {
		t.Errorf("evidence %+v: want the distinctive words enospc and watch", ex.Terms)
	}
}

// A debug line is no failure report, whatever words it has: the text
// tier leaves it alone, where its prefix gave the level and where the
// level is only one of its first words (kubectl logs --prefix).
func TestTextTierLeavesDebugLinesAlone(t *testing.T) {
	m := devMatcher(t)
	for _, l := range []string{
		`es-data-0 elasticsearch 2024-05-01T10:00:00.000Z debug ` + floodLine,
		`2024-05-01T10:00:00.000Z DEBUG ` + floodLine,
	} {
		for _, h := range m.Match(l, kb.MatchOptions{Mode: patterns.Stream, MinScore: kb.PossibleMinScore}) {
			if h.Signature.Kind == kb.SigText {
				t.Errorf("text tier answered a debug line: %s %.2f: %s", h.Incident.ID, h.Score, l)
			}
		}
	}
}

func TestTextTierIsNotAskedWhenASignatureMatched(t *testing.T) {
	m := devMatcher(t)
	l := `2025-07-03 01:02:03.456 GMT [99] FATAL:  sorry, too many clients already`
	hits := m.Match(l, kb.MatchOptions{Mode: patterns.Stream})
	if len(hits) == 0 || hits[0].Signature.Kind == kb.SigText {
		t.Fatalf("hits %+v: want a signature match", hits)
	}
	for _, h := range hits {
		if h.Signature.Kind == kb.SigText {
			t.Errorf("text tier answered beside a confident signature match: %+v", h)
		}
	}
}

func TestTextTierPseudoSignaturesAreNotSignatures(t *testing.T) {
	m := devMatcher(t)
	if len(m.Signatures()) != m.Len() || m.Len() != m.Set().Len() {
		t.Fatalf("Signatures %d, Len %d, set %d: want the set's signatures only", len(m.Signatures()), m.Len(), m.Set().Len())
	}
	for _, s := range m.Signatures() {
		if s.Kind == kb.SigText {
			t.Fatalf("Signatures() has the text tier's %s", s.ID)
		}
	}
}

// An incident with curated signatures has said what to match: its prose
// is not evidence.
func TestTextTierLeavesCuratedIncidentsOut(t *testing.T) {
	inc := &kb.Incident{ID: "es", Title: "Elasticsearch indices read-only after the flood-stage watermark",
		RootCause: "The disk passed the flood stage watermark, so every index got the read_only_allow_delete block."}
	sig := kb.Signature{ID: "s1", IncidentID: "es", Kind: kb.SigCurated, Text: "cluster_block_exception <*> read-only", IsTemplate: true}
	m, err := kb.NewMatcher([]kb.Signature{sig}, map[string]*kb.IncidentRef{"es": inc.Ref()}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if hits := m.Match(floodLine, kb.MatchOptions{Mode: patterns.Stream, MinScore: kb.PossibleMinScore}); len(hits) > 0 {
		t.Errorf("curated incident matched through its text: %+v", hits[0])
	}
	// The same incident with a pasted example instead learns from its words.
	sig = kb.Signature{ID: "s1", IncidentID: "es", Kind: kb.SigCode, Text: `retrying failed action with response code: 403 ({"type"=>"cluster_block_exception"})`}
	if m, err = kb.NewMatcher([]kb.Signature{sig}, map[string]*kb.IncidentRef{"es": inc.Ref()}, 0, 0); err != nil {
		t.Fatal(err)
	}
	if hits := m.Match(floodLine, kb.MatchOptions{Mode: patterns.Stream}); len(hits) == 0 || hits[0].Signature.Kind != kb.SigText {
		t.Errorf("hits %+v: want a text match", hits)
	}
}

// A write-up that pasted no error at all (its author told the failure in
// prose) has no signature, and its words are all the evidence there is:
// the text tier holds it too.
func TestTextTierHoldsWriteupsWithoutSignatures(t *testing.T) {
	inc := &kb.Incident{ID: "es", Title: "Elasticsearch indices read-only after the flood-stage watermark",
		RootCause: "The disk passed the flood stage watermark, so every index got the read_only_allow_delete block."}
	other := &kb.Incident{ID: "pg", Title: "Postgres refused connections",
		RootCause: "max_connections was reached during the load test."}
	sig := kb.Signature{ID: "s1", IncidentID: "pg", Kind: kb.SigCode, Text: "FATAL:  sorry, too many clients already"}
	m, err := kb.NewMatcher([]kb.Signature{sig}, map[string]*kb.IncidentRef{"es": inc.Ref(), "pg": other.Ref()}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	hits := m.Match(floodLine, kb.MatchOptions{Mode: patterns.Stream})
	if len(hits) == 0 || hits[0].Incident.ID != "es" || hits[0].Signature.Kind != kb.SigText {
		t.Fatalf("hits %+v: want es through its text", hits)
	}
}

func TestSnapshotKeepsTheTextTier(t *testing.T) {
	m := devSetMatcher(t, "dev3")
	_, w := roundTrip(t, m)
	a := m.Best(watchLine, patterns.Stream, kb.PossibleMinScore, 3, nil)
	c := w.Best(watchLine, patterns.Stream, kb.PossibleMinScore, 3, nil)
	if len(a) == 0 || len(a) != len(c) || m.Signature(a[0].Sig).ID != w.Signature(c[0].Sig).ID || a[0].Score != c[0].Score {
		t.Fatalf("from the snapshot %+v, want %+v", c, a)
	}
	if got := w.Signature(c[0].Sig); got.Kind != kb.SigText {
		t.Errorf("snapshot's match is through %s (%s), want the text tier", got.ID, got.Kind)
	}
}
