package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/incidex/incidex/patterns"
)

// mineLine is one input line's cluster in --json output.
type mineLine struct {
	Line     int    `json:"line"`
	Cluster  string `json:"cluster"`
	Template string `json:"template"`
}

// mineCluster is one cluster of the --json summary.
type mineCluster struct {
	Cluster  string `json:"cluster"`
	Template string `json:"template"`
	Size     int64  `json:"size"`
}

// runMine clusters the lines on stdin into templates. It needs no data
// directory: the miner lives for the one run.
func runMine(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mine", "-")
	asJSON := fs.Bool("json", false, `print JSON Lines: {"line","cluster","template"} per input line, then {"clusters":[...]}`)
	maxClusters := fs.Int("max-clusters", patterns.DefaultMaxClusters, "keep at most N clusters; the least recently used go first")
	final := fs.Bool("final", false, "print the lines after the whole input, each with the cluster it ended in (merges followed; keeps one entry per line until then)")
	window := fs.Int("window", defaultMineWindow, "hold up to N lines (or until the input pauses for a second), then print them with the clusters they are in by then, so that merges among them are followed; 0 prints each line as it arrives")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != "-") {
		return usageErr("mine reads lines on stdin: incidex mine [--json] -")
	}
	if *maxClusters < 1 {
		return usageErr("--max-clusters %d: want at least 1", *maxClusters)
	}
	if *window < 0 {
		return usageErr("--window %d: want 0 or more lines", *window)
	}
	if *final {
		*window = -1
	}
	m := patterns.NewMiner(patterns.MinerOptions{MaxClusters: *maxClusters})
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	if err := mineStream(ctx, e.stdin, w, m, *asJSON, *window); err != nil {
		_ = w.Flush()
		return err
	}
	if err := mineSummary(w, m, *asJSON); err != nil {
		return err
	}
	return w.Flush()
}

// defaultMineWindow is how many lines mine holds before printing them.
const defaultMineWindow = 10000

// mineIdle is how long the input may pause before held lines are printed
// (a live tail is not held back longer than this).
const mineIdle = time.Second

// mineStream prints each line with its cluster. Lines are held, up to
// window of them or until the input pauses for mineIdle, and printed with
// the cluster that holds each of them then: a group that a later line
// merged into a wider template is printed as one. window 0 prints each
// line as it arrives (a line a later one merged keeps the ID it was
// printed with); window -1 holds everything until the input ends. The
// summary shows the clusters as they ended.
func mineStream(ctx context.Context, r io.Reader, w io.Writer, m *patterns.Miner, asJSON bool, window int) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	print := func(n int, c patterns.Cluster) error {
		var err error
		if asJSON {
			err = enc.Encode(mineLine{Line: n, Cluster: c.ID, Template: c.Template})
		} else {
			_, err = fmt.Fprintf(w, "%d\t%s\t%s\n", n, c.ID, tsvField(c.Template))
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	var held []patterns.Cluster
	printed := 0 // lines printed so far
	flush := func() error {
		for i, c := range held {
			if now, ok := m.Resolve(c.ID); ok {
				c = now // else evicted: as it was
			}
			if err := print(printed+i+1, c); err != nil {
				return err
			}
		}
		printed += len(held)
		held = held[:0]
		if f, ok := w.(interface{ Flush() error }); ok {
			return f.Flush()
		}
		return nil
	}

	lines := make(chan string, 256)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxStreamLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	idle := time.NewTimer(mineIdle)
	defer idle.Stop()
	if window <= 0 {
		idle.Stop() // nothing is held (0), or everything is, to the end (-1)
	}
	n := 0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-idle.C: // the input paused: print what is held
			if err := flush(); err != nil {
				return err
			}
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("read stdin: line %d: %w", n+1, err)
				}
				return flush()
			}
			n++
			c, _ := m.Add(line)
			if window == 0 {
				if err := print(n, c); err != nil {
					return err
				}
				printed = n
				continue
			}
			held = append(held, patterns.Cluster{ID: c.ID, Template: c.Template})
			if window > 0 && len(held) >= window {
				if err := flush(); err != nil {
					return err
				}
			}
			if window > 0 {
				idle.Reset(mineIdle)
			}
		}
	}
}

// mineSummary prints the clusters, largest first: after a blank line as
// "<size>\t<cluster-id>\t<template>", or with --json as one last object.
func mineSummary(w io.Writer, m *patterns.Miner, asJSON bool) error {
	cs := m.Clusters()
	if asJSON {
		out := struct {
			Clusters []mineCluster `json:"clusters"`
		}{Clusters: make([]mineCluster, 0, len(cs))}
		for _, c := range cs {
			out.Clusters = append(out.Clusters, mineCluster{Cluster: c.ID, Template: c.Template, Size: c.Size})
		}
		return writeJSONLine(w, out)
	}
	if _, err := fmt.Fprintf(w, "\n%d clusters\n", len(cs)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	for _, c := range cs {
		if _, err := fmt.Fprintf(w, "%d\t%s\t%s\n", c.Size, c.ID, tsvField(c.Template)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// tsvField makes s safe as the last field of a tab-separated line: tabs and
// line breaks become spaces, other control characters go.
func tsvField(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}
