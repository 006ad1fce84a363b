package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

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
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != "-") {
		return usageErr("mine reads lines on stdin: incidex mine [--json] -")
	}
	if *maxClusters < 1 {
		return usageErr("--max-clusters %d: want at least 1", *maxClusters)
	}
	m := patterns.NewMiner(patterns.MinerOptions{MaxClusters: *maxClusters})
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	if err := mineStream(ctx, e.stdin, w, m, *asJSON, *final); err != nil {
		_ = w.Flush()
		return err
	}
	if err := mineSummary(w, m, *asJSON); err != nil {
		return err
	}
	return w.Flush()
}

// mineStream prints each line's cluster as the line arrives. A line that
// a later one merged into a wider template keeps the ID it was printed
// with; the summary shows the clusters as they ended. With final, the
// lines are printed after the input ends, each with the cluster that holds
// it then; only the clusters seen are kept until then, one per line.
func mineStream(ctx context.Context, r io.Reader, w io.Writer, m *patterns.Miner, asJSON, final bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxStreamLine)
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
	n := 0
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		c, _ := m.Add(sc.Text())
		if final {
			held = append(held, patterns.Cluster{ID: c.ID, Template: c.Template})
			continue
		}
		if err := print(n, c); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stdin: line %d: %w", n+1, err)
	}
	for i, c := range held {
		if now, ok := m.Resolve(c.ID); ok {
			c = now // else evicted: as it was
		}
		if err := print(i+1, c); err != nil {
			return err
		}
	}
	return nil
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
