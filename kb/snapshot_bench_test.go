package kb_test

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/incidex/incidex/bench/benchgen"
	"github.com/incidex/incidex/kb"
)

// benchMatcher10k builds a matcher of 10,000 signatures made from the
// variant corpus (benchgen.SyntheticSignatures), three to an incident.
func benchMatcher10k(b *testing.B) *kb.Matcher {
	lines, err := benchgen.VariantLines(variantsPath)
	if err != nil {
		b.Fatal(err)
	}
	var sigs []kb.Signature
	incs := map[string]*kb.IncidentRef{}
	for i, text := range benchgen.SyntheticSignatures(lines, 10000) {
		inc := fmt.Sprintf("inc-%d", i/3)
		sigs = append(sigs, kb.Signature{ID: fmt.Sprintf("s%d", i), IncidentID: inc, Kind: kb.SigCode, Text: text, Template: text})
		incs[inc] = &kb.IncidentRef{ID: inc, Title: "incident " + inc, RootCause: "cause of " + inc, CauseStatus: kb.CauseKnown,
			Runbook: []kb.Step{{Section: "confirm", Command: "kubectl -n <namespace> describe pod <pod>"}}}
	}
	m, err := kb.NewMatcher(sigs, incs, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkMatcherFromSnapshot: what a worker pays to swap in a new
// generation (decode and compile), and the snapshot's size.
func BenchmarkMatcherFromSnapshot(b *testing.B) {
	for _, c := range []struct {
		name string
		m    func(b *testing.B) *kb.Matcher
	}{
		{"starter", func(b *testing.B) *kb.Matcher {
			m, err := starterKB(b).Matcher(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			return m
		}},
		{"10k", benchMatcher10k},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := c.m(b)
			snap, err := m.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := kb.MatcherFromSnapshot(snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(snap)), "snapshot_bytes")
			dec, _ := zstd.NewReader(nil)
			if js, err := dec.DecodeAll(snap[7:], nil); err == nil {
				b.ReportMetric(float64(len(js)), "json_bytes")
			}
			dec.Close()
			b.ReportMetric(float64(m.Len()), "set_entries")
		})
	}
}

// BenchmarkSnapshot: what the writer pays to encode a generation.
func BenchmarkSnapshot10k(b *testing.B) {
	m := benchMatcher10k(b)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewMatcher10k: compiling alone, to set beside
// BenchmarkMatcherFromSnapshot/10k.
func BenchmarkNewMatcher10k(b *testing.B) {
	m := benchMatcher10k(b)
	sigs := m.Signatures()
	incs := map[string]*kb.IncidentRef{}
	var src []kb.Signature
	seen := map[string]bool{}
	for _, s := range sigs {
		incs[s.IncidentID] = m.Incident(s.IncidentID)
		if !seen[s.ID] {
			seen[s.ID] = true
			src = append(src, s)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := kb.NewMatcher(src, incs, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSnapshot10k: the share of BenchmarkMatcherFromSnapshot/10k
// that is the snapshot's own (zstd and JSON), not compiling.
func BenchmarkDecodeSnapshot10k(b *testing.B) {
	snap, err := benchMatcher10k(b).Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := kb.DecodeSnapshot(snap); err != nil {
			b.Fatal(err)
		}
	}
}
