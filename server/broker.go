package server

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/kb"
)

// broker fans occurrence events out to live subscribers (SSE). A slow
// subscriber loses events rather than slowing anyone down.
type broker struct {
	mu   sync.Mutex
	subs map[chan kb.OccurrenceEvent]struct{}
}

func newBroker() *broker { return &broker{subs: map[chan kb.OccurrenceEvent]struct{}{}} }

func (b *broker) subscribe() chan kb.OccurrenceEvent {
	ch := make(chan kb.OccurrenceEvent, 256)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch
}

func (b *broker) unsubscribe(ch chan kb.OccurrenceEvent) {
	b.mu.Lock()
	delete(b.subs, ch)
	b.mu.Unlock()
}

func (b *broker) publish(ev kb.OccurrenceEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

// handleOccurrenceStream streams occurrence changes as server-sent events,
// filtered by incident, namespace and node.
func (s *Server) handleOccurrenceStream(c *gin.Context) {
	incident, namespace, node := c.Query("incident"), c.Query("namespace"), c.Query("node")
	ch := s.broker.subscribe()
	defer s.broker.unsubscribe(ch)
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	_, _ = w.Write([]byte(": connected\n\n"))
	_ = rc.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-c.Request.Context().Done():
			return
		case <-keepalive.C:
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil {
				return
			}
		case ev := <-ch:
			o := ev.Occurrence
			if (incident != "" && o.IncidentID != incident) || (namespace != "" && o.Labels["namespace"] != namespace) ||
				(node != "" && o.Labels["node"] != node && o.Labels["host"] != node) {
				continue
			}
			b, _ := json.Marshal(ev)
			if _, err := w.Write(append(append([]byte("event: occurrence\ndata: "), b...), '\n', '\n')); err != nil {
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
