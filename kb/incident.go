// Package kb is incidex's domain and its persistence: incidents and their
// signatures in SQLite (the source of truth), with a bleve index derived
// from it for full-text search.
package kb

import (
	"errors"
	"fmt"
	"time"
)

// Root-cause states. A write-up that says the cause is not known records
// that fact instead of having an empty field.
const (
	CauseKnown   = "known"
	CauseUnknown = "unknown"
)

// Where a root cause came from (Incident.CauseFrom).
const (
	CauseFromSection  = "section"  // a root-cause heading or field
	CauseFromSentence = "sentence" // a sentence of prose ("the root cause was …")
	CauseFromStated   = "stated"   // the write-up says the cause is not known
	CauseFromNone     = "none"     // no cause anywhere in the text
)

// Incident is one incident write-up, parsed.
type Incident struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Source       string   `json:"source"`
	Format       string   `json:"format"` // "markdown" or "library"
	Organisation string   `json:"organisation,omitempty"`
	Date         string   `json:"date,omitempty"` // YYYY-MM-DD
	Tags         []string `json:"tags"`
	Services     []string `json:"services"`
	Severity     string   `json:"severity,omitempty"`
	// Duration is how long the incident lasted ("2h15m"), from its start
	// and end times.
	Duration    string `json:"duration,omitempty"`
	Likelihood  string `json:"likelihood,omitempty"` // common, occasional, rare
	Summary     string `json:"summary,omitempty"`
	Symptoms    string `json:"symptoms,omitempty"`
	Impact      string `json:"impact,omitempty"`
	RootCause   string `json:"root_cause,omitempty"`
	CauseStatus string `json:"root_cause_status"` // CauseKnown or CauseUnknown
	// CauseFrom says how the root cause was found (CauseFrom* constants);
	// CauseSource is the sentence it was taken from, when that was prose.
	CauseFrom    string      `json:"root_cause_from,omitempty"`
	CauseSource  string      `json:"root_cause_source,omitempty"`
	Superseded   []string    `json:"superseded_root_causes"`
	Fix          string      `json:"fix,omitempty"`
	FixOptions   string      `json:"fix_options,omitempty"`
	Workaround   string      `json:"workaround,omitempty"`
	Monitoring   string      `json:"monitoring,omitempty"`
	Timeline     string      `json:"timeline,omitempty"`
	Lessons      string      `json:"lessons,omitempty"`
	Prevention   string      `json:"prevention,omitempty"`
	NextSteps    string      `json:"next_steps,omitempty"`
	Alternatives string      `json:"alternatives,omitempty"`
	Runbook      []Step      `json:"runbook"`
	References   []Ref       `json:"references"`
	Logs         []Block     `json:"logs"`
	Sections     []Section   `json:"sections"`
	Overlaps     []string    `json:"overlaps"`
	TellApart    string      `json:"tell_apart,omitempty"`
	Causes       []string    `json:"causes"`
	Pins         []string    `json:"pins"`
	Examples     []string    `json:"examples"`
	Counter      []string    `json:"counterexamples"`
	Signatures   []Signature `json:"signatures"`
	// Extra holds the write-up's front-matter fields that have no place
	// above, in their order, so nothing a write-up says is dropped.
	Extra []Field `json:"extra,omitempty"`
	// Body is the original text of the write-up (or of its library entry).
	Body string `json:"body"`
	// Hash identifies the content the incident was parsed from.
	Hash string `json:"hash"`
	// Warnings say what of the write-up was not kept: the caps on text and
	// signatures per write-up.
	Warnings  []string  `json:"warnings,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Section is a section of a write-up with the meaning its heading was given.
type Section struct {
	Kind    string `json:"kind"` // one of the Section* kinds below; "" when not recognised
	Heading string `json:"heading"`
	Level   int    `json:"level"`
	Text    string `json:"text"` // the section's own Markdown, without sub-sections
}

// Section kinds (Section.Kind): the meaning the write-up parser gave a
// heading, or a part found by its sentences in a write-up without headings.
const (
	SectionSummary      = "summary"
	SectionSymptoms     = "symptoms"
	SectionImpact       = "impact"
	SectionRootCause    = "root_cause"
	SectionFix          = "fix"
	SectionWorkaround   = "workaround"
	SectionRunbook      = "runbook"
	SectionMonitoring   = "monitoring"
	SectionTimeline     = "timeline"
	SectionLessons      = "lessons"
	SectionPrevention   = "prevention"
	SectionNextSteps    = "next_steps"
	SectionReferences   = "references"
	SectionAlternatives = "alternatives"
)

// Field is a key and its value as the write-up gave them.
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Step is a runbook command with its context.
type Step struct {
	Section string `json:"section"` // section kind
	Heading string `json:"heading"` // nearest heading
	Comment string `json:"comment,omitempty"`
	Command string `json:"command"`
}

// Ref is a reference: a link or a named document.
type Ref struct {
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
}

// Block is a code block kept with its section.
type Block struct {
	Section string   `json:"section"`
	Heading string   `json:"heading"`
	Lang    string   `json:"lang,omitempty"`
	Class   string   `json:"class"` // "log", "commands" or "config"
	Lines   []string `json:"lines"`
}

// Signature kinds: where a signature came from.
const (
	SigCode     = "code"     // a log line in a code block
	SigEvent    = "event"    // a Kubernetes event line
	SigQuote    = "quote"    // quoted error text in prose
	SigCurated  = "curated"  // declared in front matter
	SigPromoted = "promoted" // promoted from an emerging pattern
	// SigText is the kind of the text tier's pseudo-signatures: a match
	// through the write-up's own words (see Matcher), never stored.
	SigText = "writeup-text"
)

// Signature is a log signature that points at an incident.
type Signature struct {
	ID         string `json:"id"`
	IncidentID string `json:"incident_id"`
	Kind       string `json:"kind"`
	// Text is the example line (or the template source when IsTemplate).
	Text       string `json:"text"`
	Template   string `json:"template"`
	IsTemplate bool   `json:"is_template"`
	Section    string `json:"section,omitempty"`
}

// Summary is the part of an incident that lists show.
type Summary struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Date        string   `json:"date,omitempty"`
	Org         string   `json:"organisation,omitempty"`
	Tags        []string `json:"tags"`
	Services    []string `json:"services"`
	RootCause   string   `json:"root_cause,omitempty"`
	CauseStatus string   `json:"root_cause_status"`
	CauseFrom   string   `json:"root_cause_from,omitempty"`
	Source      string   `json:"source"`
	Signatures  int      `json:"signatures"`
}

// Errors returned by kb.
var (
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrIndexLocked = errors.New("search index is locked by another incidex process")
)

// ValidationError reports a field that is not acceptable.
type ValidationError struct {
	Field string
	Msg   string
}

func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Msg) }

// Validate checks the fields every stored incident needs.
func (inc *Incident) Validate() error {
	switch {
	case inc.ID == "":
		return &ValidationError{Field: "id", Msg: "is empty"}
	case len(inc.ID) > 200:
		return &ValidationError{Field: "id", Msg: "is longer than 200 bytes"}
	case inc.Title == "":
		return &ValidationError{Field: "title", Msg: "is empty"}
	case inc.CauseStatus != CauseKnown && inc.CauseStatus != CauseUnknown:
		return &ValidationError{Field: "root_cause_status", Msg: fmt.Sprintf("is %q, want known or unknown", inc.CauseStatus)}
	}
	return nil
}
