package main

import (
	"context"
	"fmt"
	"runtime"
)

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "incidex %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

func runConfig(_ context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "config", "")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fields := cfg.redacted().fields()
	if *asJSON {
		return writeJSON(e.stdout, fields)
	}
	for _, f := range fields {
		fmt.Fprintf(e.stdout, "%-12s %v\n", f.Key, f.Value)
	}
	return nil
}
