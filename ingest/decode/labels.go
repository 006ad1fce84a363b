package decode

import (
	"slices"
	"strconv"
	"strings"
)

// labelAlias names a record label and the keys senders use for it, in preference order.
type labelAlias struct {
	label string
	keys  []string
}

// flatAliases map flat label names (Loki stream labels, Prometheus-style labels) to
// record labels.
var flatAliases = []labelAlias{
	{"cluster", []string{"cluster", "cluster_name", "k8s_cluster_name"}},
	{"namespace", []string{"namespace", "namespace_name", "k8s_namespace_name"}},
	{"pod", []string{"pod", "pod_name", "k8s_pod_name"}},
	{"container", []string{"container", "container_name", "k8s_container_name"}},
	{"node", []string{"node", "node_name", "nodename", "k8s_node_name"}},
	{"host", []string{"host", "hostname"}},
	{"app", []string{"app", "app_kubernetes_io_name"}},
	{"job", []string{"job"}},
	{"service", []string{"service", "service_name"}},
	{"stream", []string{"stream"}},
	{"file", []string{"filename", "file"}},
}

// setAliased sets the labels of kv: first the aliased ones in alias order (consuming the
// keys they read), then, with keepRest, the others under their own names in sorted
// order, so that the labels kept under the limit do not depend on map order.
func setAliased(ls *labelSet, kv map[string]string, aliases []labelAlias, keepRest bool) {
	used := make(map[string]bool, len(aliases))
	for _, a := range aliases {
		for _, k := range a.keys {
			if v := kv[k]; v != "" {
				ls.set(a.label, v)
				used[k] = true
				break
			}
		}
	}
	if !keepRest {
		return
	}
	rest := make([]string, 0, len(kv))
	for k := range kv {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		ls.set(k, kv[k])
	}
}

// parseLabelSet parses a Prometheus label-set string such as `{app="api", ns="prod"}`.
// Values are Go-unquoted when they can be (Promtail, Alloy); Vector writes them
// unescaped, so a quote only closes a value when the next label or the end follows it.
func parseLabelSet(s string) map[string]string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "{")
	s = strings.TrimSuffix(s, "}")
	out := make(map[string]string)
	for {
		s = strings.TrimLeft(s, " \t,")
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return out
		}
		name = strings.TrimSpace(name)
		rest = strings.TrimLeft(rest, " \t")
		if !strings.HasPrefix(rest, `"`) {
			return out
		}
		value, tail := labelValue(rest[1:])
		if name != "" {
			out[name] = value
		}
		s = tail
	}
}

// labelValue reads a quoted value whose opening quote was consumed, returning the value
// and the text after its closing quote.
func labelValue(s string) (value, tail string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			if closesValue(s[i+1:]) {
				return unquoteLabel(s[:i]), s[i+1:]
			}
		}
	}
	return unquoteLabel(s), ""
}

// closesValue reports whether a quote followed by rest ends a label value: the end of
// the set, or a comma and the next `name="`.
func closesValue(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" || rest == "}" {
		return true
	}
	if rest[0] != ',' {
		return false
	}
	rest = strings.TrimLeft(rest[1:], " \t")
	name, after, ok := strings.Cut(rest, "=")
	if !ok || !isLabelName(strings.TrimSpace(name)) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(after, " \t"), `"`)
}

func isLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func unquoteLabel(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return s
}
