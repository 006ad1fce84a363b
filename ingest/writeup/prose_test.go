package writeup

import (
	"testing"

	"github.com/incidex/incidex/kb"
)

func TestProseOnly(t *testing.T) {
	tests := []struct {
		name, src                string
		status, from, cause, fix string
		prevention               string
	}{
		{name: "cause, fix and prevention in sentences",
			src: "# Ingress down\n\nThe pods crashlooped. Its controller log:\n\n```\nF1012 main.go:64] port 80 is already in use\n```\n\n" +
				"It turned out that a debug pod was holding port 80. We fixed it by deleting the debug pod. To prevent this we reject hostNetwork pods.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "It turned out that a debug pod was holding port 80.",
			fix: "We fixed it by deleting the debug pod.", prevention: "To prevent this we reject hostNetwork pods."},
		{name: "the heaviest cue wins",
			src:    "Latency rose because traffic doubled. The root cause was a missing index on orders.customer_id.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "The root cause was a missing index on orders.customer_id."},
		{name: "an investigation's finding outranks a later because",
			src:    "The inquiry traced the failure to an unprotected float-to-integer conversion in the reused guidance code. The routine kept running after launch because an old requirement said so.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "The inquiry traced the failure to an unprotected float-to-integer conversion in the reused guidance code."},
		{name: "a sentence pointing back takes the one before",
			src:    "A replication slot kept every WAL segment. This was caused by a runbook that left the slot.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "A replication slot kept every WAL segment. This was caused by a runbook that left the slot."},
		{name: "questions and negations are not causes",
			src:    "Was it caused by DNS? The outage was not caused by the deploy. Requests failed for an hour.\n",
			status: kb.CauseUnknown, from: kb.CauseFromNone},
		{name: "a stack trace in a blockquote is not prose",
			src:    "The job failed.\n\n> Caused by: java.io.IOException: Broken pipe\n",
			status: kb.CauseUnknown, from: kb.CauseFromNone},
		{name: "the write-up says the cause is unknown",
			src:    "Latency rose for 45 minutes and recovered on its own. The root cause is still unknown.\n",
			status: kb.CauseUnknown, from: kb.CauseFromStated},
		{name: "nothing anywhere",
			src:    "# Slow pages\n\nPages were slow on Monday.\n",
			status: kb.CauseUnknown, from: kb.CauseFromNone},
		{name: "a heading synonym",
			src:    "# T\n\n## What we think went wrong\n\nThe cache had no TTL.\n\n## How we got out of it\n\nFlushed it.\n",
			status: kb.CauseKnown, from: kb.CauseFromSection, cause: "The cache had no TTL.", fix: "Flushed it."},
		{name: "a trigger adds to the root cause",
			src:    "# T\n\n## Trigger\n\nA deploy.\n\n## Root Causes\n\nThe probe checked nothing.\n",
			status: kb.CauseKnown, from: kb.CauseFromSection, cause: "The probe checked nothing.\n\n**Trigger**\n\nA deploy."},
		{name: "a label in a sentence, with a remark",
			src:    "# T\n\nThe process panicked on a timeout.\n\nRoot cause (library): the caller closed a channel its reader goroutine still wrote to.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "Root cause (library): the caller closed a channel its reader goroutine still wrote to."},
		{name: "a bare cause label",
			src:    "# T\n\nThe import crashed on the slim image.\n\nCause: the base image has no libGL.\n",
			status: kb.CauseKnown, from: kb.CauseFromSentence, cause: "Cause: the base image has no libGL."},
		{name: "a root-cause section that says so",
			src:    "# T\n\n## Root cause\n\nNot determined. Metrics were missing.\n",
			status: kb.CauseUnknown, from: kb.CauseFromStated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inc, err := ParseMarkdown("p.md", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if inc.CauseStatus != tt.status || inc.CauseFrom != tt.from || inc.RootCause != tt.cause {
				t.Errorf("cause = %s/%s %q, want %s/%s %q", inc.CauseStatus, inc.CauseFrom, inc.RootCause, tt.status, tt.from, tt.cause)
			}
			if tt.from == kb.CauseFromSentence && inc.CauseSource != tt.cause {
				t.Errorf("CauseSource = %q, want %q", inc.CauseSource, tt.cause)
			}
			if tt.fix != "" && inc.Fix != tt.fix {
				t.Errorf("Fix = %q, want %q", inc.Fix, tt.fix)
			}
			if tt.prevention != "" && inc.Prevention != tt.prevention {
				t.Errorf("Prevention = %q, want %q", inc.Prevention, tt.prevention)
			}
		})
	}
}

// The summary of a write-up whose first paragraph leads into a code block
// does not end at the lead-in ("Its controller log:").
func TestSummaryDropsLeadIn(t *testing.T) {
	inc, err := ParseMarkdown("p.md", []byte("The pods crashlooped after the upgrade. Its controller log:\n\n```\nport 80 is already in use\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "The pods crashlooped after the upgrade."; inc.Summary != want {
		t.Errorf("Summary = %q, want %q", inc.Summary, want)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("We use e.g. Redis here. Version 1.2.3 shipped! Then \"it\" broke? 2 pods died.")
	want := []string{"We use e.g. Redis here.", "Version 1.2.3 shipped!", "Then \"it\" broke?", "2 pods died."}
	if len(got) != len(want) {
		t.Fatalf("splitSentences = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("splitSentences[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}
