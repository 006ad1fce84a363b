package writeup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidex/incidex/kb"
)

func TestFrontMatterDialects(t *testing.T) {
	tests := []struct {
		name, src string
		check     func(t *testing.T, inc *kb.Incident)
	}{
		{"public collection", `---
uuid: 11111111-2222
url: https://example.org/pm/1
archive_url: https://archive.example.org/pm/1
title: Queue backlog
start_time: 2021-03-04T14:02:00Z
end_time: 2021-03-04T15:47:00Z
categories: [queues]
keywords: [rabbitmq, Backlog]
company: Acme
product: Notifications
summary: Emails were late.
source_published_at: 2021-03-09
---
Body text.
`, func(t *testing.T, inc *kb.Incident) {
			want := map[string]any{"tags": []string{"queues", "rabbitmq", "backlog"}, "org": "Acme", "services": []string{"Notifications"},
				"date": "2021-03-04", "duration": "1h45m", "summary": "Emails were late.",
				"refs":  []kb.Ref{{Text: "https://example.org/pm/1", URL: "https://example.org/pm/1"}, {Text: "https://archive.example.org/pm/1", URL: "https://archive.example.org/pm/1"}},
				"extra": []kb.Field{{Key: "uuid", Value: "11111111-2222"}, {Key: "source_published_at", Value: "2021-03-09"}}}
			got := map[string]any{"tags": inc.Tags, "org": inc.Organisation, "services": inc.Services, "date": inc.Date, "duration": inc.Duration,
				"summary": inc.Summary, "refs": inc.References, "extra": inc.Extra}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("mapping (-want +got):\n%s", d)
			}
		}},
		{"blog", `---
title: Sessions evicted
date: 2021-12-01
labels: redis, sessions
org: Lumen
service: web sessions
sev: SEV-2
links:
  - https://example.org/pr/1
  - title: Runbook
    url: https://example.org/rb
  - javascript:alert(1)
description: Users were logged out.
---
Body.
`, func(t *testing.T, inc *kb.Incident) {
			want := map[string]any{"tags": []string{"redis", "sessions"}, "org": "Lumen", "services": []string{"web sessions"}, "severity": "high",
				"summary": "Users were logged out.",
				"refs":    []kb.Ref{{Text: "https://example.org/pr/1", URL: "https://example.org/pr/1"}, {Text: "Runbook", URL: "https://example.org/rb"}, {Text: "javascript:alert(1)"}}}
			got := map[string]any{"tags": inc.Tags, "org": inc.Organisation, "services": inc.Services, "severity": inc.Severity, "summary": inc.Summary, "refs": inc.References}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("mapping (-want +got):\n%s", d)
			}
		}},
		{"incident tool", `---
name: Webhook timeout
started_at: 2023-03-02 13:00
resolved_at: 2023-03-04 15:10
organization: Ferro
components: [deploy pipeline, policy webhook]
priority: P1
tags: [webhook]
customer_facing: false
---
Body.
`, func(t *testing.T, inc *kb.Incident) {
			want := map[string]any{"title": "Webhook timeout", "org": "Ferro", "services": []string{"deploy pipeline", "policy webhook"}, "severity": "critical",
				"date": "2023-03-02", "duration": "2d2h", "extra": []kb.Field{{Key: "customer_facing", Value: "false"}}}
			got := map[string]any{"title": inc.Title, "org": inc.Organisation, "services": inc.Services, "severity": inc.Severity, "date": inc.Date,
				"duration": inc.Duration, "extra": inc.Extra}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("mapping (-want +got):\n%s", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseFile("x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if len(p.Warnings) != 0 {
				t.Errorf("warnings = %q, want none", p.Warnings)
			}
			tt.check(t, p.Incidents[0])
		})
	}
}

// A field of the wrong type is left out with a warning naming it; the
// rest of the write-up is ingested.
func TestFrontMatterWrongType(t *testing.T) {
	src := "---\ntitle: T\nkeywords:\n  a: 1\n  b: 2\ncompany: Acme\nservices: {x: y}\n---\nBody.\n"
	p, err := ParseFile("w.md", []byte(src))
	if err != nil {
		t.Fatalf("ParseFile: %v, want the write-up ingested", err)
	}
	inc := p.Incidents[0]
	if inc.Title != "T" || inc.Organisation != "Acme" || len(inc.Tags) != 0 {
		t.Errorf("title %q org %q tags %q, want T, Acme, none", inc.Title, inc.Organisation, inc.Tags)
	}
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], `"keywords"`) || !strings.Contains(p.Warnings[0], "got a map") ||
		!strings.Contains(p.Warnings[1], `"services"`) {
		t.Errorf("warnings = %q, want one for keywords and one for services", p.Warnings)
	}
}

// Hand-written headers are often not YAML: a quoted phrase with more text
// after it, or a colon inside a title. They are read as the key: value
// lines they are, with a warning, instead of refusing the write-up.
func TestFrontMatterThatIsNotYAMLIsReadAsPlainLines(t *testing.T) {
	src := "---\nid: INC-7\ntitle: \"too many clients\" errors from the billing database\n" +
		"tags: [postgres, 'pool']\nservices:\n  - billing\n  - api\ndate: 2024-03-02\n---\nBody.\n"
	p, err := ParseFile("w.md", []byte(src))
	if err != nil {
		t.Fatalf("ParseFile: %v, want the write-up ingested", err)
	}
	inc := p.Incidents[0]
	if inc.ID != "INC-7" || inc.Title != `"too many clients" errors from the billing database` || inc.Date != "2024-03-02" {
		t.Errorf("id %q title %q date %q", inc.ID, inc.Title, inc.Date)
	}
	if strings.Join(inc.Tags, ",") != "postgres,pool" || strings.Join(inc.Services, ",") != "billing,api" {
		t.Errorf("tags %q services %q, want postgres,pool and billing,api", inc.Tags, inc.Services)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "not valid YAML") {
		t.Errorf("warnings %q, want one saying the header is not YAML", p.Warnings)
	}
	// A broken list is still an error: there is no plain reading of it.
	if _, err := ParseFile("w.md", []byte("---\ntags: [a, b\ntitle: x\n---\nBody.\n")); err == nil {
		t.Error("a header with an unclosed list was accepted")
	}
}

func TestNormSeverity(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := normSeverity(in); got != want {
			t.Errorf("normSeverity(%q) = %q, want %q", in, got, want)
		}
	}
	f("SEV-1", "critical")
	f("P2", "high")
	f("sev3", "medium")
	f("Low", "low")
	f("4", "low")
	f("spicy", "spicy")
}
