package kb

import (
	"slices"
	"testing"

	"github.com/incidex/incidex/patterns"
)

// TestBestWithFeedbackEqualsFullAdjust: Best stops early even when there is
// feedback, as long as the feedback names none of the best signatures; its
// answer must be what scoring everything and applying the feedback gives.
func TestBestWithFeedbackEqualsFullAdjust(t *testing.T) {
	sig := func(id, inc, text string) Signature {
		return Signature{ID: id, IncidentID: inc, Kind: SigCode, Text: text}
	}
	sigs := []Signature{
		sig("s-disk-a", "disk-a", "write /var/lib/postgresql/data/pg_wal/000000010000000000000042: no space left on device"),
		sig("s-disk-b", "disk-b", "could not write to file pg_wal/xlogtemp.1234: No space left on device"),
		sig("s-disk-c", "disk-c", "no space left on device while writing /var/lib/containerd/io.containerd.content.v1.content/ingest"),
		sig("s-dns", "dns", "dial udp 10.96.0.10:53: i/o timeout while resolving postgres.db.svc.cluster.local"),
	}
	incs := map[string]*IncidentRef{}
	for _, s := range sigs {
		incs[s.IncidentID] = &IncidentRef{ID: s.IncidentID, Title: s.IncidentID}
	}
	m, err := NewMatcher(sigs, incs, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		"FATAL: could not write to file pg_wal/xlogtemp.99: No space left on device",
		"write /var/lib/postgresql/data/pg_wal/000000010000000000000077: no space left on device",
		"failed to write /var/lib/containerd/io.containerd.content.v1.content/ingest/abc: no space left on device",
		"dial udp 10.96.0.10:53: i/o timeout while resolving postgres.db.svc.cluster.local",
	}
	full := func(line string, top int) []patterns.Match {
		ms := m.set.MatchMode(line, patterns.Stream, 0, nil)
		ms = m.Adjust(line, ms, 0)
		return ms[:min(top, len(ms))]
	}
	check := func(what string) {
		t.Helper()
		for _, l := range lines {
			for _, top := range []int{1, 2} {
				if got, want := m.Best(l, patterns.Stream, 0, top, nil), full(l, top); !slices.Equal(got, want) {
					t.Errorf("%s: Best(%q, top %d) = %+v, want %+v", what, l, top, got, want)
				}
			}
		}
	}
	check("no feedback")
	if ms := full(lines[0], 2); len(ms) < 2 || m.Signature(ms[0].Sig).ID != "s-disk-b" {
		t.Fatalf("line 0 should match disk-b first and something second, got %+v: the test would prove nothing", ms)
	}
	// The best match of line 0 marked wrong twice: what was second comes up.
	m.verdicts = map[string]map[string]int{"s-disk-b": {LineTemplate(lines[0]): 2}}
	if got := m.Best(lines[0], patterns.Stream, 0, 1, nil); len(got) > 0 && m.Signature(got[0].Sig).ID == "s-disk-b" {
		t.Errorf("a signature marked wrong twice for this line is still first: %+v", got)
	}
	check("feedback on a best signature")
	// Feedback on a signature that is nobody's best: the early stop stands.
	m.verdicts = map[string]map[string]int{"s-dns": {LineTemplate(lines[3]): 1}}
	check("feedback elsewhere")
}
