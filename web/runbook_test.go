package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/kb"
)

// TestRunbook: numbers written in the comments are not doubled by the
// list's, headings title their group instead of becoming steps, and a
// command without its own comment continues the step before it.
func TestRunbook(t *testing.T) {
	t.Parallel()
	steps := []kb.Step{
		{Section: "confirm", Heading: "How to confirm", Comment: "Is the pod running?", Command: "kubectl get pods -o wide"},
		{Section: "confirm", Heading: "How to confirm", Comment: "Is the file there?", Command: "ls -l /run/x.env"},
		{Section: "confirm", Heading: "How to confirm", Command: "ls -l /etc/cni/net.d/"},
		{Section: "fix", Heading: "Fix", Comment: "1. Get the daemon running (describe shows why)", Command: "kubectl describe pod -l app=x"},
		{Section: "fix", Heading: "Fix", Command: "kubectl delete pod -l app=x"},
		{Section: "fix", Heading: "Fix", Comment: "2) Or set it by hand", Command: "kubectl patch node n"},
		{Section: "fix", Heading: "Fix", Comment: "Step 3: re-apply the manifest", Command: "kubectl apply -f x.yml"},
		{Section: "other", Heading: "Notes", Command: "journalctl -u x"},
	}
	want := []RunbookGroup{
		{Heading: "How to confirm", Steps: []RunbookStep{
			{Text: "Is the pod running?", Commands: []RunbookCommand{{0, "kubectl get pods -o wide"}}},
			{Text: "Is the file there?", Commands: []RunbookCommand{{1, "ls -l /run/x.env"}, {2, "ls -l /etc/cni/net.d/"}}},
		}},
		{Heading: "Fix", Steps: []RunbookStep{
			{Text: "Get the daemon running (describe shows why)", Commands: []RunbookCommand{{3, "kubectl describe pod -l app=x"}, {4, "kubectl delete pod -l app=x"}}},
			{Text: "Or set it by hand", Commands: []RunbookCommand{{5, "kubectl patch node n"}}},
			{Text: "re-apply the manifest", Commands: []RunbookCommand{{6, "kubectl apply -f x.yml"}}},
		}},
		{Heading: "Notes", Steps: []RunbookStep{{Commands: []RunbookCommand{{7, "journalctl -u x"}}}}},
	}
	if diff := cmp.Diff(want, Runbook(steps)); diff != "" {
		t.Errorf("Runbook() mismatch (-want +got):\n%s", diff)
	}
}
