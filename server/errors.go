package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/ingest/queue"
	"github.com/incidex/incidex/ingest/writeup"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/patterns"
)

// errorBody is the JSON error every route answers with.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	ID    string `json:"id,omitempty"` // the existing incident of a 409 on create
}

// writeError is the one mapping from domain errors to HTTP: not found 404,
// validation and syntax 400, conflict 409, limits 413, bad encoding 415,
// overload 503; anything else 500 with a generic body, logged with the
// request id.
func (s *Server) writeError(c *gin.Context, err error) {
	status, body := s.errorResponse(c, err)
	writeErrorBody(c, status, body)
}

// errorResponse maps err to a status and body (see writeError).
func (s *Server) errorResponse(c *gin.Context, err error) (int, errorBody) {
	var ve *kb.ValidationError
	var se *patterns.SyntaxError
	var fe *writeup.FileError
	var ee *existsError
	switch {
	case errors.As(err, &ee):
		return http.StatusConflict, errorBody{Error: ee.Error(), ID: ee.id}
	case errors.Is(err, kb.ErrNotFound):
		return http.StatusNotFound, msgBody(err.Error())
	case errors.As(err, &ve):
		return http.StatusBadRequest, errorBody{Error: ve.Error(), Field: ve.Field}
	case errors.As(err, &se), errors.As(err, &fe), errors.Is(err, decode.ErrMalformed), errors.Is(err, errBadRequest):
		return http.StatusBadRequest, msgBody(err.Error())
	case errors.Is(err, kb.ErrConflict):
		return http.StatusConflict, msgBody(err.Error())
	case errors.Is(err, decode.ErrTooLarge), errors.Is(err, decode.ErrTooManyRecords):
		return http.StatusRequestEntityTooLarge, msgBody(err.Error())
	case errors.Is(err, decode.ErrUnsupportedEncoding):
		return http.StatusUnsupportedMediaType, msgBody(err.Error())
	case errors.Is(err, errNoPatterns), errors.Is(err, errNoDeadLetters):
		return http.StatusNotFound, msgBody(err.Error())
	case errors.Is(err, decode.ErrUnknownFormat):
		return http.StatusNotFound, msgBody(err.Error())
	case errors.Is(err, queue.ErrFull), errors.Is(err, queue.ErrClosed), errors.Is(err, queue.ErrUnavailable), errors.Is(err, errDraining), errors.Is(err, kb.ErrIndexLocked):
		c.Header("Retry-After", retryAfter(s.opts.RetryAfter))
		return http.StatusServiceUnavailable, msgBody(err.Error())
	default:
		s.log.Error("request failed", "err", err, "request_id", c.GetString(ctxRequestID), "route", c.FullPath())
		return http.StatusInternalServerError, msgBody("internal error (request " + c.GetString(ctxRequestID) + ")")
	}
}

func writeErrorStatus(c *gin.Context, status int, msg string) {
	writeErrorBody(c, status, msgBody(msg))
}

func msgBody(msg string) errorBody { return errorBody{Error: oneLine(msg)} }

// writeErrorBody answers with the error as JSON, or as an HTML page on
// page routes (pageGate marks them).
func writeErrorBody(c *gin.Context, status int, body errorBody) {
	if s, ok := c.Value(ctxPageServer).(*Server); ok {
		s.renderError(c, status, body.Error)
		c.Abort()
		return
	}
	c.AbortWithStatusJSON(status, body)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	errBadRequest = errors.New("bad request")
	errDraining   = errors.New("server is shutting down")
)
