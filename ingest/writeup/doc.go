// Package writeup turns incident write-ups into kb incidents: Markdown
// (with front matter in several dialects), HTML pages saved from wikis and
// incident libraries, and incident-library text. It finds the sections
// (cause, fix, runbook, lessons) by heading or by sentence, and extracts
// the log lines pasted in code blocks, blockquotes and inline code into
// signatures. It is the only package besides web that imports goldmark.
package writeup
