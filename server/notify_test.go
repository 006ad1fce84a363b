package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/server"
)

// TestNotifierWebhookAndSlack: an opened occurrence is posted to the
// generic webhook (retried after a 503) and to Slack; updates are not.
func TestNotifierWebhookAndSlack(t *testing.T) {
	var mu sync.Mutex
	var generic []server.Payload
	var slack []string
	fails := 1
	gsrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var p server.Payload
		_ = json.NewDecoder(r.Body).Decode(&p)
		generic = append(generic, p)
	}))
	defer gsrv.Close()
	ssrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		slack = append(slack, string(b))
		mu.Unlock()
	}))
	defer ssrv.Close()
	n := server.NewNotifier(server.NotifierOptions{
		WebhookURL: gsrv.URL, SlackURL: ssrv.URL, PublicURL: "https://incidex.example",
		Incident: func(id string) *kb.IncidentRef {
			return &kb.IncidentRef{ID: id, Title: "CNI not initialized", RootCause: "the CNI plugin has no config yet", CauseStatus: kb.CauseKnown}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	occ := kb.Occurrence{ID: 7, IncidentID: "cni-not-initialized", Count: 3, Labels: map[string]string{"namespace": "shop", "node": "node-2"}}
	n.Notify(kb.OccurrenceEvent{Type: "updated", Occurrence: occ})
	n.Notify(kb.OccurrenceEvent{Type: "opened", Occurrence: occ})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		ok := len(generic) == 1 && len(slack) == 1
		mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(generic) != 1 || generic[0].Event != "occurrence.opened" || generic[0].Incident.Title != "CNI not initialized" ||
		generic[0].URL != "https://incidex.example/incidents/cni-not-initialized" || generic[0].Occurrence.Labels["node"] != "node-2" {
		t.Errorf("generic webhook got %+v", generic)
	}
	if len(slack) != 1 || !strings.Contains(slack[0], "CNI not initialized") || !strings.Contains(slack[0], "namespace=shop") {
		t.Errorf("slack got %q", slack)
	}
	if sent, failed, dropped := n.Stats(); sent != 2 || failed != 0 || dropped != 0 {
		t.Errorf("stats sent %d failed %d dropped %d, want 2 0 0", sent, failed, dropped)
	}
}
