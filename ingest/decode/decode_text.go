package decode

import (
	"bytes"
	"mime"
	"strings"
)

// decodeText takes one record per line, strips "\r" and skips empty lines.
func decodeText(b *batch) error {
	body := b.req.Body
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r := Record{Message: string(line)}
		if b.req.Tag != "" {
			ls := b.labels()
			ls.set("tag", b.req.Tag)
			r.Labels = ls.m
		}
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}

// mediaType returns the lowercased media type of a Content-Type header, without parameters.
func mediaType(contentType string) string {
	if contentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

func isTextContent(contentType string) bool {
	return mediaType(contentType) == "text/plain"
}
