package kb

import (
	"fmt"
	"sort"

	"github.com/incidex/incidex/patterns"
)

// CheckReport is the result of checking a knowledge base against itself.
type CheckReport struct {
	Incidents  int            `json:"incidents"`
	Signatures int            `json:"signatures"`
	Examples   int            `json:"examples"` // example lines tried
	Failures   []CheckProblem `json:"failures"`
	Warnings   []CheckProblem `json:"warnings"`
	// Secondary lists examples that also match an undeclared incident at a
	// clearly lower score: shown as "also possible", not a failure.
	Secondary []CheckProblem `json:"secondary"`
}

// AmbiguityMargin is how close another incident's score must come to an
// example's own incident for the example to be ambiguous.
const AmbiguityMargin = 0.15

// CheckProblem is one finding.
type CheckProblem struct {
	Kind      string  `json:"kind"` // not_top1, ambiguous, counterexample, generic, no_signature, unmatched
	Incident  string  `json:"incident"`
	Signature string  `json:"signature,omitempty"`
	Line      string  `json:"line,omitempty"`
	Other     string  `json:"other,omitempty"` // the other incident involved
	Score     float64 `json:"score,omitempty"`
	Msg       string  `json:"msg"`
}

// OK reports whether the check found no failures.
func (r *CheckReport) OK() bool { return len(r.Failures) == 0 }

// Check tests a knowledge base the way a test suite tests code:
//   - every incident's own examples (its signatures' example lines and its
//     front-matter examples) match it first, or after incidents it declares
//     as overlaps;
//   - no example of one incident matches another incident, that neither
//     declares as an overlap, about as well (within AmbiguityMargin);
//   - no counterexample matches its incident;
//   - no signature is too generic to mean anything (almost all masks or
//     common words), and every signature can match at all.
//
// Write-ups without signatures are warnings.
func Check(incs []*Incident) (*CheckReport, error) {
	var sigs []Signature
	refs := map[string]*IncidentRef{}
	for _, inc := range incs {
		refs[inc.ID] = inc.Ref()
		sigs = append(sigs, inc.Signatures...)
	}
	m, err := NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		return nil, err
	}
	r := &CheckReport{Incidents: len(incs), Signatures: m.Len(), Failures: []CheckProblem{}, Warnings: []CheckProblem{}, Secondary: []CheckProblem{}}
	byID := map[string]*Incident{}
	for _, inc := range incs {
		byID[inc.ID] = inc
	}
	for _, inc := range incs {
		if len(inc.Signatures) == 0 {
			r.Warnings = append(r.Warnings, CheckProblem{Kind: "no_signature", Incident: inc.ID, Msg: "write-up has no signature: no log line, quoted error or curated signature to match"})
		}
		r.checkExamples(m, inc, byID)
		r.checkCounter(m, inc)
	}
	r.checkGeneric(m)
	sortProblems(r.Failures)
	sortProblems(r.Warnings)
	return r, nil
}

func (r *CheckReport) checkExamples(m *Matcher, inc *Incident, byID map[string]*Incident) {
	type example struct{ line, sig string }
	var exs []example
	for _, s := range inc.Signatures {
		if !s.IsTemplate {
			exs = append(exs, example{s.Text, s.ID})
		}
	}
	for _, e := range inc.Examples {
		exs = append(exs, example{e, ""})
	}
	for _, ex := range exs {
		r.Examples++
		hits := m.Match(ex.line, MatchOptions{Mode: patterns.Stream})
		rank := -1
		for i, h := range hits {
			if h.Incident.ID == inc.ID {
				rank = i
				break
			}
		}
		if rank < 0 {
			r.Failures = append(r.Failures, CheckProblem{Kind: "unmatched", Incident: inc.ID, Signature: ex.sig, Line: ex.line,
				Msg: "its own example does not match it"})
			continue
		}
		own := hits[rank].Score
		for _, h := range hits {
			other := h.Incident.ID
			if other == inc.ID || declared(inc, byID[other]) {
				continue
			}
			p := CheckProblem{Incident: inc.ID, Signature: ex.sig, Line: ex.line, Other: other, Score: h.Score}
			switch {
			case h.Score > own:
				p.Kind, p.Msg = "not_top1", fmt.Sprintf("example matches %s first (score %.2f vs %.2f)", other, h.Score, own)
				r.Failures = append(r.Failures, p)
			case own-h.Score <= AmbiguityMargin:
				p.Kind, p.Msg = "ambiguous", fmt.Sprintf("example matches %s almost as well (score %.2f vs %.2f) and neither declares the other in overlaps", other, h.Score, own)
				r.Failures = append(r.Failures, p)
			default:
				p.Kind, p.Msg = "secondary", fmt.Sprintf("example also matches %s, clearly lower (score %.2f vs %.2f)", other, h.Score, own)
				r.Secondary = append(r.Secondary, p)
			}
		}
	}
}

func (r *CheckReport) checkCounter(m *Matcher, inc *Incident) {
	for _, line := range inc.Counter {
		r.Examples++
		for _, h := range m.Match(line, MatchOptions{Mode: patterns.Stream}) {
			if h.Incident.ID == inc.ID {
				r.Failures = append(r.Failures, CheckProblem{Kind: "counterexample", Incident: inc.ID, Line: line, Score: h.Score,
					Signature: h.Signature.ID, Msg: fmt.Sprintf("counterexample matches it (score %.2f)", h.Score)})
			}
		}
	}
}

func (r *CheckReport) checkGeneric(m *Matcher) {
	for i := 0; i < m.Len(); i++ {
		info := m.set.Info(i)
		sig := m.Signature(i)
		switch {
		case info.Anchors == 0:
			r.Failures = append(r.Failures, CheckProblem{Kind: "generic", Incident: sig.IncidentID, Signature: sig.ID, Line: sig.Template,
				Msg: "signature has no distinctive literal word, so it can never match"})
		case info.Generic:
			r.Failures = append(r.Failures, CheckProblem{Kind: "generic", Incident: sig.IncidentID, Signature: sig.ID, Line: sig.Template,
				Msg: fmt.Sprintf("signature is too generic: its distinctive words weigh %.1f (want %.1f) and %.0f%% of its weight is masks or common words", info.DistinctWeight, patterns.MinDistinctWeight, 100*info.VagueShare)})
		}
	}
}

// declared reports whether a or b lists the other as an overlap (or a
// symptom incident lists the other as one of its causes).
func declared(a, b *Incident) bool {
	if a == nil || b == nil {
		return false
	}
	return contains(a.Overlaps, b.ID) || contains(b.Overlaps, a.ID) || contains(a.Causes, b.ID) || contains(b.Causes, a.ID)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortProblems(ps []CheckProblem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Incident != ps[j].Incident {
			return ps[i].Incident < ps[j].Incident
		}
		return ps[i].Kind < ps[j].Kind
	})
}
