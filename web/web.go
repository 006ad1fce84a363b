// Package web is incidex's presentation: the page templates, the static
// assets and the Markdown renderer. It imports no HTTP framework and no
// database; the server hands it plain data (see data.go) and an io.Writer.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed templates static
var files embed.FS

// Pages are the registered pages: each is templates/pages/<name>.html,
// parsed with the layout and the partials into a template set of its own,
// so every page can define "title" and "content" without the last
// definition winning for all.
var Pages = []string{"search", "incident", "analyze", "live", "patterns", "feedback", "edit", "login", "logout", "error", "deadletters"}

// Engine renders pages. It is immutable after New and safe for concurrent use.
type Engine struct {
	sets   map[string]*template.Template
	assets map[string]string // asset name → hashed name
	byHash map[string]string // hashed name → asset name
	static fs.FS
}

// New parses the templates and hashes the static assets. It fails when a
// template does not parse or when the files in templates/pages and the
// registered Pages differ.
func New() (*Engine, error) {
	static, err := fs.Sub(files, "static")
	if err != nil {
		return nil, err
	}
	e := &Engine{sets: map[string]*template.Template{}, assets: map[string]string{}, byHash: map[string]string{}, static: static}
	if err := e.hashAssets(); err != nil {
		return nil, err
	}
	if err := checkRegistered(); err != nil {
		return nil, err
	}
	for _, p := range Pages {
		t, err := template.New(p).Funcs(e.funcs()).ParseFS(files, "templates/layout.html", "templates/partials.html", "templates/pages/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("parse page %s: %w", p, err)
		}
		e.sets[p] = t
	}
	return e, nil
}

// checkRegistered compares the page files with Pages.
func checkRegistered() error {
	names, err := fs.Glob(files, "templates/pages/*.html")
	if err != nil {
		return err
	}
	var onDisk []string
	for _, n := range names {
		onDisk = append(onDisk, strings.TrimSuffix(path.Base(n), ".html"))
	}
	for _, n := range onDisk {
		if !slices.Contains(Pages, n) {
			return fmt.Errorf("page template %s.html is not registered in web.Pages", n)
		}
	}
	for _, p := range Pages {
		if !slices.Contains(onDisk, p) {
			return fmt.Errorf("registered page %s has no templates/pages/%s.html", p, p)
		}
	}
	return nil
}

// Render renders page with data into w. Render into a buffer and copy it
// out on success, so that a template error can still become a clean 500.
func (e *Engine) Render(w io.Writer, page string, data any) error {
	t := e.sets[page]
	if t == nil {
		return fmt.Errorf("render: no page %q", page)
	}
	if err := t.ExecuteTemplate(w, "layout", data); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	return nil
}

// hashAssets names every static file by its content hash:
// app.css → app.1a2b3c4d5e.css.
func (e *Engine) hashAssets() error {
	return fs.WalkDir(e.static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(e.static, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(p)
		hashed := strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:5]) + ext
		e.assets[p] = hashed
		e.byHash[hashed] = p
		return nil
	})
}

// AssetURL returns the URL of a static asset, with its content hash in
// the name so that it can be cached for good.
func (e *Engine) AssetURL(name string) string {
	if h, ok := e.assets[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

// Static returns the static assets. A name may be the plain name
// (app.css) or the hashed one (app.1a2b3c4d5e.css).
func (e *Engine) Static() fs.FS { return staticFS{e} }

// Immutable reports whether name is a hashed asset name, whose content
// never changes.
func (e *Engine) Immutable(name string) bool {
	_, ok := e.byHash[strings.TrimPrefix(name, "/")]
	return ok
}

type staticFS struct{ e *Engine }

func (s staticFS) Open(name string) (fs.File, error) {
	if orig, ok := s.e.byHash[name]; ok {
		name = orig
	}
	return s.e.static.Open(name)
}
