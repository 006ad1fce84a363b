package main

import (
	"context"
	"fmt"
)

func runReindex(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "reindex", "")
	cfg.common(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	k, err := openKB(ctx, e, &cfg, indexRequired)
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.Reindex(ctx); err != nil {
		return err
	}
	n, err := k.Count(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "index rebuilt: %d incidents\n", n)
	return nil
}
