package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/decode"
	"github.com/incidex/incidex/web"
)

// Cookies of the pages. The session cookie holds the token the visitor
// pasted on /login; the CSRF cookie a random token that every form that
// changes something repeats in a hidden field (double submit).
const (
	sessionCookie = "incidex_session"
	csrfCookie    = "incidex_csrf"
	sessionMaxAge = 7 * 24 * time.Hour
	ctxCSRF       = "csrf"
	// ctxPageServer marks a page request: writeError renders an HTML page.
	ctxPageServer = "page_server"
	// maxPageBody bounds the body of a page form (the largest is a log
	// upload on /analyze).
	maxPageBody = maxAnalyzeBytes + 1<<20
)

// contentSecurityPolicy allows the pages' own scripts, styles and images
// and nothing else: no inline script or style, no framing, no plugins.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// pages is the middleware of page routes (see pageGate).
func (s *Server) pages(sc scope, checkCSRF bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.pageGate(c, sc, checkCSRF) {
			c.Next()
		}
	}
}

// pageGate prepares a page request: security headers, HTML errors, the
// CSRF cookie, the CSRF and same-origin checks on unsafe methods, and the
// scope's token (else to /login). It returns false when it has answered.
func (s *Server) pageGate(c *gin.Context, sc scope, checkCSRF bool) bool {
	setPageHeaders(c)
	c.Set(ctxPageServer, s)
	c.Set(ctxCSRF, ensureCSRF(c))
	if !safeMethod(c.Request.Method) {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxPageBody)
		if checkCSRF {
			if err := parseForm(c.Request); err != nil {
				s.writeError(c, err)
				return false
			}
			if err := crossOrigin.Check(c.Request); err != nil {
				writeErrorStatus(c, http.StatusForbidden, "This form was sent from another site, so it was refused.")
				return false
			}
			if !csrfValid(c) {
				writeErrorStatus(c, http.StatusForbidden, "The form expired or did not come from this site (CSRF token mismatch). Reload the page and try again.")
				return false
			}
		}
	}
	tok, _ := presentedToken(c.Request)
	if s.authorized(sc, tok) {
		return true
	}
	if safeMethod(c.Request.Method) {
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
		c.Abort()
		return false
	}
	writeErrorStatus(c, http.StatusUnauthorized, "Log in with the admin token first.")
	return false
}

func setPageHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// ensureCSRF returns the visitor's CSRF token, setting a new cookie when
// there is none.
func ensureCSRF(c *gin.Context) string {
	if ck, err := c.Request.Cookie(csrfCookie); err == nil && len(ck.Value) == 43 {
		return ck.Value
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	// Lax, not Strict: a link from a chat message to incidex must not
	// replace the token of forms already open in other tabs.
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true,
		Secure: isTLS(c.Request), SameSite: http.SameSiteLaxMode})
	// Requests later in this one see it too.
	c.Request.AddCookie(&http.Cookie{Name: csrfCookie, Value: tok})
	return tok
}

// csrfValid checks the X-CSRF-Token header or the csrf form field against
// the CSRF cookie, in constant time.
func csrfValid(c *gin.Context) bool {
	ck, err := c.Request.Cookie(csrfCookie)
	if err != nil {
		return false
	}
	got := c.GetHeader("X-CSRF-Token")
	if got == "" {
		got = c.PostForm("csrf")
	}
	return tokenEqual(got, ck.Value)
}

// parseForm reads a urlencoded or multipart form, mapping a body over
// maxPageBody to decode.ErrTooLarge.
func parseForm(r *http.Request) error {
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(maxPageBody)
	} else {
		err = r.ParseForm()
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return fmt.Errorf("the form is over the %d MB limit: %w", maxPageBody>>20, decode.ErrTooLarge)
	case err != nil:
		return fmt.Errorf("read form: %w", errBadRequest)
	}
	return nil
}

func isTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// page returns the layout data of a page.
func (s *Server) page(c *gin.Context, title, nav string) web.Page {
	tok, _ := presentedToken(c.Request)
	return web.Page{
		Title: title, Nav: nav, CSRF: c.GetString(ctxCSRF), Path: c.Request.URL.RequestURI(),
		AuthEnabled: s.opts.AdminToken != "" || s.opts.ReadToken != "",
		CanWrite:    s.authorized(scopeAdmin, tok),
		LoggedIn:    tok != "" && (tokenEqual(tok, s.opts.AdminToken) || tokenEqual(tok, s.opts.ReadToken)),
	}
}

// render renders a page into a buffer, then writes it: a template error
// becomes a clean 500.
func (s *Server) render(c *gin.Context, status int, page string, data any) {
	var buf bytes.Buffer
	if err := s.web.Render(&buf, page, data); err != nil {
		s.log.Error("render page", "err", err, "page", page, "request_id", c.GetString(ctxRequestID))
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("internal error (request "+c.GetString(ctxRequestID)+")\n"))
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// renderError answers with the error page.
func (s *Server) renderError(c *gin.Context, status int, msg string) {
	s.render(c, status, "error", web.ErrorData{Page: s.page(c, http.StatusText(status), ""), Status: status, Message: msg,
		RequestID: c.GetString(ctxRequestID)})
}

// localPath returns next when it is a path on this server, else "/": a
// login must not become an open redirect.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.IsAbs() || u.Host != "" || !strings.HasPrefix(next, "/") ||
		strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// handleStatic serves the embedded assets; hashed names are cached for good.
func (s *Server) handleStatic(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("filepath"), "/")
	st, err := fs.Stat(s.web.Static(), name)
	if name == "" || err != nil || st.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			writeErrorStatus(c, http.StatusNotFound, "no such file")
			return
		}
		s.writeError(c, err)
		return
	}
	c.Header("X-Content-Type-Options", "nosniff")
	if s.web.Immutable(name) {
		c.Header("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		c.Header("Cache-Control", "no-cache")
	}
	http.ServeFileFS(c.Writer, c.Request, s.web.Static(), name)
}
