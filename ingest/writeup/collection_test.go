package writeup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/kb"
)

// collectionView is what the collection golden files hold: the fields the
// front-matter mapping, the prose extractor and the HTML parser fill.
type collectionView struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	Format       string     `json:"format"`
	Date         string     `json:"date,omitempty"`
	Organisation string     `json:"organisation,omitempty"`
	Tags         []string   `json:"tags"`
	Services     []string   `json:"services"`
	Severity     string     `json:"severity,omitempty"`
	Duration     string     `json:"duration,omitempty"`
	References   []kb.Ref   `json:"references"`
	Extra        []kb.Field `json:"extra"`
	Summary      string     `json:"summary,omitempty"`
	Impact       string     `json:"impact,omitempty"`
	CauseStatus  string     `json:"root_cause_status"`
	CauseFrom    string     `json:"root_cause_from"`
	RootCause    string     `json:"root_cause,omitempty"`
	Fix          string     `json:"fix,omitempty"`
	Prevention   string     `json:"prevention,omitempty"`
	Lessons      string     `json:"lessons,omitempty"`
	NextSteps    string     `json:"next_steps,omitempty"`
	Signatures   []string   `json:"signatures"`
	Warnings     []string   `json:"warnings"`
}

func viewOf(inc *kb.Incident, warnings []string) collectionView {
	v := collectionView{ID: inc.ID, Title: inc.Title, Format: inc.Format, Date: inc.Date, Organisation: inc.Organisation,
		Tags: inc.Tags, Services: inc.Services, Severity: inc.Severity, Duration: inc.Duration, References: inc.References,
		Extra: inc.Extra, Summary: inc.Summary, Impact: inc.Impact, CauseStatus: inc.CauseStatus, CauseFrom: inc.CauseFrom,
		RootCause: inc.RootCause, Fix: inc.Fix, Prevention: inc.Prevention, Lessons: inc.Lessons, NextSteps: inc.NextSteps,
		Signatures: []string{}, Warnings: warnings}
	for _, s := range inc.Signatures {
		v.Signatures = append(v.Signatures, s.Template)
	}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	return v
}

// TestCollectionGolden parses the dev collection (three front-matter
// dialects, prose-only write-ups, HTML pages) and compares what each file
// gives with its golden file; for HTML pages the Markdown they become is
// a golden file too. UPDATE_GOLDEN=1 rewrites them.
func TestCollectionGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/collection/*")
	if len(files) < 20 {
		t.Fatalf("%d collection files, want 20 or more", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ParseFile(f, b)
			if err != nil {
				t.Fatalf("ParseFile(%s): %v", f, err)
			}
			var views []collectionView
			for _, inc := range p.Incidents {
				views = append(views, viewOf(inc, p.Warnings))
			}
			got, err := json.MarshalIndent(views, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkCollectionGolden(t, filepath.Join("testdata/collection-golden", filepath.Base(f)+".json"), string(got))
			if IsHTML(f, b) {
				checkCollectionGolden(t, filepath.Join("testdata/collection-golden", filepath.Base(f)+".md"), p.Incidents[0].Body)
			}
		})
	}
}

func checkCollectionGolden(t *testing.T, golden, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(strings.TrimSpace(got)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./ingest)", err)
	}
	if d := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", golden, d)
	}
}
