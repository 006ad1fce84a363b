package writeup

import (
	"context"
	"errors"
	"io/fs"
	"sort"

	"github.com/incidex/incidex/kb"
)

// Store is where parsed write-ups go; *kb.KB implements it.
type Store interface {
	SourceHash(ctx context.Context, path string) (string, error)
	Write(ctx context.Context, ws ...kb.Write) error
}

// Report says what an ingest did.
type Report struct {
	Files     int      `json:"files"`
	Incidents []string `json:"incidents"` // ids written
	Unchanged int      `json:"unchanged"` // files skipped because their content hash is unchanged
	Failed    []error  `json:"-"`         // one *FileError per bad file
	// Warnings say what the caps per write-up left out: "path: what".
	Warnings []string `json:"warnings"`
	// PerFile says what each file written gave, in order.
	PerFile []FileReport `json:"per_file"`
}

// FileReport is what one write-up file gave: its incidents with their
// signature counts and how their root causes were found, and warnings.
type FileReport struct {
	Path      string           `json:"path"`
	Incidents []IncidentReport `json:"incidents"`
	Warnings  []string         `json:"warnings"`
}

// IncidentReport is one incident of a FileReport.
type IncidentReport struct {
	ID         string `json:"id"`
	Signatures int    `json:"signatures"`
	// Cause is how the root cause was found: "section", "sentence",
	// "stated" (the write-up says it is not known) or "none".
	Cause string `json:"cause"`
}

func fileReport(path string, incs []*kb.Incident, warnings []string) FileReport {
	fr := FileReport{Path: path, Incidents: make([]IncidentReport, 0, len(incs)), Warnings: warnings}
	for _, inc := range incs {
		cause := inc.CauseFrom
		if cause == "" {
			cause = kb.CauseFromSection
			if inc.CauseStatus == kb.CauseUnknown {
				cause = kb.CauseFromStated
			}
		}
		fr.Incidents = append(fr.Incidents, IncidentReport{ID: inc.ID, Signatures: len(inc.Signatures), Cause: cause})
		if len(inc.Signatures) == 0 {
			fr.Warnings = append(fr.Warnings, "incident "+inc.ID+": no log signature found, so log lines cannot match it")
		}
	}
	if fr.Warnings == nil {
		fr.Warnings = []string{}
	}
	return fr
}

// LoadOptions tune Load.
type LoadOptions struct {
	MaxBytes int64 // per file; 0 → MaxWriteupBytes
	Batch    int   // files per transaction; 0 → 200
	// Force re-ingests files whose content hash is unchanged.
	Force bool
	// Progress, when set, is called after each batch.
	Progress func(done, total int)
}

type loadItem struct {
	path string
	data []byte
}

// prepared is a file parsed and ready to write.
type prepared struct {
	write    kb.Write
	warnings []string
}

// Load parses the files and writes them to store in batches. A bad file is
// reported in Report.Failed and the others are still ingested; nothing of a
// bad file is written. An unchanged file (same content hash as when it was
// last ingested) is skipped.
func Load(ctx context.Context, store Store, files []string, opts LoadOptions) (Report, error) {
	items := make([]loadItem, 0, len(files))
	var rep Report
	for _, f := range files {
		data, err := ReadWriteup(f, opts.MaxBytes)
		if err != nil {
			rep.Failed = append(rep.Failed, err)
			continue
		}
		items = append(items, loadItem{path: f, data: data})
	}
	rep.Files = len(files)
	return rep, loadItems(ctx, store, items, opts, &rep)
}

// LoadFS ingests every file at the root of fsys, with sources named
// prefix+name (the embedded starter knowledge base).
func LoadFS(ctx context.Context, store Store, fsys fs.FS, prefix string, opts LoadOptions) (Report, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return Report{}, err
	}
	sort.Strings(names)
	items := make([]loadItem, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return Report{}, err
		}
		items = append(items, loadItem{path: prefix + n, data: b})
	}
	rep := Report{Files: len(items)}
	return rep, loadItems(ctx, store, items, opts, &rep)
}

func loadItems(ctx context.Context, store Store, items []loadItem, opts LoadOptions, rep *Report) error {
	batch := opts.Batch
	if batch <= 0 {
		batch = 200
	}
	var pending []kb.Write
	var pendingPaths []string
	var pendingWarn [][]string
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := writeBatch(ctx, store, pending, pendingPaths, pendingWarn, rep)
		pending, pendingPaths, pendingWarn = pending[:0], pendingPaths[:0], pendingWarn[:0]
		return err
	}
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, skip, err := prepare(ctx, store, it, opts)
		switch {
		case err != nil:
			rep.Failed = append(rep.Failed, err)
		case skip:
			rep.Unchanged++
		default:
			for _, inc := range p.write.Incidents {
				for _, m := range inc.Warnings {
					rep.Warnings = append(rep.Warnings, it.path+": "+m)
				}
			}
			pending = append(pending, p.write)
			pendingPaths = append(pendingPaths, it.path)
			pendingWarn = append(pendingWarn, p.warnings)
		}
		if len(pending) >= batch {
			if err := flush(); err != nil {
				return err
			}
			if opts.Progress != nil {
				opts.Progress(i+1, len(items))
			}
		}
	}
	return flush()
}

func prepare(ctx context.Context, store Store, it loadItem, opts LoadOptions) (prepared, bool, error) {
	if err := CheckText(it.data, opts.MaxBytes); err != nil {
		return prepared{}, false, &FileError{Path: it.path, Err: err}
	}
	hash := contentHash(it.data)
	if !opts.Force {
		prev, err := store.SourceHash(ctx, it.path)
		if err != nil {
			return prepared{}, false, err
		}
		if prev == hash {
			return prepared{}, true, nil
		}
	}
	p, err := ParseFile(it.path, it.data)
	if err != nil {
		return prepared{}, false, &FileError{Path: it.path, Err: err}
	}
	w := kb.Write{Source: kb.Source{Path: it.path, Hash: hash}, Incidents: p.Incidents}
	return prepared{write: w, warnings: p.Warnings}, false, nil
}

// writeBatch writes a batch in one transaction; when that fails because of
// one file's content, the files are written one by one so only the bad one
// is reported.
func writeBatch(ctx context.Context, store Store, ws []kb.Write, paths []string, warns [][]string, rep *Report) error {
	err := store.Write(ctx, ws...)
	if err == nil {
		for i, w := range ws {
			for _, inc := range w.Incidents {
				rep.Incidents = append(rep.Incidents, inc.ID)
			}
			rep.PerFile = append(rep.PerFile, fileReport(paths[i], w.Incidents, warns[i]))
		}
		return nil
	}
	if !isContentError(err) || len(ws) == 1 {
		if isContentError(err) {
			rep.Failed = append(rep.Failed, &FileError{Path: paths[0], Err: err})
			return nil
		}
		return err
	}
	for i := range ws {
		if err := writeBatch(ctx, store, ws[i:i+1], paths[i:i+1], warns[i:i+1], rep); err != nil {
			return err
		}
	}
	return nil
}

func isContentError(err error) bool {
	var ve *kb.ValidationError
	return errors.Is(err, kb.ErrConflict) || errors.As(err, &ve)
}
