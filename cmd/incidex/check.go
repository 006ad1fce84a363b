package main

import (
	"context"
	"fmt"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
)

func runCheck(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "check", "[PATH...]")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	strict := fs.Bool("strict", false, "treat warnings (write-ups without signatures) as failures")
	if err := parse(fs, args); err != nil {
		return err
	}
	var incs []*kb.Incident
	if fs.NArg() > 0 {
		incs, err = parsePaths(fs.Args())
	} else {
		incs, err = loadAll(ctx, e, &cfg)
	}
	if err != nil {
		return err
	}
	rep, err := kb.Check(incs)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		printCheck(e, rep, *strict)
	}
	if !passed(rep, *strict) {
		return &exitErr{code: exitNone}
	}
	return nil
}

// parsePaths parses write-up files without storing them: a team's incident
// repository can run the check in its CI.
func parsePaths(paths []string) ([]*kb.Incident, error) {
	files, errs := writeup.Collect(paths)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var out []*kb.Incident
	for _, f := range files {
		data, err := writeup.ReadWriteup(f, 0)
		if err != nil {
			return nil, err
		}
		incs, err := writeup.ParseWriteup(f, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, incs...)
	}
	return out, nil
}

func loadAll(ctx context.Context, e *env, cfg *Config) ([]*kb.Incident, error) {
	k, err := openKBRead(ctx, e, cfg, indexNone)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	list, err := k.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]*kb.Incident, 0, len(list))
	for _, s := range list {
		inc, err := k.Get(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, inc)
	}
	return out, nil
}

// passed is the check's verdict: no failures, and with strict no warnings.
func passed(r *kb.CheckReport, strict bool) bool {
	return r.OK() && (!strict || len(r.Warnings) == 0)
}

// printCheck prints the problems, then a last line whose verdict agrees
// with the exit status.
func printCheck(e *env, r *kb.CheckReport, strict bool) {
	for _, p := range r.Failures {
		fmt.Fprintf(e.stdout, "FAIL %-14s %s", p.Kind, p.Incident)
		if p.Signature != "" {
			fmt.Fprintf(e.stdout, " %s", p.Signature)
		}
		fmt.Fprintf(e.stdout, ": %s\n", p.Msg)
		if p.Line != "" {
			fmt.Fprintf(e.stdout, "     %s\n", clip(stripControls2(p.Line), 200))
		}
	}
	for _, p := range r.Warnings {
		fmt.Fprintf(e.stdout, "WARN %-14s %s: %s\n", p.Kind, p.Incident, p.Msg)
	}
	if len(r.Secondary) > 0 {
		fmt.Fprintf(e.stdout, "note: %d examples also match another incident at a clearly lower score (listed under secondary in --json)\n", len(r.Secondary))
	}
	status := "ok"
	switch {
	case !r.OK():
		status = "FAILED"
	case !passed(r, strict):
		status = "FAILED (--strict: warnings fail)"
	}
	fmt.Fprintf(e.stdout, "%s: %d incidents, %d signatures, %d example lines; %d failures, %d warnings\n",
		status, r.Incidents, r.Signatures, r.Examples, len(r.Failures), len(r.Warnings))
}
