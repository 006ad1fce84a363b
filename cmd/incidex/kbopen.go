package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/starter"
)

// Index needs of a command.
type indexNeed int

const (
	indexNone     indexNeed = iota // SQLite only
	indexOptional                  // use the index when no other process holds it
	indexRequired                  // fail when another process holds it
)

// openKB opens the knowledge base in cfg.DataDir. A data directory without
// a database is new: it gets the starter knowledge base unless NoStarter.
func openKB(ctx context.Context, e *env, cfg *Config, need indexNeed) (*kb.KB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &exitErr{code: exitUsage, err: err}
	}
	_, statErr := os.Stat(filepath.Join(cfg.DataDir, kb.DBFile))
	fresh := errors.Is(statErr, os.ErrNotExist)
	k, err := kb.Open(ctx, kb.Options{
		Dir: cfg.DataDir, Logger: cfg.logger(e),
		WithoutIndex: need == indexNone && !fresh, IndexOptional: need != indexRequired,
	})
	if errors.Is(err, kb.ErrIndexLocked) {
		return nil, fmt.Errorf("%w (an incidex serve is using %s: stop it, or pass --server to use its API)", err, cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	if fresh && !cfg.NoStarter {
		rep, err := ingest.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, ingest.LoadOptions{})
		if err == nil {
			err = errors.Join(rep.Failed...)
		}
		if err != nil {
			_ = k.Close()
			return nil, fmt.Errorf("load starter knowledge base: %w", err)
		}
		fmt.Fprintf(e.stderr, "incidex: created %s with the starter knowledge base (%d incidents)\n", cfg.DataDir, len(rep.Incidents))
	}
	return k, nil
}
