package patterns

import (
	"strings"
	"unicode/utf8"
)

// Level is a severity inferred from a line's prefix or record.
type Level uint8

// Levels, lowest first. LevelUnknown means the line did not say.
const (
	LevelUnknown Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
	LevelFatal
)

var levelNames = [...]string{"", "debug", "info", "warn", "error", "fatal"}

// String returns "debug", "info", "warn", "error", "fatal" or "".
func (l Level) String() string { return levelNames[l] }

// ParseLevel maps common level spellings (E, ERR, error, Warning, crit, 3) to a Level.
func ParseLevel(s string) Level {
	s = strings.TrimSpace(s)
	if len(s) > 16 {
		return LevelUnknown
	}
	var buf [16]byte
	for i := 0; i < len(s); i++ {
		buf[i] = lower[s[i]]
	}
	switch string(buf[:len(s)]) {
	case "d", "debug", "dbug", "trace", "trc", "7":
		return LevelDebug
	case "i", "info", "information", "informational", "notice", "note", "normal", "5", "6":
		return LevelInfo
	case "w", "warn", "warning", "wrn", "4":
		return LevelWarn
	case "e", "err", "error", "eror", "3":
		return LevelError
	case "f", "fatal", "crit", "critical", "alert", "emerg", "emergency", "panic", "0", "1", "2":
		return LevelFatal
	}
	return LevelUnknown
}

// Prepared is a line with its transport prefixes removed.
type Prepared struct {
	// Text is the message part of the line. It is a substring of the input
	// unless the line was a JSON record, whose message had to be decoded.
	Text string
	// Offset is where Text starts in the input, or -1 when Text was decoded.
	Offset int
	// Level is what the prefix said, if anything.
	Level Level
}

// Prepare strips what stands between a raw line and its message: JSON log
// records ({"log": ...}, {"msg": ...}), syslog and journald headers, klog
// headers, CRI log-file prefixes, logrus time= and level= fields and leading
// timestamps. It allocates only for JSON records.
func Prepare(line string) Prepared {
	p := Prepared{Text: line, Offset: 0}
	for range 4 { // prefixes nest: JSON around CRI around klog
		before := p.Text
		p = prepareOnce(p)
		if p.Text == before {
			break
		}
	}
	return p
}

func prepareOnce(p Prepared) Prepared {
	s := p.Text
	start := 0
	for start < len(s) && (s[start] == ' ' || s[start] == '\t') {
		start++
	}
	end := len(s)
	for end > start && (s[end-1] == '\n' || s[end-1] == '\r' || s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	s = s[start:end]
	off := p.Offset
	if off >= 0 {
		off += start
	}
	if len(s) > 1 && s[0] == '{' && s[len(s)-1] == '}' {
		if msg, lvl, ok := jsonMessage(s); ok {
			return Prepared{Text: msg, Offset: -1, Level: maxLevel(p.Level, lvl)}
		}
	}
	n, lvl := prefixLen(s)
	if off >= 0 {
		off += n
	}
	return Prepared{Text: s[n:], Offset: off, Level: maxLevel(p.Level, lvl)}
}

func maxLevel(a, b Level) Level {
	if b > a {
		return b
	}
	return a
}

// prefixLen returns how many bytes of transport prefix s starts with.
func prefixLen(s string) (int, Level) {
	if len(s) < 8 {
		return 0, 0
	}
	if n, l := klogPrefix(s); n > 0 {
		return n, l
	}
	if n := syslogPrefix(s); n > 0 {
		return n, 0
	}
	if n := criPrefix(s); n > 0 {
		return n, 0
	}
	if n, l := logfmtPrefix(s); n > 0 {
		return n, l
	}
	if n, l := timestampLevelPrefix(s); n > 0 {
		return n, l
	}
	return 0, 0
}

// klogPrefix: "E0412 03:12:45.120931    2211 pod_workers.go:1301] ".
func klogPrefix(s string) (int, Level) {
	var lvl Level
	switch s[0] {
	case 'I':
		lvl = LevelInfo
	case 'W':
		lvl = LevelWarn
	case 'E':
		lvl = LevelError
	case 'F':
		lvl = LevelFatal
	default:
		return 0, 0
	}
	if digitsAt(s, 1) != 5 || len(s) < 22 || s[5] != ' ' {
		return 0, 0
	}
	end := strings.IndexByte(s[:min(len(s), 161)], ']')
	if end < 0 {
		return 0, 0
	}
	if end+1 < len(s) && s[end+1] == ' ' {
		return end + 2, lvl
	}
	return end + 1, lvl
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// syslogPrefix: "Apr 12 03:12:45 worker-2 kubelet[2211]: " and the
// RFC 3339 form journalctl -o short-iso prints.
func syslogPrefix(s string) int {
	i := 0
	switch {
	case monthLen(s) > 0:
		i = monthLen(s)
		for i < len(s) && s[i] == ' ' {
			i++
		}
		d := digitsAt(s, i)
		if d == i || d-i > 2 {
			return 0
		}
		i = d
		if i < len(s) && s[i] == ' ' {
			i++
		}
		j := clockEnd(s, i)
		if j < 0 {
			return 0
		}
		i = j
	case len(s) > 20 && isDate(s[:10]) && s[10] == 'T':
		i = strings.IndexByte(s, ' ')
		if i < 0 || !isTimestamp(s[:i]) {
			return 0
		}
	default:
		return 0
	}
	if i >= len(s) || s[i] != ' ' {
		return 0
	}
	// host
	h := i + 1
	sp := strings.IndexByte(s[h:], ' ')
	if sp <= 0 {
		return 0
	}
	t := h + sp + 1
	// tag: program[pid]: or program:
	colon := strings.Index(s[t:min(len(s), t+66)], ": ") // a tag is short: look no further
	if colon <= 0 || colon > 64 || strings.IndexByte(s[t:t+colon], ' ') >= 0 {
		return 0
	}
	return t + colon + 2
}

// monthLen returns the length of the month name s starts with, up to the
// space after it, or 0. Besides the English abbreviations, journalctl
// prints the host locale's ("déc.", "Dez", "mar", "août"): any short word
// of letters, with an optional dot, counts, since a day and a clock time
// must follow it.
func monthLen(s string) int {
	if len(s) >= 4 && s[3] == ' ' {
		for _, m := range months {
			if s[:3] == m {
				return 3
			}
		}
	}
	i := 0
	for i < len(s) && i <= 8 && (isLetter(s[i]) || s[i] >= 0x80) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
	}
	letters := utf8.RuneCountInString(strings.TrimSuffix(s[:i], "."))
	if letters < 3 || letters > 5 || i >= len(s) || s[i] != ' ' {
		return 0
	}
	return i
}

// clockEnd returns the index after a clock time starting at i, or -1.
func clockEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] != ' ' {
		j++
	}
	if !isClock(s[i:j]) {
		return -1
	}
	return j
}

// criPrefix: the CRI log-file format, "2024-04-12T03:12:45.120931Z stderr F ".
func criPrefix(s string) int {
	if !isDigit(s[0]) {
		return 0
	}
	sp := strings.IndexByte(s, ' ')
	if sp < 20 || !isTimestamp(s[:sp]) {
		return 0
	}
	rest := s[sp+1:]
	for _, st := range [...]string{"stdout ", "stderr "} {
		if strings.HasPrefix(rest, st) && len(rest) >= len(st)+2 && (rest[len(st)] == 'F' || rest[len(st)] == 'P') && rest[len(st)+1] == ' ' {
			return sp + 1 + len(st) + 2
		}
	}
	return 0
}

// logfmtPrefix strips leading time="..." and level=... fields (containerd,
// logrus, cilium): the msg= and error= fields stay.
func logfmtPrefix(s string) (int, Level) {
	i, lvl := 0, LevelUnknown
	for {
		switch {
		case strings.HasPrefix(s[i:], "time=") || strings.HasPrefix(s[i:], "ts="):
			j := fieldEnd(s, i+strings.IndexByte(s[i:], '=')+1)
			if j < 0 {
				return i, lvl
			}
			i = j
		case strings.HasPrefix(s[i:], "level="):
			v := i + len("level=")
			j := fieldEnd(s, v)
			if j < 0 {
				return i, lvl
			}
			lvl = ParseLevel(strings.Trim(s[v:j], `" `))
			i = j
		default:
			return i, lvl
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
	}
}

// fieldEnd returns the index after a logfmt value starting at i.
func fieldEnd(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	if s[i] == '"' {
		for j := i + 1; j < len(s); j++ {
			if s[j] == '\\' {
				j++
				continue
			}
			if s[j] == '"' {
				return j + 1
			}
		}
		return -1
	}
	j := strings.IndexByte(s[i:], ' ')
	if j < 0 {
		return len(s)
	}
	return i + j
}

// timestampLevelPrefix: "2024-04-12 03:12:45.120 [ERROR][41] ", "2024-04-12T03:12:45Z ERROR ".
func timestampLevelPrefix(s string) (int, Level) {
	if len(s) < 20 || !isDate(s[:10]) {
		return 0, 0
	}
	i := 10
	if s[i] == 'T' || s[i] == ' ' {
		j := i + 1
		for j < len(s) && s[j] != ' ' {
			j++
		}
		if !isClock(s[i+1:j]) && !isTimestamp(s[:j]) {
			return 0, 0
		}
		i = j
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	// A level word, bare or bracketed, and a bracketed pid after it.
	j := i
	for j < len(s) && s[j] != ' ' {
		j++
	}
	word := strings.Trim(s[i:j], "[]")
	if k := strings.IndexByte(word, ']'); k > 0 {
		word = word[:k]
	}
	if lvl := ParseLevel(word); lvl != LevelUnknown && len(word) > 1 {
		for j < len(s) && s[j] == ' ' {
			j++
		}
		return j, lvl
	}
	return i, 0
}
