package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// Two raw-body uploads without a front-matter id used to share the id
// "upload", and the second silently replaced the first.
func TestCreateIncidentNeverReplacesSilently(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, adminTok: "adm"})
	auth := []string{"Authorization", "Bearer adm"}
	first := "# Broker disk full\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] broker: write segment /data/kafka/log-42: no space left on device\n```\n"
	second := "# Ingress certificate expired\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 tls.go:9] ingress: x509: certificate has expired or is not yet valid\n```\n"
	created := func(r response) string {
		t.Helper()
		var body struct {
			Incidents []struct{ ID string } `json:"incidents"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || len(body.Incidents) != 1 {
			t.Fatalf("create = %d %s", r.status, r.body)
		}
		return body.Incidents[0].ID
	}
	r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte(first), auth...)
	if r.status != 201 {
		t.Fatalf("create first = %d %s", r.status, r.body)
	}
	id1 := created(r)
	if !strings.HasPrefix(id1, "broker-disk-full-") {
		t.Errorf("first id = %q, want the title's slug and a content hash", id1)
	}
	r = h.do("POST", "/api/v1/incidents", "text/markdown", []byte(second), auth...)
	if r.status != 201 {
		t.Fatalf("create second = %d %s", r.status, r.body)
	}
	if id2 := created(r); id2 == id1 {
		t.Fatalf("two different write-ups got the same id %q", id1)
	}
	list := h.do("GET", "/api/v1/incidents", "", nil)
	if n := strings.Count(string(list.body), `"id"`); n != 2 {
		t.Errorf("list after two creates has %d incidents, want 2: %s", n, list.body)
	}

	// The same id again: 409 naming the existing id, nothing changed.
	withID := "---\nid: broker-disk\n---\n" + first
	if r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte(withID), auth...); r.status != 201 {
		t.Fatalf("create broker-disk = %d %s", r.status, r.body)
	}
	changed := strings.Replace(withID, "Broker disk full", "Broker disk filled by logs", 1)
	r = h.do("POST", "/api/v1/incidents", "text/markdown", []byte(changed), auth...)
	var conflict struct{ Error, ID string }
	_ = json.Unmarshal(r.body, &conflict)
	if r.status != 409 || conflict.ID != "broker-disk" || !strings.Contains(conflict.Error, "already exists") {
		t.Errorf("create over an existing id = %d %s, want 409 with id broker-disk", r.status, r.body)
	}
	if got := h.do("GET", "/api/v1/incidents/broker-disk", "", nil); strings.Contains(string(got.body), "filled by logs") {
		t.Error("a refused create changed the incident")
	}
	// The same upload twice is a conflict too (the same content, the same id).
	if r := h.do("POST", "/api/v1/incidents", "text/markdown", []byte(first), auth...); r.status != 409 {
		t.Errorf("the same bare upload twice = %d %s, want 409", r.status, r.body)
	}

	// Replacing says so: ?replace=1 on create, or PUT.
	if r := h.do("POST", "/api/v1/incidents?replace=1", "text/markdown", []byte(changed), auth...); r.status != 201 {
		t.Errorf("create with ?replace=1 = %d %s", r.status, r.body)
	}
	if got := h.do("GET", "/api/v1/incidents/broker-disk", "", nil); !strings.Contains(string(got.body), "filled by logs") {
		t.Error("?replace=1 did not replace the incident")
	}
	if r := h.do("PUT", "/api/v1/incidents/broker-disk", "text/markdown", []byte(withID), auth...); r.status != 200 {
		t.Errorf("PUT = %d %s", r.status, r.body)
	}
}

func TestWriteupFormRefusesAnExistingID(t *testing.T) {
	h := newHarness(t, harnessOpts{withoutStarter: true, adminTok: "adm"})
	b := h.browser()
	b.postForm("/login", url.Values{"token": {"adm"}})
	md := "---\nid: broker-disk\n---\n# Broker disk full\n\n## Symptoms\n\n```log\nE0101 00:00:00.000000 1 a.go:1] broker: write segment /data/kafka/log-42: no space left on device\n```\n"
	if r := b.postMultipart("/incidents/new", map[string]string{"action": "save", "markdown": md}, "", ""); r.status != 303 {
		t.Fatalf("save = %d %s", r.status, firstN(r.body, 300))
	}
	other := strings.Replace(md, "Broker disk full", "Broker disk filled by logs", 1)
	r := b.postMultipart("/incidents/new", map[string]string{"action": "save", "markdown": other}, "", "")
	wantPage(t, "save over an existing id", r, 409, "incident broker-disk already exists", `action="/incidents/new?replace=1"`)
	if got := h.do("GET", "/api/v1/incidents/broker-disk", "", nil); strings.Contains(string(got.body), "filled by logs") {
		t.Fatal("the form replaced an incident without confirmation")
	}
	r = b.postMultipart("/incidents/new?replace=1", map[string]string{"action": "save", "markdown": other}, "", "")
	if r.status != 303 || r.header.Get("Location") != "/incidents/broker-disk" {
		t.Errorf("save again to confirm = %d %q", r.status, r.header.Get("Location"))
	}
	if got := h.do("GET", "/api/v1/incidents/broker-disk", "", nil); !strings.Contains(string(got.body), "filled by logs") {
		t.Error("the confirmed save did not replace the incident")
	}
}
