package kb_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
	"github.com/incidex/incidex/patterns"
	"github.com/incidex/incidex/starter"
)

const variantsPath = "../testdata/corpus/variants.tsv"

// starterKB loads the starter write-ups (their likelihoods and pins
// included) into a fresh knowledge base.
func starterKB(t testing.TB) *kb.KB {
	t.Helper()
	k := kbtest.Open(t)
	if _, err := writeup.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, writeup.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSnapshotMatchesLikeTheKB: a matcher built from a snapshot gives every
// line of the variant corpus the same matches, scores, signatures,
// incidents (pins included) and explanations as the matcher built from the
// knowledge base, with feedback verdicts and likelihoods in play.
func TestSnapshotMatchesLikeTheKB(t *testing.T) {
	k := starterKB(t)
	lines, err := benchgen.VariantLines(variantsPath)
	if err != nil {
		t.Fatal(err)
	}
	before, err := k.Matcher(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Feedback: the best match of every 7th line marked wrong (twice for
	// every 14th), and one marked right.
	for i := 0; i < len(lines); i += 7 {
		ms := before.Best(lines[i], patterns.Stream, 0, 1, nil)
		if len(ms) == 0 {
			continue
		}
		sig := before.Signature(ms[0].Sig).ID
		votes := []string{"down"}
		if i%14 == 0 {
			votes = append(votes, "down")
		}
		if i == 0 {
			votes = []string{"up"}
		}
		for _, v := range votes {
			if _, err := k.AddFeedback(ctx, kb.Feedback{SignatureID: sig, Line: lines[i], Verdict: v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := k.Matcher(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, got := roundTrip(t, want)
	if got.Generation() != want.Generation() || got.Len() != want.Len() || got.Set().MinScore() != want.Set().MinScore() {
		t.Fatalf("snapshot matcher: generation %d, %d signatures, min score %v; want %d, %d, %v",
			got.Generation(), got.Len(), got.Set().MinScore(), want.Generation(), want.Len(), want.Set().MinScore())
	}

	// The same compiled entries, in the same order: whole signatures and
	// their clauses, with their pins and likelihood boosts.
	for i := range want.Len() {
		if w, g := want.Set().Def(i), got.Set().Def(i); !reflect.DeepEqual(w, g) || want.Signature(i) != got.Signature(i) {
			t.Fatalf("entry %d: %+v (%+v) from the snapshot, %+v (%+v) from the KB", i, g, got.Signature(i), w, want.Signature(i))
		}
	}

	// The test proves something only if feedback changed answers, pins
	// and more than one likelihood are in the knowledge base.
	changed, pinned, likelihoods, ids := 0, 0, map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		if !slices.Equal(before.Best(l, patterns.Stream, 0, 1, nil), want.Best(l, patterns.Stream, 0, 1, nil)) {
			changed++
		}
	}
	for _, sig := range want.Signatures() {
		inc := want.Incident(sig.IncidentID)
		likelihoods[inc.Likelihood] = true
		if len(kb.Pins(inc)) > 0 {
			pinned++
		}
		ids[sig.ID] = true
	}
	if changed == 0 || len(likelihoods) < 2 || pinned == 0 || len(ids) == want.Len() {
		t.Fatalf("feedback changed %d answers, likelihoods %v, %d signatures of incidents with pins, %d clause entries: the test would prove nothing",
			changed, likelihoods, pinned, want.Len()-len(ids))
	}

	for _, l := range lines {
		for _, top := range []int{0, 1} {
			for _, min := range []float64{0, kb.PossibleMinScore} {
				for _, mode := range []patterns.Mode{patterns.Stream, patterns.Query} {
					w, g := want.Best(l, mode, min, top, nil), got.Best(l, mode, min, top, nil)
					if !slices.Equal(w, g) {
						t.Fatalf("Best(%q, mode %d, min %v, top %d) = %+v from the snapshot, %+v from the KB", l, mode, min, top, g, w)
					}
					for _, pm := range w {
						if want.Signature(pm.Sig) != got.Signature(pm.Sig) {
							t.Fatalf("signature %d: %+v from the snapshot, %+v from the KB", pm.Sig, got.Signature(pm.Sig), want.Signature(pm.Sig))
						}
					}
				}
			}
		}
		o := kb.MatchOptions{Explain: true, MinScore: kb.PossibleMinScore}
		w, g := want.Match(l, o), got.Match(l, o)
		if len(w) != len(g) {
			t.Fatalf("Match(%q): %d hits from the snapshot, %d from the KB", l, len(g), len(w))
		}
		for i := range w {
			if !reflect.DeepEqual(*w[i].Incident, *g[i].Incident) {
				t.Fatalf("Match(%q) hit %d: incident %+v from the snapshot, %+v from the KB", l, i, *g[i].Incident, *w[i].Incident)
			}
			if !reflect.DeepEqual(w[i], g[i]) {
				t.Fatalf("Match(%q) hit %d: %+v (%+v) from the snapshot, %+v (%+v) from the KB", l, i, g[i], g[i].Explain, w[i], w[i].Explain)
			}
		}
	}
	for _, sig := range want.Signatures() {
		if w, g := want.Incident(sig.IncidentID), got.Incident(sig.IncidentID); !reflect.DeepEqual(w, g) {
			t.Fatalf("incident %s: %+v from the snapshot, %+v from the KB", sig.IncidentID, g, w)
		}
	}
	// The same matcher encodes to the same bytes.
	again, err := got.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again, snap) {
		t.Errorf("a matcher built from a snapshot encodes to other bytes (%d, want %d)", len(again), len(snap))
	}
}

// TestSnapshotMinScore: a matcher compiled with its own threshold keeps it.
func TestSnapshotMinScore(t *testing.T) {
	k := starterKB(t)
	want, err := k.Matcher(ctx, 0.72)
	if err != nil {
		t.Fatal(err)
	}
	_, got := roundTrip(t, want)
	if got.Set().MinScore() != want.Set().MinScore() {
		t.Errorf("min score %v, want %v", got.Set().MinScore(), want.Set().MinScore())
	}
}

// TestSnapshotRejectsBadInput: an unknown version, another file or a
// damaged snapshot is an error, never a matcher.
func TestSnapshotRejectsBadInput(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "dial tcp 10.43.0.1:443: i/o timeout"))
	m, err := k.Matcher(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kb.MatcherFromSnapshot(snap); err != nil || got.Len() != 1 {
		t.Fatalf("good snapshot: %v, %v", got, err)
	}
	future := slices.Clone(snap)
	future[6] = kb.SnapshotVersion + 1
	if _, err := kb.MatcherFromSnapshot(future); !errors.Is(err, kb.ErrSnapshotVersion) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("version 2: err = %v, want ErrSnapshotVersion naming it", err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"not ours":  []byte(`{"generation": 1}`),
		"truncated": snap[:len(snap)/2],
		"flipped":   append(slices.Clone(snap[:len(snap)-4]), ^snap[len(snap)-4], 0, 0, 0),
	} {
		if got, err := kb.MatcherFromSnapshot(b); err == nil {
			t.Errorf("%s: MatcherFromSnapshot = %v, want an error", name, got)
		}
	}
}

// roundTrip encodes m as a snapshot and builds a matcher from it.
func roundTrip(t *testing.T, m *kb.Matcher) ([]byte, *kb.Matcher) {
	t.Helper()
	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := kb.MatcherFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	return snap, got
}
