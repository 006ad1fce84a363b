package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/incidex/incidex/kb"
)

func runSearch(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "search", "QUERY")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	syntax := fs.Bool("syntax", false, "QUERY is bleve query-string syntax (+field:term, \"phrase\", -term)")
	size := fs.Int("n", 10, "number of results")
	fs.StringVar(&cfg.Server, "server", cfg.Server, "URL of a running incidex serve to ask instead of the local index (env INCIDEX_SERVER)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	color := cfg.colorOn(e, e.stdout)
	q := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(q) == "" {
		return usageErr("no query given: incidex search QUERY")
	}
	req := kb.SearchRequest{Query: q, Syntax: *syntax, Size: *size}
	var res *kb.SearchResult
	if cfg.Server != "" {
		res, err = newClient(cfg).search(ctx, req)
	} else {
		res, err = localSearch(ctx, e, &cfg, req)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, res)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(e.stdout, "no incidents found")
		return &exitErr{code: exitNone}
	}
	for i, h := range res.Hits {
		fmt.Fprintf(e.stdout, "%d. %s  %s  (score %.2f)\n", i+1, h.ID, h.Title, h.Score)
		if h.RootCause != "" {
			fmt.Fprintf(e.stdout, "   cause: %s\n", clip(oneLine(plainMarkdown(h.RootCause)), 140))
		}
		for _, f := range bestFragments(h.Fragments, 2) {
			fmt.Fprintf(e.stdout, "   %s\n", terminalMarks(oneLine(f), color))
		}
	}
	return nil
}

func localSearch(ctx context.Context, e *env, cfg *Config, req kb.SearchRequest) (*kb.SearchResult, error) {
	k, err := openKBRead(ctx, e, cfg, indexOptional)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	if k.IndexLocked() {
		if url := discoverServer(cfg.DataDir); url != "" {
			cfg.Server = url
			return newClient(*cfg).search(ctx, req)
		}
		return nil, fmt.Errorf("%w: pass --server URL of the incidex serve that holds it", kb.ErrIndexLocked)
	}
	if !k.HasIndex() {
		return nil, fmt.Errorf("no search index readable in %s (read-only): run incidex reindex there with write access, or pass --server", cfg.DataDir)
	}
	return k.Search(ctx, req)
}

// bestFragments picks up to n fragments, preferring signatures and root cause.
func bestFragments(fr map[string][]string, n int) []string {
	var out []string
	for _, f := range []string{"signatures", "root_cause", "symptoms", "body"} {
		for _, s := range fr[f] {
			if len(out) < n {
				out = append(out, s)
			}
		}
	}
	return out
}

// terminalMarks turns highlight markers into bold when color is on, and
// drops them otherwise (a pipe, a file, NO_COLOR).
func terminalMarks(s string, color bool) string {
	if !color {
		return strings.NewReplacer(kb.MarkStart, "", kb.MarkEnd, "").Replace(stripControls(s))
	}
	return boldMarks.Replace(stripControls(s))
}

var boldMarks = strings.NewReplacer(kb.MarkStart, "\x1b[1m", kb.MarkEnd, "\x1b[0m")

func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\x02' && r != '\x03') || r == 0x7f {
			return -1
		}
		return r
	}, s)
}
