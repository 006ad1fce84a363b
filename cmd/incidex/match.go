package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// lineResult is one matched (or, with --all, unmatched) input line.
type lineResult struct {
	Line    int      `json:"line"`
	Input   string   `json:"input"`
	Matches []kb.Hit `json:"matches"`
	// Possible are a typed line's matches in the possible band (scores
	// from kb.PossibleMinScore up to the threshold) when it has no
	// confident one: shown, marked, never counted as a match.
	Possible []kb.Hit `json:"possible,omitempty"`
}

type matchFlags struct {
	asJSON, quiet, all, explain bool
	color                       bool // bold for full-text highlights (see Config.colorOn)
	top                         int
	minScore                    float64
}

func runMatch(ctx context.Context, e *env, args []string) error {
	// The compiled matcher is most of the heap and matching makes almost no
	// garbage, so a lower GC target costs no measurable time and keeps a
	// 10,000-signature knowledge base under 100 MB RSS (121 MB at the
	// default of 100; see BENCHMARKS.md). GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "match", "TEXT... | -")
	cfg.common(fs)
	var f matchFlags
	fs.BoolVar(&f.asJSON, "json", false, "print JSON Lines: one object per matched input line")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the summary")
	fs.BoolVar(&f.all, "all", false, "with --json, also print unmatched lines (empty matches)")
	fs.BoolVar(&f.explain, "explain", false, "show the token-by-token explanation of each match")
	fs.IntVar(&f.top, "top", 3, "at most N incidents per line (typed text and --json; a stream in text shows each line under its best)")
	fs.Float64Var(&f.minScore, "min-score", 0, fmt.Sprintf("score threshold, 0..1 (default %.2f)", patterns.DefaultMinScore))
	fs.StringVar(&cfg.Server, "server", cfg.Server, "URL of a running incidex serve to ask (env INCIDEX_SERVER)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	f.color = cfg.colorOn(e, e.stdout)
	if f.minScore < 0 || f.minScore > 1 {
		return usageErr("--min-score %v: want a number from 0 to 1", f.minScore)
	}
	if fs.NArg() == 0 {
		return usageErr("nothing to match: incidex match TEXT... or incidex match - (lines on stdin)")
	}
	eng, closeFn, err := newEngine(ctx, e, &cfg)
	if err != nil {
		return err
	}
	defer closeFn()
	var matched bool
	if fs.NArg() == 1 && fs.Arg(0) == "-" {
		matched, err = matchStream(ctx, e, eng, f)
	} else {
		matched, err = matchQuery(ctx, e, eng, strings.Join(fs.Args(), " "), f)
	}
	if err != nil {
		return err
	}
	if !matched {
		return &exitErr{code: exitNone}
	}
	return nil
}

// engine matches lines locally (a compiled matcher over SQLite, which any
// number of processes can read) or through a server's API.
type engine struct {
	m      *kb.Matcher
	k      *kb.KB
	server *client
}

func newEngine(ctx context.Context, e *env, cfg *Config) (*engine, func(), error) {
	if cfg.Server != "" {
		return &engine{server: newClient(*cfg)}, func() {}, nil
	}
	k, err := openKBRead(ctx, e, cfg, indexOptional)
	if err != nil {
		return nil, nil, err
	}
	m, err := k.Matcher(ctx, 0)
	if err != nil {
		_ = k.Close()
		return nil, nil, err
	}
	eng := &engine{m: m, k: k}
	if k.IndexLocked() {
		if url := discoverServer(cfg.DataDir); url != "" {
			c := *cfg
			c.Server = url
			eng.server = newClient(c) // only for the full-text fallback
		}
	}
	return eng, func() { _ = k.Close() }, nil
}

func (eng *engine) match(ctx context.Context, lines []string, mode patterns.Mode, f matchFlags) ([][]kb.Hit, error) {
	if eng.m == nil {
		req := matchRequest{Lines: lines, Mode: "stream", MinScore: f.minScore, Top: f.top, Explain: true}
		if mode == patterns.Query {
			req.Mode = "query"
		}
		res, err := eng.server.match(ctx, req)
		if err != nil {
			return nil, err
		}
		out := make([][]kb.Hit, len(lines))
		for i := range res.Results {
			if i < len(out) {
				out[i] = res.Results[i].Matches
			}
		}
		return out, nil
	}
	out := make([][]kb.Hit, len(lines))
	for i, l := range lines {
		out[i] = eng.m.Match(l, kb.MatchOptions{Mode: mode, MinScore: f.minScore, Top: f.top, Explain: true})
	}
	return out, nil
}

// fullText is the fallback for a typed query that no signature explains:
// incidents whose text has every word of it.
func (eng *engine) fullText(ctx context.Context, q string) ([]kb.Hit, error) {
	req := kb.SearchRequest{Query: q, All: true, Size: 3}
	var res *kb.SearchResult
	var err error
	switch {
	case eng.k != nil && eng.k.HasIndex():
		res, err = eng.k.Search(ctx, req)
	case eng.server != nil:
		res, err = eng.server.search(ctx, req)
	default:
		return nil, nil
	}
	var ve *kb.ValidationError
	if errors.As(err, &ve) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var hits []kb.Hit
	for i, h := range res.Hits {
		score := round2(fullTextScore * h.Score / res.Hits[0].Score)
		ref := &kb.IncidentRef{ID: h.ID, Title: h.Title, RootCause: h.RootCause}
		if eng.m != nil {
			if r := eng.m.Incident(h.ID); r != nil {
				ref = r
			}
		}
		var notes []string
		for _, fr := range bestFragments(h.Fragments, 2) {
			notes = append(notes, oneLine(fr))
		}
		hits = append(hits, kb.Hit{Incident: ref, Score: score, Signature: kb.SignatureRef{Kind: "fulltext"},
			Captures: map[string]string{}, Explain: &patterns.Explanation{Direction: "fulltext", Score: score, Notes: notes, Missing: []string{}}})
		if i == 2 {
			break
		}
	}
	return hits, nil
}

// fullTextScore is the score of the best full-text hit: below any
// signature match a person would trust, above the default threshold so the
// answer is shown.
const fullTextScore = 0.55

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

func matchQuery(ctx context.Context, e *env, eng *engine, line string, f matchFlags) (bool, error) {
	res, err := eng.match(ctx, []string{line}, patterns.Query, f)
	if err != nil {
		return false, err
	}
	hits := res[0]
	if len(hits) == 0 && typedLookup(line) {
		if hits, err = eng.fullText(ctx, line); err != nil {
			return false, err
		}
	}
	var possible []kb.Hit
	if len(hits) == 0 && f.minScore == 0 {
		if possible, err = eng.possible(ctx, line, f); err != nil {
			return false, err
		}
	}
	if f.asJSON {
		if len(hits) > 0 || len(possible) > 0 || f.all {
			return len(hits) > 0, writeJSONLine(e.stdout, lineResult{Line: 1, Input: line, Matches: nonNilHits(hits), Possible: possible})
		}
		return false, nil
	}
	if len(hits) == 0 && len(possible) > 0 {
		fmt.Fprintf(e.stdout, "no confident match; possible (score %.2f–%.2f, not counted as a match):\n", kb.PossibleMinScore, patterns.DefaultMinScore)
		if !f.quiet {
			printHits(e.stdout, possible, true, f.color)
		}
		return false, nil
	}
	if len(hits) == 0 {
		fmt.Fprintln(e.stdout, "no known incident matches")
		return false, nil
	}
	if !f.quiet {
		printHits(e.stdout, hits, true, f.color)
	}
	return true, nil
}

// possible returns the possible band of a line with no confident match:
// its matches from kb.PossibleMinScore up to the threshold.
func (eng *engine) possible(ctx context.Context, line string, f matchFlags) ([]kb.Hit, error) {
	if eng.m == nil {
		res, err := eng.server.match(ctx, matchRequest{Lines: []string{line}, Mode: "query", Top: f.top, Explain: true})
		if err != nil || len(res.Results) == 0 {
			return nil, err
		}
		return res.Results[0].Possible, nil
	}
	_, possible := eng.m.MatchBands(line, kb.MatchOptions{Mode: patterns.Query, Top: f.top, Explain: true})
	return possible, nil
}

// typedLookup reports whether a line reads as something a person typed
// to look up (a few words, no log prefix or record), which may fall back
// to the full-text index, rather than a pasted log line, which matches
// through signatures only: a log line shares words with many write-ups.
func typedLookup(line string) bool {
	p := patterns.Prepare(line)
	if p.Level != 0 || len(strings.TrimSpace(p.Text)) < len(strings.TrimSpace(line)) {
		return false
	}
	words := 0
	for _, t := range patterns.Tokenize(p.Text, nil) {
		if t.Kind == patterns.KindWord {
			words++
		}
	}
	return words <= maxLookupWords
}

// maxLookupWords is the most words a typed lookup has.
const maxLookupWords = 8

func nonNilHits(h []kb.Hit) []kb.Hit {
	if h == nil {
		return []kb.Hit{}
	}
	return h
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// streamSummary counts matches per incident over a stream.
type streamSummary struct {
	count       int
	first, last int
	title       string
}

// matchStream matches stdin line by line: each matched line is printed once,
// an incident's details only the first time it appears, and a summary at
// the end. Chunks of lines are matched on all cores and printed in order.
func matchStream(ctx context.Context, e *env, eng *engine, f matchFlags) (bool, error) {
	workers := runtime.GOMAXPROCS(0)
	if eng.m == nil {
		workers = 1 // a remote server: one request at a time, in order
	}
	todo := make(chan *streamChunk, workers)
	order := make(chan *streamChunk, 2*workers)
	// Chunks are recycled once printed: lines are views into the chunk's
	// buffer, so reading a large file makes almost no garbage.
	free := make(chan *streamChunk, 3*workers+2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range todo {
				c.hits, c.err = eng.matchStreamChunk(ctx, c.lines, f, c.hits[:0])
				close(c.done)
			}
		})
	}
	readErr := make(chan error, 1)
	n := 0
	go func() {
		defer close(order)
		defer close(todo)
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(make([]byte, 64*1024), maxStreamLine)
		next := func(first int) *streamChunk {
			var c *streamChunk
			select {
			case c = <-free:
				c.reset()
			default:
				c = &streamChunk{}
			}
			c.first, c.done = first, make(chan struct{})
			return c
		}
		c := next(1)
		send := func() bool {
			c.seal()
			select {
			case todo <- c:
			case <-ctx.Done():
				return false
			}
			order <- c
			return true
		}
		for sc.Scan() {
			n++
			c.add(sc.Bytes())
			if len(c.ends) == streamChunkLines || len(c.buf) >= streamChunkBytes {
				if !send() {
					readErr <- ctx.Err()
					return
				}
				c = next(n + 1)
			}
		}
		if err := sc.Err(); err != nil {
			readErr <- fmt.Errorf("read stdin: line %d: %w", n+1, err)
			return
		}
		if len(c.ends) > 0 && !send() {
			readErr <- ctx.Err()
			return
		}
		readErr <- nil
	}()
	sum := map[string]*streamSummary{}
	matchedLines := 0
	var firstErr error
	for c := range order {
		<-c.done
		if c.err != nil && firstErr == nil {
			firstErr = c.err
		}
		if firstErr == nil {
			for i, hits := range c.hits {
				if len(hits) > 0 {
					matchedLines++
				}
				if err := emitStreamLine(e, f, c.first+i, c.lines[i], hits, sum); err != nil && firstErr == nil {
					firstErr = err
				}
			}
		}
		select {
		case free <- c:
		default:
		}
	}
	wg.Wait()
	if err := <-readErr; err != nil && firstErr == nil && !errors.Is(err, context.Canceled) {
		firstErr = err
	}
	if firstErr != nil {
		return false, firstErr
	}
	if !f.asJSON {
		printSummary(e.stdout, sum, n, matchedLines)
	}
	return matchedLines > 0, nil
}

// Chunk bounds of stream matching: lines handed to a worker at once.
const (
	streamChunkLines = 512
	streamChunkBytes = 1 << 20
)

// streamChunk is a run of input lines, stored in one buffer, and their hits.
// lines are views into buf (unsafe.String), valid until the chunk is reset;
// nothing that outlives the chunk keeps them (summaries keep incident ids
// and line numbers only).
type streamChunk struct {
	first int // line number of lines[0]
	buf   []byte
	ends  []int
	lines []string
	hits  [][]kb.Hit
	err   error
	done  chan struct{}
}

func (c *streamChunk) add(line []byte) {
	c.buf = append(c.buf, line...)
	c.ends = append(c.ends, len(c.buf))
}

// seal makes the line views; buf does not move after this.
func (c *streamChunk) seal() {
	start := 0
	for _, end := range c.ends {
		if end == start {
			c.lines = append(c.lines, "")
		} else {
			c.lines = append(c.lines, unsafe.String(&c.buf[start], end-start))
		}
		start = end
	}
}

func (c *streamChunk) reset() {
	c.buf, c.ends, c.lines, c.err = c.buf[:0], c.ends[:0], c.lines[:0], nil
	clear(c.hits)
	c.hits = c.hits[:0]
}

// matchStreamChunk matches lines in stream mode. Locally it takes the
// allocation-free path and builds full hits (with explanations) only for
// the lines that matched and only when they are printed in full.
func (eng *engine) matchStreamChunk(ctx context.Context, lines []string, f matchFlags, out [][]kb.Hit) ([][]kb.Hit, error) {
	if eng.m == nil {
		return eng.match(ctx, lines, patterns.Stream, f)
	}
	out = slices.Grow(out[:0], len(lines))[:len(lines)]
	clear(out)
	// Text output shows a stream line under its best incident only.
	top := f.top
	if !f.asJSON {
		top = 1
	}
	var dst []patterns.Match
	for i, l := range lines {
		dst = eng.m.Best(l, patterns.Stream, f.minScore, top, dst[:0])
		if len(dst) == 0 {
			continue
		}
		full := !f.quiet
		hits := make([]kb.Hit, len(dst))
		for k, pm := range dst {
			if full {
				hits[k] = eng.m.Hit(l, pm, kb.MatchOptions{Explain: true})
				continue
			}
			sig := eng.m.Signature(pm.Sig)
			hits[k] = kb.Hit{Incident: eng.m.Incident(sig.IncidentID), Score: pm.Score, Signature: kb.SignatureRef{ID: sig.ID, Template: sig.Template, Kind: sig.Kind}}
		}
		out[i] = hits
	}
	return out, nil
}

// maxStreamLine bounds one input line; a longer line is an error rather
// than a silent truncation.
const maxStreamLine = 8 << 20

func emitStreamLine(e *env, f matchFlags, no int, line string, hits []kb.Hit, sum map[string]*streamSummary) error {
	if f.asJSON {
		if len(hits) > 0 || f.all {
			return writeJSONLine(e.stdout, lineResult{Line: no, Input: line, Matches: nonNilHits(hits)})
		}
		return nil
	}
	for i, h := range hits {
		if i > 0 {
			break // the summary counts each line once, for its best incident
		}
		s := sum[h.Incident.ID]
		firstTime := s == nil
		if firstTime {
			s = &streamSummary{first: no, title: h.Incident.Title}
			sum[h.Incident.ID] = s
		}
		s.count++
		s.last = no
		if f.quiet {
			continue
		}
		fmt.Fprintf(e.stdout, "%d: %s (%.2f)  %s\n", no, h.Incident.ID, h.Score, clip(stripControls2(strings.TrimSpace(line)), 120))
		if firstTime {
			printHitDetails(e.stdout, h, "    ", f.explain, f.color)
		}
	}
	return nil
}

func printSummary(w io.Writer, sum map[string]*streamSummary, total, matched int) {
	ids := make([]string, 0, len(sum))
	for id := range sum {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if sum[ids[i]].count != sum[ids[j]].count {
			return sum[ids[i]].count > sum[ids[j]].count
		}
		return ids[i] < ids[j]
	})
	fmt.Fprintf(w, "\n%d of %d lines matched %d known incidents\n", matched, total, len(ids))
	for _, id := range ids {
		s := sum[id]
		fmt.Fprintf(w, "  %-44s %6d lines  first line %d, last line %d  %s\n", id, s.count, s.first, s.last, clip(s.title, 60))
	}
}

// printHits prints the answer to a typed query: the best incident in full,
// the others as alternatives.
func printHits(w io.Writer, hits []kb.Hit, explain, color bool) {
	for i, h := range hits {
		if i == 0 {
			fmt.Fprintf(w, "%s — %s  (score %.2f)\n", h.Incident.ID, h.Incident.Title, h.Score)
			printHitDetails(w, h, "  ", explain, color)
			continue
		}
		if i == 1 {
			fmt.Fprintln(w, "\nAlso possible:")
		}
		fmt.Fprintf(w, "  %s — %s  (score %.2f)\n", h.Incident.ID, h.Incident.Title, h.Score)
		if h.Incident.TellApart != "" {
			fmt.Fprintf(w, "    tell apart: %s\n", clip(oneLine(h.Incident.TellApart), 200))
		}
	}
}

// runbookShown is how many runbook steps a terminal match shows.
const runbookShown = 6

func printHitDetails(w io.Writer, h kb.Hit, ind string, explain, color bool) {
	inc := h.Incident
	if inc.CauseStatus == kb.CauseUnknown {
		fmt.Fprintf(w, "%swhy: root cause not stated in the write-up\n", ind)
	} else if inc.RootCause != "" {
		fmt.Fprintf(w, "%swhy: %s\n", ind, clip(oneLine(plainMarkdown(proseSummary(inc.RootCause))), 300))
	}
	if inc.Fix != "" {
		fmt.Fprintf(w, "%sfix: %s\n", ind, clip(oneLine(plainMarkdown(proseSummary(inc.Fix))), 300))
	}
	steps := kb.FillRunbook(inc.Runbook, h.Captures)
	for i, s := range steps {
		// Six steps, then a pointer to the rest; a seventh and last step
		// takes the pointer's line itself.
		if i == runbookShown && len(steps) > runbookShown+1 {
			fmt.Fprintf(w, "%s     … %d more steps: incidex show %s\n", ind, len(steps)-i, inc.ID)
			break
		}
		if i == 0 {
			fmt.Fprintf(w, "%srunbook:\n", ind)
		}
		fmt.Fprintf(w, "%s  $ %s\n", ind, stripControls2(s.Command))
	}
	if h.Signature.Kind == "fulltext" {
		fmt.Fprintf(w, "%smatched: full-text search of the write-up (no signature matched)\n", ind)
		if h.Explain != nil {
			for _, n := range h.Explain.Notes {
				fmt.Fprintf(w, "%s  … %s\n", ind, terminalMarks(n, color))
			}
		}
		return
	}
	fmt.Fprintf(w, "%smatched: %s %s: %s\n", ind, h.Signature.Kind, h.Signature.ID, clip(stripControls2(h.Signature.Template), 200))
	if explain && h.Explain != nil {
		printExplain(w, h.Explain, ind)
	}
}

// printExplain shows which tokens matched literally ([x]), through a mask
// ({x}) and which signature tokens were missing.
func printExplain(w io.Writer, ex *patterns.Explanation, ind string) {
	var b strings.Builder
	for _, t := range ex.Tokens {
		txt := stripControls2(t.Text)
		switch t.Status {
		case patterns.Literal:
			b.WriteString("[" + txt + "] ")
		case patterns.Masked:
			b.WriteString("{" + txt + "=" + t.Sig + "} ")
		}
	}
	fmt.Fprintf(w, "%sexplain (%s, coverage %.2f): %s\n", ind, ex.Direction, ex.Coverage, clip(strings.TrimSpace(b.String()), 400))
	if len(ex.Missing) > 0 {
		fmt.Fprintf(w, "%smissing: %s\n", ind, clip(strings.Join(ex.Missing, " "), 200))
	}
	var caps []string
	for k, v := range ex.Captures {
		caps = append(caps, k+"="+stripControls2(v))
	}
	sort.Strings(caps)
	if len(caps) > 0 {
		fmt.Fprintf(w, "%scaptured: %s\n", ind, strings.Join(caps, " "))
	}
	for _, n := range ex.Notes {
		fmt.Fprintf(w, "%snote: %s\n", ind, stripControls2(n))
	}
}
