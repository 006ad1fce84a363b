package writeup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/incidex/incidex/kb"
)

// MaxWriteupBytes is the default size limit for one write-up file.
const MaxWriteupBytes = 8 << 20

// writeupExts are the file extensions a directory walk ingests.
var writeupExts = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".html": true, ".htm": true}

// FileError is a write-up file that could not be ingested, with the reason.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Collect expands paths into the write-up files to ingest: files are taken
// as given, directories are walked for .md, .markdown, .txt, .html and
// .htm files (hidden directories skipped). Unreadable paths are reported as errors.
func Collect(paths []string) ([]string, []error) {
	var files []string
	var errs []error
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &FileError{Path: p, Err: errors.Unwrap(err)})
			continue
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, &FileError{Path: path, Err: errors.Unwrap(err)})
				return nil
			}
			if d.IsDir() && path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && writeupExts[strings.ToLower(filepath.Ext(path))] {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, &FileError{Path: p, Err: err})
		}
	}
	sort.Strings(files)
	return files, errs
}

// ReadWriteup reads a write-up file and checks that it is text a parser can
// take: not empty, not over max bytes, valid UTF-8, not binary.
func ReadWriteup(path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxWriteupBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: errors.Unwrap(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if st.IsDir() {
		return nil, &FileError{Path: path, Err: errors.New("is a directory")}
	}
	if st.Size() > max {
		return nil, &FileError{Path: path, Err: fmt.Errorf("file is %d bytes, over the %d-byte limit", st.Size(), max)}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, &FileError{Path: path, Err: fmt.Errorf("read: %w", err)}
	}
	if err := CheckText(buf.Bytes(), max); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return buf.Bytes(), nil
}

// CheckText rejects content that is not a text write-up.
func CheckText(b []byte, max int64) error {
	if max <= 0 {
		max = MaxWriteupBytes
	}
	switch {
	case int64(len(b)) > max:
		return fmt.Errorf("content is %d bytes, over the %d-byte limit", len(b), max)
	case len(bytes.TrimSpace(b)) == 0:
		return errors.New("file is empty")
	case bytes.IndexByte(b, 0) >= 0:
		return errors.New("binary file (contains NUL bytes)")
	case !utf8.Valid(b):
		return fmt.Errorf("not valid UTF-8 (first bad byte at offset %d)", firstInvalidUTF8(b))
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// ParseWriteup parses a write-up by its content: incident-library text gives
// one incident per entry, an HTML page (by its name or its first tag) one
// incident, anything else is Markdown.
func ParseWriteup(name string, data []byte) ([]*kb.Incident, error) {
	p, err := ParseFile(name, data)
	return p.Incidents, err
}

// Parsed is what a write-up file gave: its incidents, and warnings about
// parts that were left out (a front-matter field of the wrong type).
type Parsed struct {
	Incidents []*kb.Incident
	Warnings  []string
}

// ParseFile is ParseWriteup with the parser's warnings.
func ParseFile(name string, data []byte) (Parsed, error) {
	var p Parsed
	switch {
	case IsHTML(name, data):
		inc, warn, err := ParseHTML(name, data)
		if err != nil {
			return Parsed{}, err
		}
		p.Incidents, p.Warnings = []*kb.Incident{inc}, warn
	case IsLibrary(data):
		incs, err := ParseLibrary(name, data)
		if err != nil {
			return Parsed{}, err
		}
		p.Incidents = incs
	default:
		inc, warn, err := parseMarkdown(name, data)
		if err != nil {
			return Parsed{}, err
		}
		p.Incidents, p.Warnings = []*kb.Incident{inc}, warn
	}
	for _, inc := range p.Incidents {
		normalize(inc)
		capIncident(inc)
	}
	return p, nil
}

// normalize gives every list a non-nil value so JSON output is stable.
func normalize(inc *kb.Incident) {
	for _, p := range []*[]string{&inc.Tags, &inc.Services, &inc.Superseded, &inc.Overlaps, &inc.Causes, &inc.Pins, &inc.Examples, &inc.Counter} {
		if *p == nil {
			*p = []string{}
		}
	}
	if inc.Runbook == nil {
		inc.Runbook = []kb.Step{}
	}
	if inc.References == nil {
		inc.References = []kb.Ref{}
	}
	if inc.Logs == nil {
		inc.Logs = []kb.Block{}
	}
	if inc.Extra == nil {
		inc.Extra = []kb.Field{}
	}
	if inc.Sections == nil {
		inc.Sections = []kb.Section{}
	}
	if inc.Signatures == nil {
		inc.Signatures = []kb.Signature{}
	}
}
