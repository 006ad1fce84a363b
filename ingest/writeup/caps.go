package writeup

import (
	"fmt"
	"strings"

	"github.com/incidex/incidex/kb"
)

// Caps per write-up. Matching and search cost grows with what incidents
// hold, for every later lookup, so one huge write-up (a pasted log dump)
// keeps only this much; the ingest says what it left out.
const (
	// MaxKeptText bounds the original text kept (shown and searched).
	MaxKeptText = 256 << 10
	// MaxFieldText bounds each part taken from it (root cause, fix, a
	// section, a superseded guess).
	MaxFieldText = 64 << 10
	// MaxLogText bounds the log lines kept from code blocks (searched, and
	// run by incidex check).
	MaxLogText = 256 << 10
	// MaxSignatures is how many signatures one write-up gets.
	MaxSignatures = maxSignatures
	// maxListItems bounds runbook steps, sections and example lists.
	maxListItems = 1000
)

// capIncident applies the caps per write-up and records a warning, naming
// the cap, for each one that cut something.
func capIncident(inc *kb.Incident) {
	warn := func(format string, a ...any) { inc.Warnings = append(inc.Warnings, fmt.Sprintf(format, a...)) }
	if len(inc.Body) > MaxKeptText {
		warn("the write-up is %s: only its first %s is kept and searched (the cap per write-up)", size(len(inc.Body)), size(MaxKeptText))
		inc.Body = clipText(inc.Body, MaxKeptText) + "\n\n… (cut here: incidex keeps the first " + size(MaxKeptText) + " of a write-up)\n"
	}
	cut := false
	for _, f := range []*string{&inc.Summary, &inc.Symptoms, &inc.Impact, &inc.RootCause, &inc.Fix, &inc.FixOptions,
		&inc.Workaround, &inc.Monitoring, &inc.Timeline, &inc.Lessons, &inc.Prevention, &inc.NextSteps, &inc.Alternatives, &inc.TellApart} {
		cut = clipField(f) || cut
	}
	for i := range inc.Superseded {
		cut = clipField(&inc.Superseded[i]) || cut
	}
	for i := range inc.Sections {
		cut = clipField(&inc.Sections[i].Text) || cut
	}
	if cut {
		warn("parts longer than %s (a section, the root cause, the fix) are cut there (the cap per part)", size(MaxFieldText))
	}
	if n := capLogs(inc); n > 0 {
		warn("%d log lines past the first %s of log text are not kept (the cap per write-up)", n, size(MaxLogText))
	}
	if len(inc.Signatures) >= MaxSignatures {
		warn("%d signatures, the cap per write-up: log lines past them are not signatures; split the write-up or declare signatures in front matter", MaxSignatures)
	}
	for _, l := range []struct {
		name string
		n    int
		cut  func()
	}{
		{"runbook steps", len(inc.Runbook), func() { inc.Runbook = inc.Runbook[:maxListItems] }},
		{"sections", len(inc.Sections), func() { inc.Sections = inc.Sections[:maxListItems] }},
		{"examples", len(inc.Examples), func() { inc.Examples = inc.Examples[:maxListItems] }},
		{"counterexamples", len(inc.Counter), func() { inc.Counter = inc.Counter[:maxListItems] }},
	} {
		if l.n > maxListItems {
			l.cut()
			warn("%d %s: only the first %d are kept (the cap per write-up)", l.n, l.name, maxListItems)
		}
	}
}

// capLogs keeps log lines up to MaxLogText and returns how many it dropped.
func capLogs(inc *kb.Incident) int {
	total, dropped := 0, 0
	for i := range inc.Logs {
		b := &inc.Logs[i]
		for j, l := range b.Lines {
			if total+len(l) > MaxLogText {
				dropped += len(b.Lines) - j
				b.Lines = b.Lines[:j]
				break
			}
			total += len(l) + 1
		}
	}
	if dropped == 0 {
		return 0
	}
	kept := inc.Logs[:0]
	for _, b := range inc.Logs {
		if len(b.Lines) > 0 {
			kept = append(kept, b)
		}
	}
	inc.Logs = kept
	return dropped
}

func clipField(s *string) bool {
	if len(*s) <= MaxFieldText {
		return false
	}
	*s = clipText(*s, MaxFieldText) + " …"
	return true
}

// clipText cuts s to at most n bytes, at the last line break (else space)
// before n, never inside a UTF-8 sequence.
func clipText(s string, n int) string {
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > n/2 {
		return s[:i]
	}
	if i := strings.LastIndexByte(s, ' '); i > n/2 {
		return s[:i]
	}
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s
}

func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KB", n>>10)
	}
}
