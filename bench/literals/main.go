// Command literals prints, for every signature of the starter knowledge
// base, its longest literal run: the text a literal scanner (grep -F, rg
// -F) would have to look for to find that signature. bench/run.sh compares
// incidex with such a scan.
package main

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/patterns"
	"github.com/incidex/incidex/starter"
)

func main() {
	names, err := fs.Glob(starter.FS(), "*.md")
	if err != nil {
		fail(err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		b, err := fs.ReadFile(starter.FS(), n)
		if err != nil {
			fail(err)
		}
		incs, err := writeup.ParseWriteup(n, b)
		if err != nil {
			fail(err)
		}
		for _, inc := range incs {
			for _, s := range inc.Signatures {
				p, err := patternOf(s.Text, s.IsTemplate)
				if err != nil {
					continue
				}
				if lits := p.Literals(); len(lits) > 0 && len(lits[0]) >= 4 && !seen[lits[0]] {
					seen[lits[0]] = true
					fmt.Println(lits[0])
				}
			}
		}
	}
}

func patternOf(text string, tmpl bool) (*patterns.Pattern, error) {
	if tmpl {
		return patterns.Parse(text)
	}
	return patterns.FromExample(text, nil), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "literals:", err)
	os.Exit(2)
}
