package patterns

import (
	"slices"
	"strings"
)

// Clauses returns the parts of an example log line that can stand for its
// failure on their own: the message after a wrapper's "context: " (the
// tail of "rpc error: code = Unknown desc = failed to X: Y: the error"),
// and the text inside quotes ("… with message 'SQLSTATE[HY000] [1040] Too
// many connections' in …"). A write-up pastes one occurrence of an error;
// another occurrence prints the same message inside another wrapper, from
// another client or runtime, and shares only such a part. A clause is kept
// when it has two distinctive words (not stop or common words, not a name
// after the word for its kind) and still reads as a failure (see
// IsFailure), or its line does and the clause has three words that are not
// stop words ("address already in use"), and it has at least
// three tokens (and fewer than the line); the
// shortest two tails and two quoted parts are returned, shortest first.
func Clauses(example string) []string {
	p := Prepare(example).Text
	whole := len(Tokenize(p, nil))
	parentFails := IsFailure(example)
	var tails, quoted []string
	seen := map[string]bool{p: true}
	keep := func(c string, dst *[]string) {
		c = strings.TrimSpace(strings.Trim(strings.TrimSpace(contextCut(c)), `"'.,;`))
		if c == "" || seen[c] {
			return
		}
		seen[c] = true
		toks := Tokenize(c, nil)
		if len(toks) < 3 || len(toks) > whole-1 {
			return
		}
		distinct, words := 0, 0
		types := map[uint64]bool{}
		for k, t := range toks {
			if t.Kind != KindWord {
				continue
			}
			named := k > 0 && toks[k-1].Kind == KindWord && objectNouns[toks[k-1].Hash]
			switch prior := wordPrior(c[t.Start:t.End], t.Hash); {
			case prior >= 1 && !named && !types[t.Hash]:
				types[t.Hash] = true
				distinct++
				words++
			case prior > 0.15:
				words++
			}
		}
		// Two distinctive words: a clause stands for the failure on its
		// own, so "secret \"x\" not found" (one word and a name) is not one.
		// A longer run of plain words is distinctive as a phrase ("server
		// gave HTTP response to HTTPS client": one rare word, five others).
		if distinct < 2 && (distinct < 1 || words < 6) || !IsFailure(c) && !(parentFails && words >= 3) {
			return
		}
		if onlyErrno(c, toks) {
			return
		}
		*dst = append(*dst, c)
	}
	// No clause comes from the message's context (see contextCut): the
	// tails and quotes are those of the message before it, and the
	// message itself is one.
	msg := contextCut(p)
	for i := 0; i+2 < len(msg); i++ {
		if msg[i] == ':' && msg[i+1] == ' ' && !detailLabel(msg[:i]) {
			keep(msg[i+2:], &tails)
		}
	}
	if len(msg) < len(p) {
		keep(msg, &tails)
	}
	for _, q := range quotedParts(msg) {
		keep(q, &quoted)
	}
	out := shortest(tails, 2)
	return append(out, shortest(quoted, 2)...)
}

// contextMarkers start the context a message carries after its error:
// the statement (Laravel's " (SQL: insert into …)", PostgreSQL's DETAIL
// and the rest, and their JDBC spelling "Where: ", "Detail: "), the request
// (nginx's ", client: 10.0.0.1, server: …"), the scheduler's account of
// preemption after why a pod does not fit (". preemption: 0/3 nodes are
// available: 3 Preemption is not helpful for scheduling."), the advice a
// runtime adds after the error's first sentence (Kafka's "… to another
// member. This means that the time between subsequent calls to poll() …
// You can address this either by …", Spring's ". Consider defining a bean
// …"). Another occurrence has another context, or none, and another
// version words its advice otherwise.
var contextMarkers = []string{" (SQL: ", ", client: ", " DETAIL: ", " DETAIL:  ", " HINT: ", " HINT:  ", " STATEMENT: ", " STATEMENT:  ", " CONTEXT: ",
	" Where: ", " Detail: ", " Hint: ", " Position: ", " preemption: ",
	". This means ", ". You can ", ". You might ", ". You may ", ". Please ", ". Consider ", ". Try ", ". See ", ". Check ",
	". Make sure ", ". Is there ", ". Did you ", ". To fix "}

// contextStarts reports whether s opens with a context marker.
func contextStarts(s string) bool {
	for _, m := range contextMarkers {
		if strings.HasPrefix(s, m) {
			return true
		}
	}
	return false
}

// contextCut returns s up to its first context marker (contextMarkers).
func contextCut(s string) string {
	end := len(s)
	for _, m := range contextMarkers {
		if i := strings.Index(s, m); i > 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// detailLabel reports whether s ends in a label that introduces a detail
// of the error before it, not an error of its own: PostgreSQL's "DETAIL:
// Key (id)=(1) already exists." says which row "duplicate key value
// violates unique constraint" was about; on its own it is any "already
// exists".
func detailLabel(s string) bool {
	for _, l := range []string{"DETAIL", "HINT", "CONTEXT", "STATEMENT", "LOCATION", "QUERY"} {
		if strings.HasSuffix(s, l) && (len(s) == len(l) || !isLetter(s[len(s)-len(l)-1])) {
			return true
		}
	}
	return false
}

// shortest returns the n shortest of cs, shortest first.
func shortest(cs []string, n int) []string {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out[:min(n, len(out))]
}

// quotedParts returns the text between matching quotes (", ', and \"),
// outermost pairs only.
func quotedParts(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		if q == '\'' && i > 0 && isLetter(s[i-1]) {
			continue // an apostrophe: didn't, cert's
		}
		esc := i > 0 && s[i-1] == '\\'
		for j := i + 1; j < len(s); j++ {
			if s[j] != q || esc != (s[j-1] == '\\') {
				continue
			}
			if q == '\'' && j+1 < len(s) && isLetter(s[j+1]) {
				continue
			}
			end := j
			if esc {
				end--
			}
			out = append(out, s[i+1:end])
			i = j
			break
		}
	}
	return out
}

// errnoTexts are the messages of the socket errno values as the C library
// and Go print them. Every program that talks to another prints them, so
// a clause that says only which call failed and one of these ("connect:
// connection refused", "read udp …: i/o timeout") is not a failure of its
// own: nginx's refused upstream is no cert-manager webhook. (The errnos of
// a resource running out, "no space left on device", "Cannot allocate
// memory", stay clauses: which resource ran out is most of the failure.)
var errnoTexts = func() [][]uint64 {
	var out [][]uint64
	for _, t := range []string{
		"connection refused", "connection reset by peer", "connection timed out",
		"network is unreachable", "no route to host", "broken pipe", "i/o timeout",
		"operation timed out", "transport endpoint is not connected",
		"software caused connection abort", "connection aborted",
	} {
		var hs []uint64
		for _, tk := range Tokenize(t, nil) {
			hs = append(hs, tk.Hash)
		}
		out = append(out, hs)
	}
	return out
}()

// syscallWords name the call or the socket that an errno text follows.
var syscallWords = hashSet(
	"connect", "dial", "tcp", "tcp4", "tcp6", "udp", "unix", "read", "write", "open",
	"fork", "bind", "listen", "accept", "accept4", "stat", "lstat", "mkdir", "recv", "send",
	"sendto", "recvfrom", "mmap", "socket", "exec", "errno", "syscall", "os", "error", "err",
	"failed", "ioctl", "close", "unlink", "rename", "chmod", "chown", "remove", "create",
)

// onlyErrno reports whether clause c (tokens toks) is an errno text with
// nothing around it but the call, its arguments (masks, numbers, a port)
// and stop words.
func onlyErrno(c string, toks []Token) bool {
	rest := make([]bool, len(toks)) // tokens not yet explained
	for k, t := range toks {
		rest[k] = t.Kind == KindWord && !stopWords[t.Hash] && !syscallWords[t.Hash] && !strings.ContainsAny(c[t.Start:t.End], "0123456789")
	}
	found := false
	for _, e := range errnoTexts {
		for k := 0; k+len(e) <= len(toks); k++ {
			match := true
			for x, h := range e {
				if toks[k+x].Hash != h {
					match = false
					break
				}
			}
			if match {
				found = true
				for x := range e {
					rest[k+x] = false
				}
			}
		}
	}
	return found && !slices.Contains(rest, true)
}
