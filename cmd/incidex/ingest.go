package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
)

func runIngest(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "ingest", "PATH...")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	force := fs.Bool("force", false, "re-ingest files whose content is unchanged")
	maxBytes := fs.Int64("max-bytes", writeup.MaxWriteupBytes, "size limit per write-up file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("no paths given: incidex ingest PATH... (files or directories of .md, .markdown, .txt, .html, .htm)")
	}
	files, errs := writeup.Collect(fs.Args())
	k, err := openKB(ctx, e, &cfg, indexOptional)
	if err != nil {
		return err
	}
	defer k.Close()
	rep, err := writeup.Load(ctx, k, files, writeup.LoadOptions{MaxBytes: *maxBytes, Force: *force})
	if err != nil {
		return err
	}
	rep.Failed = append(errs, rep.Failed...)
	if *asJSON {
		printIngestJSON(e, rep)
	} else {
		printPerFile(e, rep.PerFile)
		for _, f := range rep.Failed {
			fmt.Fprintf(e.stderr, "incidex ingest: %s\n", oneLine(f.Error()))
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(e.stderr, "incidex ingest: warning: %s\n", oneLine(w))
		}
		fmt.Fprintf(e.stdout, "ingested %d incidents from %d files (%d unchanged, %d failed)\n",
			len(rep.Incidents), rep.Files, rep.Unchanged, len(rep.Failed))
		if k.IndexLocked() {
			fmt.Fprintln(e.stdout, "the running incidex serve indexes them within a few seconds")
		}
	}
	if len(rep.Failed) > 0 {
		return &exitErr{code: exitPartial}
	}
	return nil
}

// causeWords says in words how a root cause was found.
var causeWords = map[string]string{
	kb.CauseFromSection:  "root cause from a heading or field",
	kb.CauseFromSentence: "root cause from a sentence",
	kb.CauseFromStated:   "root cause stated as unknown",
	kb.CauseFromNone:     "no root cause found",
}

// printPerFile prints one line per incident written, and the file's
// warnings (a write-up with no signature, a front-matter field left out)
// on stderr.
func printPerFile(e *env, files []writeup.FileReport) {
	for _, f := range files {
		for _, inc := range f.Incidents {
			fmt.Fprintf(e.stdout, "%s: %s, %s, %s\n", oneLine(f.Path), oneLine(inc.ID), plural(inc.Signatures, "signature"), causeWords[inc.Cause])
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(e.stderr, "incidex ingest: warning: %s: %s\n", oneLine(f.Path), oneLine(w))
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func printIngestJSON(e *env, rep writeup.Report) {
	failed := make([]string, 0, len(rep.Failed))
	for _, f := range rep.Failed {
		failed = append(failed, oneLine(f.Error()))
	}
	out := struct {
		writeup.Report
		Failed []string `json:"failed"`
	}{rep, failed}
	if out.Incidents == nil {
		out.Incidents = []string{}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if out.PerFile == nil {
		out.PerFile = []writeup.FileReport{}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
