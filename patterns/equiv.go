package patterns

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A team pastes the error its own program printed: Go's "x509: certificate
// signed by unknown authority", libpq's "could not connect to server:
// Connection refused". The next occurrence of the same failure is often
// printed by another runtime, client library or version, in words the
// write-up does not have: Java's "PKIX path building failed", libpq 14's
// "connection to server at ... failed: Connection refused". No weighing of
// the write-up's own words can bridge that; knowing that both wordings say
// the same thing can.
//
// equivalents.tsv, shipped with the binary like background.tsv, lists
// families of such wordings. A signature whose line holds a wording of a
// family also matches the family's other wordings (see Equivalents; the
// knowledge base adds them as clauses of the signature, a little below a
// match of its own words, and the explanation names the family and the
// wording that carried the match).

//go:embed equivalents.tsv
var equivalentsTSV string

// Equivalent is another wording of the failure a line prints.
type Equivalent struct {
	// Family names the failure, as equivalents.tsv does.
	Family string
	// Wording is the other wording, a template (see Parse).
	Wording string
	// Holds is the family's wording the line holds.
	Holds string
	// Own marks the wording the line holds itself, returned when the
	// line has more than it: the part of the line that says the failure,
	// which another wrapper may print around it.
	Own bool
}

// equivWording is one wording of a family, as the tokens a line must hold.
type equivWording struct {
	family, text string
	// words are the hashes of the wording's literal tokens in order; a
	// zero hash is a placeholder: a gap of up to equivMaxGap tokens.
	words []uint64
}

// equivMaxGap bounds what a placeholder of a wording stands for, in tokens.
const equivMaxGap = 8

// equivIndex is the table with its wordings by their first word.
type equivIndex struct {
	table   []equivWording
	byFirst map[uint64][]int32
	// family[i] is the run of the table that holds wording i's family
	// (a family's wordings stand together: parseEquivalents sees to it).
	family [][2]int32
}

var equivTable = sync.OnceValues(func() (*equivIndex, error) {
	table, err := parseEquivalents(equivalentsTSV)
	if err != nil {
		return nil, err
	}
	return indexEquivalents(table), nil
})

func indexEquivalents(table []equivWording) *equivIndex {
	x := &equivIndex{table: table, byFirst: map[uint64][]int32{}, family: make([][2]int32, len(table))}
	for i, w := range table {
		x.byFirst[w.words[0]] = append(x.byFirst[w.words[0]], int32(i))
	}
	for start := 0; start < len(table); {
		end := start + 1
		for end < len(table) && table[end].family == table[start].family {
			end++
		}
		for i := start; i < end; i++ {
			x.family[i] = [2]int32{int32(start), int32(end)}
		}
		start = end
	}
	return x
}

// parseEquivalents reads a table of family<TAB>wording lines; lines that
// start with # and blank lines are comments.
func parseEquivalents(src string) ([]equivWording, error) {
	var out []equivWording
	for n, line := range strings.Split(src, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		family, text, ok := strings.Cut(line, "\t")
		if !ok || family == "" || strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("equivalents line %d: want family<TAB>wording", n+1)
		}
		p, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("equivalents line %d: %w", n+1, err)
		}
		if p.Tokens[0].Placeholder {
			return nil, fmt.Errorf("equivalents line %d: %q starts with a placeholder", n+1, text)
		}
		if len(out) > 0 && out[len(out)-1].family != family && slices.ContainsFunc(out, func(w equivWording) bool { return w.family == family }) {
			return nil, fmt.Errorf("equivalents line %d: family %s is split: its wordings must stand together", n+1, family)
		}
		w := equivWording{family: family, text: text}
		for _, t := range p.Tokens {
			if !t.Placeholder && t.Kind != KindWord {
				// A masked token would match any value of its kind, in a
				// signature that must have all its words (Def.Whole).
				return nil, fmt.Errorf("equivalents line %d: %q is a %v, not a word: write %s", n+1, text[t.Start:t.End], t.Kind, t.Kind.Mask())
			}
			if t.Placeholder {
				w.words = append(w.words, 0)
			} else {
				w.words = append(w.words, t.Hash)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// Equivalents returns, for an example line, the other wordings of every
// family one of whose wordings the line holds: its tokens in order, with
// nothing between them but where the wording has a placeholder (a
// qualified exception class holds its class). A wording the line holds
// is returned as Own when the line has more words than it. Each is
// returned once, in the table's order.
func Equivalents(line string) []Equivalent {
	x, err := equivTable()
	if err != nil {
		// The table is embedded and a test parses it: this is a build
		// that shipped a broken one.
		panic(err)
	}
	return equivalentsIn(x, line)
}

func equivalentsIn(x *equivIndex, line string) []Equivalent {
	toks := Tokenize(line, nil)
	hashes := make([]uint64, len(toks))
	for i, t := range toks {
		hashes[i] = t.Hash
		if c, ok := qualifiedClass(t.Text(line)); ok {
			// java.lang.OutOfMemoryError is the wording's OutOfMemoryError.
			hashes[i] = hashLower(c)
		}
	}
	var has []int32 // the wordings the line holds
	for start, h := range hashes {
		for _, i := range x.byFirst[h] {
			if !slices.Contains(has, i) && matchFrom(hashes, start, x.table[i].words) {
				has = append(has, i)
			}
		}
	}
	if len(has) == 0 {
		return nil
	}
	// The families held, in the table's order; each one's first wording
	// the line holds is what the others stand in for.
	slices.Sort(has)
	var out []Equivalent
	for k, first := range has {
		run := x.family[first]
		if k > 0 && x.family[has[k-1]] == run {
			continue // its family is out already
		}
		holds := x.table[first].text
		for i := run[0]; i < run[1]; i++ {
			w := x.table[i]
			switch {
			case !slices.Contains(has, i):
				out = append(out, Equivalent{Family: w.family, Wording: w.text, Holds: holds})
			case len(hashes) > len(w.words)+2:
				out = append(out, Equivalent{Family: w.family, Wording: w.text, Holds: w.text, Own: true})
			}
		}
	}
	return out
}

// matchFrom reports whether words match line from line[i] on.
func matchFrom(line []uint64, i int, words []uint64) bool {
	if len(words) == 0 {
		return true
	}
	if words[0] == 0 {
		for gap := 1; gap <= equivMaxGap && i+gap <= len(line); gap++ {
			if matchFrom(line, i+gap, words[1:]) {
				return true
			}
		}
		return false
	}
	return i < len(line) && line[i] == words[0] && matchFrom(line, i+1, words[1:])
}
