package writeup

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/incidex/incidex/kb"
)

// libraryHeader matches an incident-library entry header:
// "IL-0087 Fyra Labs · 2023-04-09kubernetesnetworking". Ids come in the
// forms teams number incidents in: with a date or a sequence of their own
// ("INC-2022-0315", "SEC-2021-07-A"), in lower case ("ir-2015-031"), with
// a hash ("SEV3#5521") or a hex suffix ("OPS-7f3a"); an id has a digit
// (see isLibraryHeader).
var libraryHeader = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9]{0,7}[-#][A-Za-z0-9]{1,8}(?:[-#][A-Za-z0-9]{1,8}){0,3})\s+(.*?)\s*[·•|]\s*(\d{4}-\d{2}-\d{2})\s*(.*?)\s*$`)

// libraryField matches "Symptom ? ...", "Root cause ? Not stated" (the "?"
// is an icon the scrape lost; ":" and "•" also occur).
var libraryField = regexp.MustCompile(`(?i)^\s*(symptoms?|root causes?|impact|trigger|triggers|fix|resolution|detection|mitigation|duration|services?|follow-ups?|next steps?|lessons?|notes?|verify|verification)\s*(?:->|=>|[?:：•\-–→])\s*(.*)$`)

// isLibraryHeader reports an entry header (libraryHeader) whose id has a
// digit: "Re-run · 2024-01-02" is a sentence.
func isLibraryHeader(l string) bool {
	m := libraryHeader.FindStringSubmatch(l)
	return m != nil && strings.ContainsAny(m[1], "0123456789")
}

// IsLibrary reports whether data looks like incident-library text: its
// first non-empty line is an entry header.
func IsLibrary(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		return isLibraryHeader(line)
	}
	return false
}

// ParseLibrary parses incident-library text: one incident per entry header.
func ParseLibrary(name string, data []byte) ([]*kb.Incident, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var out []libEntry
	start := -1
	for i, l := range lines {
		if isLibraryHeader(l) {
			if start >= 0 {
				out = append(out, parseEntry(name, lines[start:i]))
			}
			start = i
		}
	}
	if start >= 0 {
		out = append(out, parseEntry(name, lines[start:]))
	}
	for _, e := range out {
		cands := e.quotes
		if len(cands) == 0 {
			cands = rankQuiet(e.quiet)
		}
		sigs, err := buildSignatures(e.ID, nil, cands)
		if err != nil {
			return nil, err
		}
		e.Signatures = sigs
	}
	incs := make([]*kb.Incident, len(out))
	for i := range out {
		incs[i] = out[i].Incident
	}
	return incs, nil
}

type libEntry struct {
	*kb.Incident
	quotes []sigCandidate
	// quiet are log lines pasted under a lead-in that do not read as
	// failures: an entry with no error text learns them (rankQuiet).
	quiet []sigCandidate
}

func parseEntry(name string, lines []string) libEntry {
	m := libraryHeader.FindStringSubmatch(lines[0])
	body := strings.Join(lines, "\n")
	inc := &kb.Incident{
		ID: m[1], Organisation: strings.TrimSpace(m[2]), Date: m[3], Tags: libraryTags(m[4]),
		Source: name, Format: "library", Body: body, Hash: contentHash([]byte(body)),
		Services: []string{}, Superseded: []string{}, CauseStatus: kb.CauseKnown,
	}
	e := libEntry{Incident: inc}
	// Prose before the fields tells the story; prose after them, before
	// the first separator, is the timeline; after a separator, lessons.
	var prose, timeline, lessons, symptoms []string
	afterSep, afterFields := false, false
	// A log line pasted as a paragraph of its own, after a line that
	// leads in to it ("Container log:", "Error from the clients:"), is
	// log text: pasted says the lines since such a lead-in and a blank
	// line are such a paragraph.
	pasted, leadIn := false, false
	for _, l := range lines[1:] {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			pasted, leadIn = leadIn, false
		case (pasted || leadIn && messageShaped(t)) && !libraryField.MatchString(t) && errorText(t, 3):
			pasted, leadIn = true, false
			e.quotes = append(e.quotes, sigCandidate{text: t, kind: kb.SigCode, section: kb.SectionSummary})
			e.Logs = append(e.Logs, kb.Block{Section: kb.SectionSummary, Heading: "Summary", Class: ClassLog, Lines: []string{t}})
			continue
		case pasted && !libraryField.MatchString(t) && pastedShaped(t) && !isCommandLine(t):
			// A quiet line in the paste ("... W | rafthttp: the clock
			// difference against peer ... is too high"): the log text of an
			// entry with no error text.
			e.quiet = append(e.quiet, sigCandidate{text: t, kind: kb.SigCode, section: kb.SectionSummary})
			e.Logs = append(e.Logs, kb.Block{Section: kb.SectionSummary, Heading: "Summary", Class: ClassLog, Lines: []string{t}})
			continue
		default:
			// "The traceback from the sqlalchemy pool ended with" leads in
			// as a colon does.
			pasted, leadIn = false, leadsIn(t)
		}
		switch {
		case t == "":
		case isSeparatorLine(t):
			afterSep = true
		case libraryField.MatchString(t):
			f := libraryField.FindStringSubmatch(t)
			e.field(strings.ToLower(f[1]), strings.TrimSpace(f[2]), &symptoms, &lessons)
			afterFields = true
		case afterSep:
			lessons = append(lessons, t)
		case afterFields:
			timeline = append(timeline, t)
		default:
			prose = append(prose, t)
			e.addQuotes(t)
		}
	}
	if len(prose) > 0 {
		inc.Summary = prose[0]
	}
	e.causeFromProse(prose)
	details := strings.Join(prose[min(1, len(prose)):], "\n\n")
	inc.Timeline = strings.Join(timeline, "\n\n")
	inc.Lessons = strings.Join(lessons, "\n\n")
	inc.Symptoms = strings.Join(symptoms, "\n")
	inc.Title = libraryTitle(inc, symptoms)
	for _, s := range []struct{ kind, heading, text string }{
		{kb.SectionSummary, "Summary", inc.Summary}, {"", "Details", details}, {kb.SectionSymptoms, "Symptoms", inc.Symptoms},
		{kb.SectionRootCause, "Root cause", inc.RootCause}, {kb.SectionTimeline, "Timeline", inc.Timeline},
		{kb.SectionLessons, "Lessons", inc.Lessons},
	} {
		if s.text != "" {
			inc.Sections = append(inc.Sections, kb.Section{Kind: s.kind, Heading: s.heading, Level: 2, Text: s.text})
		}
	}
	if inc.CauseStatus == kb.CauseUnknown {
		inc.Sections = append(inc.Sections, kb.Section{Kind: kb.SectionRootCause, Heading: "Root cause", Level: 2, Text: "Not stated"})
	}
	return e
}

// causeFromProse: an entry without a "Root cause" field may still say the
// cause in its prose; with no cause anywhere it is not found, not "not
// stated".
func (e *libEntry) causeFromProse(prose []string) {
	switch {
	case e.CauseFrom != "":
		return
	case e.RootCause != "":
		e.CauseFrom = kb.CauseFromSection
		return
	}
	var ss []sentence
	for _, p := range prose {
		for _, s := range splitSentences(p) {
			ss = append(ss, sentence{text: s})
		}
	}
	f := findProse(ss, true, e.Fix == "", e.Lessons == "", e.Impact == "")
	switch {
	case f.cause != "":
		e.RootCause, e.CauseSource, e.CauseStatus, e.CauseFrom = f.cause, f.cause, kb.CauseKnown, kb.CauseFromSentence
	case f.causeStatedUnknown:
		e.CauseStatus, e.CauseFrom = kb.CauseUnknown, kb.CauseFromStated
	default:
		e.CauseStatus, e.CauseFrom = kb.CauseUnknown, kb.CauseFromNone
	}
	if e.Fix == "" {
		e.Fix = f.fix
	}
	if e.Prevention == "" {
		e.Prevention = f.prevention
	}
}

// addQuotes keeps quoted error text of a paragraph as log text and as
// signature candidates.
func (e *libEntry) addQuotes(t string) {
	for _, q := range quotedSpans(t) {
		if !quotedError(q) {
			continue
		}
		e.quotes = append(e.quotes, sigCandidate{text: q, kind: kb.SigQuote, section: kb.SectionSummary})
		e.Logs = append(e.Logs, kb.Block{Section: kb.SectionSummary, Heading: "Summary", Lang: "quote", Class: ClassLog, Lines: []string{q}})
	}
}

func (e *libEntry) field(name, value string, symptoms, lessons *[]string) {
	switch {
	case strings.HasPrefix(name, "follow-up"), strings.HasPrefix(name, "next step"), strings.HasPrefix(name, "lesson"), strings.HasPrefix(name, "note"):
		*lessons = append(*lessons, value)
	case strings.HasPrefix(name, "verif"):
		e.Fix = joinText(e.Fix, value)
	case strings.HasPrefix(name, "symptom"):
		*symptoms = append(*symptoms, splitGlued(value)...)
	case strings.HasPrefix(name, "root cause"):
		if unknownCause(value) {
			e.RootCause, e.CauseStatus, e.CauseFrom = "", kb.CauseUnknown, kb.CauseFromStated
		} else {
			e.RootCause, e.CauseStatus, e.CauseFrom = value, kb.CauseKnown, kb.CauseFromSection
		}
	case name == "impact":
		e.Impact = value
	case name == "fix" || name == "resolution" || name == "mitigation":
		e.Fix = joinText(e.Fix, value)
	case strings.HasPrefix(name, "service"):
		e.Services = append(e.Services, splitGlued(value)...)
	default:
		e.Symptoms = joinText(e.Symptoms, value)
	}
}

func isSeparatorLine(t string) bool {
	return strings.Trim(t, "–—-_*= ") == "" && len(t) <= 8
}

// splitGlued splits values whose items a scrape glued together. Inside one
// word it splits an acronym from a capitalised word ("CPUService" → "CPU",
// "Service") and a lower-case word from what follows it ("addressesDNS" →
// "addresses", "DNS"), but leaves CamelCase words ("ContainerCreating").
func splitGlued(s string) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(s) {
		parts := splitGluedWord(w)
		cur = strings.TrimSpace(cur + " " + parts[0])
		for _, p := range parts[1:] {
			out = append(out, cur)
			cur = p
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

func splitGluedWord(w string) []string {
	r := []rune(w)
	for i := 1; i < len(r); i++ {
		left := r[:i]
		switch {
		case allUpper(left) && len(left) >= 2 && unicode.IsUpper(r[i]) && i+1 < len(r) && unicode.IsLower(r[i+1]):
		case allLower(left) && len(left) >= 3 && unicode.IsUpper(r[i]):
		default:
			continue
		}
		return append([]string{string(left)}, splitGluedWord(string(r[i:]))...)
	}
	return []string{w}
}

func allUpper(r []rune) bool {
	for _, c := range r {
		if !unicode.IsUpper(c) {
			return false
		}
	}
	return true
}

func allLower(r []rune) bool {
	for _, c := range r {
		if !unicode.IsLower(c) {
			return false
		}
	}
	return true
}

// knownTags is the vocabulary glued tags are split against, longest first
// where one is a prefix of another.
var knownTags = []string{
	"kubernetes", "networking", "network", "storage", "database", "databases", "dns", "security",
	"certificates", "certificate", "tls", "cloud", "aws", "gcp", "azure", "hetzner", "monitoring",
	"observability", "logging", "deployment", "deployments", "deploy", "configuration", "config",
	"ci", "cd", "cicd", "automation", "hardware", "disk", "memory", "cpu", "performance", "scaling",
	"autoscaling", "cni", "calico", "cilium", "flannel", "etcd", "postgres", "postgresql", "mysql",
	"redis", "kafka", "elasticsearch", "load-balancer", "loadbalancer", "ingress", "proxy",
	"nginx", "cdn", "api", "auth", "authentication", "iam", "permissions", "upgrade", "upgrades",
	"migration", "backup", "backups", "restore", "outage", "capacity", "quota", "rate-limiting",
	"ratelimiting", "time", "ntp", "clock", "bgp", "routing", "firewall", "vpn", "containers",
	"container", "docker", "containerd", "runtime", "linux", "kernel", "os", "helm", "terraform",
	"gitops", "argocd", "operator", "operators", "scheduler", "scheduling", "cron", "jobs",
	"queue", "queues", "cache", "caching", "human-error", "process", "alerting", "incident",
	"service-mesh", "istio", "linkerd", "consul", "vault", "secrets", "billing", "data-loss",
	"ssl", "http", "grpc", "ha", "failover", "replication", "consistency", "control-plane",
	"nodes", "node", "pods", "gpu", "ml", "serverless", "lambda", "s3", "object-storage",
}

// splitGluedTags splits "kubernetesnetworking" into kubernetes, networking
// by word break over knownTags; what cannot be split stays one tag.
// messageShaped reports whether a line right under a lead-in, with no blank
// line between, is a pasted log line rather than the lead-in's sentence
// going on: it has the shape of a message ("Error response from daemon:
// …", "java.lang.NoClassDefFoundError: …"), a colon inside it.
func messageShaped(t string) bool {
	i := strings.Index(t, ": ")
	return i > 0 && i < len(t)-2
}

// libraryTags reads an entry header's tags: glued together as the scrape
// left them ("kubernetesingresstls"), or separated by spaces or commas as
// people type them.
func libraryTags(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		out = append(out, splitGluedTags(f)...)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func splitGluedTags(s string) []string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return []string{}
	}
	// best[i]: tag list covering s[:i] with fewest tags, or nil.
	best := make([][]string, len(s)+1)
	best[0] = []string{}
	for i := 1; i <= len(s); i++ {
		for _, t := range knownTags {
			j := i - len(t)
			if j < 0 || best[j] == nil || s[j:i] != t {
				continue
			}
			if best[i] == nil || len(best[j])+1 < len(best[i]) {
				best[i] = append(append([]string{}, best[j]...), t)
			}
		}
	}
	if best[len(s)] == nil {
		return []string{s}
	}
	return best[len(s)]
}

// libraryTitle: entries have no title; "Org: symptoms" reads as one.
func libraryTitle(inc *kb.Incident, symptoms []string) string {
	what := strings.Join(symptoms, ", ")
	if what == "" {
		what = firstSentence(inc.Summary, 100)
	}
	if inc.Organisation == "" {
		return firstNonEmpty(what, inc.ID)
	}
	if what == "" {
		return inc.Organisation + " incident " + inc.ID
	}
	return inc.Organisation + ": " + what
}

func firstSentence(s string, max int) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	if len(s) > max {
		cut := strings.LastIndexByte(s[:max], ' ')
		if cut < max/2 {
			cut = max
		}
		s = s[:cut] + "…"
	}
	return s
}
