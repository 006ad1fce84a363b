package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFeedbackDownWeightsQueryAndStream: after a "wrong" verdict on a line,
// lines like it score about half, both typed (incidex match TEXT) and in a
// stream (incidex match -, which takes the webhook's fast path).
func TestFeedbackDownWeightsQueryAndStream(t *testing.T) {
	dir := seeded(t)
	const line = "loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory"
	const incident = "postgres-sandbox-race"
	score := func(stdin string, args ...string) (float64, int) {
		t.Helper()
		r := incidex(t, dir, stdin, append([]string{"match", "--json", "--min-score", "0.05"}, args...)...)
		if r.code == 2 {
			t.Fatalf("match %q: %s", args, r.stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var jl jsonLine
			if json.Unmarshal([]byte(l), &jl) != nil {
				continue
			}
			for _, m := range jl.Matches {
				if m.Incident.ID == incident {
					return m.Score, r.code
				}
			}
		}
		return 0, r.code
	}
	q0, _ := score("", line)
	s0, _ := score(line+"\n", "-")
	if q0 < 0.5 || s0 < 0.5 {
		t.Fatalf("before feedback: typed %.3f, stream %.3f; want both matched", q0, s0)
	}
	if r := incidex(t, dir, "", "feedback", "down", "--incident", incident, line); r.code != 0 {
		t.Fatalf("feedback down: exit %d: %s", r.code, r.stderr)
	}
	q1, _ := score("", line)
	s1, _ := score(line+"\n", "-")
	if q1 > q0*0.51 || s1 > s0*0.51 {
		t.Errorf("after one 'wrong': typed %.3f (was %.3f), stream %.3f (was %.3f); want half", q1, q0, s1, s0)
	}
	if s0*0.5 < 0.5 {
		if r := incidex(t, dir, line+"\n", "match", "--quiet", "-"); r.code != 1 {
			t.Errorf("stream after 'wrong' at the default threshold: exit %d, want 1 (nothing matched)\n%s", r.code, r.stdout)
		}
	}
}
