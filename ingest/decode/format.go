package decode

import (
	"fmt"
	"strings"
)

// formatNames maps every route name, aliases included, to its format.
var formatNames = map[string]Format{
	"": FormatAuto, "auto": FormatAuto, "fluentbit": FormatFluentBit, "fluent-bit": FormatFluentBit,
	"fluentd": FormatFluentd, "vector": FormatVector, "loki": FormatLoki, "otlp": FormatOTLP,
	"elasticsearch": FormatElasticsearch, "alertmanager": FormatAlertmanager, "k8s-events": FormatK8sEvents,
	"ndjson": FormatNDJSON, "text": FormatText,
}

// Formats returns the explicit formats' route names, in the order the
// documentation lists them.
func Formats() []string {
	return []string{"fluentbit", "fluentd", "vector", "loki", "otlp", "elasticsearch", "alertmanager", "k8s-events", "ndjson", "text"}
}

// ParseFormat reads a route name (case-insensitive; "auto" and "" detect
// the format from the request). An unknown name is ErrUnknownFormat, with
// the names that exist.
func ParseFormat(name string) (Format, error) {
	if f, ok := formatNames[strings.ToLower(name)]; ok {
		return f, nil
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, name, strings.Join(Formats(), ", "))
}

// alwaysSnappy reports whether the body is snappy-compressed whatever its
// Content-Encoding says: Loki's protobuf push (JSON push is not).
func (f Format) alwaysSnappy(contentType string) bool {
	return f == FormatLoki && !strings.Contains(contentType, "json")
}

// emptyBodyOK reports whether an empty body is a valid request: an OTLP
// export or a Loki push with nothing in it.
func (f Format) emptyBodyOK() bool { return f == FormatOTLP || f == FormatLoki }
