package patterns

import (
	"slices"
	"strings"
	"testing"
)

// TestEquivalentsTable: the shipped table parses, every family has two
// wordings or more, and no wording is listed twice.
func TestEquivalentsTable(t *testing.T) {
	table, err := parseEquivalents(equivalentsTSV)
	if err != nil {
		t.Fatal(err)
	}
	n, seen := map[string]int{}, map[string]bool{}
	for _, w := range table {
		n[w.family]++
		key := strings.ToLower(w.text)
		if seen[key] {
			t.Errorf("wording %q is listed twice", w.text)
		}
		seen[key] = true
	}
	for f, c := range n {
		if c < 2 {
			t.Errorf("family %s has %d wording; a family needs two", f, c)
		}
	}
	if len(n) < 50 {
		t.Errorf("%d families, want the table's 50 or more", len(n))
	}
}

// TestEquivalentsRefusesBadLines: a line without a tab, a family split in
// two runs of the table, or a wording with
// a masked token that is not a placeholder, is refused with its line
// number.
func TestEquivalentsRefusesBadLines(t *testing.T) {
	for _, src := range []string{
		"# comment\nfam only-one-field\n",
		"fam\t413 Request Entity Too Large\n",
		"fam\tbad <placeholder\\> <nope>\n",
		"fam\t<*> starts with a placeholder\n",
		"a\tone wording\nb\tanother\na\tone more\n",
	} {
		if _, err := parseEquivalents(src); err == nil || !strings.Contains(err.Error(), "equivalents line") {
			t.Errorf("parseEquivalents(%q) = %v, want an error naming the line", src, err)
		}
	}
}

// TestEquivalentsOfLine: a line that holds one wording of a family gets
// the family's other wordings, and not the one it holds; a placeholder
// stands for a few words; a line of no family gets none, and neither
// does a line that has a wording's words in another order.
func TestEquivalentsOfLine(t *testing.T) {
	wordings := func(line string) []string {
		var out []string
		for _, e := range Equivalents(line) {
			out = append(out, e.Wording)
		}
		return out
	}
	line := `Get "https://registry.internal:5000/v2/": x509: certificate signed by unknown authority`
	if got := wordings(line); !slices.Contains(got, "PKIX path building failed") {
		t.Errorf("Go's unknown-authority line: %q, want Java's wording", got)
	}
	for _, e := range Equivalents(line) {
		if own := e.Wording == "x509: certificate signed by unknown authority"; own != e.Own {
			t.Errorf("Go's unknown-authority line: %+v: Own is the wording the line holds", e)
		}
	}
	// A line that is only the wording has no part of it to add.
	for _, e := range Equivalents(`x509: certificate signed by unknown authority`) {
		if e.Own {
			t.Errorf("the wording alone: %+v, want no Own", e)
		}
	}
	// A qualified class holds the wording's class.
	if got := wordings(`Caused by: java.lang.OutOfMemoryError: Metaspace`); !slices.Contains(got, "OutOfMemoryError: PermGen space") {
		t.Errorf("qualified class: %q, want the PermGen wording", got)
	}
	for _, e := range Equivalents(`Error: cannot re-use a name that is still in use`) {
		if e.Family != "helm-name-in-use" || e.Holds != "cannot re-use a name that is still in use" || e.Own {
			t.Errorf("Helm 3's line: %+v", e)
		}
	}
	if got := wordings(`Error: release web failed: a release named web already exists.`); !slices.Contains(got, "cannot re-use a name that is still in use") {
		t.Errorf("Helm 2's line (placeholder): %q", got)
	}
	for _, line := range []string{
		`level=info msg="certificate verified" subject=api.internal`,
		`authority signed by unknown certificate x509`,
		``,
	} {
		if got := Equivalents(line); len(got) != 0 {
			t.Errorf("Equivalents(%q) = %+v, want none", line, got)
		}
	}
}

// TestWholeNeedsEveryWord: a Whole signature matches only a line with
// all its words; without Whole, its heavier words alone would do.
func TestWholeNeedsEveryWord(t *testing.T) {
	line := `org.elasticsearch.common.breaker.CircuitBreakingException: [parent] Data too large, data for [<http_request>] would be larger than limit`
	for _, whole := range []bool{false, true} {
		s, err := Compile([]Def{
			{ID: "a", Group: "nginx-413", Text: "Content Too Large", Template: true, Whole: whole},
			{ID: "b", Group: "other", Text: "Address already in use", Template: true},
		}, Options{MinScore: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Match(line, nil)
		if whole && len(got) != 0 {
			t.Errorf("Whole: %q matched %+v, want nothing: it lacks \"Content\"", line, got)
		}
		if !whole && len(got) == 0 {
			t.Errorf("without Whole the line does not match: the test no longer shows what Whole changes")
		}
		if got := s.Match(`HTTP/1.1 413 Content Too Large`, nil); len(got) == 0 {
			t.Errorf("Whole=%v: a line with every word does not match", whole)
		}
	}
	// Stop words are not needed: mysqldump prints "Got packet bigger
	// than" where the server says "Got a packet bigger than".
	s, err := Compile([]Def{{ID: "p", Group: "packet", Text: "Got a packet bigger than 'max_allowed_packet' bytes", Template: true, Whole: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Match(`mysqldump: Error 2020: Got packet bigger than 'max_allowed_packet' bytes when dumping table`, nil); len(got) == 0 {
		t.Errorf("a line without the wording's stop word does not match")
	}
}
