// Package starter holds the bundled starter knowledge base: write-ups of
// common Kubernetes failure modes that a new data directory starts with.
// They are plain Markdown files under kb/, so users can read, copy and edit
// them.
package starter

import (
	"embed"
	"io/fs"
)

//go:embed kb/*.md
var files embed.FS

// FS returns the starter write-ups; every file is a Markdown write-up at the root.
func FS() fs.FS {
	sub, err := fs.Sub(files, "kb")
	if err != nil {
		panic("BUG: starter: " + err.Error())
	}
	return sub
}

// SourcePrefix marks incidents that came from the starter knowledge base.
const SourcePrefix = "starter:"
