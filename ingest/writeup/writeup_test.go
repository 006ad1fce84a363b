package writeup

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/kb"
)

func parseFile(t *testing.T, path string) []*kb.Incident {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	incs, err := ParseWriteup(path, b)
	if err != nil {
		t.Fatalf("ParseWriteup(%s): %v", path, err)
	}
	return incs
}

// TestParseGolden compares every fixture write-up's parse with its golden
// file; UPDATE_GOLDEN=1 rewrites them.
func TestParseGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/writeups/*")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			incs := parseFile(t, f)
			for _, inc := range incs {
				inc.Body = "" // the original text is the fixture itself
			}
			got, err := json.MarshalIndent(incs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata/golden", filepath.Base(f)+".json")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./ingest)", err)
			}
			if d := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(string(got))); d != "" {
				t.Errorf("parse of %s differs from %s (-want +got):\n%s", f, golden, d)
			}
		})
	}
}

func TestParseMarkdownRevisedRootCause(t *testing.T) {
	inc := parseFile(t, "testdata/writeups/rabbitmq-sandbox-flannel.md")[0]
	if !strings.Contains(inc.RootCause, "short window before flanneld") {
		t.Errorf("RootCause = %q, want the final Root Cause Analysis (the start-up window)", inc.RootCause)
	}
	if len(inc.Superseded) != 1 || !strings.Contains(inc.Superseded[0], "daemon on worker-7 had crashed") {
		t.Errorf("Superseded = %q, want the first guess", inc.Superseded)
	}
	if inc.CauseStatus != kb.CauseKnown {
		t.Errorf("CauseStatus = %q, want known", inc.CauseStatus)
	}
}

func TestParseMarkdownRunbookAndLogs(t *testing.T) {
	inc := parseFile(t, "testdata/writeups/rabbitmq-sandbox-flannel.md")[0]
	var cmds []string
	for _, s := range inc.Runbook {
		cmds = append(cmds, s.Command)
	}
	all := strings.Join(cmds, "\n")
	for _, want := range []string{"kubectl -n kube-flannel logs -l app=flannel --tail=200", "talosctl -n <node-ip> get machineconfig -o yaml", "ls -la /run/flannel/subnet.env"} {
		if !strings.Contains(all, want) {
			t.Errorf("runbook lacks %q; have:\n%s", want, all)
		}
	}
	var events []string
	for _, s := range inc.Signatures {
		if s.Kind == kb.SigEvent {
			events = append(events, s.Text)
		}
		if strings.Contains(s.Text, "kubectl") || strings.Contains(s.Text, "talosctl") {
			t.Errorf("signature %q is a command, not a log line", s.Text)
		}
	}
	if len(events) != 2 || !strings.HasPrefix(events[1], "Warning  FailedCreatePodSandBox  Failed to create pod sandbox: rpc error:") || !strings.HasSuffix(events[1], "no such file or directory") {
		t.Errorf("event signatures = %q, want NodeNotReady and the wrapped FailedCreatePodSandBox event joined into one line", events)
	}
	var logBlock bool
	for _, b := range inc.Logs {
		if b.Class == ClassLog && b.Heading == "Pod Events" {
			logBlock = true
		}
	}
	if !logBlock {
		t.Errorf("the pod events block is not kept as log output: %+v", inc.Logs)
	}
	if inc.Date != "2025-03-04" {
		t.Errorf("Date = %q, want 2025-03-04 from the Last Updated line", inc.Date)
	}
}

func TestParseLibraryEntries(t *testing.T) {
	incs := parseFile(t, "testdata/writeups/IL-0142-example.txt")
	if len(incs) != 2 {
		t.Fatalf("got %d incidents, want 2 (one per entry)", len(incs))
	}
	a, b := incs[0], incs[1]
	if a.ID != "IL-0142" || a.Organisation != "Northwind Hosting" || a.Date != "2024-11-20" {
		t.Errorf("header = %q %q %q, want IL-0142 Northwind Hosting 2024-11-20", a.ID, a.Organisation, a.Date)
	}
	if d := cmp.Diff([]string{"kubernetes", "networking", "dns"}, a.Tags); d != "" {
		t.Errorf("glued tags split wrong (-want +got):\n%s", d)
	}
	if a.CauseStatus != kb.CauseUnknown || a.RootCause != "" {
		t.Errorf("root cause = %q (%s), want explicitly unknown", a.RootCause, a.CauseStatus)
	}
	if a.Symptoms != "Pods without IP addresses\nDNS resolution failures" {
		t.Errorf("Symptoms = %q, want the glued values split", a.Symptoms)
	}
	if len(a.Signatures) != 1 || !strings.HasSuffix(a.Signatures[0].Text, "dial tcp 10.43.0.1:443: i/o timeout") || !strings.HasPrefix(a.Signatures[0].Text, "Failed to destroy network") {
		t.Errorf("signatures = %+v, want the quoted log line with its nested quotes", a.Signatures)
	}
	if len(a.Logs) != 1 || a.Logs[0].Class != ClassLog {
		t.Errorf("Logs = %+v, want the quoted line kept as log text", a.Logs)
	}
	if b.ID != "IL-0143" || b.CauseStatus != kb.CauseKnown || !strings.Contains(b.RootCause, "debug logging") {
		t.Errorf("second entry = %s %s %q", b.ID, b.CauseStatus, b.RootCause)
	}
}

// TestParseInputFormats checks the repository's two write-ups in the two
// input formats (testdata/writeups at the module root): an incident-library
// entry with its tags glued to the date and its fields glued together, and
// a Markdown postmortem whose later "Root Cause Analysis" revises its first
// guess.
func TestParseInputFormats(t *testing.T) {
	dir := "../../testdata/writeups"
	il := parseFile(t, filepath.Join(dir, "IL-0311-harbor-systems.txt"))
	if len(il) != 1 {
		t.Fatalf("IL-0311 gave %d incidents", len(il))
	}
	i := il[0]
	if i.ID != "IL-0311" || i.Organisation != "Harbor Systems" || i.Date != "2024-07-16" || strings.Join(i.Tags, ",") != "kubernetes,networking" || i.CauseStatus != kb.CauseUnknown {
		t.Errorf("IL-0311 = %s / %s / %s / %v / %s", i.ID, i.Organisation, i.Date, i.Tags, i.CauseStatus)
	}
	if len(i.Logs) != 1 || !strings.Contains(i.Logs[0].Lines[0], "dial tcp 10.43.0.1:443: i/o timeout") {
		t.Errorf("IL-0311 log text = %+v", i.Logs)
	}
	if !strings.Contains(i.Symptoms, "Runner pods without IP addresses") || !strings.Contains(i.Symptoms, "Build queue stalled") {
		t.Errorf("IL-0311 symptoms = %q, want the two glued symptoms apart", i.Symptoms)
	}
	pg := parseFile(t, filepath.Join(dir, "postgres-sandbox-race.md"))[0]
	if !strings.Contains(pg.RootCause, "race condition") || len(pg.Superseded) != 1 || !strings.Contains(pg.Superseded[0], "subnet.env") {
		t.Errorf("postgres root cause = %q superseded = %q", pg.RootCause, pg.Superseded)
	}
	var cmds []string
	for _, s := range pg.Runbook {
		cmds = append(cmds, s.Command)
	}
	all := strings.Join(cmds, "\n")
	if !strings.Contains(all, "crictl pods --name pg-ledger-0") || !strings.Contains(all, "kubectl -n kube-flannel get pods -o wide --field-selector spec.nodeName=edge-2") {
		t.Errorf("postgres runbook = %q", cmds)
	}
	var events int
	for _, s := range pg.Signatures {
		if s.Kind == kb.SigEvent {
			events++
		}
	}
	if events != 2 {
		t.Errorf("postgres has %d event signatures, want 2 (NodeNotReady, FailedCreatePodSandBox)", events)
	}
}

func TestParseMarkdownIDs(t *testing.T) {
	f := func(name, src, want string) {
		t.Helper()
		inc, err := ParseMarkdown(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if inc.ID != want {
			t.Errorf("ParseMarkdown(%s).ID = %q, want %q", name, inc.ID, want)
		}
	}
	f("x/a.md", "---\nid: my-id\n---\n# T\n", "my-id")
	f("x/b.md", "IL-0042 Org · 2024-01-01\n\ntext\n", "IL-0042")
	f("x/Post Mortem (2024).md", "# T\n", "Post-Mortem-2024")
	// Without a file name (an API body, a pasted form) the id comes from
	// the content: the title's slug and a short hash of the text.
	f("", "# Broker disk full\n\nThe volume filled.\n", "broker-disk-full-"+contentHash([]byte("# Broker disk full\n\nThe volume filled.\n"))[:8])
	a, _ := ParseMarkdown("", []byte("# Same title\n\none text\n"))
	b, _ := ParseMarkdown("", []byte("# Same title\n\nanother text\n"))
	if a.ID == b.ID || !strings.HasPrefix(a.ID, "same-title-") {
		t.Errorf("two unnamed write-ups with one title got ids %q and %q, want same-title-<hash>, distinct", a.ID, b.ID)
	}
	if _, err := ParseMarkdown("x.md", []byte("---\nid: ../etc\n---\n")); err == nil {
		t.Errorf("ParseMarkdown accepted id ../etc")
	}
	if _, err := ParseMarkdown("x.md", []byte("---\ntags: [a\n---\n# T\n")); err == nil || !strings.HasPrefix(err.Error(), "front matter:") {
		t.Errorf("bad YAML error = %v, want a front matter error", err)
	}
	if _, err := ParseMarkdown("x.md", []byte("---\nsignatures: ['dial <ipp> x']\n---\n# T\n")); err == nil || !strings.Contains(err.Error(), "<ipp>") {
		t.Errorf("bad curated signature error = %v, want one naming <ipp>", err)
	}
}

func TestHeadingKind(t *testing.T) {
	f := func(h, want string) {
		t.Helper()
		if got, _ := headingKind(h); got != want {
			t.Errorf("headingKind(%q) = %q, want %q", h, got, want)
		}
	}
	f("Root Cause", kb.SectionRootCause)
	f("Root Cause Analysis", kb.SectionRootCause)
	f("Why", kb.SectionRootCause)
	f("What we saw", kb.SectionSymptoms)
	f("Detection", kb.SectionSymptoms)
	f("🔧 Fixes Implemented", kb.SectionFix)
	f("Solution Implemented", kb.SectionFix)
	f("What fixed it", kb.SectionFix)
	f("Workaround (Temporary)", kb.SectionWorkaround)
	f("Investigation Steps", kb.SectionRunbook)
	f("How to confirm", kb.SectionRunbook)
	f("Next Steps", kb.SectionNextSteps)
	f("Lessons Learned", kb.SectionLessons)
	f("Verification", kb.SectionMonitoring)
	f("References", kb.SectionReferences)
	f("Problem Summary", kb.SectionSummary)
	f("2. Verify Node Network Configuration", "") // a step of its parent
	f("Option 1: Restart Flannel DaemonSet", "")
	f("Pod Events", kb.SectionSymptoms)
	// How people head the part that explains the failure.
	f("what is going on", kb.SectionRootCause)
	f("Explanation", kb.SectionRootCause)
	f("The culprit", kb.SectionRootCause)
	f("Why this happens", kb.SectionRootCause)
}

func TestQuotedSpansNested(t *testing.T) {
	s := `The log showed: "Final result of CNI DEL was an error. error=error getting ClusterInformation: Get "https://10.43.0.1:443/apis/x": dial tcp 10.43.0.1:443: i/o timeout". Then "ok".`
	got := quotedSpans(s)
	want := []string{`Final result of CNI DEL was an error. error=error getting ClusterInformation: Get "https://10.43.0.1:443/apis/x": dial tcp 10.43.0.1:443: i/o timeout`, "ok"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("quotedSpans (-want +got):\n%s", d)
	}
}

func TestSplitGlued(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		if d := cmp.Diff(want, splitGlued(in)); d != "" {
			t.Errorf("splitGlued(%q) (-want +got):\n%s", in, d)
		}
	}
	f("Sustained high node CPUService outage", "Sustained high node CPU", "Service outage")
	f("Pods stuck in ContainerCreating", "Pods stuck in ContainerCreating")
	f("Pods without IP addressesDNS resolution failures", "Pods without IP addresses", "DNS resolution failures")
	if d := cmp.Diff([]string{"kubernetes", "networking"}, splitGluedTags("kubernetesnetworking")); d != "" {
		t.Errorf("splitGluedTags: %s", d)
	}
	if d := cmp.Diff([]string{"zzqx"}, splitGluedTags("zzqx")); d != "" {
		t.Errorf("splitGluedTags(unknown): %s", d)
	}
}

func TestReadWriteupRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
		max              int64
	}{
		{"binary", write("a.md", []byte("PK\x03\x04\x00\x00binary")), "binary file", 0},
		{"invalid utf-8", write("b.md", []byte("# T\n\xff\xfe bad")), "not valid UTF-8", 0},
		{"empty", write("c.md", []byte(" \n\n")), "file is empty", 0},
		{"too big", write("d.md", []byte(strings.Repeat("x", 2000))), "over the 1000-byte limit", 1000},
		{"missing", filepath.Join(dir, "nope.md"), "no such file or directory", 0},
		{"directory", dir, "is a directory", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadWriteup(tt.path, tt.max)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != tt.path || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadWriteup(%s) = %v, want a FileError naming the file and %q", tt.path, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

func TestCollectWalksDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.md", "b.markdown", "c.txt", "d.yaml", "sub/e.md", ".git/f.md"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, errs := Collect([]string{dir, filepath.Join(dir, "missing")})
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(dir, f)
		rel = append(rel, r)
	}
	if d := cmp.Diff([]string{"a.md", "b.markdown", "c.txt", "sub/e.md"}, rel); d != "" {
		t.Errorf("Collect (-want +got):\n%s", d)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "missing") {
		t.Errorf("Collect errors = %v, want one for the missing path", errs)
	}
}

func TestClassifyBlock(t *testing.T) {
	f := func(lang string, lines []string, want string) {
		t.Helper()
		if got := classifyBlock(lang, lines); got != want {
			t.Errorf("classifyBlock(%q, %q) = %q, want %q", lang, lines, got, want)
		}
	}
	f("bash", []string{"echo hi"}, ClassCommands)
	f("", []string{"kubectl get pods", "crictl ps"}, ClassCommands)
	f("", []string{"Warning  Failed  x"}, ClassLog)
	f("log", []string{"anything"}, ClassLog)
	f("yaml", []string{"a: b"}, ClassConfig)
	f("text", []string{"$ kubectl get pods"}, ClassCommands)
}
