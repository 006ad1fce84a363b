package server

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest"
	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

// handleNewIncidentPage serves GET /incidents/new: an empty write-up form.
func (s *Server) handleNewIncidentPage(c *gin.Context) {
	d := s.editData(c, "")
	// ?pattern= starts from the draft of an emerging pattern.
	if id := c.Query("pattern"); id != "" && s.em != nil {
		p, err := s.em.Get(c.Request.Context(), id)
		if err != nil {
			s.writeError(c, err)
			return
		}
		d.Text = kb.Draft(p)
	}
	s.render(c, http.StatusOK, "edit", d)
}

// handleEditIncidentPage serves GET /incidents/:id/edit: the form with the
// incident's original text.
func (s *Server) handleEditIncidentPage(c *gin.Context) {
	inc, err := s.kb.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	d := s.editData(c, inc.ID)
	d.Text = inc.Body
	s.render(c, http.StatusOK, "edit", d)
}

// handleSaveIncidentPage serves POST /incidents/new and
// /incidents/:id/edit: Preview parses the write-up and shows what would be
// stored; Save stores it and redirects to the incident.
func (s *Server) handleSaveIncidentPage(c *gin.Context) {
	id := c.Param("id")
	d := s.editData(c, id)
	data, name, err := editInput(c.Request, id)
	d.Text, d.Name = string(data), name
	if err == nil && c.PostForm("action") == "save" {
		var incs []*kb.Incident
		if incs, err = s.StoreWriteup(c.Request.Context(), name, data, id); err == nil {
			c.Redirect(http.StatusSeeOther, web.IncidentURL(incs[0].ID))
			return
		}
	}
	if err == nil {
		d.Preview, err = previewWriteup(name, data)
	}
	status := http.StatusOK
	if err != nil {
		var body errorBody
		status, body = s.errorResponse(c, err)
		d.Error = body.Error
	}
	s.render(c, status, "edit", d)
}

func (s *Server) editData(c *gin.Context, id string) web.EditData {
	d := web.EditData{Page: s.page(c, "New write-up", "new"), ID: id, Action: "/incidents/new", MaxBytes: maxUploadBytes}
	if id != "" {
		d.Title, d.Nav, d.Action = "Edit "+id, "", web.IncidentURL(id)+"/edit"
	}
	return d
}

// editInput returns the write-up of the form (an uploaded file, else the
// text box) and the name it is parsed under.
func editInput(r *http.Request, id string) ([]byte, string, error) {
	var data []byte
	name := r.PostFormValue("name")
	if r.MultipartForm != nil && len(r.MultipartForm.File["file"]) > 0 && r.MultipartForm.File["file"][0].Size > 0 {
		fh := r.MultipartForm.File["file"][0]
		if fh.Size > maxUploadBytes {
			return nil, name, &kb.ValidationError{Field: "file", Msg: "the file is over the size limit"}
		}
		text, err := readFormFile(fh)
		if err != nil {
			return nil, name, err
		}
		data, name = []byte(text), fh.Filename
	} else {
		data = []byte(strings.ReplaceAll(r.PostFormValue("markdown"), "\r\n", "\n"))
	}
	if err := ingest.CheckText(data, maxUploadBytes); err != nil {
		return data, name, &kb.ValidationError{Field: "markdown", Msg: err.Error()}
	}
	return data, writeupName(data, name, id), nil
}

// writeupName is the name a write-up is parsed under: its id comes from
// front matter or a library id, else from this name. An edit keeps the
// incident's id; a pasted write-up without one is named after its title.
func writeupName(data []byte, name, id string) string {
	switch {
	case id != "":
		return id + ".md"
	case name != "" && name != "upload.md":
		return name
	}
	incs, err := ingest.ParseWriteup("upload.md", data)
	if err != nil || len(incs) != 1 || incs[0].ID != "upload" {
		return "upload.md"
	}
	if slug := slugify(incs[0].Title); slug != "" {
		return slug + ".md"
	}
	return "upload.md"
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slugify(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	return s
}

// previewWriteup parses a write-up without storing it.
func previewWriteup(name string, data []byte) ([]*kb.Incident, error) {
	incs, err := ingest.ParseWriteup(name, data)
	var ve *kb.ValidationError
	if err != nil && !errors.As(err, &ve) {
		err = &kb.ValidationError{Field: "markdown", Msg: err.Error()}
	}
	return incs, err
}
