package kb

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/mapping"
	bolterrors "go.etcd.io/bbolt/errors"
)

// scoringModel is BM25 (bleve's index.BM25Scoring): with many short
// fields, its saturation of term frequency and length normalisation rank
// a write-up about the query's words above a long one that repeats them.
const scoringModel = "bm25"

// indexVersion changes whenever the mapping does; an index built with
// another version is rebuilt at Open.
const indexVersion = "6"

// document is what the index holds for an incident. Every field is derived
// from the incident in SQLite. Body holds the write-up without its front
// matter; title, summary, root cause, signatures and the mapped fields
// (tags, organisation and services, together as meta) are indexed again on
// their own so they can be boosted. tags, services, organisation and year are also kept as
// keywords, for filters and facets.
type document struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Summary    string `json:"summary"`
	RootCause  string `json:"root_cause"`
	Signatures string `json:"signatures"`
	Body       string `json:"body"`
	// Meta is the tags, organisation and services as text, one field so
	// that a query costs one more term lookup per word, not three.
	Meta     string   `json:"meta"`
	Tags     []string `json:"tags"`
	Services []string `json:"services"`
	Org      string   `json:"organisation"`
	Date     string   `json:"date"`
	Year     string   `json:"year"`
}

// textFields are the analysed fields with their query boosts; highlighted
// ones keep term vectors. The boosts were tuned with bench/collections on
// the write-ups under ingest/writeup/testdata/collection: the mapped fields are few
// words each, chosen by the author to say what the incident is about, so a
// query word found there weighs more than the same word in the body.
var textFields = []struct {
	name      string
	boost     float64
	highlight bool
}{
	{"title", 4, false}, {"meta", 3, false}, {"summary", 2, true}, {"root_cause", 2.5, true}, {"signatures", 2, true}, {"body", 1, true},
}

func newMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	err := im.AddCustomAnalyzer(logAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     logTokenizerName,
		"token_filters": []any{lowercase.Name},
	})
	if err != nil {
		return nil, err
	}
	err = im.AddCustomAnalyzer(queryAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     queryTokenizerName,
		"token_filters": []any{lowercase.Name, en.StopName},
	})
	if err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = logAnalyzerName
	doc := bleve.NewDocumentMapping()
	for _, f := range textFields {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = logAnalyzerName
		fm.Store = f.name != "id"
		fm.IncludeTermVectors = f.highlight
		fm.IncludeInAll = false
		doc.AddFieldMappingsAt(f.name, fm)
	}
	for _, name := range []string{"tags", "services", "organisation", "date", "year"} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = keyword.Name
		fm.Store = true
		fm.IncludeInAll = false
		doc.AddFieldMappingsAt(name, fm)
	}
	im.DefaultMapping = doc
	im.ScoringModel = scoringModel
	return im, nil
}

// openIndex opens the index at dir, creating it (empty) when it does not
// exist or was built with another mapping version. fresh reports that the
// index is new and must be filled from SQLite.
func openIndex(dir string, lockWait string) (idx bleve.Index, fresh bool, err error) {
	// unsafe_batch: Batch returns once the batch is searchable, without
	// waiting for it to be persisted; index_pending rows cover the gap (see
	// indexChunk).
	cfg := map[string]any{"bolt_timeout": lockWait, "unsafe_batch": true}
	idx, err = bleve.OpenUsing(dir, cfg)
	switch {
	case err == nil:
		v, verr := idx.GetInternal([]byte("incidex_version"))
		if verr == nil && string(v) == indexVersion {
			return idx, false, nil
		}
		_ = idx.Close()
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, false, fmt.Errorf("open index %s: %w", dir, ErrIndexLocked)
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist), errors.Is(err, bleve.ErrorIndexMetaMissing):
	default:
		// A corrupt index is rebuilt from SQLite, which is the source of truth.
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, false, fmt.Errorf("remove index %s: %w", dir, err)
	}
	m, err := newMapping()
	if err != nil {
		return nil, false, fmt.Errorf("index mapping: %w", err)
	}
	idx, err = bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("create index %s: %w", dir, err)
	}
	if err := idx.SetInternal([]byte("incidex_version"), []byte(indexVersion)); err != nil {
		_ = idx.Close()
		return nil, false, fmt.Errorf("create index %s: %w", dir, err)
	}
	return idx, true, nil
}

func toDocument(inc *Incident) document {
	var sigs []string
	for _, s := range inc.Signatures {
		sigs = append(sigs, s.Text)
	}
	for _, l := range inc.Logs {
		sigs = append(sigs, l.Lines...)
	}
	rc := inc.RootCause
	if inc.CauseStatus == CauseUnknown && inc.CauseFrom != CauseFromNone {
		rc = "root cause not stated"
	}
	year := ""
	if len(inc.Date) >= 4 {
		year = inc.Date[:4]
	}
	return document{
		ID: inc.ID, Title: stripMarks(inc.Title), Summary: stripMarks(inc.Summary), RootCause: stripMarks(rc),
		Signatures: stripMarks(strings.Join(sigs, "\n")), Body: stripMarks(WithoutFrontMatter(inc.Body)),
		Meta: stripMarks(strings.Join(append(append(append([]string{}, inc.Tags...), inc.Organisation), inc.Services...), "\n")),
		Tags: inc.Tags, Services: inc.Services, Org: inc.Organisation, Date: inc.Date, Year: year,
	}
}

// WithoutFrontMatter drops a leading "---" YAML block closed by "---" or
// "...": its fields are indexed on their own, a search fragment must not
// show raw YAML, and the incident page renders the body after it. Without
// a closing line the text is not front matter and stays.
func WithoutFrontMatter(s string) string {
	if !strings.HasPrefix(s, "---\n") && !strings.HasPrefix(s, "---\r\n") {
		return s
	}
	i := strings.IndexByte(s, '\n') + 1
	for i < len(s) {
		end := strings.IndexByte(s[i:], '\n')
		line, next := s[i:], len(s)
		if end >= 0 {
			line, next = s[i:i+end], i+end+1
		}
		if t := strings.TrimRight(line, " \t\r"); t == "---" || t == "..." {
			return s[next:]
		}
		i = next
	}
	return s
}
