package writeup

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// A write-up without headings (or without a heading for one of its parts)
// still says what caused the incident, how it was fixed and what will stop
// it coming back, in sentences: "the root cause was …", "it turned out …",
// "we fixed it by …", "to prevent this …". proseFacts finds those
// sentences by their cue phrases.

// cue is a phrase that marks a sentence as saying one thing, with a weight:
// the sentence with the heaviest cue wins, the first of equal ones.
type cue struct {
	phrase string
	weight int
}

var (
	causeCues = []cue{
		{"root cause was", 5}, {"root cause is", 5}, {"root cause of", 4}, {"root cause:", 5}, {"the root cause", 4},
		{"root-caused", 4}, {"the underlying cause", 4}, {"the cause was", 4}, {"the cause of", 3},
		{"it turned out", 3}, {"turned out that", 3}, {"turned out to be", 3}, {"was caused by", 3}, {"were caused by", 3},
		{"caused by", 2}, {"the trigger was", 3}, {"was triggered by", 3}, {"triggered by", 2}, {"stemmed from", 2},
		{"the culprit", 3}, {"the problem was", 2}, {"the issue was", 2}, {"was the result of", 2}, {"resulted from", 2},
		{"was due to", 2}, {"were due to", 2}, {"due to", 1}, {"because", 1},
		{"traced the failure to", 3}, {"traced the outage to", 3}, {"traced the problem to", 3},
		{"traced the issue to", 3}, {"traced the incident to", 3}, {"traced it to", 3}, {"was traced to", 3},
		{"cause:", 4}, {"reason:", 4}, {"the reason was", 3}, {"the reason is", 3}, {"happens because", 3}, {"happened because", 3},
		{"the real problem", 3}, {"the actual problem", 3},
	}
	fixCues = []cue{
		{"the fix was", 5}, {"we fixed", 4}, {"fixed it by", 4}, {"fixed by", 3}, {"was fixed", 3}, {"were fixed", 3},
		{"resolved by", 4}, {"we resolved", 4}, {"was resolved", 3}, {"resolution was", 4}, {"to fix this", 3}, {"to fix it", 3},
		{"mitigated by", 3}, {"we mitigated", 3}, {"recovered by", 3}, {"service recovered", 2}, {"we rolled back", 3},
		{"rolling back", 2}, {"rolled back", 2}, {"we reverted", 3}, {"reverting", 2}, {"reverted", 2}, {"we restarted", 2},
		{"restarting", 1}, {"we increased", 1}, {"we raised", 1}, {"we disabled", 1}, {"we deployed a fix", 4}, {"a fix was deployed", 4},
		{"fix:", 5}, {"resolution:", 5}, {"mitigation:", 4}, {"we dropped", 1}, {"we deleted", 1}, {"we removed", 1}, {"we freed", 1},
		{"we restored", 2}, {"we refunded", 1}, {"we replaced", 1}, {"we rotated", 1}, {"we scaled", 1}, {"we moved", 1},
		{"we recreated", 1}, {"we reopened", 1}, {"we opened", 1}, {"we re-enabled", 1}, {"we flushed", 1}, {"we killed", 1},
	}
	preventCues = []cue{
		{"to prevent this", 5}, {"to prevent", 4}, {"to avoid this", 4}, {"prevent a recurrence", 5}, {"prevent recurrence", 5},
		{"from happening again", 4}, {"going forward", 3}, {"in the future", 3}, {"from now on", 3}, {"next time", 2},
		{"we have since", 3}, {"we will add", 3}, {"we will", 2}, {"we are adding", 3}, {"we plan to", 2}, {"action item", 3},
		{"lesson", 3}, {"we learned", 3}, {"takeaway", 3}, {"can never", 2}, {"now has", 1}, {"now have", 1}, {"now runs", 1},
		{"now checks", 1}, {"now validates", 1}, {"now alerts", 1}, {"is now", 1}, {"are now", 1},
	}
	impactCues = []cue{
		{"customer impact", 5}, {"the impact", 4}, {"were unable to", 3}, {"was unable to", 3}, {"could not", 2}, {"couldn't", 2},
		{"of requests", 3}, {"error rate", 3}, {"users were", 3}, {"customers were", 3}, {"were affected", 3}, {"was affected", 3},
		{"affected", 2}, {"unavailable for", 3}, {"was down for", 3}, {"were down for", 3}, {"outage lasted", 4}, {"degraded", 2},
		{"downtime", 2},
	}
	// unknownCues are sentences saying the cause is not known.
	unknownCues = []cue{
		{"root cause is unknown", 5}, {"root cause is not known", 5}, {"root cause remains unknown", 5}, {"cause is still unknown", 5},
		{"cause is unknown", 4}, {"cause remains unknown", 5}, {"cause has not been determined", 5}, {"cause was not determined", 5},
		{"cause is not yet known", 5}, {"cause was never found", 5}, {"never found the root cause", 5}, {"don't know why", 3},
		{"do not know why", 3}, {"not yet understood", 3}, {"still investigating the cause", 5}, {"cause not stated", 5},
	}
)

// sentence is a sentence of prose and the section kind it sits in.
type sentence struct {
	text    string
	section string
}

// proseSentences returns the sentences of the paragraphs and list items of
// a Markdown AST, with their sections. Code is not prose, and neither is a
// blockquote (pasted log lines: "Caused by: java.io…").
func proseSentences(root ast.Node, src []byte, sectionAt func(offset int) string) []sentence {
	var out []sentence
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.Blockquote, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock, *ast.Heading:
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph, *ast.TextBlock:
			off := 0
			if l := n.Lines(); l.Len() > 0 {
				off = l.At(0).Start
			}
			sec := sectionAt(off)
			for _, s := range splitSentences(inlineText(n, src)) {
				out = append(out, sentence{text: s, section: sec})
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// splitSentences splits text at ". ", "! " and "? " before a capital
// letter, a digit or a quote, and at line ends; abbreviations such as
// "e.g." and "i.e." do not end a sentence.
func splitSentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if (c != '.' && c != '!' && c != '?') || i+2 >= len(text) || text[i+1] != ' ' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(text[i+2:])
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) && r != '"' && r != '\'' && r != '“' && r != '`' {
			continue
		}
		if c == '.' && abbreviation(text[start:i+1]) {
			continue
		}
		out = append(out, strings.TrimSpace(text[start:i+1]))
		start = i + 2
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func abbreviation(s string) bool {
	l := strings.ToLower(s)
	for _, a := range []string{"e.g.", "i.e.", "etc.", "vs.", "approx.", "no.", "mr.", "ms.", "dr.", "inc.", "ltd.", "cf."} {
		if strings.HasSuffix(l, " "+a) || l == a {
			return true
		}
	}
	return false
}

// bestSentence returns the index of the sentence with the heaviest cue,
// or -1. skip leaves out sentences already taken for another field.
func bestSentence(ss []sentence, cues []cue, skip map[int]bool) int {
	best, bestW := -1, 0
	for i, s := range ss {
		if skip[i] || len(s.text) < 12 {
			continue
		}
		if w := cueWeight(s.text, cues); w > bestW {
			best, bestW = i, w
		}
	}
	return best
}

// cueWeight is the weight of the heaviest cue in s. A cue counts only at
// word boundaries and not in a question ("was it caused by DNS?") or a
// negation of the cue ("not caused by").
// remark is a parenthesised remark and the space before it.
var remark = regexp.MustCompile(`\s*\([^()]{0,40}\)`)

func cueWeight(s string, cues []cue) int {
	l := strings.ToLower(s)
	if strings.HasSuffix(strings.TrimSpace(l), "?") {
		return 0
	}
	for _, p := range []string{"because of that", "because of this", "due to this", "due to that"} {
		l = strings.ReplaceAll(l, p, "")
	}
	l = remark.ReplaceAllString(l, "") // "root cause (library): …"
	w := 0
	for _, c := range cues {
		if c.weight <= w {
			continue
		}
		i := wordIndex(l, c.phrase)
		if i < 0 {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(l[:i]), " not") || strings.HasSuffix(strings.TrimSpace(l[:i]), "n't") {
			continue
		}
		w = c.weight
	}
	return w
}

// wordIndex finds phrase in s starting and ending at word boundaries.
func wordIndex(s, phrase string) int {
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], phrase)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(phrase)
		okStart := i == 0 || !isWordByte(s[i-1])
		okEnd := end >= len(s) || !isWordByte(s[end]) || !isWordByte(phrase[len(phrase)-1])
		if okStart && okEnd {
			return i
		}
		off = i + 1
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// withNext extends sentence i with the one after it when the sentence is
// a lead-in ("The root cause was twofold:") or very short.
func withNext(ss []sentence, i int) string {
	s := ss[i].text
	if i+1 < len(ss) && (strings.HasSuffix(s, ":") || len(s) < 25) {
		return s + " " + ss[i+1].text
	}
	return s
}

// withPrevious extends a cause sentence that points back ("This was
// caused by …", "That happened because …") with the sentence before it.
func withPrevious(ss []sentence, i int, s string) string {
	l := strings.ToLower(s)
	for _, p := range []string{"this ", "that ", "it was ", "this, ", "which "} {
		if strings.HasPrefix(l, p) && i > 0 {
			return ss[i-1].text + " " + s
		}
	}
	return s
}

// proseFacts are the parts of a write-up found in its sentences.
type proseFacts struct {
	cause, fix, prevention, impact string
	causeStatedUnknown             bool
}

// findProse looks for the parts the headings did not give. want says which
// fields are still empty.
func findProse(ss []sentence, wantCause, wantFix, wantPrevent, wantImpact bool) proseFacts {
	var f proseFacts
	used := map[int]bool{}
	if wantCause {
		u := bestSentence(ss, unknownCues, nil)
		for i, s := range ss {
			if cueWeight(s.text, unknownCues) > 0 {
				used[i] = true // "the cause was never found" states no cause
			}
		}
		c := bestSentence(ss, causeCues, used)
		switch {
		case c >= 0 && (u < 0 || cueWeight(ss[c].text, causeCues) >= 3):
			f.cause = withPrevious(ss, c, withNext(ss, c))
			used[c] = true
		case u >= 0:
			f.causeStatedUnknown = true
		}
	}
	if wantFix {
		if i := bestSentence(ss, fixCues, used); i >= 0 {
			f.fix = withNext(ss, i)
			used[i] = true
		}
	}
	if wantPrevent {
		if i := bestSentence(ss, preventCues, used); i >= 0 {
			f.prevention = withNext(ss, i)
			used[i] = true
		}
	}
	if wantImpact {
		if i := bestSentence(ss, impactCues, used); i >= 0 {
			f.impact = ss[i].text
		}
	}
	return f
}

// trimLeadIn drops a paragraph's last sentence when it only introduces
// what follows ("Its controller log:"): as a summary it would end in the
// middle of nothing.
func trimLeadIn(p string) string {
	p = strings.TrimSpace(p)
	if !strings.HasSuffix(p, ":") {
		return p
	}
	ss := splitSentences(p)
	if len(ss) <= 1 {
		return p
	}
	return strings.Join(ss[:len(ss)-1], " ")
}
