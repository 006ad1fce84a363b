package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/incidex/incidex/kb"
)

// runFeedback records a verdict on a match (incidex feedback up|down) or
// lists feedback (incidex feedback list).
func runFeedback(ctx context.Context, e *env, args []string) error {
	cfg, err := loadConfig(e)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	fs := newFlags(e, "feedback", "up|down LINE... | list")
	cfg.common(fs)
	incident := fs.String("incident", "", "the incident the match was for (its signature is found by matching the line)")
	signature := fs.String("signature", "", "the signature id the match was for")
	note := fs.String("note", "", "why")
	by := fs.String("by", "", "who says so")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.StringVar(&cfg.Server, "server", cfg.Server, "URL of a running incidex serve to send it to (env INCIDEX_SERVER)")
	fs.StringVar(&cfg.AdminToken, "admin-token", cfg.AdminToken, "admin token for --server (env INCIDEX_ADMIN_TOKEN)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("want up, down or list: incidex feedback down --incident ID 'the line'")
	}
	verb := fs.Arg(0)
	if verb == "list" {
		return listFeedback(ctx, e, &cfg, *signature, *asJSON)
	}
	if verb != "up" && verb != "down" {
		return usageErr("%q: want up, down or list", verb)
	}
	line := strings.Join(fs.Args()[1:], " ")
	if strings.TrimSpace(line) == "" {
		return usageErr("no line given: incidex feedback %s --incident ID 'the line'", verb)
	}
	if *incident == "" && *signature == "" {
		return usageErr("say which match: --incident ID or --signature SIG")
	}
	var fb kb.Feedback
	if cfg.Server != "" {
		req := map[string]string{"signature_id": *signature, "incident_id": *incident, "line": line, "verdict": verb, "note": *note, "by": *by}
		err = newClient(cfg).do(ctx, http.MethodPost, "/api/v1/feedback", req, &fb)
	} else {
		fb, err = localFeedback(ctx, e, &cfg, kb.Feedback{SignatureID: *signature, Line: line, Verdict: verb, Note: *note, By: *by}, *incident)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, fb)
	}
	fmt.Fprintf(e.stdout, "recorded: %s for signature %s of %s on lines like:\n  %s\n", fb.Verdict, fb.SignatureID, fb.IncidentID, fb.Template)
	return nil
}

func localFeedback(ctx context.Context, e *env, cfg *Config, fb kb.Feedback, incident string) (kb.Feedback, error) {
	k, err := openKB(ctx, e, cfg, indexOptional)
	if err != nil {
		return fb, err
	}
	defer k.Close()
	if fb.SignatureID == "" {
		m, err := k.Matcher(ctx, 0)
		if err != nil {
			return fb, err
		}
		for _, h := range m.Match(fb.Line, kb.MatchOptions{MinScore: 0.01}) {
			if h.Incident.ID == incident {
				fb.SignatureID = h.Signature.ID
				break
			}
		}
		if fb.SignatureID == "" {
			return fb, &kb.ValidationError{Field: "line", Msg: "no signature of " + incident + " matches this line"}
		}
	}
	return k.AddFeedback(ctx, fb)
}

func listFeedback(ctx context.Context, e *env, cfg *Config, signature string, asJSON bool) error {
	k, err := openKBRead(ctx, e, cfg, indexNone)
	if err != nil {
		return err
	}
	defer k.Close()
	list, err := k.ListFeedback(ctx, signature, 1000)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, list)
	}
	for _, fb := range list {
		fmt.Fprintf(e.stdout, "%s  %-4s  %-40s %s  %s\n", fb.CreatedAt.Format("2006-01-02 15:04"), fb.Verdict, fb.IncidentID, fb.SignatureID, clip(fb.Template, 100))
	}
	fmt.Fprintf(e.stdout, "%d verdicts\n", len(list))
	return nil
}
