package decode

import "time"

// Record is one log line or event decoded from a forwarder payload.
type Record struct {
	// Time is when the line was logged; receive time when the payload has none.
	Time time.Time
	// Message is the text to match.
	Message string
	// Level is the normalised severity: "debug", "info", "warn", "error", "fatal", or "" when unknown.
	Level string
	// Labels are resource labels: cluster, namespace, pod, container, node, host, app, job, ...
	Labels map[string]string
	// Source is the format the record came in (see Format).
	Source Format
	// ID is a sender-provided id usable for deduplication (Elasticsearch _id, ...), or "".
	ID string
	// Truncated is set when Message was cut to the line-length limit.
	Truncated bool
}

// Format names a webhook payload format.
type Format string

// The formats the webhook understands.
const (
	FormatAuto          Format = ""
	FormatFluentBit     Format = "fluentbit"
	FormatFluentd       Format = "fluentd"
	FormatVector        Format = "vector"
	FormatLoki          Format = "loki"
	FormatOTLP          Format = "otlp"
	FormatElasticsearch Format = "elasticsearch"
	FormatAlertmanager  Format = "alertmanager"
	FormatK8sEvents     Format = "k8s-events"
	FormatNDJSON        Format = "ndjson"
	FormatText          Format = "text"
)
