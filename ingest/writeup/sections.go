package writeup

import (
	"strings"
	"unicode"

	"github.com/incidex/incidex/kb"
)

// headingRules map words in a heading to its meaning. The first rule with a
// matching phrase wins, so the more specific phrases come first ("next
// steps" before "steps", "root cause" before anything with "fix").
var headingRules = []struct {
	kind    string
	phrases []string
}{
	{kb.SectionNextSteps, []string{"next step", "next steps", "action items", "action item", "follow-up", "follow-ups", "follow up", "follow ups", "followup", "followups", "todo", "to do", "what we are doing", "what we re doing", "what we will do"}},
	{kb.SectionPrevention, []string{"next time", "never again", "preventing recurrence", "avoiding recurrence", "preventive", "preventative"}},
	{kb.SectionRootCause, []string{"root cause", "root causes", "rca", "cause", "causes", "why", "why it happened", "contributing factor", "contributing factors",
		"what went wrong", "went wrong", "trigger", "triggers", "triggering event", "what caused it", "what broke", "causal factors",
		"what it actually was", "actually was", "what it was", "what was really happening", "really happening", "what really happened",
		"actual cause", "real cause", "first guess", "initial guess", "wrong guess", "first theory", "initial theory", "first read",
		"theory", "hypothesis", "what is going on", "what s going on", "what was going on", "going on", "explanation", "analysis",
		"reason", "reasons", "culprit", "why this happens", "why this happened"}},
	{kb.SectionWorkaround, []string{"workaround", "work around", "mitigation", "mitigate", "mitigations", "temporary fix", "stopgap"}},
	{kb.SectionFix, []string{"fix", "fixes", "fixed", "the fix", "resolution", "resolve", "resolved", "solution", "solutions", "remediation", "remediations", "what fixed it",
		"repair", "recovery", "how we got out of it", "got out of it", "how we fixed it", "how it was fixed", "how we recovered", "restoration", "restoring service",
		"what we did", "what we changed", "what we did about it", "how we fixed"}},
	{kb.SectionSymptoms, []string{"symptom", "symptoms", "describe the bug", "bug description", "current behavior", "current behaviour", "actual behavior", "actual behaviour", "what we saw", "detection", "detected", "signs", "error message", "error messages", "pod events", "observed behavior", "observed behaviour", "alerts", "how it shows", "errors seen", "how we noticed", "how it was noticed"}},
	{kb.SectionImpact, []string{"impact", "customer impact", "user impact", "blast radius", "who was affected", "what was affected"}},
	{kb.SectionTimeline, []string{"timeline", "chronology", "sequence of events", "timeline of events"}},
	{kb.SectionLessons, []string{"lesson", "lessons", "lessons learned", "lessons learnt", "takeaway", "takeaways", "learnings", "learned", "learnt", "retrospective", "what went well", "what went badly", "what didn t go well", "what we learned"}},
	{kb.SectionPrevention, []string{"prevention", "prevent", "preventing", "avoiding it", "avoid", "hardening"}},
	{kb.SectionMonitoring, []string{"monitoring", "monitor", "verification", "verify", "validation", "validate", "alerting"}},
	{kb.SectionRunbook, []string{"investigation", "investigating", "runbook", "troubleshooting", "troubleshoot", "steps", "diagnosis", "diagnose", "diagnostics", "how to confirm", "confirm", "confirming", "debugging", "debug", "triage"}},
	{kb.SectionReferences, []string{"references", "reference", "links", "see also", "further reading", "resources", "sources"}},
	{kb.SectionAlternatives, []string{"alternatives", "alternative causes", "other causes", "telling it apart", "tell apart", "related incidents", "differential", "similar incidents", "overlaps"}},
	{kb.SectionSummary, []string{"summary", "problem", "problem summary", "overview", "description", "what happened", "background", "context", "tl;dr", "tldr", "incident summary", "executive summary", "the incident"}},
}

// isSecondaryCause reports a root-cause heading that names a part of the
// cause ("Trigger", "Contributing factors") rather than the cause: it adds
// to the root cause instead of superseding it.
func isSecondaryCause(heading string) bool {
	j := " " + strings.Join(headingWords(heading), " ") + " "
	for _, p := range []string{" trigger ", " triggers ", " triggering event ", " contributing factor ", " contributing factors ", " causal factors "} {
		if strings.Contains(j, p) {
			return true
		}
	}
	return false
}

// headingKind returns the meaning of a heading, or "" when it has none of
// its own. numbered reports headings that are items of their parent ("2.
// Verify node network", "Option 1: ..."): they take their parent's meaning.
func headingKind(heading string) (kind string, numbered bool) {
	words := headingWords(heading)
	if len(words) == 0 {
		return "", false
	}
	if isItemHeading(words) {
		return "", true
	}
	joined := " " + strings.Join(words, " ") + " "
	for _, r := range headingRules {
		for _, p := range r.phrases {
			if strings.Contains(joined, " "+p+" ") {
				return r.kind, false
			}
		}
	}
	return "", false
}

// headingWords lower-cases a heading and keeps its words, dropping
// numbering, emoji, punctuation and parenthesised remarks.
func headingWords(h string) []string {
	h = strings.ToLower(h)
	var b strings.Builder
	depth := 0
	for _, r := range h {
		switch {
		case r == '(' || r == '[':
			depth++
		case r == ')' || r == ']':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == ';':
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// isItemHeading: "1 check flannel", "step 2 ...", "option 3 ...".
func isItemHeading(words []string) bool {
	w := words[0]
	if w == "step" || w == "option" || w == "phase" || w == "stage" {
		return len(words) > 1 && isNumberWord(words[1])
	}
	return isNumberWord(w) && len(words) > 1
}

func isNumberWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '-' {
			return false
		}
	}
	return true
}

// isOptionsHeading: fix sections that list candidates rather than what was done.
func isOptionsHeading(h string) bool {
	words := headingWords(h)
	for _, w := range words {
		switch w {
		case "potential", "possible", "options", "candidate", "candidates", "proposed", "ideas":
			return true
		}
	}
	return false
}

// unknownCause reports root-cause text that only says the cause is unknown.
func unknownCause(s string) bool {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(s), ".!*_ "))
	switch t {
	case "", "not stated", "unknown", "tbd", "n/a", "na", "none", "not known", "not determined",
		"undetermined", "still unknown", "unclear", "not identified", "none given", "not given", "?":
		return true
	}
	for _, p := range []string{"not stated", "unknown", "tbd", "not determined", "not yet determined", "undetermined", "not known",
		"not yet known", "still unknown", "unclear", "not identified", "under investigation", "still under investigation"} {
		if t == p || strings.HasPrefix(t, p+".") || strings.HasPrefix(t, p+",") || strings.HasPrefix(t, p+";") || strings.HasPrefix(t, p+" ") {
			return true
		}
	}
	return false
}
