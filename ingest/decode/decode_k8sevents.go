package decode

import (
	"bytes"
	"encoding/json"
	"strings"
)

// k8sTimeKeys is the pick order for an event's time: the last occurrence first, then
// the series, the event time, the first occurrence and the object's creation.
var k8sTimeKeys = [][]string{
	{"lastTimestamp"}, {"deprecatedLastTimestamp"}, {"series", "lastObservedTime"},
	{"eventTime"}, {"firstTimestamp"}, {"deprecatedFirstTimestamp"},
	{"metadata", "creationTimestamp"},
}

// decodeK8sEvents decodes Kubernetes events: core/v1 and events.k8s.io/v1 Event objects,
// alone, in a List/EventList, in watch {"type","object"} wrappers, as NDJSON or arrays,
// with the resmoio exporter's clusterName, or in kube-eventer's default template, whose
// body is not always valid JSON.
func decodeK8sEvents(b *batch) error {
	body := b.req.Body
	if isKubeEventerText(body) && !json.Valid(body) {
		return b.addKubeEventer(kubeEventerFields(body))
	}
	return eachJSON(b, body, func(v any) error { return b.addK8sValue(v, 0) })
}

// addK8sValue adds the events of one decoded value, unwrapping lists and watch events.
func (b *batch) addK8sValue(v any, depth int) error {
	m, ok := v.(map[string]any)
	if !ok || depth > 2 {
		b.reject("record is %s, not a Kubernetes event", kindOf(v))
		return nil
	}
	switch {
	case isK8sEvent(m):
		return b.addK8sEvent(m)
	case m["EventType"] != nil || m["EventMessage"] != nil:
		return b.addKubeEventer(stringMap(m))
	}
	if items, ok := m["items"].([]any); ok {
		for _, it := range items {
			if err := b.addK8sValue(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if obj, ok := m["object"].(map[string]any); ok {
		return b.addK8sValue(obj, depth+1)
	}
	b.reject("object has no involvedObject or regarding: not a Kubernetes event")
	return nil
}

func isK8sEvent(m map[string]any) bool {
	_, io := m["involvedObject"].(map[string]any)
	_, re := m["regarding"].(map[string]any)
	return io || re
}

// addK8sEvent adds an Event as a `kubectl describe` line: "<type> <reason> <message>".
func (b *batch) addK8sEvent(m map[string]any) error {
	obj, _ := m["involvedObject"].(map[string]any)
	if obj == nil {
		obj, _ = m["regarding"].(map[string]any)
	}
	note := lookupString(m, "message")
	if note == "" {
		note = lookupString(m, "note")
	}
	typ, reason := lookupString(m, "type"), lookupString(m, "reason")
	if note == "" && reason == "" {
		b.reject("event has no reason and no message")
		return nil
	}
	r := Record{Message: joinNonEmpty(" ", typ, reason, note), Level: normLevel(typ)}
	for _, path := range k8sTimeKeys {
		if t, ok := parseTime(lookup(m, path...)); ok {
			r.Time = t
			break
		}
	}
	ls := b.labels()
	k8sEventLabels(ls, m, obj)
	r.Labels = ls.m
	return b.add(r)
}

// k8sEventLabels sets namespace, kind, name, pod, container, node, cluster, reason and app.
func k8sEventLabels(ls *labelSet, m, obj map[string]any) {
	kind, name := lookupString(obj, "kind"), lookupString(obj, "name")
	ns := lookupString(obj, "namespace")
	if ns == "" {
		ns = lookupString(m, "metadata", "namespace")
	}
	ls.set("namespace", ns)
	ls.set("kind", kind)
	ls.set("name", name)
	if kind == "Pod" {
		ls.set("pod", name)
	}
	ls.set("container", fieldPathContainer(lookupString(obj, "fieldPath")))
	ls.set("node", lookupString(m, "source", "host"))
	ls.set("node", lookupString(m, "deprecatedSource", "host"))
	if isKubeletEvent(m) {
		ls.set("node", lookupString(m, "reportingInstance"))
	}
	if kind == "Node" {
		ls.set("node", name)
	}
	ls.set("cluster", lookupString(m, "clusterName"))
	ls.set("reason", lookupString(m, "reason"))
	ls.set("app", lookupString(obj, "labels", "app"))
	ls.set("app", lookupString(obj, "labels", "app.kubernetes.io/name"))
}

// isKubeletEvent tells events whose reportingInstance is a node name.
func isKubeletEvent(m map[string]any) bool {
	for _, k := range []string{"reportingComponent", "reportingController"} {
		if strings.Contains(lookupString(m, k), "kubelet") {
			return true
		}
	}
	return strings.Contains(lookupString(m, "source", "component"), "kubelet")
}

// fieldPathContainer reads the container of a field path such as "spec.containers{api}".
func fieldPathContainer(fp string) string {
	_, rest, ok := strings.Cut(fp, "containers{")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "}")
	return name
}

// kubeEventerKeys are the fields of kube-eventer's default webhook template.
var kubeEventerKeys = []string{"EventType", "EventKind", "EventReason", "EventTime", "EventMessage", "EventNamespace", "EventObject"}

func isKubeEventerText(body []byte) bool {
	return bytes.Contains(body, []byte(`"EventType"`)) || bytes.Contains(body, []byte(`"EventMessage"`))
}

// kubeEventerFields pulls the template's fields out of a body that may not be valid JSON
// (the template strips quotes from the message but escapes nothing else): each value
// runs from its opening quote to the next quote.
func kubeEventerFields(body []byte) map[string]string {
	s := string(body)
	out := make(map[string]string, len(kubeEventerKeys))
	for _, k := range kubeEventerKeys {
		i := strings.Index(s, `"`+k+`"`)
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(s[i+len(k)+2:], " \t\r\n")
		rest, ok := strings.CutPrefix(rest, ":")
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\r\n"), `"`)
		if !ok {
			continue
		}
		v, _, _ := strings.Cut(rest, `"`)
		out[k] = v
	}
	return out
}

// addKubeEventer adds an event from kube-eventer's template fields.
func (b *batch) addKubeEventer(f map[string]string) error {
	if f["EventReason"] == "" && f["EventMessage"] == "" {
		b.reject("kube-eventer event has no EventReason and no EventMessage")
		return nil
	}
	r := Record{
		Message: joinNonEmpty(" ", f["EventType"], f["EventReason"], f["EventMessage"]),
		Level:   normLevel(f["EventType"]),
	}
	r.Time, _ = parseTimeString(f["EventTime"])
	ls := b.labels()
	ls.set("namespace", f["EventNamespace"])
	ls.set("kind", f["EventKind"])
	ls.set("name", f["EventObject"])
	if f["EventKind"] == "Pod" {
		ls.set("pod", f["EventObject"])
	}
	ls.set("reason", f["EventReason"])
	r.Labels = ls.m
	return b.add(r)
}
