package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

func runList(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "list", "")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	tag := fs.String("tag", "", "only incidents with this tag")
	if err := parse(fs, args); err != nil {
		return err
	}
	k, err := openKBRead(ctx, e, &cfg, indexNone)
	if err != nil {
		return err
	}
	defer k.Close()
	list, err := k.List(ctx, *tag)
	if err != nil {
		return err
	}
	if *asJSON {
		if list == nil {
			return writeJSON(e.stdout, []any{})
		}
		return writeJSON(e.stdout, list)
	}
	for _, s := range list {
		cause := clip(oneLine(plainMarkdown(s.RootCause)), 70)
		if s.CauseStatus == "unknown" {
			cause = "(root cause not stated)"
		}
		fmt.Fprintf(e.stdout, "%-40s %-60s %s\n", s.ID, clip(s.Title, 60), cause)
	}
	fmt.Fprintf(e.stdout, "%d incidents\n", len(list))
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
