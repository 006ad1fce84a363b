package web

import (
	"regexp"

	"github.com/incidex/incidex/kb"
)

// RunbookGroup is the runbook steps under one heading of the write-up.
type RunbookGroup struct {
	Heading string
	Steps   []RunbookStep
}

// RunbookStep is one numbered step: what it does, and its commands in order.
type RunbookStep struct {
	Text     string
	Commands []RunbookCommand
}

// RunbookCommand is a command of a step; N numbers it across the runbook,
// for element ids.
type RunbookCommand struct {
	N       int
	Command string
}

// stepNumber is a number a write-up put before a step ("1. ", "2) ",
// "Step 3: "); the rendered list numbers the steps itself.
var stepNumber = regexp.MustCompile(`^(?i:step\s*)?\d{1,3}\s*[.):]\s+`)

// Runbook groups a runbook's steps by the heading they came from: a heading
// titles its group rather than becoming a step, and a command without a
// comment of its own continues the step before it under the same heading.
func Runbook(steps []kb.Step) []RunbookGroup {
	var groups []RunbookGroup
	for i, s := range steps {
		if len(groups) == 0 || i > 0 && (s.Heading != steps[i-1].Heading || s.Section != steps[i-1].Section) {
			groups = append(groups, RunbookGroup{Heading: s.Heading})
		}
		g := &groups[len(groups)-1]
		cmd := RunbookCommand{N: i, Command: s.Command}
		if s.Comment == "" && len(g.Steps) > 0 {
			last := &g.Steps[len(g.Steps)-1]
			last.Commands = append(last.Commands, cmd)
			continue
		}
		g.Steps = append(g.Steps, RunbookStep{Text: stepNumber.ReplaceAllString(s.Comment, ""), Commands: []RunbookCommand{cmd}})
	}
	return groups
}
