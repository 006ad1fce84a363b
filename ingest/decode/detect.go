package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/klauspost/compress/snappy"
)

// Detect picks the format of a request for the auto route: by path first, then by
// Content-Type, then by sniffing the first JSON value of the body; anything else is text.
func Detect(req Request) Format {
	if f := detectPath(req.Path); f != FormatAuto {
		return f
	}
	switch mt := mediaType(req.ContentType); mt {
	case "application/msgpack", "application/vnd.msgpack":
		return FormatFluentBit
	case "application/x-msgpack":
		return FormatFluentd
	case "application/x-protobuf", "application/protobuf":
		return detectProtobuf(req)
	case "text/plain", "application/logplex-1":
		return FormatText
	}
	if len(req.Body) > 0 && isMsgpackContainer(req.Body[0]) {
		return FormatFluentBit
	}
	return sniffJSON(req)
}

func detectPath(path string) Format {
	path, _, _ = strings.Cut(path, "?")
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/loki/api/v1/push"):
		return FormatLoki
	case strings.HasSuffix(path, "/v1/logs"):
		return FormatOTLP
	case path == "/_bulk" || strings.HasSuffix(path, "/_bulk"):
		return FormatElasticsearch
	}
	return FormatAuto
}

// detectProtobuf tells Loki from OTLP: by User-Agent, else a Loki body is a snappy block
// of a PushRequest while an OTLP body is raw protobuf.
func detectProtobuf(req Request) Format {
	ua := strings.ToLower(req.UserAgent)
	if strings.HasPrefix(ua, "promtail") || strings.HasPrefix(ua, "alloy") || strings.Contains(ua, "loki") {
		return FormatLoki
	}
	if n, err := snappy.DecodedLen(req.Body); err == nil && n <= DefaultMaxBodyBytes {
		if raw, err := snappy.Decode(nil, req.Body); err == nil {
			if _, ok := unmarshalPush(raw); ok {
				return FormatLoki
			}
		}
	}
	return FormatOTLP
}

// jsonSniff records which keys the first JSON value of a body has, without keeping values.
type jsonSniff struct {
	Streams        []struct{ Stream, Values present } `json:"streams"`
	ResourceLogs   present                            `json:"resourceLogs"`
	Version        any                                `json:"version"`
	Alerts         present                            `json:"alerts"`
	InvolvedObject present                            `json:"involvedObject"`
	Regarding      present                            `json:"regarding"`
	EventType      present                            `json:"EventType"`
	EventMessage   present                            `json:"EventMessage"`
	Object         *jsonSniff                         `json:"object"`
	Items          []jsonSniff                        `json:"items"`
	Date           present                            `json:"date"`
	SourceType     present                            `json:"source_type"`
	Kubernetes     struct {
		PodNamespace  present `json:"pod_namespace"`
		NamespaceName present `json:"namespace_name"`
	} `json:"kubernetes"`
}

// present notes that a key exists, whatever its value.
type present bool

func (p *present) UnmarshalJSON(data []byte) error {
	*p = string(data) != "null"
	return nil
}

// sniffJSON looks at the keys of the body's first JSON value (the first element of an
// array). A body that does not start with a JSON object or array is text, unless its
// Content-Type says JSON: then it is JSON records, and the decoder says where it is not.
func sniffJSON(req Request) Format {
	body := trimBOM(req.Body)
	c := firstNonSpace(body, 0)
	if c < 0 {
		return FormatText
	}
	s, ok := jsonSniff{}, false
	if body[c] == '{' || body[c] == '[' {
		s, ok = firstJSONValue(body[c:])
	}
	switch {
	case ok:
	case isKubeEventerText(body):
		return FormatK8sEvents
	case claimsJSON(req.ContentType):
		return FormatNDJSON
	default:
		return FormatText
	}
	if f := s.format(); f != FormatAuto {
		return f
	}
	return jsonRecordsFormat(req, s)
}

// claimsJSON reports whether a Content-Type names JSON or a JSON-lines type.
func claimsJSON(contentType string) bool {
	return strings.Contains(mediaType(contentType), "json")
}

// firstJSONValue decodes the first value, or the first element of a leading array.
func firstJSONValue(body []byte) (jsonSniff, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var s jsonSniff
	if body[0] == '[' {
		if _, err := dec.Token(); err != nil || !dec.More() {
			return s, err == nil
		}
	}
	if err := dec.Decode(&s); err != nil {
		var ute *json.UnmarshalTypeError
		return s, errors.As(err, &ute)
	}
	return s, true
}

// format names the format the sniffed keys belong to, or FormatAuto for plain records.
func (s *jsonSniff) format() Format {
	switch {
	case len(s.Streams) > 0 && bool(s.Streams[0].Stream || s.Streams[0].Values):
		return FormatLoki
	case bool(s.ResourceLogs):
		return FormatOTLP
	case bool(s.Alerts) && s.Version != nil:
		return FormatAlertmanager
	case bool(s.InvolvedObject || s.Regarding || s.EventType || s.EventMessage):
		return FormatK8sEvents
	case s.Object != nil && s.Object.format() == FormatK8sEvents:
		return FormatK8sEvents
	case len(s.Items) > 0 && s.Items[0].format() == FormatK8sEvents:
		return FormatK8sEvents
	}
	return FormatAuto
}

// jsonRecordsFormat names the JSON-records dialect from the sender and its fields; they
// all use the same decoder, with different field preferences.
func jsonRecordsFormat(req Request, s jsonSniff) Format {
	ua := strings.ToLower(req.UserAgent)
	switch {
	case strings.HasPrefix(ua, "fluent-bit") || req.Tag != "":
		return FormatFluentBit
	case strings.Contains(ua, "vector"):
		return FormatVector
	case strings.HasPrefix(ua, "fluentd"):
		return FormatFluentd
	case bool(s.Kubernetes.NamespaceName) || bool(s.Date):
		return FormatFluentBit
	case bool(s.Kubernetes.PodNamespace) || bool(s.SourceType):
		return FormatVector
	}
	return FormatNDJSON
}
