package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

func runShow(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "show", "ID")
	cfg.common(fs)
	asJSON := fs.Bool("json", false, "print the incident as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("want exactly one incident id: incidex show ID")
	}
	k, err := openKBRead(ctx, e, &cfg, indexNone)
	if err != nil {
		return err
	}
	defer k.Close()
	inc, err := k.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, inc)
	}
	printIncident(e.stdout, inc)
	return nil
}

// printIncident prints an incident for a person at a terminal: what it is,
// why it happens, what to do.
func printIncident(w io.Writer, inc *kb.Incident) {
	fmt.Fprintf(w, "%s — %s\n", inc.ID, inc.Title)
	var meta []string
	for _, m := range []string{inc.Date, inc.Organisation, inc.Severity, inc.Duration} {
		if m != "" {
			meta = append(meta, m)
		}
	}
	if len(inc.Tags) > 0 {
		meta = append(meta, "tags: "+strings.Join(inc.Tags, ", "))
	}
	if len(meta) > 0 {
		fmt.Fprintln(w, strings.Join(meta, " · "))
	}
	fmt.Fprintf(w, "source: %s\n", inc.Source)
	for _, m := range inc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	if len(inc.Services) > 0 {
		fmt.Fprintf(w, "services: %s\n", strings.Join(inc.Services, ", "))
	}
	section(w, "Summary", inc.Summary)
	section(w, "Impact", inc.Impact)
	switch {
	case inc.CauseStatus == kb.CauseUnknown && inc.CauseFrom == kb.CauseFromNone:
		section(w, "Root cause", "Not found in the text — the write-up has no root-cause section and no sentence that gives one.")
	case inc.CauseStatus == kb.CauseUnknown:
		section(w, "Root cause", "Not stated — the write-up says the cause is unknown.")
	case inc.CauseFrom == kb.CauseFromSentence:
		section(w, "Root cause (from the write-up's own sentence)", inc.RootCause)
	default:
		section(w, "Root cause", inc.RootCause)
	}
	for _, s := range inc.Superseded {
		section(w, "Earlier guess (superseded)", s)
	}
	section(w, "Fix", inc.Fix)
	if inc.FixOptions != "" && inc.FixOptions != inc.Fix {
		section(w, "Options considered", inc.FixOptions)
	}
	section(w, "Workaround", inc.Workaround)
	section(w, "Prevention", inc.Prevention)
	section(w, "Lessons", inc.Lessons)
	section(w, "Next steps", inc.NextSteps)
	printRunbook(w, inc.Runbook)
	if len(inc.Signatures) > 0 {
		fmt.Fprintf(w, "\nSignatures (%d)\n", len(inc.Signatures))
		clauses := kb.MatchesThroughClauses(inc.Signatures)
		for _, s := range inc.Signatures {
			fmt.Fprintf(w, "  %s  %s\n", s.ID, clip(s.Template, 160))
			if !clauses || s.IsTemplate {
				continue
			}
			// The other wordings of its failure that it matches too, by
			// family (see patterns.Equivalents).
			var families []string
			other := map[string][]string{}
			for _, e := range patterns.Equivalents(s.Text) {
				if e.Own {
					continue
				}
				if other[e.Family] == nil {
					families = append(families, e.Family)
				}
				other[e.Family] = append(other[e.Family], e.Wording)
			}
			for _, f := range families {
				fmt.Fprintf(w, "      also matches other wordings of the failure (%s): %s\n", f, clip(strings.Join(other[f], " | "), 300))
			}
		}
	}
	if len(inc.References) > 0 {
		fmt.Fprintln(w, "\nReferences")
		for _, r := range inc.References {
			fmt.Fprintf(w, "  %s\n", stripControls2(firstOf(r.URL, r.Text)))
		}
	}
	for _, f := range inc.Extra {
		fmt.Fprintf(w, "%s: %s\n", stripControls2(f.Key), stripControls2(f.Value))
	}
	if len(inc.Overlaps) > 0 {
		fmt.Fprintf(w, "\nSame messages as: %s\n", strings.Join(inc.Overlaps, ", "))
		if inc.TellApart != "" {
			fmt.Fprintf(w, "Telling them apart: %s\n", inc.TellApart)
		}
	}
}

func printRunbook(w io.Writer, steps []kb.Step) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRunbook")
	heading := ""
	for _, s := range steps {
		if s.Heading != heading {
			heading = s.Heading
			fmt.Fprintf(w, "  %s\n", heading)
		}
		if s.Comment != "" {
			fmt.Fprintf(w, "    # %s\n", s.Comment)
		}
		fmt.Fprintf(w, "    $ %s\n", s.Command)
	}
}

func section(w io.Writer, title, body string) {
	body = strings.TrimSpace(plainMarkdown(body))
	if body == "" {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// plainMarkdown drops the emphasis markers that make Markdown noisy in a terminal.
func plainMarkdown(s string) string {
	return strings.NewReplacer("**", "", "__", "").Replace(stripControls2(s))
}

// proseSummary is s for a one-line summary: fenced code blocks are left
// out (the runbook lines show the commands); when s is only code, its first
// command, as "$ command".
func proseSummary(s string) string {
	var prose []string
	first := ""
	in := false
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			in = !in
			continue
		}
		switch {
		case !in:
			prose = append(prose, l)
		case first == "" && t != "" && !strings.HasPrefix(t, "#"):
			first = t
		}
	}
	out := strings.TrimSpace(strings.Join(prose, "\n"))
	if out == "" && first != "" {
		return "$ " + first
	}
	return out
}

// stripControls2 removes control characters (except newline and tab) so a
// write-up cannot send terminal escape sequences.
func stripControls2(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
