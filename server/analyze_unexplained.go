package server

import (
	"strings"

	"github.com/incidex/incidex/patterns"
	"github.com/incidex/incidex/web"
)

// unexplained collects the error lines that no incident explains, one entry
// per distinct line with a count of its repeats.
type unexplained struct {
	shown []web.AnalyzeLine
	index map[string]int // repeat key -> index in shown
	more  int            // distinct lines past maxUnmatchedShown
	extra map[string]bool
}

// add takes line n (1-based) if it says error or warning.
func (u *unexplained) add(n int, line string) {
	if !errorLine(line) {
		return
	}
	k := repeatKey(line)
	if i, ok := u.index[k]; ok {
		u.shown[i].Count++
		return
	}
	if len(u.shown) >= maxUnmatchedShown {
		if !u.extra[k] {
			if u.extra == nil {
				u.extra = map[string]bool{}
			}
			u.extra[k] = true
			u.more++
		}
		return
	}
	if u.index == nil {
		u.index = map[string]int{}
	}
	u.index[k] = len(u.shown)
	u.shown = append(u.shown, web.AnalyzeLine{N: n, Text: line, Count: 1})
}

// errorLine reports whether a line's level or words say error or warning: a
// klog E/W/F header, level=error or warn, a JSON record's level, a Warning
// event (kubectl describe and get events rows), ERROR/FATAL/WARN words,
// panics and tracebacks, or words such as "failed" and "refused". A line
// whose level says info or debug, and a Normal event, is not one, whatever
// its words: "I1201 … Error syncing pod, skipping" is kubelet at info.
func errorLine(line string) bool {
	p := patterns.Prepare(line)
	switch {
	case p.Level >= patterns.LevelWarn:
		return true
	case p.Level != patterns.LevelUnknown:
		return false
	}
	fields := strings.Fields(p.Text)
	// The Type column of an event row comes first (describe) or after the
	// age (get events); a column of the same name later is prose.
	for _, f := range fields[:min(len(fields), 3)] {
		switch f {
		case "Warning", "Warning:":
			return true
		case "Normal":
			return false
		}
	}
	text := strings.TrimSpace(p.Text)
	for _, prefix := range []string{"panic:", "fatal error:", "Traceback (most recent call last)", "Exception in thread", "Caused by:"} {
		if strings.HasPrefix(text, prefix) {
			return true
		}
	}
	for _, w := range words(text) {
		w = strings.TrimRight(w, ".-_")
		lw := strings.ToLower(w)
		if errorWords[lw] || strings.HasPrefix(lw, "failed") || isExceptionName(w) {
			return true
		}
	}
	return false
}

// errorWords say error or warning on their own, in any case.
var errorWords = map[string]bool{
	"error": true, "errors": true, "err": true, "erro": true, "eror": true, "fatal": true, "panic": true,
	"panicked": true, "exception": true, "traceback": true, "warning": true, "warn": true, "critical": true,
	"crit": true, "severe": true, "emerg": true, "failure": true, "fail": true, "fails": true,
	"refused": true, "denied": true, "timeout": true, "oomkilled": true, "crashloopbackoff": true,
	"imagepullbackoff": true, "errimagepull": true, "segfault": true, "unhealthy": true,
	"forbidden": true, "unauthorized": true,
}

// isExceptionName: ValueError, NullPointerException, java.io.IOException.
func isExceptionName(w string) bool {
	if i := strings.LastIndexByte(w, '.'); i >= 0 {
		w = w[i+1:]
	}
	for _, suffix := range []string{"Error", "Exception"} {
		if len(w) > len(suffix) && strings.HasSuffix(w, suffix) && w[0] >= 'A' && w[0] <= 'Z' {
			return true
		}
	}
	return false
}

// words splits text at everything but letters, digits, '.', '_' and '-'.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r >= 0x80)
	})
}

// repeatKey is what repeats of a line have in common: the message without
// its transport prefix (timestamps, klog header, syslog host and pid), with
// every run of digits as one 0, so the kubelet's twentieth "Error syncing
// pod" and an event's "(x12 over 10m)" fold into the first.
func repeatKey(line string) string {
	text := strings.Join(strings.Fields(patterns.Prepare(line).Text), " ")
	var b strings.Builder
	digits := false
	for _, r := range text {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('0')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}
