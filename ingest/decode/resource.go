package decode

import "strings"

// resourceLabels are the labels that say where a line came from; the
// others (stream, file, job) do not make a resource.
var resourceLabels = []string{"cluster", "namespace", "workload", "container", "node"}

// ResourceKey names the resource a record's labels describe: cluster,
// namespace, workload (the app label, else the pod name without its
// ReplicaSet and random suffixes), container and node. Pods of one
// Deployment are one resource, so a restart does not split an occurrence.
//
// The worker computes it for each match and the knowledge-base writer groups
// occurrences by it (kb.Observation.Resource). It lives here, beside the
// labels it reads, so that receivers, workers and the writer agree on it
// without importing one another.
func ResourceKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range resourceLabels {
		v := labels[k]
		if k == "workload" {
			v = workload(labels)
		}
		if k == "node" && v == "" {
			v = labels["host"]
		}
		if v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + v)
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

func workload(labels map[string]string) string {
	for _, k := range []string{"app", "app.kubernetes.io/name", "k8s-app", "service", "job"} {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return podBase(labels["pod"])
}

// podBase strips generated suffixes: web-7d9f8b6c4-x2kq9 → web,
// calico-node-x7k2p → calico-node, valkey-0 → valkey.
func podBase(pod string) string {
	parts := strings.Split(pod, "-")
	for len(parts) > 1 {
		last := parts[len(parts)-1]
		if !generatedPart(last) {
			break
		}
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "-")
}

func generatedPart(s string) bool {
	if s == "" {
		return false
	}
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			if strings.IndexByte("aeiou", c) >= 0 && len(s) != 5 {
				return false
			}
		default:
			return false
		}
	}
	return digit && (len(s) == 5 || len(s) >= 8 || allDigits(s))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
