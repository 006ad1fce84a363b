package kb

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/incidex/incidex/patterns"
)

// Matcher matches log lines against the signatures of the knowledge base.
// It is a snapshot: build a new one when the knowledge base changes
// (Generation tells). It is safe for concurrent use.
type Matcher struct {
	set *patterns.Set
	// base holds the signatures NewMatcher kept, one entry each (less
	// those of unknown incidents), in order; sigOf maps a set index to its
	// signature there: a clause or another wording is a match of the
	// signature it came from. (One copy per signature, not per set entry:
	// a write-up's clauses and other wordings outnumber its signatures.)
	base      []Signature
	sigOf     []int32
	incidents map[string]*IncidentRef
	gen       int64
	// verdicts: per signature id, per line template, "wrong" minus "right"
	// feedback (see AddFeedback).
	verdicts map[string]map[string]int
	// equivOf: per set index, 1 + the index in equivList of the other
	// wording it matches through (patterns.Equivalents), 0 for the
	// signature's own words and clauses (nil when there is none). A set
	// entry's clause is its def's text (see clauseOf).
	equivOf   []int32
	equivList []patterns.Equivalent
	// text is the text tier (see patterns.TextIndex), over the write-ups
	// that match through clauses; nil when there is none. Its write-up g
	// is the pseudo-signature textSigs[g], index textBase+g.
	text     *patterns.TextIndex
	textBase int
	textSigs []Signature
}

// IncidentRef is what a hit says about its incident.
type IncidentRef struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Source      string   `json:"source"`
	RootCause   string   `json:"root_cause"`
	CauseStatus string   `json:"root_cause_status"`
	Fix         string   `json:"fix,omitempty"`
	Runbook     []Step   `json:"runbook"`
	Overlaps    []string `json:"overlaps,omitempty"`
	TellApart   string   `json:"tell_apart,omitempty"`
	Likelihood  string   `json:"likelihood,omitempty"`
	pins        []string
	// words are the write-up's words for the text tier
	// (patterns.TextHashes); NewMatcher takes them and clears them.
	words []uint64
}

// Hit is a match of a line to an incident through one of its signatures.
type Hit struct {
	Incident  *IncidentRef          `json:"incident"`
	Signature SignatureRef          `json:"signature"`
	Score     float64               `json:"score"`
	Explain   *patterns.Explanation `json:"explain,omitempty"`
	Captures  map[string]string     `json:"captures"`
}

// SignatureRef names the signature of a hit.
type SignatureRef struct {
	ID       string `json:"id"`
	Template string `json:"template"`
	Kind     string `json:"kind"`
}

// PossibleMinScore is the bottom of the possible band: a match scoring at
// least this but below the confident threshold (patterns.DefaultMinScore,
// or --min-score) is shown as possible by `incidex match`, /analyze and the
// API, with its evidence, and never opens an occurrence. The figures that
// justify both bands are in the README (How matching works).
const PossibleMinScore = 0.3

// likelihoodBoost orders incidents that explain the same line.
var likelihoodBoost = map[string]float64{"common": 1, "occasional": 0.97, "rare": 0.94}

// Matcher compiles the knowledge base's signatures. minScore 0 means the default.
func (k *KB) Matcher(ctx context.Context, minScore float64) (*Matcher, error) {
	gen, err := k.Generation(ctx)
	if err != nil {
		return nil, err
	}
	sigs, err := k.Signatures(ctx)
	if err != nil {
		return nil, err
	}
	incs, err := k.incidentRefs(ctx)
	if err != nil {
		return nil, err
	}
	m, err := NewMatcher(sigs, incs, gen, minScore)
	if err != nil {
		return nil, err
	}
	if m.verdicts, err = k.verdicts(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// NewMatcher builds a matcher from signatures and their incidents. Each
// signature taken from an example line also matches through its clauses
// (see patterns.Clauses): the part of the line that names the error, so
// that another occurrence inside another wrapper matches too. A clause
// match is a match of its signature, a little below a match of the whole
// line, and says so in its explanation; clauses too generic to be
// evidence on their own (patterns.Info.Generic) are left out. It matches
// through the other wordings of its failure too (patterns.Equivalents:
// another runtime's, client's or version's), a little below its own
// words. An incident with curated signatures (front matter) has said what
// to match: its lines match as they are.
func NewMatcher(sigs []Signature, incs map[string]*IncidentRef, gen int64, minScore float64) (*Matcher, error) {
	defs := make([]patterns.Def, 0, 2*len(sigs))
	base := make([]Signature, 0, len(sigs))
	sigOf := make([]int32, 0, 2*len(sigs))
	var equivOf []int32 // for each def, 1 + its index in equivList, or 0
	var equivList []patterns.Equivalent
	equivIndex := map[patterns.Equivalent]int32{}
	// Incidents whose authors said what to match (curated signatures), or
	// gave many examples, match as they are: clauses are for write-ups
	// that pasted an error once or twice.
	byInc := map[string][]Signature{}
	for _, s := range sigs {
		byInc[s.IncidentID] = append(byInc[s.IncidentID], s)
	}
	curated := make(map[string]bool, len(byInc))
	for id, ss := range byInc {
		curated[id] = !MatchesThroughClauses(ss)
	}
	for _, s := range sigs {
		inc := incs[s.IncidentID]
		if inc == nil {
			continue
		}
		boost := likelihoodBoost[inc.Likelihood]
		if boost == 0 {
			boost = 1
		}
		b := int32(len(base))
		base = append(base, s)
		d := patterns.Def{ID: s.ID, Group: s.IncidentID, Text: s.Text, Template: s.IsTemplate, Pins: inc.pins, Boost: boost}
		defs, sigOf, equivOf = append(defs, d), append(sigOf, b), append(equivOf, 0)
		if s.IsTemplate || curated[s.IncidentID] {
			continue
		}
		for _, c := range patterns.Clauses(s.Text) {
			cd := d
			cd.ID, cd.Text, cd.Boost, cd.Clause = s.ID, c, boost*clauseBoost, true
			defs, sigOf, equivOf = append(defs, cd), append(sigOf, b), append(equivOf, 0)
		}
		// The other wordings of the failure the line prints (another
		// runtime's, client's or version's), as clauses of the signature.
		for _, e := range patterns.Equivalents(s.Text) {
			ed := d
			ed.Text, ed.Template, ed.Boost, ed.Clause, ed.Whole = e.Wording, true, boost*equivBoost, true, true
			if e.Own {
				// The part of the line that says the failure, in the words
				// the table knows it by: a clause.
				ed.Boost = boost * clauseBoost
			}
			k, ok := equivIndex[e]
			if !ok {
				equivList = append(equivList, e)
				k = int32(len(equivList))
				equivIndex[e] = k
			}
			defs, sigOf, equivOf = append(defs, ed), append(sigOf, b), append(equivOf, k)
		}
	}
	// The text tier first: the write-ups' words are let go before the
	// signatures are compiled, the build's peak.
	text, textSigs := buildText(incs, curated)
	set, err := patterns.Compile(defs, patterns.Options{MinScore: minScore})
	if err != nil {
		return nil, fmt.Errorf("compile signatures: %w", err)
	}
	if set.Len() < len(defs) {
		// The set left out the clauses too generic to stand alone: keep
		// what its defs are. A def is its signature's id and text, and a
		// clause's text is one of its line's clauses, each once.
		n := 0
		for i := 0; i < set.Len(); i++ {
			d := set.Def(i)
			for defs[n].ID != d.ID || defs[n].Text != d.Text || defs[n].Clause != d.Clause {
				n++
			}
			sigOf[i], equivOf[i] = sigOf[n], equivOf[n]
			n++
		}
		sigOf, equivOf = sigOf[:set.Len()], equivOf[:set.Len()]
	}
	m := &Matcher{set: set, base: base, sigOf: slices.Clip(sigOf), incidents: incs, gen: gen}
	if len(equivList) > 0 {
		m.equivOf, m.equivList = slices.Clip(equivOf), equivList
	}
	if text != nil {
		m.text, m.textSigs, m.textBase = text, textSigs, len(m.sigOf)
	}
	return m, nil
}

// clauseOf returns the clause of its signature that set entry i matches
// through, or "" for the whole signature.
func (m *Matcher) clauseOf(i int) string {
	if d := m.set.Def(i); d.Clause {
		return d.Text
	}
	return ""
}

// buildText builds the text tier over the write-ups that have signatures
// matching through clauses (the ones that pasted an error once or twice),
// with one pseudo-signature per write-up for its matches.
func buildText(incs map[string]*IncidentRef, curated map[string]bool) (*patterns.TextIndex, []Signature) {
	ids := make([]string, 0, len(incs))
	for id, inc := range incs {
		if !curated[id] && len(inc.words) > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	words := make([][]uint64, len(ids))
	for i, id := range ids {
		words[i] = incs[id].words
	}
	for _, inc := range incs {
		inc.words = nil
	}
	if len(ids) == 0 {
		return nil, nil
	}
	sigs := make([]Signature, len(ids))
	for i, id := range ids {
		sigs[i] = Signature{ID: id + TextSignatureSuffix, IncidentID: id, Kind: SigText}
	}
	return patterns.NewTextIndex(ids, words), sigs
}

// TextSignatureSuffix ends the id of an incident's text-tier
// pseudo-signature: matches through the write-up's own words are recorded
// (occurrences, feedback) under "<incident id>#text".
const TextSignatureSuffix = "#text"

// matchText asks the text tier about a line no signature matched
// confidently, and adds its answer to dst[start:] (best first) if it
// reaches minScore.
func (m *Matcher) matchText(line string, p patterns.Prepared, minScore float64, dst []patterns.Match, start int) []patterns.Match {
	tm, ok := m.text.MatchPrepared(p)
	if !ok || tm.Score < minScore {
		return dst
	}
	pm := patterns.Match{Sig: m.textBase + tm.Group, Score: tm.Score}
	if f := m.feedback(line, pm.Sig); f < 1 {
		if pm.Score *= f; pm.Score < minScore {
			return dst
		}
	}
	i := start
	for i < len(dst) && dst[i].Score >= tm.Score {
		i++
	}
	return slices.Insert(dst, i, pm)
}

// MatchesThroughClauses reports whether an incident with these
// signatures matches through clauses and the other wordings of its
// failures (NewMatcher): it pasted an error once or a few times, and has no
// curated signature.
func MatchesThroughClauses(sigs []Signature) bool {
	if len(sigs) > maxSigsForClauses {
		return false
	}
	for _, s := range sigs {
		if s.Kind == SigCurated {
			return false
		}
	}
	return true
}

// maxSigsForClauses is the most signatures an incident may have for its
// signatures to match through clauses.
const maxSigsForClauses = 4

// clauseBoost ranks a match through a clause just below one of the whole line.
const clauseBoost = 0.95

// equivBoost ranks a match through another wording of the failure (see
// patterns.Equivalents) below one through the signature's own words.
const equivBoost = 0.9

// Generation is the knowledge-base generation the matcher was built from.
func (m *Matcher) Generation() int64 { return m.gen }

// Set returns the compiled signature set, for hot paths that match without
// explanations.
func (m *Matcher) Set() *patterns.Set { return m.set }

// Signature returns the signature at index i of the set.
// Indexes from Len on are the text tier's pseudo-signatures, one per
// write-up (kind SigText), which matches through the text tier carry.
func (m *Matcher) Signature(i int) Signature {
	if i >= len(m.sigOf) {
		return m.textSigs[i-len(m.sigOf)]
	}
	return m.base[m.sigOf[i]]
}

// Incident returns the incident of a hit by id, or nil.
func (m *Matcher) Incident(id string) *IncidentRef { return m.incidents[id] }

// Signatures returns the signatures the matcher compiled, by set index (a
// signature is there once for each of its clauses and other wordings).
// The text tier's pseudo-signatures are not among them (see Signature).
func (m *Matcher) Signatures() []Signature {
	out := make([]Signature, len(m.sigOf))
	for i, b := range m.sigOf {
		out[i] = m.base[b]
	}
	return out
}

// Len returns the number of signatures.
func (m *Matcher) Len() int { return m.set.Len() }

// MatchOptions tune Match.
type MatchOptions struct {
	Mode     patterns.Mode
	MinScore float64 // 0 → the matcher's threshold
	Top      int     // 0 → all
	Explain  bool
	// Labels fill runbook placeholders beside the line's own captures.
	Labels map[string]string
}

// Match returns the incidents that explain line, best first.
func (m *Matcher) Match(line string, o MatchOptions) []Hit {
	ms := m.Best(line, o.Mode, o.MinScore, o.Top, nil)
	hits := make([]Hit, 0, len(ms))
	for _, pm := range ms {
		hits = append(hits, m.Hit(line, pm, o))
	}
	return hits
}

// MatchBands returns a line's confident matches (at the matcher's
// threshold) and, when it has none, its possible ones (PossibleMinScore up
// to the threshold), each best first. o.MinScore is ignored. A line that
// matches nothing costs what Match costs: the possible band is looked for
// with one search at the lower threshold.
func (m *Matcher) MatchBands(line string, o MatchOptions) (confident, possible []Hit) {
	th := m.set.MinScore()
	o.MinScore = PossibleMinScore
	hits := m.Match(line, o)
	for i, h := range hits {
		if h.Score < th {
			if i == 0 {
				return nil, hits
			}
			return hits[:i], nil
		}
	}
	return hits, nil
}

// Best appends to dst the best top matches of line (0: all), feedback
// applied, without explanations: the hot path of the webhook and of
// `incidex match -`. Asking for few lets the set stop scoring early.
func (m *Matcher) Best(line string, mode patterns.Mode, minScore float64, top int, dst []patterns.Match) []patterns.Match {
	start := len(dst)
	p := patterns.Prepare(line)
	dst, fails := m.set.MatchFailure(p, mode, minScore, top, dst)
	// Feedback only lowers scores: the top found stands unless feedback
	// touches one of its signatures, and then what they hid may come up.
	if top > 0 && len(m.verdicts) > 0 && m.anyVerdicts(dst[start:]) {
		dst = m.set.MatchTop(line, mode, minScore, 0, dst[:start])
	}
	dst = dst[:start+len(m.Adjust(line, dst[start:], minScore))]
	if m.text != nil && fails && !patterns.QuietLevel(p) && (len(dst) == start || dst[start].Score < m.set.MinScore()) {
		min := minScore
		if min <= 0 {
			min = m.set.MinScore()
		}
		dst = m.matchText(line, p, min, dst, start)
	}
	if top > 0 && len(dst)-start > top {
		dst = dst[:start+top]
	}
	return dst
}

// feedback is the factor feedback puts on signature sig for line.
func (m *Matcher) feedback(line string, sig int) float64 {
	v := m.verdicts[m.Signature(sig).ID]
	if v == nil {
		return 1
	}
	return feedbackFactor(v[LineTemplate(line)])
}

// anyVerdicts reports whether feedback names a signature of ms.
func (m *Matcher) anyVerdicts(ms []patterns.Match) bool {
	for _, pm := range ms {
		if m.verdicts[m.Signature(pm.Sig).ID] != nil {
			return true
		}
	}
	return false
}

// Hit turns a patterns match into a hit with its incident and captures.
func (m *Matcher) Hit(line string, pm patterns.Match, o MatchOptions) Hit {
	sig := m.Signature(pm.Sig)
	h := Hit{Incident: m.incidents[sig.IncidentID], Score: round3(pm.Score),
		Signature: SignatureRef{ID: sig.ID, Template: sig.Template, Kind: sig.Kind}}
	if m.text != nil && pm.Sig >= m.textBase {
		return m.textHit(line, pm, h, o)
	}
	ex := m.set.Explain(line, pm)
	h.Captures = ex.Captures
	if o.Explain {
		ex.Score = h.Score
		if m.equivOf != nil && m.equivOf[pm.Sig] > 0 {
			e := m.equivList[m.equivOf[pm.Sig]-1]
			if e.Own {
				ex.Notes = append(ex.Notes, fmt.Sprintf("matched through %q, the part of the signature's line that says the failure (%s, from incidex's table of equivalent wordings)", e.Wording, e.Family))
			} else {
				ex.Notes = append(ex.Notes, fmt.Sprintf("matched through %q, another wording of the failure the signature prints as %q (%s, from incidex's table of equivalent wordings)", e.Wording, e.Holds, e.Family))
			}
		} else if c := m.clauseOf(pm.Sig); c != "" {
			ex.Notes = append(ex.Notes, fmt.Sprintf("matched through the clause %q of the signature: the part of its line that names the error", c))
		}
		if net := m.verdicts[sig.ID][LineTemplate(line)]; net > 0 {
			ex.Notes = append(ex.Notes, fmt.Sprintf("down-weighted x%.2f: marked wrong for lines like this %d more time(s) than right (feedback)", feedbackFactor(net), net))
		}
		h.Explain = &ex
	}
	return h
}

// textHit completes a hit of the text tier: its evidence is the words the
// line shares with the write-up, not an alignment with a signature.
func (m *Matcher) textHit(line string, pm patterns.Match, h Hit, o MatchOptions) Hit {
	p := patterns.Prepare(line)
	h.Captures = patterns.Captures(p.Text, patterns.Tokenize(p.Text, nil))
	if !o.Explain {
		return h
	}
	terms := m.text.Terms(line, pm.Sig-m.textBase)
	var distinct, other []string
	for _, t := range terms {
		if t.Distinct {
			distinct = append(distinct, t.Word)
		} else {
			other = append(other, t.Word)
		}
	}
	ex := patterns.Explanation{Text: p.Text, Tokens: []patterns.ExplainedToken{}, Missing: []string{}, Score: h.Score,
		Direction: "writeup", Captures: h.Captures, Terms: terms}
	if tm, ok := m.text.MatchPrepared(p); ok {
		ex.LineCoverage = round3(tm.Coverage)
	}
	note := fmt.Sprintf("matched through the write-up's own text, not a signature: it has the line's distinctive words %s", strings.Join(distinct, ", "))
	if len(other) > 0 {
		note += fmt.Sprintf(" (and %s)", strings.Join(other, ", "))
	}
	ex.Notes = append(ex.Notes, note+fmt.Sprintf(", %.0f%% of the line's weight; words are weighed by how rare they are among the write-ups and in a generic corpus of log and error messages", 100*ex.LineCoverage))
	if net := m.verdicts[h.Signature.ID][LineTemplate(line)]; net > 0 {
		ex.Notes = append(ex.Notes, fmt.Sprintf("down-weighted x%.2f: marked wrong for lines like this %d more time(s) than right (feedback)", feedbackFactor(net), net))
	}
	h.Explain = &ex
	return h
}

// Adjust applies feedback to matches of line: a signature marked wrong for
// lines like this one has its score scaled down (see feedbackFactor);
// matches that fall below minScore (0: the default) are dropped and the
// rest re-sorted. With no feedback on record it returns ms unchanged.
func (m *Matcher) Adjust(line string, ms []patterns.Match, minScore float64) []patterns.Match {
	if len(m.verdicts) == 0 || len(ms) == 0 {
		return ms
	}
	if minScore <= 0 {
		minScore = m.set.MinScore()
	}
	tmpl := ""
	out := ms[:0]
	changed := false
	for _, pm := range ms {
		if v := m.verdicts[m.Signature(pm.Sig).ID]; v != nil {
			if tmpl == "" {
				tmpl = LineTemplate(line)
			}
			if f := feedbackFactor(v[tmpl]); f < 1 {
				pm.Score *= f
				changed = true
			}
		}
		if pm.Score >= minScore {
			out = append(out, pm)
		}
	}
	if changed {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	}
	return out
}

// FillRunbook returns the incident's runbook with placeholders filled from
// the captures and labels.
func FillRunbook(steps []Step, values ...map[string]string) []Step {
	merged := map[string]string{}
	for _, v := range values {
		for k, x := range v {
			if _, ok := merged[k]; !ok {
				merged[k] = x
			}
		}
	}
	out := make([]Step, len(steps))
	for i, s := range steps {
		s.Command = patterns.Fill(s.Command, merged)
		out[i] = s
	}
	return out
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

func (k *KB) incidentRefs(ctx context.Context) (map[string]*IncidentRef, error) {
	rows, err := k.db.QueryContext(ctx, "SELECT doc FROM incidents")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*IncidentRef{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		inc, err := decodeDoc(doc)
		if err != nil {
			return nil, err
		}
		out[inc.ID] = inc.Ref()
	}
	return out, rows.Err()
}

// Ref returns the part of the incident a hit carries.
func (inc *Incident) Ref() *IncidentRef {
	return &IncidentRef{
		ID: inc.ID, Title: inc.Title, Source: inc.Source, RootCause: inc.RootCause, CauseStatus: inc.CauseStatus,
		Fix: inc.Fix, Runbook: inc.Runbook, Overlaps: inc.Overlaps, TellApart: inc.TellApart,
		Likelihood: inc.Likelihood, pins: inc.Pins, words: patterns.TextHashes(inc.TierParts()...),
	}
}

// TierParts are the parts of the write-up the text tier reads: what it
// says about the failure (title, tags, services, summary, symptoms,
// impact, cause, timeline, lessons, the log lines pasted, and the sections
// of those kinds or of none), not how to fix it (fix, runbook, prevention:
// commands and remedies that other failures share).
func (inc *Incident) TierParts() []string {
	out := []string{inc.Title, inc.Summary, inc.Symptoms, inc.Impact, inc.RootCause, inc.CauseSource, inc.Timeline, inc.Lessons}
	out = append(out, inc.Tags...)
	out = append(out, inc.Services...)
	out = append(out, inc.Superseded...)
	for _, bl := range inc.Logs {
		if bl.Class == "log" {
			out = append(out, bl.Lines...)
		}
	}
	for _, s := range inc.Sections {
		switch s.Kind {
		case "", SectionSummary, SectionSymptoms, SectionImpact, SectionRootCause, SectionTimeline, SectionLessons:
			out = append(out, s.Heading, s.Text)
		}
	}
	return out
}

// SortHits orders hits best first, then by incident id.
func SortHits(hs []Hit) {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Score != hs[j].Score {
			return hs[i].Score > hs[j].Score
		}
		return hs[i].Incident.ID < hs[j].Incident.ID
	})
}
