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
	case "i", "info", "information", "informational", "notice", "note", "normal", "log", "5", "6": // PostgreSQL says LOG
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
	if n := composePrefix(s); n > 0 {
		return n, 0
	}
	if n := kmsgPrefix(s); n > 0 {
		return n, 0
	}
	if n, l := bracketTimestampPrefix(s); n > 0 {
		return n, l
	}
	if s[0] == '[' { // "[ERROR] Failed to execute goal", as Maven and many tools print it
		if n, l := levelWord(s, 0); l != LevelUnknown && n < len(s) && s[n] == ' ' {
			return skipSpaces(s, n), l
		}
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
	switch m := monthLen(s); {
	case m > 0:
		i = m
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
	// A zone ("UTC", "CEST", "+0200") and a bracketed pid ("[108]", as
	// PostgreSQL's default prefix has them).
	if j := zoneEnd(s, i); j > i {
		i = skipSpaces(s, j)
	}
	if j := bracketedPID(s, i); j > i {
		i = skipSpaces(s, j)
	}
	if j, lvl := levelWord(s, i); lvl != LevelUnknown {
		j = bracketedPID(s, j) // calico's "[ERROR][41]"
		return springHeader(s, skipSpaces(s, j)), lvl
	}
	if lvl := capnslogLevel(s, i); lvl != LevelUnknown {
		return i + len("W | "), lvl
	}
	return i, 0
}

// capnslogLevel reads the level letter and bar that etcd (up to 3.3) and
// other capnslog users print after the time: "2016-12-22 17:00:29.475936 W
// | rafthttp: ...".
func capnslogLevel(s string, i int) Level {
	if i+4 > len(s) || s[i+1:i+4] != " | " {
		return LevelUnknown
	}
	switch s[i] {
	case 'C':
		return LevelFatal
	case 'E':
		return LevelError
	case 'W':
		return LevelWarn
	case 'N', 'I':
		return LevelInfo
	case 'D':
		return LevelDebug
	}
	return LevelUnknown
}

// levelWord reads a level at i: bare, with a colon ("FATAL:  ", as
// PostgreSQL writes it) or bracketed and padded ("[WARN ]", "[ERROR]").
// It returns the index after it and the level, or LevelUnknown.
func levelWord(s string, i int) (int, Level) {
	if i >= len(s) {
		return i, LevelUnknown
	}
	var word string
	j := i
	if s[i] == '[' {
		k := strings.IndexByte(s[i:min(len(s), i+12)], ']')
		if k < 0 {
			return i, LevelUnknown
		}
		word, j = strings.TrimSpace(s[i+1:i+k]), i+k+1
	} else {
		for j < len(s) && s[j] != ' ' {
			j++
		}
		word = strings.TrimSuffix(s[i:j], ":")
		if k := strings.IndexByte(word, '['); k > 0 {
			word = word[:k] // "ERROR[42]"
		}
		word = strings.TrimRight(word, "]")
	}
	if len(word) < 2 {
		return i, LevelUnknown
	}
	return j, ParseLevel(word)
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// springHeader returns the index after Spring Boot's "1 --- [main]
// o.s.boot.SpringApplication : " at i (the pid, thread and logger between
// the level and the message), or i.
func springHeader(s string, i int) int {
	j := digitsAt(s, i)
	if j == i || !strings.HasPrefix(s[j:], " --- [") {
		return i
	}
	k := strings.Index(s[j:min(len(s), j+160)], " : ")
	if k < 0 {
		return i
	}
	return skipSpaces(s, j+k+3)
}

// zoneEnd returns the index after a time zone at i ("UTC", "GMT",
// "CEST", "+0200", "+02:00"), or i.
func zoneEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= 'A' && s[j] <= 'Z' {
		j++
	}
	if n := j - i; n >= 3 && n <= 4 && (j == len(s) || s[j] == ' ') {
		return j
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		k := digitsAt(s, i+1)
		if k < len(s) && s[k] == ':' {
			k = digitsAt(s, k+1)
		}
		if n := k - i - 1; (n == 4 || n == 5) && (k == len(s) || s[k] == ' ') {
			return k
		}
	}
	return i
}

// bracketedPID returns the index after "[123]" or "[123-1]" at i (and a
// colon right after it), or i.
func bracketedPID(s string, i int) int {
	if i >= len(s) || s[i] != '[' {
		return i
	}
	j := digitsAt(s, i+1)
	if j < len(s) && s[j] == '-' {
		j = digitsAt(s, j+1)
	}
	if j == i+1 || j >= len(s) || s[j] != ']' {
		return i
	}
	j++
	if j < len(s) && s[j] == ':' {
		j++
	}
	return j
}

// composePrefix: the service column of docker compose logs, "db_1    | "
// (Compose v1) or "web-1  | " (v2): a name ending in its replica number,
// padding, and a bar.
func composePrefix(s string) int {
	// The name has no space, so its padding and the bar come at the first
	// space: no search of the line for " | " (most lines have none).
	s = s[:min(len(s), 80)]
	end := strings.IndexByte(s, ' ')
	if end <= 0 {
		return 0
	}
	j := end
	for j < len(s) && s[j] == ' ' {
		j++
	}
	if j+1 >= len(s) || s[j] != '|' || s[j+1] != ' ' {
		return 0
	}
	bar, name := j-1, s[:end]
	d := len(name)
	for d > 0 && isDigit(name[d-1]) {
		d--
	}
	if d == len(name) || d < 2 || (name[d-1] != '_' && name[d-1] != '-') {
		return 0
	}
	for k := 0; k < d-1; k++ {
		if c := name[k]; !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return 0
		}
	}
	return bar + 3
}

// kmsgPrefix: the kernel ring buffer's "[  152.700479] " (seconds since
// boot) and dmesg -T's "[Thu Dec  7 00:05:15 2017] ".
func kmsgPrefix(s string) int {
	if s[0] != '[' {
		return 0
	}
	end := strings.IndexByte(s[:min(len(s), 32)], ']')
	if end < 0 || end+1 >= len(s) || s[end+1] != ' ' {
		return 0
	}
	in := strings.TrimSpace(s[1:end])
	if d := digitsAt(in, 0); d > 0 && d+1 < len(in) && in[d] == '.' && digitsAt(in, d+1) == len(in) {
		return end + 2
	}
	if isCtime(in) {
		return end + 2
	}
	return 0
}

// isCtime: "Thu Dec  7 00:05:15 2017", as dmesg -T and asctime print it.
func isCtime(s string) bool {
	if len(s) < 20 || !isLetter(s[0]) || !isLetter(s[1]) || !isLetter(s[2]) || s[3] != ' ' || monthLen(s[4:]) != 3 {
		return false
	}
	i := skipSpaces(s, 7)
	d := digitsAt(s, i)
	if d == i || d-i > 2 || d >= len(s) || s[d] != ' ' {
		return false
	}
	sp := strings.IndexByte(s[d+1:], ' ')
	if sp < 0 || !isClock(s[d+1:d+1+sp]) {
		return false
	}
	y := s[d+2+sp:]
	return len(y) == 4 && allDigits(y)
}

// bracketTimestampPrefix: Elasticsearch's and log4j-style
// "[2017-08-14T09:29:37,167][WARN ][o.e.c.r.a.DiskThresholdMonitor] "
// headers: a bracketed timestamp, a bracketed level and the bracketed
// logger after it.
func bracketTimestampPrefix(s string) (int, Level) {
	if s[0] != '[' {
		return 0, 0
	}
	end := strings.IndexByte(s[:min(len(s), 40)], ']')
	if end < 0 {
		return 0, 0
	}
	if ts := s[1:end]; !isTimestamp(ts) && !(len(ts) > 11 && isDate(ts[:10]) && ts[10] == ' ' && isClock(ts[11:])) {
		return 0, 0
	}
	i := skipSpaces(s, end+1)
	j, lvl := levelWord(s, i)
	if lvl == LevelUnknown {
		return skipSpaces(s, end+1), 0
	}
	i = skipSpaces(s, j)
	// The logger, and the node name Elasticsearch prints after it: bracketed
	// names with no space in them.
	for range 2 {
		if i >= len(s) || s[i] != '[' {
			break
		}
		k := strings.IndexByte(s[i:min(len(s), i+128)], ']')
		if k <= 0 || strings.IndexByte(s[i:i+k], ' ') >= 0 {
			break
		}
		i = skipSpaces(s, i+k+1)
	}
	return i, lvl
}
