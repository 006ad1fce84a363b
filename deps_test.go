// The dependency rules of the layout (ARCHITECTURE.md, "Packages and what
// they may import"), checked on every test run: a change that breaks one
// fails here with the package, the import and the rule.
package incidex_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/incidex/incidex"

// depRule forbids packages matching Where (module-relative path prefixes;
// "" is every package) to import paths with one of the Deny prefixes,
// except the packages in Except.
type depRule struct {
	Name   string
	Where  []string
	Except []string
	Deny   []string
	// AllowOnly, when set, turns Deny around: of the module's own
	// packages, only these may be imported.
	AllowOnly []string
}

var depRules = []depRule{
	{Name: "patterns imports only the standard library", Where: []string{"patterns"}, Deny: []string{"*"}},
	{Name: "decoders import no incidex package", Where: []string{"ingest/decode"}, Deny: []string{module}},
	{Name: "the queue needs only the decoders' records", Where: []string{"ingest/queue"}, AllowOnly: []string{"ingest/decode"}},
	{Name: "kb builds on patterns only", Where: []string{"kb"}, Except: []string{"kb/kbtest"}, AllowOnly: []string{"patterns"}},
	{Name: "web renders kb types only", Where: []string{"web"}, AllowOnly: []string{"kb"}},
	{Name: "gin only in server", Where: []string{""}, Except: []string{"server"}, Deny: []string{"github.com/gin-gonic/"}},
	{Name: "bleve only in kb", Where: []string{""}, Except: []string{"kb"}, Deny: []string{"github.com/blevesearch/"}},
	{Name: "the SQLite driver only in kb", Where: []string{""}, Except: []string{"kb"}, Deny: []string{"modernc.org/sqlite"}},
	{Name: "goldmark only in the write-up parser and web", Where: []string{""}, Except: []string{"ingest/writeup", "web"}, Deny: []string{"github.com/yuin/goldmark"}},
	{Name: "the NATS server only in tests (production links the client)", Where: []string{""}, Deny: []string{"github.com/nats-io/nats-server/"}},
	{Name: "nothing imports server or cmd but cmd", Where: []string{""}, Except: []string{"cmd/incidex"}, Deny: []string{module + "/server", module + "/cmd/"}},
}

// TestDependencyRules lists every package's non-test imports with go list
// and checks them against depRules.
func TestDependencyRules(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
	}
	if len(graph) < 10 {
		t.Fatalf("go list found %d packages; the check would prove nothing", len(graph))
	}
	for _, v := range checkDeps(graph, depRules) {
		t.Error(v)
	}
}

// TestDependencyRulesCatchViolations plants one violation of each rule in a
// copy of a small graph: the check reports every one of them.
func TestDependencyRulesCatchViolations(t *testing.T) {
	clean := map[string][]string{
		module + "/patterns":      {"strings"},
		module + "/ingest/decode": {"bytes", "github.com/klauspost/compress/zstd"},
		module + "/ingest/queue":  {module + "/ingest/decode", "github.com/nats-io/nats.go"},
		module + "/kb":            {module + "/patterns", "github.com/blevesearch/bleve/v2", "modernc.org/sqlite"},
		module + "/web":           {module + "/kb", "github.com/yuin/goldmark"},
		module + "/server":        {module + "/kb", "github.com/gin-gonic/gin"},
		module + "/cmd/incidex":   {module + "/server"},
	}
	if v := checkDeps(clean, depRules); len(v) > 0 {
		t.Fatalf("clean graph reported: %v", v)
	}
	plants := []struct{ pkg, imp, rule string }{
		{"patterns", "os", "patterns imports only the standard library"}, // std is fine...
		{"patterns", "github.com/x/y", "patterns imports only the standard library"},
		{"ingest/decode", module + "/kb", "decoders import no incidex package"},
		{"ingest/queue", module + "/kb", "the queue needs only the decoders' records"},
		{"kb", module + "/ingest", "kb builds on patterns only"},
		{"web", module + "/server", "web renders kb types only"},
		{"kb", "github.com/gin-gonic/gin", "gin only in server"},
		{"server", "github.com/blevesearch/bleve/v2", "bleve only in kb"},
		{"cmd/incidex", "modernc.org/sqlite", "the SQLite driver only in kb"},
		{"server", "github.com/yuin/goldmark", "goldmark only in the write-up parser and web"},
		{"ingest/queue", "github.com/nats-io/nats-server/v2/server", "the NATS server only in tests (production links the client)"},
		{"kb", module + "/server", "nothing imports server or cmd but cmd"},
	}
	for _, p := range plants {
		g := map[string][]string{}
		for k, v := range clean {
			g[k] = slices.Clone(v)
		}
		g[module+"/"+p.pkg] = append(g[module+"/"+p.pkg], p.imp)
		v := checkDeps(g, depRules)
		if p.imp == "os" {
			if len(v) > 0 {
				t.Errorf("patterns importing os (standard library) reported: %v", v)
			}
			continue
		}
		if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, p.rule) }) {
			t.Errorf("%s importing %s: want a %q violation, got %v", p.pkg, p.imp, p.rule, v)
		}
	}
}

func checkDeps(graph map[string][]string, rules []depRule) []string {
	var out []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, r := range rules {
			if !under(rel, r.Where) || inList(rel, r.Except) {
				continue
			}
			for _, imp := range graph[pkg] {
				if bad(imp, r) {
					out = append(out, fmt.Sprintf("%s imports %s: rule %q", pkg, imp, r.Name))
				}
			}
		}
	}
	return out
}

func bad(imp string, r depRule) bool {
	if r.AllowOnly != nil {
		if !strings.HasPrefix(imp, module+"/") {
			return false
		}
		rel := strings.TrimPrefix(imp, module+"/")
		return !slices.Contains(r.AllowOnly, rel)
	}
	for _, d := range r.Deny {
		if d == "*" {
			if !isStd(imp) {
				return true
			}
			continue
		}
		if strings.HasPrefix(imp, d) {
			return true
		}
	}
	return false
}

// isStd reports whether an import path is the standard library's: its first
// element has no dot.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// under reports whether rel is one of prefixes or below one ("" is all).
func under(rel string, prefixes []string) bool {
	for _, p := range prefixes {
		if p == "" || rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

func inList(rel string, list []string) bool {
	for _, p := range list {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}
