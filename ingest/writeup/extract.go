package writeup

import (
	"regexp"
	"strings"

	"github.com/incidex/incidex/patterns"
)

// Code block classes.
const (
	ClassLog      = "log"
	ClassCommands = "commands"
	ClassConfig   = "config"
)

var shellLangs = map[string]bool{
	"bash": true, "sh": true, "shell": true, "zsh": true, "fish": true, "console": true,
	"shell-session": true, "shellsession": true, "sh-session": true, "powershell": true,
	"ps1": true, "pwsh": true, "cmd": true, "bat": true, "terminal": true,
}

var logLangs = map[string]bool{
	"log": true, "logs": true, "text": true, "txt": true, "plain": true, "plaintext": true,
	"output": true, "json": true, "jsonl": true, "ndjson": true, "syslog": true, "journal": true,
	"accesslog": true, "events": true, "event": true, "stderr": true, "stdout": true, "none": true,
}

// commandWords start lines that are commands rather than output.
var commandWords = map[string]bool{
	"kubectl": true, "k": true, "crictl": true, "ctr": true, "nerdctl": true, "docker": true,
	"podman": true, "journalctl": true, "systemctl": true, "talosctl": true, "etcdctl": true,
	"etcdutl": true, "helm": true, "kubeadm": true, "k3s": true, "rke2": true, "ip": true,
	"ls": true, "cat": true, "grep": true, "egrep": true, "tail": true, "head": true, "less": true,
	"curl": true, "wget": true, "ssh": true, "sudo": true, "cd": true, "export": true, "echo": true,
	"openssl": true, "dig": true, "nslookup": true, "ping": true, "traceroute": true, "ss": true,
	"netstat": true, "iptables": true, "iptables-save": true, "ip6tables": true, "nft": true,
	"sysctl": true, "df": true, "du": true, "free": true, "top": true, "ps": true, "kill": true,
	"mount": true, "umount": true, "lsblk": true, "rm": true, "mv": true, "cp": true, "mkdir": true,
	"chmod": true, "chown": true, "find": true, "awk": true, "sed": true, "jq": true, "yq": true,
	"watch": true, "dmesg": true, "cilium": true, "calicoctl": true, "hubble": true, "terraform": true,
	"aws": true, "gcloud": true, "az": true, "eksctl": true, "kind": true, "minikube": true,
	"git": true, "make": true, "go": true, "apt": true, "apt-get": true, "yum": true, "dnf": true,
	"service": true, "reboot": true, "shutdown": true, "tcpdump": true, "conntrack": true,
	"ipvsadm": true, "lsof": true, "ulimit": true, "stat": true, "touch": true, "tee": true,
	"xargs": true, "for": true, "while": true, "if": true, "virsh": true, "velero": true,
	"argocd": true, "flux": true, "kustomize": true, "stern": true, "kubens": true, "kubectx": true,
	"mc": true, "redis-cli": true, "valkey-cli": true, "psql": true, "mysql": true, "nc": true,
	"telnet": true, "host": true, "resolvectl": true, "systemd-resolve": true, "update-ca-certificates": true,
}

// isCommandLine reports whether a line of a code block is a shell command.
func isCommandLine(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "$ ") {
		return true
	}
	f := strings.Fields(t)
	if len(f) == 0 {
		return false
	}
	w := f[0]
	if strings.Contains(w, "=") && len(f) > 1 { // FOO=bar cmd
		w = f[1]
	}
	return commandWords[w] || sqlWords[w] || strings.HasPrefix(t, "mysql> ") || strings.HasPrefix(t, "postgres=# ")
}

// sqlWords start the lines of an SQL statement, in the capitals people
// type them in ("SELECT ip, sum_connect_errors", "FROM
// performance_schema.host_cache"): statements are runbook steps.
var sqlWords = map[string]bool{
	"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "SHOW": true, "FLUSH": true,
	"ALTER": true, "CREATE": true, "DROP": true, "GRANT": true, "REVOKE": true, "EXPLAIN": true,
	"VACUUM": true, "ANALYZE": true, "TRUNCATE": true, "BEGIN;": true, "COMMIT;": true,
	"ROLLBACK;": true, "FROM": true, "WHERE": true, "ORDER": true, "GROUP": true, "JOIN": true,
	"KILL": true, "CALL": true, "REINDEX": true, "CLUSTER": true,
}

// tableHeader reports the header row of a table that a command printed:
// two or more words, all in capitals ("NAME READY STATUS RESTARTS AGE").
func tableHeader(s string) bool {
	f := strings.Fields(s)
	if len(f) < 2 {
		return false
	}
	for _, w := range f {
		for i := 0; i < len(w); i++ {
			if c := w[i]; !(c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '(' || c == ')') {
				return false
			}
		}
	}
	return true
}

// promptFirst reports a block whose first line is a "$ " prompt: a
// command and what it printed, whatever the rest looks like.
func promptFirst(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return strings.HasPrefix(t, "$ ")
		}
	}
	return false
}

// classifyBlock decides what a fenced code block holds.
func classifyBlock(lang string, lines []string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	switch {
	case shellLangs[lang], promptFirst(lines):
		return ClassCommands
	case logLangs[lang]:
		if lang == "text" || lang == "none" || lang == "plain" || lang == "txt" {
			if mostlyCommands(lines) {
				return ClassCommands
			}
		}
		return ClassLog
	case lang != "":
		return ClassConfig
	case mostlyCommands(lines):
		return ClassCommands
	}
	return ClassLog
}

func mostlyCommands(lines []string) bool {
	cmds, total := 0, 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		total++
		if strings.HasPrefix(t, "$ ") || isCommandLine(t) {
			cmds++
		}
	}
	return total > 0 && cmds*2 >= total
}

// commandsOf splits a commands block into steps: "$ " prompts and known
// commands are commands, "# " comments describe the next command, "\"
// continues a line, and in blocks with prompts the other lines are output.
func commandsOf(lines []string) (steps []cmdStep, output []string) {
	prompted := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "$ ") {
			prompted = true
			break
		}
	}
	var comment []string
	var cur *cmdStep
	for _, raw := range lines {
		l := strings.TrimRight(raw, " \t")
		t := strings.TrimSpace(l)
		if cur != nil && strings.HasSuffix(cur.command, "\\") {
			cur.command = strings.TrimSuffix(cur.command, "\\") + " " + t
			continue
		}
		switch {
		case t == "":
			comment = nil
		case strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#!"):
			comment = append(comment, strings.TrimSpace(strings.TrimLeft(t, "#")))
		case prompted && strings.HasPrefix(t, "$ "):
			steps = append(steps, cmdStep{command: strings.TrimSpace(t[2:]), comment: strings.Join(comment, " ")})
			cur, comment = &steps[len(steps)-1], nil
		case prompted:
			output = append(output, l)
		case cur != nil && !isCommandLine(t):
			// Output pasted under a command without a prompt
			// ("kubectl get pods" and its table): not a step.
			output = append(output, l)
		default:
			steps = append(steps, cmdStep{command: t, comment: strings.Join(comment, " ")})
			cur, comment = &steps[len(steps)-1], nil
		}
	}
	for i := range steps {
		steps[i].command = strings.TrimSpace(strings.TrimSuffix(steps[i].command, "\\"))
	}
	return steps, output
}

type cmdStep struct {
	command, comment string
}

// logEntries joins a log block's lines into entries: a line indented more
// than the entry's first line continues it (wrapped kubectl describe
// events), any other non-empty line starts a new entry.
func logEntries(lines []string) []string {
	var out []string
	indent, frame := -1, -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			indent = -1
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		t := strings.TrimSpace(l)
		if frame >= 0 && ind > frame {
			continue // the source line under a Python frame
		}
		frame = -1
		if stackFrame(t) {
			// A stack trace's header and frames are not the error: the
			// exception line after them is ("OSError: [Errno 24] Too
			// many open files").
			if strings.HasPrefix(t, "File ") {
				frame = ind
			}
			indent = -1
			continue
		}
		if describeChrome(t) {
			// kubectl describe's "Events:" heading, its column heads
			// and rule: not log text, and not what the rows continue.
			indent = -1
			continue
		}
		if indent >= 0 && ind > indent && len(out) > 0 && !strings.HasPrefix(t, "{") && !isEventLine(t) {
			out[len(out)-1] += " " + strings.TrimSpace(l)
			continue
		}
		indent = ind
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// stackFrame reports a line of a stack trace that is not its error: a
// Python traceback's header and its `File "x", line N, in f` frames, Java's
// and Node's "at pkg.Class.method(File.java:12)" frames, Java's "... 12
// more".
func stackFrame(t string) bool {
	switch {
	case strings.HasPrefix(t, "Traceback (most recent call last)"):
		return true
	case strings.HasPrefix(t, `File "`) && strings.Contains(t, `", line `):
		return true
	case strings.HasPrefix(t, "at ") && (strings.HasSuffix(t, ")") || strings.Contains(t, ".java:")) && strings.Contains(t, "("):
		return true
	case strings.HasPrefix(t, "... ") && strings.HasSuffix(t, " more"):
		return true
	}
	return false
}

// describeChrome reports the lines around kubectl describe's event rows:
// "Events:", "Type  Reason  Age  From  Message", "----  ------  ---".
func describeChrome(t string) bool {
	if t == "Events:" || strings.HasPrefix(t, "Type ") && strings.Contains(t, "Reason") && strings.Contains(t, "Message") {
		return true
	}
	return t != "" && strings.Trim(t, "- \t") == ""
}

// isEventLine: "Warning  FailedCreatePodSandBox  ...", as kubectl describe prints events.
func isEventLine(s string) bool {
	f := strings.Fields(s)
	return len(f) >= 3 && (f[0] == "Warning" || f[0] == "Normal") && isIdentifier(f[1])
}

func isIdentifier(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// namesAThing reports whether the text after a closing quote makes the
// quote the name of something other than a log line: `tripped our
// "FATAL in postgres logs" alert`, `the "Disk full" dashboard`.
func namesAThing(after string) bool {
	// Past the closing quote (one byte, or three for a curly one).
	if strings.HasPrefix(after, "\u201d") {
		after = after[len("\u201d"):]
	} else if after != "" {
		after = after[1:]
	}
	if after == "" || after[0] != ' ' {
		return false
	}
	f := strings.Fields(after)
	if len(f) == 0 {
		return false
	}
	return namedThings[strings.ToLower(strings.TrimRight(f[0], ".,;:!?)"))]
}

// namedThings are what a quoted name in prose names when it is not a log
// line: alerts, dashboards, checks, settings.
var namedThings = map[string]bool{
	"alert": true, "alerts": true, "alarm": true, "alarms": true, "rule": true, "rules": true,
	"dashboard": true, "panel": true, "monitor": true, "check": true, "label": true,
	"channel": true, "ticket": true, "button": true, "column": true, "setting": true,
	"option": true, "flag": true, "tab": true, "section": true, "heading": true, "title": true,
	"metric": true, "graph": true, "query": true, "filter": true, "runbook": true, "playbook": true,
	"page": true, "widget": true, "notification": true,
}

// statusField matches a reason, message or error field of a YAML or JSON
// object's status: `message: Job has reached the specified backoff limit`,
// `"reason": "BackoffLimitExceeded",`.
var statusField = regexp.MustCompile(`^\s*(?:-\s+)?"?(?:reason|message|error|errorMessage|err)"?\s*:\s*(.+?)\s*,?\s*$`)

// statusFields returns the values of a config block's status fields
// (statusField), unquoted; a block with no reason field gives none, so a
// config file's own "message" keys stay configuration.
func statusFields(lines []string) []string {
	var out []string
	reason := false
	for _, l := range lines {
		m := statusField.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[1])
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
		}
		if v == "" || v == "|" || v == ">" || v == "null" {
			continue
		}
		if strings.Contains(strings.ToLower(strings.SplitN(strings.TrimSpace(l), ":", 2)[0]), "reason") {
			reason = true
		}
		out = append(out, v)
	}
	if !reason {
		return nil
	}
	return out
}

// quotedSpans finds quoted text in prose, pairing nested quotes: in
// `showed: "error=... Get "https://x": dial tcp ...".` the outer pair wins.
// Curly quotes pair with each other (“ opens, ” closes), so straight quotes
// inside them (“… for user "app"”) stay inside. A straight quote opens when
// it follows a space, an opening bracket, '=' or ':' (or starts the text)
// and is followed by a non-space; it closes when it follows a non-space and
// is followed by the end, a space, punctuation or a closing curly quote. An
// escaped quote (\") is part of the text. A quote left open at the end of
// the text runs to the end of its sentence (an unbalanced quote).
func quotedSpans(s string) []string {
	type open struct {
		pos   int
		curly bool
	}
	var stack []open
	var out []string
	emit := func(from, to int) {
		if t := strings.TrimSpace(s[from:to]); t != "" && !namesAThing(s[to:]) {
			out = append(out, t)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		curlyOpen := c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2] == 0x9c
		curlyClose := c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2] == 0x9d
		switch {
		case curlyOpen:
			stack = append(stack, open{pos: i + 3, curly: true})
			i += 2
			continue
		case curlyClose:
			// Close the innermost curly quote, and any straight ones in it.
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k].curly {
					if k == 0 {
						emit(stack[0].pos, i)
					}
					stack = stack[:k]
					break
				}
			}
			i += 2
			continue
		case c != '"' || i > 0 && s[i-1] == '\\':
			continue
		}
		prev, next := byte(' '), byte(' ')
		if i > 0 {
			prev = s[i-1]
		}
		if i+1 < len(s) {
			next = s[i+1]
		}
		opens := strings.IndexByte(" \t\n([{=:", prev) >= 0 && next != ' ' && next != '\n'
		closes := prev != ' ' && prev != '\n' && (i+1 == len(s) || strings.IndexByte(" \t\n.,;:)]}!?\"\xe2", next) >= 0)
		top := len(stack) > 0 && !stack[len(stack)-1].curly
		switch {
		case closes && top:
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				emit(o.pos, i)
			}
		case opens:
			stack = append(stack, open{pos: i + 1})
		}
	}
	if len(stack) > 0 {
		// Unbalanced: the outermost open quote runs to the end of its sentence.
		rest := s[stack[0].pos:]
		if e := strings.Index(rest, ". "); e > 0 {
			rest = rest[:e]
		}
		if t := strings.TrimSpace(strings.TrimRight(rest, ".")); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// quotedError reports whether a quote from the prose is error text worth a
// signature: four tokens with failure evidence, or three when one names an
// exception or error class ("ThrottlingException: Rate exceeded"): a class
// name says which failure it is as much as a sentence does.
func quotedError(q string) bool {
	if errorText(q, 4) {
		return true
	}
	if !errorText(q, 3) {
		return false
	}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == ':' || r == '(' || r == ')' }) {
		if patterns.ErrorClassName(w) {
			return true
		}
	}
	return false
}

// errorText reports whether text reads like an error message worth a
// signature: failure evidence and enough tokens, or a qualified exception
// class alone, as a stack trace's first line prints it
// ("java.util.ConcurrentModificationException").
func errorText(s string, minTokens int) bool {
	if t := strings.TrimSpace(s); strings.Contains(t, ".") && !strings.ContainsAny(t, " \t") && patterns.ErrorClassName(t) {
		return true
	}
	p := patterns.Prepare(s)
	if len(patterns.Tokenize(p.Text, nil)) < minTokens {
		return false
	}
	return patterns.IsFailure(s)
}
