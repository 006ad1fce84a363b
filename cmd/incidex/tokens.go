package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tokensFile holds the tokens serve generated in the data directory.
const tokensFile = "tokens.json"

type storedTokens struct {
	Ingest string `json:"ingest"`
	Admin  string `json:"admin"`
}

// fillTokens gives serve --generate-tokens (the container image's default)
// the ingest and admin tokens it was not given: those stored in the data
// directory, or on the first start new random ones, stored there (0600) and
// printed once.
func fillTokens(e *env, cfg *Config) error {
	if !cfg.GenerateTokens || (cfg.IngestToken != "" && cfg.AdminToken != "") {
		return nil
	}
	if err := checkDataDir(cfg.DataDir, true); err != nil {
		return err
	}
	p := filepath.Join(cfg.DataDir, tokensFile)
	var t storedTokens
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &t); err != nil || t.Ingest == "" || t.Admin == "" {
			return fmt.Errorf("%s: not the tokens incidex wrote (delete it to generate new ones)", p)
		}
		fmt.Fprintf(e.stderr, "incidex: using the tokens generated at the first start, in %s\n", p)
	case errors.Is(err, fs.ErrNotExist):
		if t, err = newTokens(p); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "incidex: generated tokens (printed this once; kept in %s):\n  INCIDEX_INGEST_TOKEN=%s\n  INCIDEX_ADMIN_TOKEN=%s\n", p, t.Ingest, t.Admin)
	default:
		return dirError(p, err)
	}
	if cfg.IngestToken == "" {
		cfg.IngestToken = t.Ingest
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = t.Admin
	}
	return nil
}

func newTokens(path string) (storedTokens, error) {
	t := storedTokens{Ingest: randomToken(), Admin: randomToken()}
	b, _ := json.Marshal(t)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return t, dirError(path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return t, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return t, fmt.Errorf("write %s: %w", path, err)
	}
	return t, nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
