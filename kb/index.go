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

// indexVersion changes whenever the mapping does; an index built with
// another version is rebuilt at Open.
const indexVersion = "5"

// document is what the index holds for an incident. Every field is derived
// from the incident in SQLite. Body holds the whole write-up; title, root
// cause and signatures are indexed again on their own so they can be boosted.
type document struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	RootCause  string   `json:"root_cause"`
	Signatures string   `json:"signatures"`
	Body       string   `json:"body"`
	Tags       []string `json:"tags"`
	Services   []string `json:"services"`
	Org        string   `json:"organisation"`
	Date       string   `json:"date"`
}

// textFields are the analysed fields with their query boosts; highlighted
// ones keep term vectors.
var textFields = []struct {
	name      string
	boost     float64
	highlight bool
}{
	{"title", 4, false}, {"root_cause", 2.5, true}, {"signatures", 2, true}, {"body", 1, true},
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
	for _, name := range []string{"tags", "services", "organisation", "date"} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = keyword.Name
		fm.Store = true
		fm.IncludeInAll = false
		doc.AddFieldMappingsAt(name, fm)
	}
	im.DefaultMapping = doc
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
	if inc.CauseStatus == CauseUnknown {
		rc = "root cause not stated"
	}
	return document{
		ID: inc.ID, Title: stripMarks(inc.Title), RootCause: stripMarks(rc), Signatures: stripMarks(strings.Join(sigs, "\n")),
		Body: stripMarks(inc.Body), Tags: inc.Tags, Services: inc.Services, Org: inc.Organisation, Date: inc.Date,
	}
}
