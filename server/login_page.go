package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/web"
)

// handleLoginPage serves GET /login.
func (s *Server) handleLoginPage(c *gin.Context) {
	s.render(c, http.StatusOK, "login", web.LoginData{Page: s.page(c, "Log in", ""), Next: localPath(c.Query("next"))})
}

// handleLogin serves POST /login: a valid admin (or read) token is kept
// in an HttpOnly, SameSite=Strict cookie, Secure over TLS.
func (s *Server) handleLogin(c *gin.Context) {
	next := localPath(c.PostForm("next"))
	tok := c.PostForm("token")
	if !tokenEqual(tok, s.opts.AdminToken) && !tokenEqual(tok, s.opts.ReadToken) {
		d := web.LoginData{Page: s.page(c, "Log in", ""), Next: next, Error: "That token is not valid here."}
		s.render(c, http.StatusUnauthorized, "login", d)
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, Secure: isTLS(c.Request),
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionMaxAge.Seconds())})
	c.Redirect(http.StatusSeeOther, next)
}

// handleLogoutPage serves GET /logout: a button, since logging out
// changes state and so takes a POST with the CSRF token.
func (s *Server) handleLogoutPage(c *gin.Context) {
	s.render(c, http.StatusOK, "logout", s.page(c, "Log out", ""))
}

// handleLogout serves POST /logout.
func (s *Server) handleLogout(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: isTLS(c.Request),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	c.Redirect(http.StatusSeeOther, "/")
}
