package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// alertmanagerMessage is the webhook body (version "4"), reduced to what records need.
type alertmanagerMessage struct {
	Version string            `json:"version"`
	Status  string            `json:"status"`
	Alerts  []json.RawMessage `json:"alerts"`
}

type alertmanagerAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
}

// alertAnnotationKeys are where the alert text lives, by convention.
var alertAnnotationKeys = []string{"description", "summary", "message"}

// decodeAlertmanager makes one record per alert of an Alertmanager webhook notification.
// The body may hold several notifications back to back.
func decodeAlertmanager(b *batch) error {
	body := trimBOM(b.req.Body)
	dec := json.NewDecoder(bytes.NewReader(body))
	for dec.More() {
		var msg alertmanagerMessage
		start := int(dec.InputOffset())
		if err := dec.Decode(&msg); err != nil {
			return fmt.Errorf("alertmanager: body is not a webhook message: %w", jsonErr(err, body, start, len(b.req.Body)-len(body)))
		}
		if msg.Alerts == nil {
			return fmt.Errorf("alertmanager: message has no alerts (version %q)", msg.Version)
		}
		for _, raw := range msg.Alerts {
			if err := b.addAlert(raw); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *batch) addAlert(raw json.RawMessage) error {
	var a alertmanagerAlert
	if err := json.Unmarshal(raw, &a); err != nil {
		b.reject("alert: %v", jsonErr(err, raw, 0, -1))
		return nil
	}
	text := ""
	for _, k := range alertAnnotationKeys {
		if text = a.Annotations[k]; text != "" {
			break
		}
	}
	name := a.Labels["alertname"]
	if text == "" && name == "" {
		b.reject("alert has no alertname and no description, summary or message")
		return nil
	}
	r := Record{Message: joinNonEmpty(": ", name, text), Time: a.StartsAt, Level: normLevel(a.Labels["severity"])}
	if r.Time.Year() <= 1 {
		r.Time = time.Time{}
	}
	ls := b.labels()
	setAliased(ls, a.Labels, flatAliases, true)
	ls.set("status", a.Status)
	r.Labels = ls.m
	return b.add(r)
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += p
	}
	return out
}
