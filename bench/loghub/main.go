// Command loghub measures how the miner groups the LogHub-2k samples: it
// feeds the Content column of each system's structured CSV to
// `incidex mine --json --final -` and prints, per system, the grouping
// accuracy (GA) against the EventId column, the template accuracy (PA),
// and their means. GA counts a line when the lines of its cluster are
// exactly the lines of its event (the LogPAI definition). Each line is
// scored by the cluster it ended in, merges followed, as the knowledge
// base counts emerging patterns; -as-printed scores what plain
// `incidex mine --json -` prints instead (lines held in its window are
// printed with the cluster they are in by then; --window 0 would print
// each as it came). PA compares the cluster's final template with
// the labelled one once every placeholder (<num>, <ip>, <*>, ...) is <*>
// and runs of them are one: an approximation, since the labels' <*>
// conventions differ from the miner's masks.
//
//	go build -o /tmp/incidex ./cmd/incidex
//	go run ./bench/loghub -incidex /tmp/incidex /path/to/loghub
//	go run ./bench/loghub -incidex /tmp/incidex -labels corrected /path/to/loghub-2.0/2k_dataset
//
// The directory holds one folder per system with <System>_2k.log_structured.csv
// (logpai/loghub) or, with -labels corrected, <System>_2k.log_structured_corrected.csv
// (logpai/loghub-2.0). The data is for research use: keep it out of this
// repository.
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	bin := flag.String("incidex", "incidex", "the incidex binary")
	labels := flag.String("labels", "orig", "orig: <S>_2k.log_structured.csv; corrected: <S>_2k.log_structured_corrected.csv")
	only := flag.String("only", "", "comma-separated systems to run (default all found)")
	diff := flag.Int("diff", 0, "print up to N mismatched groups per system to stderr")
	asPrinted := flag.Bool("as-printed", false, "score each line by the cluster mine printed as it came, not the one it ended in (mine --final)")
	flag.Parse()
	if flag.NArg() != 1 {
		fail(errors.New("usage: loghub [-incidex bin] [-labels orig|corrected] [-only A,B] [-diff N] DIR"))
	}
	suffix := "_2k.log_structured.csv"
	switch *labels {
	case "orig":
	case "corrected":
		suffix = "_2k.log_structured_corrected.csv"
	default:
		fail(fmt.Errorf("-labels %q: want orig or corrected", *labels))
	}
	dir := flag.Arg(0)
	ents, err := os.ReadDir(dir)
	if err != nil {
		fail(err)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s != "" {
			want[s] = true
		}
	}
	var sumGA, sumPA float64
	n := 0
	fmt.Printf("%-12s %6s %6s %6s %6s\n", "system", "lines", "events", "GA", "PA")
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || (len(want) > 0 && !want[name]) {
			continue
		}
		path := filepath.Join(dir, name, name+suffix)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		rows, err := readCSV(path)
		if err != nil {
			fail(err)
		}
		got, err := mine(*bin, rows, !*asPrinted)
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		r := score(rows, got)
		fmt.Printf("%-12s %6d %6d %6.3f %6.3f\n", name, len(rows), r.events, r.ga, r.pa)
		if *diff > 0 {
			printDiff(os.Stderr, name, rows, got, *diff)
		}
		sumGA += r.ga
		sumPA += r.pa
		n++
	}
	if n == 0 {
		fail(fmt.Errorf("%s: no <System>/<System>%s found", dir, suffix))
	}
	fmt.Printf("%-12s %6s %6s %6.3f %6.3f\n", "mean", "", "", sumGA/float64(n), sumPA/float64(n))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loghub:", err)
	os.Exit(1)
}

// row is one labelled line.
type row struct {
	content, event, template string
}

func readCSV(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(h, "\ufeff")] = i
	}
	ci, ok1 := col["Content"]
	ei, ok2 := col["EventId"]
	ti, ok3 := col["EventTemplate"]
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("%s: want Content, EventId and EventTemplate columns", path)
	}
	var rows []row
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) <= max(ci, ei, ti) {
			return nil, fmt.Errorf("%s: short record %q", path, rec)
		}
		// One line each: mine reads lines.
		c := strings.NewReplacer("\r", " ", "\n", " ").Replace(rec[ci])
		rows = append(rows, row{content: c, event: rec[ei], template: rec[ti]})
	}
	return rows, nil
}

// assigned is a line's cluster as mine printed it.
type assigned struct {
	Line     int    `json:"line"`
	Cluster  string `json:"cluster"`
	Template string `json:"template"`
}

// mine runs `incidex mine --json -` on the rows' contents and returns each
// line's cluster and the template of that cluster at the end of the run.
func mine(bin string, rows []row, final bool) ([]assigned, error) {
	var in bytes.Buffer
	for _, r := range rows {
		in.WriteString(r.content)
		in.WriteByte('\n')
	}
	args := []string{"mine", "--json", "-"}
	if final {
		args = []string{"mine", "--json", "--final", "-"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s mine: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	got := make([]assigned, 0, len(rows))
	last := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte(`{"clusters"`)) {
			var s struct {
				Clusters []struct{ Cluster, Template string } `json:"clusters"`
			}
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				return nil, err
			}
			for _, c := range s.Clusters {
				last[c.Cluster] = c.Template
			}
			continue
		}
		var a assigned
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("%w in %s", err, sc.Text())
		}
		got = append(got, a)
	}
	if len(got) != len(rows) {
		return nil, fmt.Errorf("%d lines out for %d in", len(got), len(rows))
	}
	for i := range got {
		if t, ok := last[got[i].Cluster]; ok {
			got[i].Template = t
		}
	}
	return got, nil
}

type result struct {
	ga, pa float64
	events int
}

// score computes GA, the share of lines whose predicted group is exactly
// their labelled group (the LogPAI definition), and PA, the share of lines
// whose template equals the labelled one once every placeholder is <*>.
func score(rows []row, got []assigned) result {
	truthSize := map[string]int{}
	for _, r := range rows {
		truthSize[r.event]++
	}
	groups := map[string][]int{}
	for i, a := range got {
		groups[a.Cluster] = append(groups[a.Cluster], i)
	}
	correct, exact := 0, 0
	for _, idx := range groups {
		ev := rows[idx[0]].event
		same := true
		for _, i := range idx {
			if rows[i].event != ev {
				same = false
				break
			}
		}
		if same && truthSize[ev] == len(idx) {
			correct += len(idx)
		}
	}
	for i, a := range got {
		if normTemplate(a.Template) == normTemplate(rows[i].template) {
			exact++
		}
	}
	n := float64(len(rows))
	return result{ga: float64(correct) / n, pa: float64(exact) / n, events: len(truthSize)}
}

var (
	placeholder = regexp.MustCompile(`<[A-Za-z*][A-Za-z0-9_*]*>`)
	stars       = regexp.MustCompile(`<\*>(\s*<\*>)+`)
	blanks      = regexp.MustCompile(`\s+`)
)

func normTemplate(s string) string {
	s = placeholder.ReplaceAllString(s, "<*>")
	s = stars.ReplaceAllString(s, "<*>")
	return strings.TrimSpace(blanks.ReplaceAllString(s, " "))
}

// printDiff shows, for the labelled events that are not one predicted
// group, how their lines were split and what else those groups took.
func printDiff(w io.Writer, system string, rows []row, got []assigned, limit int) {
	byEvent := map[string]map[string][]int{}
	byCluster := map[string]map[string]int{}
	for i, a := range got {
		ev := rows[i].event
		if byEvent[ev] == nil {
			byEvent[ev] = map[string][]int{}
		}
		byEvent[ev][a.Cluster] = append(byEvent[ev][a.Cluster], i)
		if byCluster[a.Cluster] == nil {
			byCluster[a.Cluster] = map[string]int{}
		}
		byCluster[a.Cluster][ev]++
	}
	type bad struct {
		ev   string
		size int
	}
	var bads []bad
	for ev, cs := range byEvent {
		whole := len(cs) == 1
		for c := range cs {
			if len(byCluster[c]) > 1 {
				whole = false
			}
		}
		if !whole {
			size := 0
			for _, idx := range cs {
				size += len(idx)
			}
			bads = append(bads, bad{ev, size})
		}
	}
	sort.Slice(bads, func(i, j int) bool { return bads[i].size > bads[j].size })
	for k, b := range bads {
		if k == limit {
			break
		}
		fmt.Fprintf(w, "== %s %s (%d lines) %s\n", system, b.ev, b.size, rows[byEvent[b.ev][firstKey(byEvent[b.ev])][0]].template)
		for c, idx := range byEvent[b.ev] {
			others := ""
			for ev, k := range byCluster[c] {
				if ev != b.ev {
					others += fmt.Sprintf(" +%s:%d", ev, k)
				}
			}
			fmt.Fprintf(w, "   %4d  %s%s\n         e.g. %s\n", len(idx), got[idx[0]].Template, others, rows[idx[0]].content)
		}
	}
}

func firstKey(m map[string][]int) string {
	for k := range m {
		return k
	}
	return ""
}
