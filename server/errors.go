package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// errorBody is the JSON error every route answers with.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// writeError is the one mapping from domain errors to HTTP: not found 404,
// validation and syntax 400, conflict 409, limits 413, bad encoding 415,
// overload 503; anything else 500 with a generic body, logged with the
// request id.
func (s *Server) writeError(c *gin.Context, err error) {
	var ve *kb.ValidationError
	var se *patterns.SyntaxError
	var fe *ingest.FileError
	switch {
	case errors.Is(err, kb.ErrNotFound):
		writeErrorStatus(c, http.StatusNotFound, err.Error())
	case errors.As(err, &ve):
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: ve.Error(), Field: ve.Field})
	case errors.As(err, &se), errors.As(err, &fe), errors.Is(err, ingest.ErrMalformed), errors.Is(err, errBadRequest):
		writeErrorStatus(c, http.StatusBadRequest, err.Error())
	case errors.Is(err, kb.ErrConflict):
		writeErrorStatus(c, http.StatusConflict, err.Error())
	case errors.Is(err, ingest.ErrTooLarge), errors.Is(err, ingest.ErrTooManyRecords):
		writeErrorStatus(c, http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, ingest.ErrUnsupportedEncoding):
		writeErrorStatus(c, http.StatusUnsupportedMediaType, err.Error())
	case errors.Is(err, errNoPatterns):
		writeErrorStatus(c, http.StatusNotFound, err.Error())
	case errors.Is(err, ingest.ErrUnknownFormat):
		writeErrorStatus(c, http.StatusNotFound, err.Error())
	case errors.Is(err, ingest.ErrQueueFull), errors.Is(err, ingest.ErrQueueClosed), errors.Is(err, errDraining), errors.Is(err, kb.ErrIndexLocked):
		c.Header("Retry-After", retryAfter(s.opts.RetryAfter))
		writeErrorStatus(c, http.StatusServiceUnavailable, err.Error())
	default:
		s.log.Error("request failed", "err", err, "request_id", c.GetString(ctxRequestID), "route", c.FullPath())
		writeErrorStatus(c, http.StatusInternalServerError, "internal error (request "+c.GetString(ctxRequestID)+")")
	}
}

func writeErrorStatus(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, errorBody{Error: oneLine(msg)})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	errBadRequest = errors.New("bad request")
	errDraining   = errors.New("server is shutting down")
)
