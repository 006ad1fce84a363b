package writeup

import (
	"bytes"
	"net/mail"
	"regexp"
	"strings"
)

// An incident told in an email (a note sent to a list, a reply that wraps
// a thread up) starts with its header: Subject, From, To, Date. The
// subject is its title and the date its date; the header lines are no
// text of the incident.

// mailHeaderLine matches one line of an email's header.
var mailHeaderLine = regexp.MustCompile(`(?i)^(subject|from|to|cc|bcc|date|sent|reply-to|message-id|in-reply-to|references)\s*:\s*(.*)$`)

// replyPrefix matches what replies and forwards put before a subject, and
// a list's tag: "Re: [dev-env] ", "Fwd: ", "AW: ".
var replyPrefix = regexp.MustCompile(`(?i)^\s*(?:(?:re|fwd?|fw|aw|wg|sv|tr)\s*:\s*|\[[^\]]{1,40}\]\s*)+`)

// emailToMarkdown turns an email's header into a title and a date line,
// when data starts with one (a Subject line and another header line
// among its first lines); otherwise it returns data as it is.
func emailToMarkdown(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var subject, date string
	fields, end := 0, 0
	for i, l := range lines {
		t := strings.TrimRight(string(l), "\r\n")
		if strings.TrimSpace(t) == "" {
			if fields > 0 {
				end = i + 1
				break
			}
			continue
		}
		m := mailHeaderLine.FindStringSubmatch(t)
		if m == nil {
			if fields == 0 || !strings.HasPrefix(t, " ") && !strings.HasPrefix(t, "\t") {
				return data // not a header, or one that ends without a blank line
			}
			continue // a folded header line
		}
		fields++
		switch strings.ToLower(m[1]) {
		case "subject":
			subject = strings.TrimSpace(replyPrefix.ReplaceAllString(m[2], ""))
		case "date", "sent":
			if d, err := mail.ParseDate(strings.TrimSpace(m[2])); err == nil {
				date = d.Format("2006-01-02")
			}
		}
		end = i + 1
	}
	if subject == "" || fields < 2 {
		return data
	}
	var b bytes.Buffer
	b.WriteString("# " + subject + "\n\n")
	if date != "" {
		b.WriteString("Date: " + date + "\n\n")
	}
	for _, l := range lines[end:] {
		b.Write(l)
	}
	return b.Bytes()
}
