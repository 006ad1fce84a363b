package decode

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Reply is the answer a sender expects for an accepted request: each
// sender reads its own shape, and some retry or drop data on any other.
type Reply struct {
	Status      int
	ContentType string // empty when there is no body
	// Header holds extra response headers.
	Header map[string]string
	Body   []byte
}

// countsReply is the generic answer.
type countsReply struct {
	Accepted int      `json:"accepted"`
	Rejected int      `json:"rejected"`
	Format   string   `json:"format"`
	Errors   []string `json:"errors,omitempty"`
}

// Reply returns the answer to the request res came from, whose
// Content-Type was contentType. Elasticsearch clients need errors:false and
// one item per action, OTLP exporters a response message in the request's
// encoding, and Loki clients 204; the others get the counts as JSON.
func (res Result) Reply(contentType string) Reply {
	switch res.Format {
	case FormatElasticsearch:
		return jsonReply(bulkReply(res), map[string]string{"X-Elastic-Product": "Elasticsearch"})
	case FormatOTLP:
		return otlpReply(res, contentType)
	case FormatLoki:
		return Reply{Status: http.StatusNoContent}
	default:
		return jsonReply(countsReply{Accepted: len(res.Records), Rejected: res.Rejected, Format: string(res.Format), Errors: res.Errors}, nil)
	}
}

func jsonReply(v any, header map[string]string) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: reply does not encode: " + err.Error())
	}
	return Reply{Status: http.StatusOK, ContentType: "application/json; charset=utf-8", Header: header, Body: b}
}

// bulkReply reports every action. Malformed documents get status 400
// (senders drop them, which is right), but errors stays false: Fluent Bit
// retries a whole chunk when errors is true, and a malformed record must
// never cause a retry.
func bulkReply(res Result) map[string]any {
	items := make([]map[string]any, 0, len(res.Bulk))
	for _, it := range res.Bulk {
		item := map[string]any{"_index": it.Index, "status": it.Status}
		if it.ID != "" {
			item["_id"] = it.ID
		}
		if it.Status >= 400 {
			item["error"] = map[string]string{"type": "mapper_parsing_exception", "reason": "malformed document"}
		}
		items = append(items, map[string]any{it.Action: item})
	}
	return map[string]any{"errors": false, "took": 0, "items": items}
}

// otlpReply is an ExportLogsServiceResponse in the request's encoding;
// rejected records are reported as a partial success, which exporters do
// not retry.
func otlpReply(res Result, contentType string) Reply {
	if strings.Contains(contentType, "json") {
		body := map[string]any{}
		if res.Rejected > 0 {
			body["partialSuccess"] = map[string]any{"rejectedLogRecords": fmt.Sprint(res.Rejected), "errorMessage": firstOr(res.Errors)}
		}
		return jsonReply(body, nil)
	}
	var b []byte
	if res.Rejected > 0 {
		var ps []byte
		ps = protowire.AppendTag(ps, 1, protowire.VarintType)
		ps = protowire.AppendVarint(ps, uint64(res.Rejected))
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, firstOr(res.Errors))
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, ps)
	}
	return Reply{Status: http.StatusOK, ContentType: "application/x-protobuf", Body: b}
}

func firstOr(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return errs[0]
}
