package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/incidex/incidex/ingest/writeup"
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
	if err := checkDataDir(cfg.DataDir, true); err != nil {
		return nil, err
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
		rep, err := writeup.LoadFS(ctx, k, starter.FS(), starter.SourcePrefix, writeup.LoadOptions{})
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

// openKBRead opens the knowledge base for a command that only reads
// (match, search, show, list, check). On a data directory this process can
// write, that is openKB (which also repairs the index); on one it cannot (a
// read-only mount, another user's directory), the database and index are
// opened read-only.
func openKBRead(ctx context.Context, e *env, cfg *Config, need indexNeed) (*kb.KB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &exitErr{code: exitUsage, err: err}
	}
	if err := checkDataDir(cfg.DataDir, false); err != nil {
		return nil, err
	}
	db := filepath.Join(cfg.DataDir, kb.DBFile)
	if _, err := os.Stat(db); err != nil || (access(cfg.DataDir, accessWrite) == nil && access(db, accessWrite) == nil) {
		return openKB(ctx, e, cfg, need)
	}
	return kb.Open(ctx, kb.Options{Dir: cfg.DataDir, Logger: cfg.logger(e), ReadOnly: true, WithoutIndex: need == indexNone})
}

// checkDataDir says plainly what stops this process from using the data
// directory (creating it when missing and write is set): "data directory
// /x: permission denied (running as uid 65534)", rather than SQLite's
// "unable to open database file (14)".
func checkDataDir(dir string, write bool) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && write:
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return dirError("data directory "+dir, err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil // openKB creates it
	case err != nil:
		return dirError("data directory "+dir, err)
	case !st.IsDir():
		return fmt.Errorf("data directory %s: not a directory", dir)
	}
	mode := uint32(accessDir)
	if write {
		mode |= accessWrite
	}
	if err := access(dir, mode); err != nil {
		return dirError("data directory "+dir, err)
	}
	db := filepath.Join(dir, kb.DBFile)
	if _, err := os.Stat(db); err != nil {
		return nil // a new data directory
	}
	mode = accessRead
	if write {
		mode |= accessWrite
	}
	if err := access(db, mode); err != nil {
		return dirError("database "+db, err)
	}
	return nil
}

func dirError(what string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied (running as uid %d)", what, os.Geteuid())
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%s: read-only file system", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}
