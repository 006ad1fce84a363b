package kb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// A matcher snapshot is what a matcher is built from, so that a process
// without the knowledge base (a worker) builds one that matches exactly
// like the writer's: the signatures, the incidents a hit carries
// (pins included), the feedback verdicts, the threshold and the
// generation. The compiled set is not in it: compiling is deterministic,
// and its inputs are a tenth of its size.
//
// Layout: the magic "IXSNAP", one version byte, then a zstd frame holding
// the JSON of snapshotV1. A new layout takes a new version; a reader
// refuses versions it does not know rather than guess.

const snapshotMagic = "IXSNAP"

// SnapshotVersion is the snapshot layout this build writes and reads.
const SnapshotVersion = 1

// maxSnapshotBytes bounds the decompressed JSON a snapshot may hold.
const maxSnapshotBytes = 1 << 30

type snapshotV1 struct {
	Generation int64                     `json:"generation"`
	MinScore   float64                   `json:"min_score"`
	Signatures []Signature               `json:"signatures"`
	Incidents  []snapshotIncident        `json:"incidents"`
	Verdicts   map[string]map[string]int `json:"verdicts,omitempty"`
}

// snapshotIncident is an IncidentRef with its pins, and no omitempty: an
// empty list comes back empty, not nil.
type snapshotIncident struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Source      string   `json:"source"`
	RootCause   string   `json:"root_cause"`
	CauseStatus string   `json:"root_cause_status"`
	Fix         string   `json:"fix"`
	Runbook     []Step   `json:"runbook"`
	Overlaps    []string `json:"overlaps"`
	TellApart   string   `json:"tell_apart"`
	Likelihood  string   `json:"likelihood"`
	Pins        []string `json:"pins"`
	// Words are the write-up's words for the text tier (hashes); an older
	// writer's snapshot has none, and its worker matches without the tier.
	Words []uint64 `json:"text_words,omitempty"`
}

// Snapshot encodes what the matcher was built from (see
// MatcherFromSnapshot).
func (m *Matcher) Snapshot() ([]byte, error) {
	s := snapshotV1{Generation: m.gen, MinScore: m.set.MinScore(), Verdicts: m.verdicts}
	// m.base holds each signature kept by NewMatcher once, in order: the
	// signatures NewMatcher was given, less those of unknown incidents,
	// which it drops anyway.
	var words map[string][]uint64
	if m.text != nil {
		words = map[string][]uint64{}
		for g, ws := range m.text.Words() {
			words[m.text.Group(g)] = ws
		}
	}
	s.Signatures = slices.Clone(m.base)
	s.Incidents = make([]snapshotIncident, 0, len(m.incidents))
	for _, inc := range m.incidents {
		s.Incidents = append(s.Incidents, snapshotIncident{ID: inc.ID, Title: inc.Title, Source: inc.Source,
			RootCause: inc.RootCause, CauseStatus: inc.CauseStatus, Fix: inc.Fix, Runbook: inc.Runbook,
			Overlaps: inc.Overlaps, TellApart: inc.TellApart, Likelihood: inc.Likelihood, Pins: inc.pins, Words: words[inc.ID]})
	}
	// Sorted, so that a generation always encodes to the same bytes.
	sort.Slice(s.Incidents, func(i, j int) bool { return s.Incidents[i].ID < s.Incidents[j].ID })
	js, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode matcher snapshot: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	out := append([]byte(snapshotMagic), SnapshotVersion)
	return enc.EncodeAll(js, out), nil
}

// ErrSnapshotVersion is returned by MatcherFromSnapshot for a snapshot
// written in a layout this build does not know.
var ErrSnapshotVersion = errors.New("unknown matcher snapshot version")

// MatcherFromSnapshot builds the matcher a snapshot was taken from: the
// same matches, scores, incidents and generation.
func MatcherFromSnapshot(b []byte) (*Matcher, error) {
	s, err := decodeSnapshot(b)
	if err != nil {
		return nil, err
	}
	incs := make(map[string]*IncidentRef, len(s.Incidents))
	for _, in := range s.Incidents {
		incs[in.ID] = &IncidentRef{ID: in.ID, Title: in.Title, Source: in.Source, RootCause: in.RootCause,
			CauseStatus: in.CauseStatus, Fix: in.Fix, Runbook: in.Runbook, Overlaps: in.Overlaps,
			TellApart: in.TellApart, Likelihood: in.Likelihood, pins: in.Pins, words: in.Words}
	}
	m, err := NewMatcher(s.Signatures, incs, s.Generation, s.MinScore)
	if err != nil {
		return nil, fmt.Errorf("matcher snapshot: %w", err)
	}
	if s.Verdicts == nil {
		s.Verdicts = map[string]map[string]int{}
	}
	m.verdicts = s.Verdicts
	return m, nil
}

func decodeSnapshot(b []byte) (*snapshotV1, error) {
	if len(b) < len(snapshotMagic)+1 || !bytes.HasPrefix(b, []byte(snapshotMagic)) {
		return nil, errors.New("not a matcher snapshot")
	}
	if v := b[len(snapshotMagic)]; v != SnapshotVersion {
		return nil, fmt.Errorf("%w %d (this build reads %d)", ErrSnapshotVersion, v, SnapshotVersion)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxSnapshotBytes))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	js, err := dec.DecodeAll(b[len(snapshotMagic)+1:], nil)
	if err != nil {
		return nil, fmt.Errorf("matcher snapshot: %w", err)
	}
	var s snapshotV1
	if err := json.Unmarshal(js, &s); err != nil {
		return nil, fmt.Errorf("matcher snapshot: %w", err)
	}
	return &s, nil
}
