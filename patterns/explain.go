package patterns

import (
	"fmt"
	"sort"
	"strings"
)

// Status is how a token of a line took part in a match.
type Status uint8

// Token statuses.
const (
	Extra   Status = iota // not in the signature
	Literal               // matched a literal token, or a masked value exactly
	Masked                // matched through a mask only (another IP, another id)
)

var statusNames = [...]string{"extra", "literal", "masked"}

func (s Status) String() string { return statusNames[s] }

// MarshalText makes statuses readable in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Explanation says why a line matched a signature.
type Explanation struct {
	// Text is the line's message part (prefixes stripped) that Tokens index.
	Text string `json:"text"`
	// Tokens are the line's tokens, each marked literal, masked or extra.
	Tokens []ExplainedToken `json:"tokens"`
	// Missing are the signature's tokens that the line lacks, as written in
	// the template ("load", "<hex>").
	Missing []string `json:"missing"`
	// Score is the match score; Coverage the share of the signature's weight
	// matched; LineCoverage the share of the line's weight matched.
	Score        float64 `json:"score"`
	Coverage     float64 `json:"coverage"`
	LineCoverage float64 `json:"line_coverage"`
	// Direction is "stream" (the line contains the signature),
	// "fragment" (the line is a part of the signature) or "writeup" (no
	// signature: the write-up's own text has the line's distinctive words).
	Direction string `json:"direction"`
	// Captures are named values from the line: ip, port, pod, namespace,
	// node, container, container_id, pod_uid, path.
	Captures map[string]string `json:"captures"`
	// Notes explain adjustments to the score (likelihood, feedback).
	Notes []string `json:"notes,omitempty"`
	// Terms are, for a match through a write-up's text (Direction
	// "writeup"), the words the line and the write-up share, heaviest
	// first.
	Terms []TextTerm `json:"terms,omitempty"`
}

// ExplainedToken is one token of the explained line.
type ExplainedToken struct {
	Text   string `json:"text"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Kind   string `json:"kind"`
	Status Status `json:"status"`
	// Sig is the signature token it matched ("" for extra tokens).
	Sig string `json:"sig,omitempty"`
}

// Explain explains the match of line against signature m.Sig.
func (s *Set) Explain(line string, m Match) Explanation {
	p := Prepare(line)
	v, pat := s.view(&s.pats[m.Sig]), s.Pattern(m.Sig)
	c := &v
	toks := Tokenize(p.Text, nil)
	s.readAs(p.Text, toks)
	ex := Explanation{Text: p.Text, Score: m.Score, Direction: "stream", Captures: Captures(p.Text, toks)}
	if m.Fragment {
		ex.Direction = "fragment"
	}
	pairs := s.align(c, toks)
	matchedSig := make([]bool, len(c.toks))
	status := make([]Status, len(toks))
	sigOf := make([]int, len(toks))
	var got, lineCovered, lineW float32
	credits := make([]float32, len(c.types))
	lw := s.lineWeights(toks, nil)
	for _, v := range lw {
		lineW += v
	}
	for _, pr := range pairs {
		st := c.toks[pr[0]]
		x := s.creditOf(st, toks[pr[1]])
		matchedSig[pr[0]] = true
		sigOf[pr[1]] = pr[0] + 1
		status[pr[1]] = Literal
		if st.kind != KindWord && (x < 1 || st.placeholder || st.hash != toks[pr[1]].Hash) {
			status[pr[1]] = Masked
		}
		if x > credits[st.typ] {
			credits[st.typ] = x
		}
		lineCovered += x * lw[pr[1]]
	}
	for k, ti := range c.types {
		got += credits[k] * ti.weight
	}
	if c.total > 0 {
		ex.Coverage = float64(got / c.total)
	}
	if lineW > 0 {
		ex.LineCoverage = float64(lineCovered / lineW)
	}
	for j, t := range toks {
		et := ExplainedToken{Text: t.Text(p.Text), Start: int(t.Start), End: int(t.End), Kind: t.Kind.String(), Status: status[j]}
		if sigOf[j] > 0 {
			et.Sig = sigTokenText(c, pat, sigOf[j]-1)
		}
		ex.Tokens = append(ex.Tokens, et)
	}
	seen := map[int16]bool{}
	for i, st := range c.toks {
		if matchedSig[i] || credits[st.typ] > 0 || seen[st.typ] {
			continue
		}
		seen[st.typ] = true
		ex.Missing = append(ex.Missing, sigTokenText(c, pat, i))
	}
	if ex.Missing == nil {
		ex.Missing = []string{}
	}
	if c.boost != 1 {
		ex.Notes = append(ex.Notes, fmt.Sprintf("score ×%.2f for the incident's likelihood", c.boost))
	}
	if m.Negated {
		ex.Notes = append(ex.Notes, s.negationNote(c, p.Text, toks, pairs))
	}
	if m.OtherMessage {
		ex.Notes = append(ex.Notes, fmt.Sprintf("score halved: the line gives %s another message than the signature", sigTokenText(c, pat, int(c.classTok-1))))
	}
	if m.OtherTail {
		ex.Notes = append(ex.Notes, fmt.Sprintf("score halved: the line has the signature's wrapper, not its message %q", sigTextFrom(c, pat, int(c.plainTail-1))))
	}
	if m.Scattered {
		ex.Notes = append(ex.Notes, "score halved: the line has the signature's words one by one among others, not its message")
	}
	if m.OtherClass {
		ex.Notes = append(ex.Notes, fmt.Sprintf("score halved: the line names another exception class where the signature has %s", sigTokenText(c, pat, int(c.lastClass-1))))
	}
	return ex
}

// negationNote says why a match's score was halved, naming the two
// aligned words the line puts a negation between (or leaves one out from)
// when this alignment shows them.
func (s *Set) negationNote(c *sigView, text string, toks []Token, pairs [][2]int) string {
	for k := 1; k < len(pairs); k++ {
		a, b := pairs[k-1], pairs[k]
		if c.negatedPair(int32(a[0]), int32(b[0]), text[toks[a[1]].End:toks[b[1]].Start]) {
			return fmt.Sprintf("score halved: the line says the opposite of the signature between %q and %q",
				toks[a[1]].Text(text), toks[b[1]].Text(text))
		}
	}
	return "score halved: the line says the opposite of the signature"
}

// sigTokenText returns signature token i as the template shows it.
func sigTokenText(c *sigView, pat *Pattern, i int) string {
	st := c.toks[i]
	if st.kind != KindWord {
		return st.kind.Mask()
	}
	return pat.TokenText(int(st.pos))
}

// align returns the aligned (signature token, line token) index pairs of
// the best alignment, in order.
func (s *Set) align(c *sigView, toks []Token) [][2]int {
	n, m := len(c.toks), len(toks)
	if n == 0 || m == 0 {
		return nil
	}
	w := m + 1
	dp := make([]float32, (n+1)*w)
	for i := 1; i <= n; i++ {
		st := c.toks[i-1]
		tw := c.types[st.typ].weight
		for j := 1; j <= m; j++ {
			best := dp[(i-1)*w+j]
			if dp[i*w+j-1] > best {
				best = dp[i*w+j-1]
			}
			if cr := s.creditOf(st, toks[j-1]); cr > 0 {
				if v := dp[(i-1)*w+j-1] + cr*tw; v > best {
					best = v
				}
			}
			dp[i*w+j] = best
		}
	}
	var pairs [][2]int
	for i, j := n, m; i > 0 && j > 0; {
		v := dp[i*w+j]
		switch {
		case v == dp[(i-1)*w+j]:
			i--
		case v == dp[i*w+j-1]:
			j--
		default:
			pairs = append(pairs, [2]int{i - 1, j - 1})
			i--
			j--
		}
	}
	sort.Slice(pairs, func(a, b int) bool { return pairs[a][1] < pairs[b][1] })
	return pairs
}

// captureKeys maps key=value keys in log lines to capture names.
var captureKeys = map[string]string{
	"pod": "pod", "podname": "pod", "pod_name": "pod", "namespace": "namespace", "ns": "namespace",
	"namespace_name": "namespace", "node": "node", "nodename": "node", "node_name": "node",
	"host": "node", "hostname": "node", "container": "container", "containername": "container",
	"container_name": "container", "containerid": "container_id", "container_id": "container_id",
	"podsandboxid": "sandbox_id", "sandboxid": "sandbox_id", "poduid": "pod_uid", "pod_uid": "pod_uid",
	"uid": "pod_uid", "volume": "volume", "volumename": "volume", "pvc": "pvc", "image": "image",
}

// Captures extracts named values from a prepared line: key=value fields
// (pod="ns/name", node="worker-2", containerID=...), the first IP and port,
// a 64-hex container id and the first absolute path.
func Captures(text string, toks []Token) map[string]string {
	out := map[string]string{}
	for i, t := range toks {
		v := t.Text(text)
		switch t.Kind {
		case KindIPv4, KindIPv6:
			setOnce(out, "ip", v)
			if i+1 < len(toks) && int(t.End) < len(text) && text[t.End] == ':' && toks[i+1].Start == t.End+1 {
				setOnce(out, "port", toks[i+1].Text(text))
			}
		case KindHex:
			if len(v) == 64 {
				setOnce(out, "container_id", v)
			}
		case KindPod:
			setOnce(out, "pod", v)
		}
	}
	keyValues(text, out)
	if p := firstPath(text); p != "" {
		out["path"] = p
	}
	return out
}

func setOnce(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok && v != "" {
		m[k] = v
	}
}

// keyValues reads key=value and key="value" fields (values may be escaped
// with \" inside JSON-escaped text).
func keyValues(text string, out map[string]string) {
	for i := 0; i < len(text); i++ {
		if text[i] != '=' {
			continue
		}
		k := i
		for k > 0 && (isLetter(text[k-1]) || text[k-1] == '_') {
			k--
		}
		name, ok := captureKeys[strings.ToLower(text[k:i])]
		if !ok {
			continue
		}
		v := i + 1
		for v < len(text) && (text[v] == '"' || text[v] == '\\') {
			v++
		}
		e := v
		for e < len(text) && text[e] != '"' && text[e] != ' ' && text[e] != '\\' && text[e] != ',' {
			e++
		}
		val := text[v:e]
		if val == "" {
			continue
		}
		if name == "pod" {
			if ns, pod, ok := strings.Cut(val, "/"); ok {
				out["namespace"] = ns
				val = pod
			}
		}
		out[name] = val
	}
}

// firstPath returns the first absolute file path in text.
func firstPath(text string) string {
	for i := 0; i < len(text); i++ {
		if text[i] != '/' || (i > 0 && text[i-1] != ' ' && text[i-1] != '"' && text[i-1] != '\'' && text[i-1] != '=' && text[i-1] != '(') {
			continue
		}
		e := i + 1
		for e < len(text) && !separator[text[e]] && text[e] != ':' {
			e++
		}
		p := strings.TrimRight(text[i:e], ".,")
		if strings.Count(p, "/") >= 2 {
			return p
		}
	}
	return ""
}

// Fill replaces runbook placeholders such as <node-ip>, <node>,
// <namespace>, <pod>, <container>, <container-id> and <ip> with values from
// captures (and labels). Placeholders without a value stay.
func Fill(s string, values map[string]string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	repl := make([]string, 0, 16)
	for ph, keys := range placeholderKeys {
		for _, k := range keys {
			if v := values[k]; v != "" {
				repl = append(repl, "<"+ph+">", v)
				break
			}
		}
	}
	if len(repl) == 0 {
		return s
	}
	return strings.NewReplacer(repl...).Replace(s)
}

var placeholderKeys = map[string][]string{
	"node-ip":      {"node_ip", "host_ip"},
	"node":         {"node", "host"},
	"namespace":    {"namespace"},
	"pod":          {"pod"},
	"container":    {"container"},
	"container-id": {"container_id"},
	"ip":           {"ip"},
	"port":         {"port"},
	"path":         {"path"},
}

// sigTextFrom returns the signature's tokens from i on, as the template
// shows them, joined by spaces.
func sigTextFrom(c *sigView, pat *Pattern, i int) string {
	parts := make([]string, 0, len(c.toks)-i)
	for k := i; k < len(c.toks); k++ {
		parts = append(parts, sigTokenText(c, pat, k))
	}
	return strings.Join(parts, " ")
}
