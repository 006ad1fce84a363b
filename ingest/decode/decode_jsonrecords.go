package decode

import (
	"fmt"
	"strings"
	"time"
)

// profile is a JSON-records dialect: where a sender keeps the message and the time.
type profile struct {
	messageKeys []string
	timeKeys    []string
}

var (
	fluentProfile = &profile{
		messageKeys: []string{"log", "message", "msg", "MESSAGE", "short_message", "full_message"},
		timeKeys:    []string{"date", "@timestamp", "timestamp", "time", "ts"},
	}
	fluentdProfile = &profile{
		messageKeys: fluentProfile.messageKeys,
		timeKeys:    []string{"time", "@timestamp", "timestamp", "date", "ts"},
	}
	vectorProfile = &profile{
		messageKeys: []string{"message", "log", "msg", "MESSAGE", "short_message", "full_message"},
		timeKeys:    []string{"timestamp", "@timestamp", "time", "date", "ts"},
	}
	genericProfile = &profile{
		messageKeys: []string{"message", "log", "msg", "MESSAGE", "short_message", "full_message"},
		timeKeys:    []string{"date", "@timestamp", "timestamp", "time", "ts", "timereported"},
	}
	bulkProfile = &profile{
		messageKeys: fluentProfile.messageKeys,
		timeKeys:    []string{"@timestamp", "timestamp", "time", "date", "ts"},
	}
)

func decodeNDJSON(b *batch) error { return decodeJSONRecords(b, genericProfile) }

func decodeVector(b *batch) error {
	if isTextContent(b.req.ContentType) {
		return decodeText(b)
	}
	return decodeJSONRecords(b, vectorProfile)
}

// decodeJSONRecords decodes a body of JSON records: an array, NDJSON, or concatenated
// objects. A string element is taken as a bare message.
func decodeJSONRecords(b *batch, p *profile) error {
	return eachJSON(b, b.req.Body, func(v any) error {
		return b.addValue(v, p, time.Time{})
	})
}

// addValue adds one decoded record value; t, when set, is the time the container gave it.
func (b *batch) addValue(v any, p *profile, t time.Time) error {
	switch x := v.(type) {
	case map[string]any:
		return b.addFields(x, p, t)
	case string:
		r := Record{Message: x, Time: t}
		if b.req.Tag != "" {
			ls := b.labels()
			ls.set("tag", b.req.Tag)
			r.Labels = ls.m
		}
		return b.add(r)
	}
	b.reject("record is %s, not an object", kindOf(v))
	return nil
}

// addFields adds a record from a decoded map, following the profile's key preferences.
// A Kubernetes Event (Fluent Bit's kubernetes_events input forwarded as records) reads
// as `kubectl describe` would show it, as on the k8s-events route.
func (b *batch) addFields(m map[string]any, p *profile, t time.Time) error {
	if isK8sEvent(m) {
		return b.addK8sEvent(m)
	}
	msg, ok, bad := messageOf(m, p.messageKeys)
	if !ok {
		if bad != "" {
			b.reject("%s is not a string", bad)
		} else {
			b.reject("no message field (%s)", strings.Join(p.messageKeys, ", "))
		}
		return nil
	}
	r := Record{Message: msg, Time: t, Level: levelOf(m)}
	if r.Time.IsZero() {
		r.Time = timeOf(m, p.timeKeys)
	}
	if inner, lvl, ok := unwrapJSON(msg); ok {
		r.Message = inner
		if r.Level == "" {
			r.Level = lvl
		}
	}
	ls := b.labels()
	ls.set("tag", b.req.Tag)
	recordLabels(ls, m)
	r.Labels = ls.m
	return b.add(r)
}

// recordLabelPaths lists, per label, where the senders keep it: the Fluent Bit
// kubernetes filter, Vector's kubernetes_logs source, Filebeat/ECS fields, then flat keys.
var recordLabelPaths = []struct {
	label string
	paths [][]string
}{
	{"cluster", [][]string{{"cluster"}, {"cluster_name"}, {"kubernetes", "cluster_name"}, {"orchestrator", "cluster", "name"}}},
	{"namespace", [][]string{{"kubernetes", "namespace_name"}, {"kubernetes", "pod_namespace"}, {"kubernetes", "namespace"}, {"namespace"}}},
	{"pod", [][]string{{"kubernetes", "pod_name"}, {"kubernetes", "pod", "name"}, {"pod"}, {"pod_name"}}},
	{"container", [][]string{{"kubernetes", "container_name"}, {"kubernetes", "container", "name"}, {"container"}, {"container_name"}}},
	{"node", [][]string{{"kubernetes", "host"}, {"kubernetes", "pod_node_name"}, {"kubernetes", "node", "name"}, {"node"}, {"node_name"}}},
	{"host", [][]string{{"host"}, {"host", "name"}, {"hostname"}, {"fromhost"}, {"_HOSTNAME"}}},
	{"app", [][]string{
		{"kubernetes", "labels", "app"}, {"kubernetes", "labels", "app.kubernetes.io/name"},
		{"kubernetes", "pod_labels", "app"}, {"kubernetes", "pod_labels", "app.kubernetes.io/name"},
		{"kubernetes", "labels", "app_kubernetes_io/name"}, {"app"},
	}},
	{"job", [][]string{{"job"}}},
	{"service", [][]string{{"service"}, {"service", "name"}, {"service_name"}, {"SYSLOG_IDENTIFIER"}}},
	{"stream", [][]string{{"stream"}}},
	{"file", [][]string{{"file"}, {"log", "file", "path"}, {"filename"}}},
	{"tag", [][]string{{"tag"}}},
}

// recordLabels sets the labels a record carries.
func recordLabels(ls *labelSet, m map[string]any) {
	for _, l := range recordLabelPaths {
		for _, path := range l.paths {
			if v := lookupString(m, path...); v != "" {
				if l.label == "container" {
					v = strings.TrimPrefix(v, "/") // Docker's fluentd log driver: "/name"
				}
				ls.set(l.label, v)
				break
			}
		}
	}
}

// kindOf names a decoded value's JSON kind for rejection reasons.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string, []byte:
		return "a string"
	case bool:
		return "a boolean"
	}
	if _, ok := scalarString(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
