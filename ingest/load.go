package ingest

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
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := writeBatch(ctx, store, pending, pendingPaths, rep)
		pending, pendingPaths = pending[:0], pendingPaths[:0]
		return err
	}
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			return err
		}
		w, skip, err := prepare(ctx, store, it, opts)
		switch {
		case err != nil:
			rep.Failed = append(rep.Failed, err)
		case skip:
			rep.Unchanged++
		default:
			for _, inc := range w.Incidents {
				for _, m := range inc.Warnings {
					rep.Warnings = append(rep.Warnings, it.path+": "+m)
				}
			}
			pending = append(pending, w)
			pendingPaths = append(pendingPaths, it.path)
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

func prepare(ctx context.Context, store Store, it loadItem, opts LoadOptions) (kb.Write, bool, error) {
	if err := CheckText(it.data, opts.MaxBytes); err != nil {
		return kb.Write{}, false, &FileError{Path: it.path, Err: err}
	}
	hash := contentHash(it.data)
	if !opts.Force {
		prev, err := store.SourceHash(ctx, it.path)
		if err != nil {
			return kb.Write{}, false, err
		}
		if prev == hash {
			return kb.Write{}, true, nil
		}
	}
	incs, err := ParseWriteup(it.path, it.data)
	if err != nil {
		return kb.Write{}, false, &FileError{Path: it.path, Err: err}
	}
	return kb.Write{Source: kb.Source{Path: it.path, Hash: hash}, Incidents: incs}, false, nil
}

// writeBatch writes a batch in one transaction; when that fails because of
// one file's content, the files are written one by one so only the bad one
// is reported.
func writeBatch(ctx context.Context, store Store, ws []kb.Write, paths []string, rep *Report) error {
	err := store.Write(ctx, ws...)
	if err == nil {
		for _, w := range ws {
			for _, inc := range w.Incidents {
				rep.Incidents = append(rep.Incidents, inc.ID)
			}
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
		if err := writeBatch(ctx, store, ws[i:i+1], paths[i:i+1], rep); err != nil {
			return err
		}
	}
	return nil
}

func isContentError(err error) bool {
	var ve *kb.ValidationError
	return errors.Is(err, kb.ErrConflict) || errors.As(err, &ve)
}
