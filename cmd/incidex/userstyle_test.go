package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"strings"
	"testing"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// A user-style evaluation set is a directory with
//
//	writeups/          write-ups in the styles teams use, one error pasted once or twice
//	writeups/MANIFEST.tsv   file<TAB>topic<TAB>…
//	positives.tsv      topic<TAB>line<TAB>…: other real occurrences of the topics' failures
//	negatives-healthy.tsv  line<TAB>…: healthy lines of the same components
//	negatives-unknown.tsv  line<TAB>…: real errors of failures the write-ups do not hold
//
// It is measured with the write-ups alone (no starter knowledge base).
type userSet struct {
	incidents []*kb.Incident
	topicInc  map[string]string // topic → incident id
	positives []userLine
	healthy   []string
	unknown   []string
}

type userLine struct{ topic, line string }

func readTSV(t testing.TB, path string, header bool) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	first := true
	for sc.Scan() {
		if first && header {
			first = false
			continue
		}
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func loadUserSet(t testing.TB, dir string) *userSet {
	t.Helper()
	us := &userSet{topicInc: map[string]string{}}
	for _, row := range readTSV(t, filepath.Join(dir, "writeups", "MANIFEST.tsv"), true) {
		path := filepath.Join(dir, "writeups", row[0])
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		incs, err := writeup.ParseWriteup(row[0], b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		us.incidents = append(us.incidents, incs...)
		us.topicInc[row[1]] = incs[0].ID
	}
	for _, row := range readTSV(t, filepath.Join(dir, "positives.tsv"), true) {
		if len(row) < 2 || us.topicInc[row[0]] == "" {
			continue
		}
		us.positives = append(us.positives, userLine{row[0], row[1]})
	}
	for _, row := range readTSV(t, filepath.Join(dir, "negatives-healthy.tsv"), true) {
		us.healthy = append(us.healthy, row[0])
	}
	for _, row := range readTSV(t, filepath.Join(dir, "negatives-unknown.tsv"), true) {
		us.unknown = append(us.unknown, row[0])
	}
	return us
}

func (us *userSet) matcher(t testing.TB) *kb.Matcher {
	t.Helper()
	var sigs []kb.Signature
	refs := map[string]*kb.IncidentRef{}
	for _, inc := range us.incidents {
		refs[inc.ID] = inc.Ref()
		sigs = append(sigs, inc.Signatures...)
	}
	m, err := kb.NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// userFigures are what a user-style set measures, at the confident
// threshold and in the possible band below it.
type userFigures struct {
	n, top1, top3, none          int // positives
	possTop1, possTop3           int // right incident first, or in the first three, when possible matches count
	healthyFP, unknownFP         int // confident matches on negatives
	healthyPoss, unknownPoss     int // possible matches on negatives
	nHealthy, nUnknown, noSigInc int
}

func (f userFigures) String() string {
	r := func(a, b int) float64 { return float64(a) / float64(max(b, 1)) }
	return fmt.Sprintf("positives %d: top-1 %.3f (%d), top-3 %.3f (%d), none %d; with possible: top-1 %.3f, top-3 %.3f; "+
		"false matches: healthy %d/%d, unknown-failure %d/%d; possible on negatives: healthy %d, unknown %d; write-ups without signatures %d",
		f.n, r(f.top1, f.n), f.top1, r(f.top3, f.n), f.top3, f.none, r(f.possTop1, f.n), r(f.possTop3, f.n),
		f.healthyFP, f.nHealthy, f.unknownFP, f.nUnknown, f.healthyPoss, f.unknownPoss, f.noSigInc)
}

func measureUserSet(t testing.TB, us *userSet, mode patterns.Mode, verbose bool) userFigures {
	m := us.matcher(t)
	var f userFigures
	for _, inc := range us.incidents {
		if len(inc.Signatures) == 0 {
			f.noSigInc++
			if verbose {
				t.Logf("no signatures: %s", inc.ID)
			}
		}
	}
	poss := kb.PossibleMinScore
	for _, p := range us.positives {
		f.n++
		want := us.topicInc[p.topic]
		hits := m.Match(p.line, kb.MatchOptions{Mode: mode, MinScore: poss, Top: 3})
		conf := confident(hits)
		switch {
		case len(conf) > 0 && conf[0].Incident.ID == want:
			f.top1++
		case len(conf) == 0 && verbose:
			best := ""
			if len(hits) > 0 {
				best = fmt.Sprintf(" (possible %s %.2f)", hits[0].Incident.ID, hits[0].Score)
			}
			t.Logf("miss %s%s: %.160s", want, best, p.line)
		case verbose:
			t.Logf("wrong %s→%s %.2f: %.160s", want, conf[0].Incident.ID, conf[0].Score, p.line)
		}
		if len(conf) == 0 {
			f.none++
		}
		for _, h := range conf {
			if h.Incident.ID == want {
				f.top3++
				break
			}
		}
		if len(hits) > 0 && hits[0].Incident.ID == want {
			f.possTop1++
		}
		for _, h := range hits {
			if h.Incident.ID == want {
				f.possTop3++
				break
			}
		}
	}
	neg := func(lines []string, fp, pc *int, kind string) {
		for _, l := range lines {
			hits := m.Match(l, kb.MatchOptions{Mode: mode, MinScore: poss, Top: 1})
			if len(hits) == 0 {
				continue
			}
			if hits[0].Score >= m.Set().MinScore() {
				*fp++
				if verbose {
					t.Logf("false match (%s) %s %.2f: %.160s", kind, hits[0].Incident.ID, hits[0].Score, l)
				}
			} else {
				*pc++
			}
		}
	}
	f.nHealthy, f.nUnknown = len(us.healthy), len(us.unknown)
	neg(us.healthy, &f.healthyFP, &f.healthyPoss, "healthy")
	neg(us.unknown, &f.unknownFP, &f.unknownPoss, "unknown")
	return f
}

func confident(hits []kb.Hit) []kb.Hit {
	var out []kb.Hit
	for _, h := range hits {
		if h.Score >= patterns.DefaultMinScore {
			out = append(out, h)
		}
	}
	return out
}

// TestUserStyleEval measures a user-style set outside the repo when
// USERKB_DIR points at one; it asserts nothing and only reports (the
// held-out figures in the README come from here).
func TestUserStyleEval(t *testing.T) {
	dir := os.Getenv("USERKB_DIR")
	if dir == "" {
		t.Skip("USERKB_DIR not set")
	}
	us := loadUserSet(t, dir)
	verbose := os.Getenv("USERKB_VERBOSE") != ""
	for _, mode := range []patterns.Mode{patterns.Stream, patterns.Query} {
		f := measureUserSet(t, us, mode, verbose && mode == patterns.Stream)
		t.Logf("%s (%d write-ups), mode %v: %v", dir, len(us.incidents), mode, f)
	}
}

// TestUserStyleDevFloors holds the matcher to its figures on the in-repo
// development sets of user-style write-ups (testdata/userkb/dev to dev12):
// with the write-ups alone, the right incident first for at least the
// floor share of real occurrences, at most the false matches on record on
// healthy lines and on error lines of failures the write-ups do not hold,
// and every write-up but at most one giving a signature.
func TestUserStyleDevFloors(t *testing.T) {
	for _, c := range []struct {
		dir   string
		floor float64
		// falseHealthy, falseUnknown: the false matches on record. dev2
		// has one, an sqlite3.OperationalError of another kind ("unable
		// to open database file") matching the "database is locked"
		// write-up on the exception class and "database"; dev3's are in
		// testdata/userkb/README.md.
		falseHealthy, falseUnknown, noSig int
	}{
		// 0.871 (135/155) with equivalent wordings; 0.723 before them,
		// 0.684 before the text tier, 0.387 before clauses and the
		// extraction fixes.
		{"dev", 0.87, 0, 0, 1},
		// 0.883 (181/205); 0.673 when the set came, 0 write-ups of 32
		// without a signature (7 then).
		// 0.907 (186/205) with equivalent wordings.
		{"dev2", 0.90, 0, 1, 0},
		// 0.958 (181/189); 0.783 and 9 + 5 false matches when the set
		// came, 5 write-ups of 30 without a signature (8 at bea3d77).
		// The sixth unknown-failure match is Tomcat's "The port may
		// already be in use" against Docker's "port is already
		// allocated", through the port-in-use wordings: the set counts
		// another process on the port as another failure.
		{"dev3", 0.95, 2, 6, 0},
		// 0.972 (171/176); 0.722 at bea3d77 and 0.858 at 88aa4cc, both
		// measured before the set was read; 0 + 6 false matches then.
		{"dev4", 0.98, 0, 2, 0},
		// 0.904 (169/187); 0.722 at bea3d77, 0.872 at 0391f94 and at
		// 0001429, measured before the set was read; 0 + 3 false
		// matches each time.
		{"dev5", 0.91, 0, 2, 0},
		// 0.918 (179/195); 0.774 at bea3d77, 0.815 at 0391f94 and 0.821
		// at 76e9410, measured before the set was read; 0 + 4, 0 + 6
		// and 0 + 6 false matches.
		{"dev6", 0.94, 0, 3, 0},
		// 0.953 (183/192); 0.719 at 0391f94 and 0.786 at 76e9410, measured
		// before the set was read (3 + 2 and 0 + 2 false matches; five
		// write-ups without a signature then).
		{"dev7", 0.96, 0, 4, 0},
		// 0.761 (140/184); 0.462 at bea3d77, 0.560 at 76e9410 and 0.652
		// at 5fc4fbf, measured before the set was read (its HTML, Jira,
		// chat and email styles); 1 + 4 false matches each time.
		{"dev8", 0.78, 1, 4, 0},
		// 0.855 (136/159); 0.711 at 76e9410 and 0.849 at 9625652, both
		// measured before the set was read (0 + 10 and 1 + 12 false
		// matches).
		{"dev9", 0.87, 1, 6, 0},
		// 0.860 (160/186) with equivalent wordings, 0.753 before;
		// written like the held-out set (each topic
		// names several wordings, the write-up shows one): 0.618 at
		// bea3d77, 0.726 at 76e9410 and 0.720 at 106adca, measured before
		// the set was read (0 + 9, 0 + 13 and 0 + 13 false matches).
		{"dev10", 0.85, 0, 7, 0},
		// 0.804 (164/204) with equivalent wordings, 0.691 before;
		// collected like dev10: 0.534 at bea3d77, 0.691
		// at 76e9410, 106adca and 4e2f519, measured before the set was
		// read (0 + 4 false matches each time; 6, 1, 1 and 1 write-ups
		// without a signature).
		{"dev11", 0.80, 0, 4, 1},
		// 0.880 (176/200); collected like dev10 after the table of
		// equivalent wordings was written: 0.655 at 2cb3248 and 0.760
		// with the table (9425a19), measured before the set was read
		// (0 + 8 and 0 + 12 false matches; 3 write-ups without a
		// signature).
		{"dev12", 0.88, 0, 8, 0},
	} {
		us := loadUserSet(t, "../../testdata/userkb/"+c.dir)
		f := measureUserSet(t, us, patterns.Stream, testing.Verbose())
		t.Logf("%s user-style set: %v", c.dir, f)
		if got := float64(f.top1) / float64(f.n); got < c.floor {
			t.Errorf("%s: top-1 %.3f, want at least %.2f", c.dir, got, c.floor)
		}
		if f.healthyFP > c.falseHealthy || f.unknownFP > c.falseUnknown {
			t.Errorf("%s: false matches: %d healthy, %d unknown-failure lines, want at most %d and %d", c.dir, f.healthyFP, f.unknownFP, c.falseHealthy, c.falseUnknown)
		}
		if f.noSigInc > c.noSig {
			t.Errorf("%s: %d write-ups gave no signature, want at most %d", c.dir, f.noSigInc, c.noSig)
		}
	}
}
