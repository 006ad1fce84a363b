package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/incidex/incidex/kb"
)

// TestRunbookShownInFullOrWithPointer: a match in the terminal shows six
// runbook steps and points at `incidex show` for the rest, never a pointer
// to "1 more steps" where the step itself fits on that line.
func TestRunbookShownInFullOrWithPointer(t *testing.T) {
	for _, tt := range []struct {
		steps, shown int
		pointer      string
	}{
		{5, 5, ""},
		{6, 6, ""},
		{7, 7, ""},
		{8, 6, "… 2 more steps: incidex show inc-a"},
		{12, 6, "… 6 more steps: incidex show inc-a"},
	} {
		inc := &kb.IncidentRef{ID: "inc-a", Title: "A"}
		for i := range tt.steps {
			inc.Runbook = append(inc.Runbook, kb.Step{Command: fmt.Sprintf("step-%d", i+1)})
		}
		var b strings.Builder
		printHitDetails(&b, kb.Hit{Incident: inc}, "", false, false)
		out := b.String()
		if got := strings.Count(out, "$ step-"); got != tt.shown {
			t.Errorf("%d steps: %d shown, want %d\n%s", tt.steps, got, tt.shown, out)
		}
		if tt.pointer == "" && strings.Contains(out, "more step") {
			t.Errorf("%d steps: pointer shown though all fit\n%s", tt.steps, out)
		}
		if tt.pointer != "" && !strings.Contains(out, tt.pointer) {
			t.Errorf("%d steps: want %q\n%s", tt.steps, tt.pointer, out)
		}
	}
}

// TestMatchPrintsScoreNotes: what changed a score (here a line that says
// the opposite of its signature) is printed under the explanation.
func TestMatchPrintsScoreNotes(t *testing.T) {
	dir := t.TempDir()
	line := "DiskPressure False KubeletHasNoDiskPressure kubelet has no disk pressure"
	r := incidex(t, dir, "", "match", "--min-score", "0.1", line)
	if r.code != 0 || !strings.Contains(r.stdout, "disk-full-no-space") || !strings.Contains(r.stdout, "note: score halved: the line says the opposite") {
		t.Errorf("match %q: exit %d, want the disk-full incident with a negation note\n%s%s", line, r.code, r.stdout, r.stderr)
	}
	if r := incidex(t, dir, "", "match", line); r.code != 1 {
		t.Errorf("match %q at the default threshold: exit %d, want 1 (no match)\n%s", line, r.code, r.stdout)
	}
}
