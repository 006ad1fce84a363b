package patterns

import "strings"

// Word lists that shape token weights before the knowledge base's own
// statistics (IDF) refine them. They are a prior on how much a word says
// about a failure in any log, so a knowledge base of two write-ups already
// weighs "the" below "subnet.env".

// stopWords say nothing on their own.
var stopWords = hashSet(
	"a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
	"is", "are", "was", "were", "be", "been", "being", "this", "that", "it", "its", "as", "into",
	"than", "then", "there", "these", "those", "will", "would", "should", "can", "has", "have",
	"had", "do", "does", "did", "but", "if", "so", "we", "you", "your", "our", "my", "i", "he",
	"she", "they", "them", "their", "which", "who", "what", "when", "where", "while", "how",
	"all", "any", "some", "more", "most", "other", "such", "only", "also", "just", "about",
	"over", "after", "before", "during", "up", "out", "off", "again", "here", "t", "s", "d",
)

// commonWords occur in healthy and failing logs alike.
var commonWords = hashSet(
	"error", "errors", "err", "failed", "fail", "failure", "unable", "could", "cannot", "not",
	"no", "warning", "warn", "info", "debug", "msg", "message", "level", "time", "ts", "caller",
	"retrying", "retry", "get", "set", "using", "request", "response", "status", "code", "desc",
	"rpc", "unknown", "reason", "details", "context", "pod", "pods", "node", "nodes", "container",
	"containers", "service", "namespace", "name", "type", "kind", "object", "resource", "default",
	"true", "false", "nil", "null", "none", "value", "key", "id", "uid", "file", "directory",
	"path", "line", "see", "check", "please", "attempt", "attempting", "trying", "try", "http",
	"https", "tcp", "udp", "go", "v1", "v2", "api", "apis", "kubelet", "kubernetes", "k8s", "io",
	"log", "logs", "event", "events", "start", "started", "starting", "stop", "create", "created",
	"creating", "update", "updated", "delete", "deleted", "add", "run", "running", "sync",
	"syncing", "skipping", "will", "new", "old", "current", "config", "data", "local", "system",
	"version", "server", "client", "user", "host", "port", "address", "network", "volume",
	"image", "images", "job", "task", "process", "main", "handler", "controller", "manager",
	"operation", "func", "function", "call", "calling", "result", "results", "returned",
	"returns", "return", "occurred", "happened", "e", "w", "f", "ok", "done", "completed",
)

// errorWords are evidence of a failure. A signature that has some must have
// at least one of them matched: a line that names the same file but reports
// success ("Wrote subnet file to /run/flannel/subnet.env") is not the failure.
var errorWords = hashSet(
	"error", "errors", "err", "fail", "failed", "failure", "failing", "fails", "refused",
	"timeout", "timeouts", "timed", "deadline", "exceeded", "denied", "unauthorized",
	"forbidden", "invalid", "unable", "cannot", "couldn", "can't", "panic", "panicked", "fatal",
	"killed", "kill", "oom", "oomkilled", "oom-kill", "oom_kill", "backoff", "back-off",
	"crashloopbackoff", "unhealthy", "evicted", "eviction", "expired", "unreachable", "reset",
	"broken", "corrupt", "corrupted", "missing", "exhausted", "insufficient", "conflict",
	"rejected", "abort", "aborted", "mismatch", "untolerated", "unavailable", "lost", "dropped",
	"warning", "toomanyrequests", "notfound", "not", "no", "errimagepull", "imagepullbackoff",
	"detected", "loop", "unexpected", "exit", "exited", "terminated", "crash", "crashed",
	"segfault", "violation", "throttled", "throttling", "overloaded", "degraded", "stuck",
	"hung", "blocked", "limit", "full", "quota", "space", "too", "many", "wrong", "bad",
	"mismatched", "unsupported", "unknown", "disconnected", "closed", "broken", "unready",
	"notready", "nodenotready", "failedscheduling", "failedmount", "failedattachvolume",
	"failedcreatepodsandbox", "failedkillpod", "failedsync", "unschedulable", "alarm", "nospace",
	"unmet", "misconfigured", "malformed", "undefined", "unrecognized", "illegal", "stale",
	"erro", "eror", "crit", "critical", "emerg", "alert", "warn", "low", "exceeds", "pressure",
	"starved", "unresponsive", "oom-killer", "oom_reaper", "evicting", "evict", "disrupted",
	"slow", "overflow", "leak", "leaked", "deadlock", "unmounted", "orphaned", "rejecting",
	"denying", "refusing", "unknownauthority", "nxdomain", "servfail", "outofmemory",
	"outofcpu", "insufficientmemory", "nodeaffinity", "preempted", "backofflimitexceeded",
	"errimageneverpull", "invalidimagename", "createcontainerconfigerror", "createcontainererror",
	"runcontainererror", "containercannotrun", "deadlineexceeded", "progressdeadlineexceeded",
	"gone", "prematurely", "violates", "violated", "noauth", "inequivalent", "unauthenticated",
	"incompatible", "incorrect", "uncaught", "unhandled", "traceback", "refuses", "exception",
	"exceptions",
	// Redis error replies, and the kernel's SYN backlog warning.
	"wrongtype", "clusterdown", "misconf", "execabort", "flooding",
)

func hashSet(words ...string) map[uint64]bool {
	m := make(map[uint64]bool, len(words))
	for _, w := range words {
		m[hashLower(w)] = true
	}
	return m
}

// wordPrior is the weight factor a literal word starts with.
func wordPrior(text string, hash uint64) float32 {
	switch {
	case len(text) == 1:
		return 0.1
	case stopWords[hash]:
		return 0.15
	case commonWords[hash]:
		return 0.4
	case specific(text):
		return 1.5
	}
	return 1
}

// specific reports words whose shape makes them distinctive: file names and
// domains (subnet.env, crd.projectcalico.org), identifiers in CamelCase
// (FailedCreatePodSandBox, ClusterInformation), snake_case, long words.
func specific(s string) bool {
	if len(s) >= 14 {
		return true
	}
	humps, dots := 0, 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			humps++
		}
		if (c == '.' || c == '_') && i < len(s)-1 {
			dots++
		}
	}
	return humps >= 1 || (dots >= 1 && len(s) >= 5)
}

// ErrorClassName reports an exception or error type's name (see
// errorClassName).
func ErrorClassName(s string) bool { return errorClassName(s) }

// errorClassName reports an exception or error type's name, as runtimes
// print them: OperationalError, java.lang.OutOfMemoryError, SSLException,
// ECONNREFUSED-style errno names are error words already.
func errorClassName(s string) bool {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) < 7 || s[0] < 'A' || s[0] > 'Z' { // OSError, IOError
		return false
	}
	return classSuffix(s)
}

// failureShape reports a word that says a line reports a failure by its
// shape: an exception's class name, an errno name or an error code with an
// error word in it (errorClassName, errnoName, compoundFailure). One pass
// over the bytes turns away the plain lower-case words most lines are made
// of before any of those looks.
func failureShape(w string) bool {
	upper, sep := false, false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c == '_' || c == '-':
			sep = true
		}
	}
	switch {
	case sep && compoundFailure(w):
		return true
	case !upper:
		return false
	}
	return errnoName(w) || errorClassName(w) || redisErrorCode(w)
}

// redisErrorCode reports one of the error codes a Redis server starts its
// error replies with, in the capitals it prints them in ("BUSY Redis is
// busy running a script", "MASTERDOWN Link with MASTER is down"): the word
// in lower case is no failure ("busy", "loading").
func redisErrorCode(w string) bool {
	if len(w) < 4 || len(w) > 11 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return redisCodes[w]
}

// redisCodes are Redis's error reply codes besides ERR and the ones that
// are error words already (WRONGTYPE, CLUSTERDOWN, MISCONF, NOAUTH,
// EXECABORT).
var redisCodes = map[string]bool{
	"BUSY": true, "MASTERDOWN": true, "NOSCRIPT": true, "TRYAGAIN": true, "CROSSSLOT": true,
	"NOREPLICAS": true, "BUSYKEY": true, "NOPERM": true, "LOADING": true, "UNBLOCKED": true,
	"NOTBUSY": true, "READONLY": true, "NOPROTO": true, "WRONGPASS": true,
}

// ErrorWords counts the words of a line that are evidence of a failure,
// the weak ones ("conflict", "limit", "closed") included: onlyLogs ranks a
// write-up's quiet lines by it.
func ErrorWords(line string) int {
	p := Prepare(line)
	n := 0
	for _, t := range Tokenize(p.Text, nil) {
		if t.Kind == KindWord && (errorWords[t.Hash] || failureShape(p.Text[t.Start:t.End])) {
			n++
		}
	}
	return n
}

// compoundFailure reports an error code whose parts include an error
// word: PRECONDITION_FAILED, CERTIFICATE_VERIFY_FAILED,
// ERR_TLS_CERT_ALTNAME_INVALID.
func compoundFailure(s string) bool {
	if !strings.ContainsAny(s, "_-") {
		return false
	}
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '_' || r == '-' }) {
		if h := hashLower(part); errorWords[h] && !weakErrorWords[h] {
			return true
		}
	}
	return false
}

// weakErrorWords count as failure evidence for the match gate but not on
// their own for IsFailure: "not" and "no" need a word after them.
var weakErrorWords = hashSet(
	"not", "no", "too", "many", "full", "space", "limit", "loop", "unknown", "closed",
	"detected", "exit", "exited", "terminated", "quota", "wrong", "bad", "stale", "alert",
	"kill", "reset", "lost", "dropped", "conflict", "crit", "critical", "low",
	"slow", "pressure", "evict",
)

// IsFailure reports whether a line carries evidence of a failure: a warning
// or error level in its prefix or record, a Warning event, an error word
// ("failed", "refused", "timeout", ...), or "not"/"no" before a word ("not
// ready", "no such file").
func IsFailure(line string) bool { return fails(line, true) }

// FailsPlainly reports a line that reads as a failure by more than a
// "not" or "no": its level, an error word that is not weak, or a word of
// failure shape. "but why not on the mac" is a sentence.
func FailsPlainly(line string) bool { return fails(line, false) }

// fails is IsFailure, and FailsPlainly when negation is false: "not" or
// "no" before a word counts only with it.
func fails(line string, negation bool) bool {
	p := Prepare(line)
	if p.Level >= LevelWarn {
		return true
	}
	toks := Tokenize(p.Text, nil)
	for i, t := range toks {
		if t.Kind != KindWord {
			continue
		}
		switch {
		case !errorWords[t.Hash]:
			if failureShape(p.Text[t.Start:t.End]) {
				return true
			}
		case !weakErrorWords[t.Hash]:
			return true
		case negation && (t.Hash == hashNot || t.Hash == hashNo) && i+1 < len(toks):
			return true
		}
	}
	return false
}

// inflect adds to forms (form hash → word hash) the other inflections of
// a signature's word w (hash h) that a line may print instead: the
// singular or plural of a word of four letters or more (endpoints ↔
// endpoint, retries ↔ retry), and for an error word its past tense or
// stem (killed ↔ kill, refused ↔ refuse). Words with digits or
// punctuation are names and codes, not inflected.
func inflect(w string, h uint64, forms map[uint64]uint64) map[uint64]uint64 {
	if len(w) < 4 || len(w) > 24 {
		return forms
	}
	for i := 0; i < len(w); i++ {
		if !isLetter(w[i]) {
			return forms
		}
	}
	lw := strings.ToLower(w)
	add := func(f string) {
		if forms == nil {
			forms = make(map[uint64]uint64)
		}
		if fh := hashLower(f); fh != h {
			if _, ok := forms[fh]; !ok {
				forms[fh] = h
			}
		}
	}
	switch {
	case strings.HasSuffix(lw, "ies"):
		add(lw[:len(lw)-3] + "y")
	case strings.HasSuffix(lw, "ses"), strings.HasSuffix(lw, "xes"), strings.HasSuffix(lw, "shes"), strings.HasSuffix(lw, "ches"):
		add(lw[:len(lw)-2])
	case strings.HasSuffix(lw, "ss"), strings.HasSuffix(lw, "us"), strings.HasSuffix(lw, "is"):
	case strings.HasSuffix(lw, "s"):
		add(lw[:len(lw)-1])
	case strings.HasSuffix(lw, "y") && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		add(lw[:len(lw)-1] + "ies")
	case strings.HasSuffix(lw, "ed"), strings.HasSuffix(lw, "ing"):
	default:
		add(lw + "s")
	}
	if errorWords[h] && !weakErrorWords[h] {
		switch {
		case strings.HasSuffix(lw, "ed"):
			add(lw[:len(lw)-2]) // killed → kill
			add(lw[:len(lw)-1]) // refused → refuse
		default:
			add(lw + "ed")
			add(lw + "d")
		}
	}
	return forms
}

// unStems adds to stems (stem hash → word hash) the stems of w (hash h)
// when it is an error word made with "un" (untolerated, unauthorized,
// unreachable, uninitialized): "tolerated" and "tolerate" for
// "untolerated". A line that puts a negation before the stem says the
// word: the scheduler once printed "didn't tolerate" where it now prints
// "untolerated", and clients print "not authorized" for "Unauthorized".
func unStems(w string, h uint64, stems map[uint64]uint64) map[uint64]uint64 {
	lw := strings.ToLower(w)
	if len(lw) < 7 || !strings.HasPrefix(lw, "un") || weakErrorWords[h] || !errorWords[h] && !failureShape(w) {
		return stems
	}
	rest := lw[2:]
	for i := 0; i < len(rest); i++ {
		if !isLetter(rest[i]) {
			return stems
		}
	}
	add := func(f string) {
		if stems == nil {
			stems = make(map[uint64]uint64)
		}
		if _, ok := stems[hashLower(f)]; !ok {
			stems[hashLower(f)] = h
		}
	}
	add(rest)
	if strings.HasSuffix(rest, "ed") {
		add(rest[:len(rest)-1]) // tolerated → tolerate
		add(rest[:len(rest)-2]) // mounted → mount
	}
	return stems
}

var hashT = hashLower("t")

// unNegate reads a negation before the stem of a signature's "un" word as
// that word (see unStems): in "the pod didn't tolerate" the token
// "tolerate" becomes "untolerated". The negation is "not", "never" or a
// word ending in "n't" ("didn't", "isn't": tokens "didn", "t").
func (s *Set) unNegate(text string, toks []Token) {
	if s.unStems == nil {
		return
	}
	for i := 1; i < len(toks); i++ {
		// Hash comparisons first: most lines have no negation, and a map
		// lookup per token would cost the no-match path.
		if h := toks[i-1].Hash; h != hashNot && h != hashNever && h != hashT {
			continue
		}
		t := &toks[i]
		if t.Kind != KindWord || !negatedBefore(text, toks, i) {
			continue
		}
		if w, ok := s.unStems[t.Hash]; ok {
			t.Hash = w
		}
	}
}

// negatedBefore reports whether the token before toks[i] is "not" or
// "never", or the "t" of a word ending in "n't".
func negatedBefore(text string, toks []Token, i int) bool {
	p := toks[i-1]
	if p.Hash == hashNot || p.Hash == hashNever {
		return true
	}
	if p.Hash != hashT || i < 2 {
		return false
	}
	q := toks[i-2]
	gap := text[q.End:p.Start]
	return q.End-q.Start >= 2 && (text[q.End-1] == 'n' || text[q.End-1] == 'N') && (gap == "'" || gap == "’")
}

// classForm adds to forms the class name of w (hash h) when w is a
// qualified exception class ("OperationalError" of
// "django.db.utils.OperationalError"), as another form of the word
// (buildVocab makes it an alias, like an inflection), and records the name
// in parts for unqualify.
func classForm(w string, h uint64, forms map[uint64]uint64, parts map[uint64]bool) (map[uint64]uint64, map[uint64]bool) {
	part, ok := qualifiedClass(w)
	if !ok {
		return forms, parts
	}
	ph := hashLower(part)
	if forms == nil {
		forms = make(map[uint64]uint64)
	}
	if _, ok := forms[ph]; !ok {
		forms[ph] = h
	}
	if parts == nil {
		parts = make(map[uint64]bool)
	}
	parts[ph] = true
	return forms, parts
}

// readAs rewrites the tokens of a line that stand for a signature's word
// in another spelling: a negated stem for an "un" word (unNegate), a
// class under another package for the signature's class (unqualify).
// Matching and explaining read a line through it alike.
// (MatchFailure runs unNegate, and its prefilter unqualifyToken on the
// tokens it finds unknown: the same rewrite in the pass it makes anyway.)
func (s *Set) readAs(text string, toks []Token) {
	s.unNegate(text, toks)
	s.unqualify(text, toks)
}

// unqualify reads a line's exception class under another package as the
// class of a signature's qualified name: Django re-raises SQLite's
// "sqlite3.OperationalError" as "django.db.utils.OperationalError", a
// client prints "UnknownHostException" for "java.net.UnknownHostException".
// The token becomes the class name, which the vocabulary has as another
// form of the signature's word (see Set.classParts).
func (s *Set) unqualify(text string, toks []Token) {
	if s.classParts == nil {
		return
	}
	for i := range toks {
		if s.vocab.index(toks[i].Hash) < 0 {
			s.unqualifyToken(text, &toks[i])
		}
	}
}

// unqualifyToken rewrites one token the vocabulary does not have as
// unqualify does, and reports whether it did. The prefilter calls it for
// the tokens it finds unknown, in its one pass over a line's tokens; a
// token the tokenizer saw no capital in is no class.
func (s *Set) unqualifyToken(text string, t *Token) bool {
	if t.Kind != KindWord && t.Kind != kindPending || t.shape&(shapeKnown|fUpper) == shapeKnown {
		return false
	}
	part, ok := qualifiedClass(text[t.Start:t.End])
	if !ok {
		return false
	}
	h := hashLower(part)
	if !s.classParts[h] {
		return false
	}
	t.Hash, t.Kind = h, KindWord
	return true
}

// qualifiedClass returns the class name of a qualified exception class
// ("OperationalError" of "django.db.utils.OperationalError"). The suffix
// is looked at first: it turns away nearly every token of a line with a
// few byte comparisons, so a line pays little for it.
func qualifiedClass(w string) (string, bool) {
	if len(w) < 9 || !classSuffix(w) {
		return "", false
	}
	i := strings.LastIndexByte(w, '.')
	if i <= 0 || !errorClassName(w[i+1:]) {
		return "", false
	}
	return w[i+1:], true
}

// classSuffix reports whether w ends as an exception class does.
func classSuffix(w string) bool {
	switch w[len(w)-1] {
	case 'r', 'n', 'e', 't':
		return strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "Exception") || strings.HasSuffix(w, "Failure") || strings.HasSuffix(w, "Fault")
	}
	return false
}
