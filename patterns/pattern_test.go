package patterns

import (
	"strings"
	"testing"
)

// TestEscapeMakesLogTextParseable: angle brackets that are log text, not
// placeholders, survive a round trip through Escape and Parse, and the
// parsed template still matches the line they came from.
func TestEscapeMakesLogTextParseable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lease <held> by <ip>", `lease \<held> by <ip>`},
		{"<held> first", `\<held> first`},
		{"no angles", "no angles"},
		{"value <nil> and <*> and a < b > c", "value <nil> and <*> and a < b > c"},
		{`already \<held>`, `already \<held>`},
		{"List<String> and <<ip>>", `List\<String> and \<<ip>>`},
	}
	for _, tt := range tests {
		got := Escape(tt.in)
		if got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if _, err := Parse(got); err != nil {
			t.Errorf("Parse(Escape(%q)) = %v", tt.in, err)
		}
	}
	if _, err := Parse("lease <held> by <ip>"); err == nil || !strings.Contains(err.Error(), `write \<held> for literal text`) {
		t.Errorf("Parse of an unknown placeholder = %v, want a hint about escaping", err)
	}
	line := "ledger sync aborted: shard 42 lease <held> by replica r-7"
	p := FromExample(line, nil)
	tmpl := p.Template()
	if !strings.Contains(tmpl, `\<held>`) {
		t.Fatalf("Template() = %q, want the literal <held> escaped", tmpl)
	}
	set, err := Compile([]Def{{ID: "s", Group: "g", Text: tmpl, Template: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits := set.Match(line, nil); len(hits) == 0 {
		t.Errorf("the escaped template %q does not match its own line", tmpl)
	}
}
