// Package decode turns log-forwarder payloads into records: one decoder per
// wire format (Fluent Bit, Fluentd, Vector, Loki, OTLP, Elasticsearch bulk,
// Alertmanager, Kubernetes events, NDJSON, plain text), content sniffing
// for the auto route, decompression within size limits, and the reply each
// sender expects (Format.Reply). Decoders are pure functions of a Request:
// the package imports no other incidex package, so the webhook receiver can
// run without the knowledge base.
package decode
