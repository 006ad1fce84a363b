package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

const ctxRequestID = "request_id"

func (s *Server) requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if id == "" || len(id) > 64 {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Set(ctxRequestID, id)
		c.Header("X-Request-Id", id)
		c.Next()
	}
}

// accessLog logs one line per request at Debug (Info for errors), and
// counts requests per route and status.
func (s *Server) accessLog() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		status := c.Writer.Status()
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelInfo
		}
		s.log.Log(c.Request.Context(), level, "request", "method", c.Request.Method, "route", route,
			"status", status, "duration", time.Since(start), "bytes", c.Writer.Size(), "request_id", c.GetString(ctxRequestID))
	}
}

func (s *Server) recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("panic in handler", "err", fmt.Sprint(r), "route", c.FullPath(), "request_id", c.GetString(ctxRequestID))
				writeErrorStatus(c, http.StatusInternalServerError, "internal error (request "+c.GetString(ctxRequestID)+")")
			}
		}()
		c.Next()
	}
}

type scope int

const (
	scopeRead scope = iota
	scopeIngest
	scopeAdmin
	scopeNone // no token needed (the login page)
)

// auth checks the token of a scope in constant time. The admin token is
// accepted everywhere. Basic auth with the token as password is accepted
// too, for senders that only do Basic (Logstash, Filebeat). So is the
// session cookie the login page sets, so that the pages' own calls (the
// live stream, acknowledge) work; a cookie is ambient authority, so on an
// unsafe method it counts only with the CSRF token of the session.
func (s *Server) auth(sc scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		want := s.scopeToken(sc)
		if want == "" {
			c.Next()
			return
		}
		got, fromCookie := presentedToken(c.Request)
		if fromCookie && !safeMethod(c.Request.Method) && !csrfValid(c) {
			writeErrorStatus(c, http.StatusForbidden, "missing or invalid CSRF token (send X-CSRF-Token with the session's token)")
			return
		}
		if tokenEqual(got, want) || tokenEqual(got, s.opts.AdminToken) {
			c.Next()
			return
		}
		c.Header("WWW-Authenticate", `Bearer realm="incidex"`)
		msg := "missing token: send Authorization: Bearer <token>"
		if got != "" {
			msg = "invalid token"
		}
		writeErrorStatus(c, http.StatusUnauthorized, msg)
	}
}

// scopeToken returns the token a scope needs; "" leaves it open.
func (s *Server) scopeToken(sc scope) string {
	switch sc {
	case scopeRead:
		return s.opts.ReadToken
	case scopeIngest:
		return s.opts.IngestToken
	case scopeAdmin:
		return s.opts.AdminToken
	}
	return ""
}

// authorized reports whether token grants scope sc.
func (s *Server) authorized(sc scope, token string) bool {
	want := s.scopeToken(sc)
	return want == "" || tokenEqual(token, want) || tokenEqual(token, s.opts.AdminToken)
}

// presentedToken returns the token of the Authorization header (Bearer,
// or Basic with the token as password), else the session cookie's.
func presentedToken(r *http.Request) (token string, fromCookie bool) {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t), false
	}
	if b, ok := strings.CutPrefix(h, "Basic "); ok {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b))
		if err == nil {
			if _, pw, ok := strings.Cut(string(raw), ":"); ok {
				return pw, false
			}
		}
	}
	if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
		return ck.Value, true
	}
	return "", false
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// crossOrigin rejects unsafe cross-origin browser requests (Sec-Fetch-Site,
// else Origin against Host); requests without those headers (curl, log
// forwarders) pass.
var crossOrigin = http.NewCrossOriginProtection()

func (s *Server) sameOrigin() gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := crossOrigin.Check(c.Request); err != nil {
			writeErrorStatus(c, http.StatusForbidden, "cross-origin request refused")
			return
		}
		c.Next()
	}
}

func tokenEqual(got, want string) bool {
	if want == "" || got == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func retryAfter(d time.Duration) string {
	sec := int(d.Round(time.Second) / time.Second)
	return strconv.Itoa(max(sec, 1))
}
