package web

import (
	"time"

	"github.com/incidex/incidex/kb"
)

// Page is what the layout of every page needs.
type Page struct {
	Title string
	// Nav is the active navigation item: search, analyze, live, new.
	Nav string
	// CSRF is the visitor's anti-forgery token, put in every form that
	// changes something.
	CSRF string
	// CanWrite: the visitor may change the knowledge base (logged in as
	// admin, or no admin token is configured).
	CanWrite bool
	// LoggedIn: the visitor has a session.
	LoggedIn bool
	// AuthEnabled: an admin or read token is configured.
	AuthEnabled bool
	// Path is the current path and query, for the login link's return.
	Path string
}

// Facet is a filter value with the number of incidents that have it.
type Facet struct {
	Value string
	Count int
}

// SearchData is the search page: results of a query, or the list of
// incidents when the query is empty.
type SearchData struct {
	Page
	Query, Tag, Service string
	Org, Year           string
	Tags, Services      []Facet
	// Facets are the counts of tags, organisations and years over the
	// results (or the listed incidents), each value a link that filters.
	Facets           []FacetGroup
	Listing          bool // no query: the incident list
	Results          []SearchResult
	Total            int
	Took             time.Duration
	PageNum, Pages   int
	PrevURL, NextURL string
	Error            string
}

// SearchResult is one incident in the results.
type SearchResult struct {
	ID, Title, Date string
	Org             string
	Tags            []string
	RootCause       string
	CauseUnknown    bool
	CauseNotFound   bool // unknown because no cause is anywhere in the text
	// Fragments are bleve highlight fragments: plain text with kb.MarkStart
	// and kb.MarkEnd around the matched terms (the "mark" template func
	// escapes them).
	Fragments []Fragment
}

// FacetGroup is one facet of the search page: its name and its values.
type FacetGroup struct {
	Name   string
	Values []FacetLink
}

// FacetLink is a facet value with its count and the URL that filters by
// it (or, when Selected, removes the filter).
type FacetLink struct {
	Value    string
	Count    int
	URL      string
	Selected bool
}

// Fragment is a highlighted excerpt of one field.
type Fragment struct {
	Field, Text string
}

// IncidentData is the incident page.
type IncidentData struct {
	Page
	Incident    *kb.Incident
	Occurrences []kb.Occurrence
	Overlaps    []Link
}

// Link is an incident link.
type Link struct {
	ID, Title string
}

// AnalyzeData is the analyze page: a form, and after a post the matched
// lines grouped by incident and the unmatched error lines.
type AnalyzeData struct {
	Page
	Text      string // the input, echoed back when small
	Submitted bool
	Error     string
	MaxBytes  int
	MaxLines  int
	Lines     int // lines read
	Matched   int // lines that matched
	Groups    []AnalyzeGroup
	// Possible are the incidents that possibly explain lines no incident
	// explains confidently (the possible band): shown apart, never
	// counted as matched.
	Possible  []AnalyzeGroup
	Unmatched []AnalyzeLine // error lines no incident explains
	// UnmatchedMore counts unmatched error lines not shown.
	UnmatchedMore int
}

// AnalyzeGroup is an incident and the lines it explains.
type AnalyzeGroup struct {
	ID, Title    string
	RootCause    string
	CauseUnknown bool
	// CauseNotFound: unknown because the write-up gives no cause anywhere.
	CauseNotFound bool
	Count         int
	Best          float64
	Lines         []AnalyzeLine
	More          int // matched lines not shown
}

// AnalyzeLine is an input line; for a match, with the explanation.
type AnalyzeLine struct {
	N    int
	Text string
	// Count is how many times an unexplained line repeats (1: once).
	Count     int
	Score     float64
	SigID     string
	Template  string
	Direction string
	// Segments are the explained text, token by token.
	Segments []Segment
	Missing  []string
	// Notes say what changed the score (a negation, feedback, likelihood).
	Notes []string
	// Alternatives are the other incidents that explain the line, less well.
	Alternatives []Alternative
}

// Alternative is a runner-up incident of a line.
type Alternative struct {
	ID, Title string
	Score     float64
}

// Segment is a piece of an explained line. Class is "lit" (matched
// literally), "mask" (matched through a mask), "extra" (not in the
// signature) or "" (separators).
type Segment struct {
	Text, Class string
}

// LiveData is the live occurrences page.
type LiveData struct {
	Page
	Namespace, Node, Incident string
	Rows                      []LiveRow
	// StreamURL is the SSE stream with the same filters.
	StreamURL string
}

// LiveRow is an open occurrence.
type LiveRow struct {
	// ID is the occurrence an Acknowledge form posts to without JavaScript:
	// the first one not yet acknowledged.
	ID int64
	// Key is the incident and resource the row groups, for the page's script.
	Key                 string
	IncidentID, Title   string
	Labels              []Label
	Count               int64 // of all its signatures
	FirstSeen, LastSeen time.Time
	AckedBy             string
	Acked               bool // every occurrence acknowledged
	Sample              string
	// Signatures are the row's occurrences, one per signature.
	Signatures []LiveSignature
	// Unacked lists the occurrence ids the Acknowledge button acknowledges.
	Unacked string
}

// LiveSignature is one occurrence of a live row: a signature on the row's
// resource.
type LiveSignature struct {
	ID          int64
	SignatureID string
	Count       int64
	Acked       bool
}

// Label is a resource label.
type Label struct {
	Key, Value string
}

// EditData is the form that adds or edits a write-up.
type EditData struct {
	Page
	// ID is the incident being edited, "" for a new write-up.
	ID       string
	Action   string // form action
	Text     string
	Name     string // file name of an uploaded write-up
	Error    string
	Preview  []*kb.Incident
	MaxBytes int
}

// LoginData is the login form.
type LoginData struct {
	Page
	Next  string
	Error string
}

// ErrorData is an error page.
type ErrorData struct {
	Page
	Status    int
	Message   string
	RequestID string
}

// PatternsData is the emerging-patterns page: recurring error lines that
// match no incident, to promote or mute.
type PatternsData struct {
	Page
	// Enabled: the server mines patterns (incidex serve does).
	Enabled   bool
	Sort      string // count or growth
	ShowMuted bool
	Patterns  []PatternRow
	// Incidents are the promote targets.
	Incidents []Link
	Notice    string
	Error     string
}

// PatternRow is one emerging pattern.
type PatternRow struct {
	ID, Template        string
	Count, Recent       int64
	Growth              float64
	Growing             bool
	FirstSeen, LastSeen time.Time
	Samples             []string
	Labels              []Label
	Muted               bool
	Seeded              bool
	Promoted            string
}

// FeedbackData confirms a verdict recorded from a form posted without
// JavaScript.
type FeedbackData struct {
	Page
	Verdict, IncidentID, Line string
}

// DeadLettersData is the dead letters page: records messages no worker
// could process (scaled out on NATS JetStream).
type DeadLettersData struct {
	Page
	// Enabled is false when the server does not run on JetStream.
	Enabled bool
	Total   uint64
	Rows    []DeadLetterRow
}

// DeadLetterRow is one dead letter.
type DeadLetterRow struct {
	Seq     uint64
	Reason  string
	Time    time.Time
	Bytes   int
	Preview string
}
