package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/incidex/incidex/ingest/writeup"
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
// stored; Save stores it and redirects to the incident. A new write-up
// whose id already exists is not saved: the page says so, and its form
// then posts with ?replace=1, so saving again is the explicit confirmation.
func (s *Server) handleSaveIncidentPage(c *gin.Context) {
	id := c.Param("id")
	d := s.editData(c, id)
	data, name, err := editInput(c.Request, id)
	d.Text, d.Name = string(data), name
	if err == nil && c.PostForm("action") == "save" {
		var incs []*kb.Incident
		replace := id != "" || c.Query("replace") == "1"
		if incs, err = s.StoreWriteup(c.Request.Context(), name, data, id, replace); err == nil {
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
		if ee := (*existsError)(nil); errors.As(err, &ee) {
			d.Error = fmt.Sprintf("Not saved: incident %s already exists (%s). Save again to replace it, or change the write-up's id or title.", ee.id, web.IncidentURL(ee.id))
			d.Action = "/incidents/new?replace=1"
		}
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
	if err := writeup.CheckText(data, maxUploadBytes); err != nil {
		return data, name, &kb.ValidationError{Field: "markdown", Msg: err.Error()}
	}
	return data, writeupName(name, id), nil
}

// writeupName is the name a write-up is parsed under: its id comes from
// front matter or a library id, else from this name. An edit keeps the
// incident's id; a pasted write-up has no name, so its id comes from its
// title and content.
func writeupName(name, id string) string {
	if id != "" {
		return id + ".md"
	}
	return name
}

// previewWriteup parses a write-up without storing it.
func previewWriteup(name string, data []byte) ([]*kb.Incident, error) {
	incs, err := writeup.ParseWriteup(name, data)
	var ve *kb.ValidationError
	if err != nil && !errors.As(err, &ve) {
		err = &kb.ValidationError{Field: "markdown", Msg: err.Error()}
	}
	return incs, err
}
