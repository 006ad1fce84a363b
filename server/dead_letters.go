package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/web"
)

// deadLettersShown bounds the dead letters listed.
const deadLettersShown = 100

var errNoDeadLetters = errors.New("no dead letters here: this server does not run on NATS JetStream")

// handleListDeadLetters serves GET /api/v1/dead-letters[?limit=]: the
// newest records messages no worker could process, and how many there are.
func (s *Server) handleListDeadLetters(c *gin.Context) {
	if s.opts.DeadLetters == nil {
		s.writeError(c, errNoDeadLetters)
		return
	}
	limit, err := strconv.Atoi(c.DefaultQuery("limit", strconv.Itoa(deadLettersShown)))
	if err != nil || limit < 1 || limit > 1000 {
		writeErrorStatus(c, http.StatusBadRequest, "limit: want 1 to 1000")
		return
	}
	list, total, err := s.opts.DeadLetters(c.Request.Context(), limit)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"total": total, "dead_letters": list})
}

// handleDeadLettersPage serves /dead-letters.
func (s *Server) handleDeadLettersPage(c *gin.Context) {
	d := web.DeadLettersData{Page: s.page(c, "Dead letters", "dead-letters"), Enabled: s.opts.DeadLetters != nil}
	if d.Enabled {
		list, total, err := s.opts.DeadLetters(c.Request.Context(), deadLettersShown)
		if err != nil {
			s.writeError(c, err)
			return
		}
		d.Total = total
		for _, l := range list {
			d.Rows = append(d.Rows, web.DeadLetterRow{Seq: l.Seq, Reason: l.Reason, Time: l.Time, Bytes: l.Bytes, Preview: l.Preview})
		}
	}
	s.render(c, http.StatusOK, "deadletters", d)
}
