// Command background builds patterns/background.tsv, the generic corpus the
// text tier weighs words against: for each word, how many messages of the
// corpus have it. A message is a string literal of two words or more in Go
// source (error and log messages of open-source infrastructure code: the
// Go standard library and the modules in the module cache; generated files,
// tests and Unicode tables left out) or a line of a log file (digits and
// hex ids masked so that one template counts once).
//
//	go run ./bench/background -go "$(go env GOROOT)/src" -go "$(go env GOMODCACHE)" \
//	    -lines 'testdata/corpus/healthy*.log' -loghub 'loghub/*/*_structured.csv' > patterns/background.tsv
//
// (loghub is a clone of github.com/logpai/loghub: 2,000 sample lines of
// each of 16 systems' logs.)
//
// Only words that three messages or more have are written: a word the
// table does not have counts as rare.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/incidex/incidex/patterns"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// expand returns the files the globs given to flag -name match; a glob
// that matches none is an error.
func expand(name string, globs []string) []string {
	var out []string
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil || len(files) == 0 {
			log.Fatalf("-%s %s: no such file", name, g)
		}
		out = append(out, files...)
	}
	return out
}

var masks = regexp.MustCompile(`[0-9a-fA-F]{6,}|\d+`)

func main() {
	var goDirs, lineFiles, csvFiles multi
	flag.Var(&goDirs, "go", "a tree of Go source (repeatable)")
	flag.Var(&csvFiles, "loghub", "a Loghub *_structured.csv file or glob: its Content column (repeatable)")
	flag.Var(&lineFiles, "lines", "a log file or glob, one message per line (repeatable)")
	minDF := flag.Int("min-df", 3, "leave out words fewer messages have")
	flag.Parse()
	seen := map[string]bool{}
	df := map[string]int{}
	n := 0
	add := func(msg, key string) {
		msg = strings.TrimSpace(msg)
		if len(msg) > 300 || !strings.Contains(msg, " ") || strings.ToUpper(msg) == msg || strings.Contains(msg, `:"`) {
			return
		}
		if seen[key] {
			return
		}
		seen[key] = true
		words := map[string]bool{}
		for _, w := range patterns.TextWords(msg) {
			words[w] = true
		}
		if len(words) < 2 {
			return
		}
		n++
		for w := range words {
			df[w]++
		}
	}
	for _, root := range goDirs {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor" || d.Name() == "cache" || d.Name() == "unicode") {
				return filepath.SkipDir
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "golang.org/x/text") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			if strings.Contains(string(src[:min(len(src), 2048)]), "Code generated") {
				return nil
			}
			var s scanner.Scanner
			s.Init(token.NewFileSet().AddFile(p, -1, len(src)), src, nil, 0)
			for {
				_, tok, lit := s.Scan()
				if tok == token.EOF {
					break
				}
				if tok != token.STRING {
					continue
				}
				if u, err := strconv.Unquote(lit); err == nil && !strings.Contains(u, "\n") {
					add(u, u)
				}
			}
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	for _, name := range expand("lines", lineFiles) {
		f, err := os.Open(name)
		if err != nil {
			log.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			add(sc.Text(), masks.ReplaceAllString(sc.Text(), "0"))
		}
		f.Close()
	}
	for _, name := range expand("loghub", csvFiles) {
		f, err := os.Open(name)
		if err != nil {
			log.Fatal(err)
		}
		rows, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
		f.Close()
		if err != nil || len(rows) == 0 {
			log.Fatalf("%s: %v", name, err)
		}
		col := -1
		for i, h := range rows[0] {
			if h == "Content" {
				col = i
			}
		}
		if col < 0 {
			log.Fatalf("%s: no Content column", name)
		}
		for _, r := range rows[1:] {
			if col < len(r) {
				add(r[col], masks.ReplaceAllString(r[col], "0"))
			}
		}
	}
	words := make([]string, 0, len(df))
	for w, c := range df {
		if c >= *minDF {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if df[words[i]] != df[words[j]] {
			return df[words[i]] > df[words[j]]
		}
		return words[i] < words[j]
	})
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "# word<TAB>messages with it; built by bench/background\n#N\t%d\n", n)
	for _, x := range words {
		fmt.Fprintf(w, "%s\t%d\n", x, df[x])
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
}
