package patterns

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var fuzzSeeds = []string{
	"db_1   | 2022-06-03 18:25:00.792 UTC [108] FATAL:  x failed",
	"[Thu Dec  7 00:05:15 2017] Memory cgroup out of memory",
	"[2017-08-14T09:29:37,167][WARN ][o.e.Logger] [n1] flood stage",
	"2021-05-17 14:20:53.123 ERROR 1 --- [main] o.s.App : failed",
	"déc. 11 08:29:21 host systemd[1]: x.service: Failed",

	`E0412 03:12:45.120931    2211 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"4f1c0a9be3d2\": plugin type=\"flannel\" failed (add): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory"`,
	`{"log":"dial tcp 10.43.0.1:443: i/o timeout\n","stream":"stderr"}`,
	`Apr 12 03:12:45 worker-2 kubelet[2211]: W0412 03:12:45.1 2211 a.go:1] x`,
	`time="2024-04-12T03:12:45Z" level=error msg="x" error="y"`,
	`[fd00::1]:6443 ::1 fe80::1%eth0 1m30s 512Mi x4 2024-04-12T03:12:45.1+02:00`,
	`dial tcp <ip>:443: <*> <nil>`,
	"\x00\xff\xfe<\"'\\",
	"",
}

// FuzzTokenize: no panic, tokens inside the line and in order.
func FuzzTokenize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		p := Prepare(line)
		toks := Tokenize(p.Text, nil)
		last := int32(0)
		for _, tk := range toks {
			if tk.Start < last || tk.End <= tk.Start || int(tk.End) > len(p.Text) {
				t.Fatalf("token %+v out of order or bounds in %q", tk, p.Text)
			}
			last = tk.End
		}
		_ = IsFailure(line)
		_ = Captures(p.Text, toks)
	})
}

// FuzzParse: a template parses to a pattern xor an error.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if (p == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %v, %v: want a pattern xor an error", src, p, err)
		}
		if p != nil {
			_ = p.Template()
			_ = p.Literals()
		}
	})
}

// FuzzMatch: matching and explaining any line against a compiled set
// neither panics nor scores outside 0..1; no bound of the early stop falls
// below a real score (checkBounds) and asking for the best one gives the
// first of all.
func FuzzMatch(f *testing.F) {
	s, err := Compile(fixtureDefs, Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, mode := range []Mode{Stream, Query} {
			for _, m := range s.MatchMode(line, mode, 0.01, nil) {
				if m.Score < 0 || m.Score > 1 {
					t.Fatalf("score %v out of 0..1 for %q", m.Score, line)
				}
				_ = s.Explain(line, m)
			}
			checkBounds(t, s, line, mode, 0.3)
			all := s.MatchMode(line, mode, 0, nil)
			if got := s.MatchTop(line, mode, 0, 1, nil); !slices.Equal(got, all[:min(1, len(all))]) {
				t.Fatalf("mode %d: MatchTop(1) = %+v, MatchMode = %+v for %q", mode, got, all, line)
			}
		}
	})
}

// TestMatchLongLineBoundedTime: a 1 MB line costs bounded time, because only
// its first maxTokens tokens are looked at.
func TestMatchLongLineBoundedTime(t *testing.T) {
	s, err := Compile(fixtureDefs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("open /run/flannel/subnet.env: no such file or directory 10.43.0.1:443 ", 1<<20/70)
	start := time.Now()
	for _, mode := range []Mode{Stream, Query} {
		for _, m := range s.MatchMode(line, mode, 0, nil) {
			_ = s.Explain(line, m)
		}
	}
	// The plain run checks the bound; under -race a time says little.
	if d := time.Since(start); d > 5*time.Second && !raceEnabled {
		t.Errorf("matching a 1 MB line took %v, want well under 5s", d)
	}
}

// FuzzJSONMessage: the scanning jsonMessage agrees with encoding/json.
func FuzzJSONMessage(f *testing.F) {
	for _, s := range append(jsonCases, fuzzSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gm, gl, gok := jsonMessage(s)
		wm, wl, wok := jsonMessageReference(s)
		if gm != wm || gl != wl || gok != wok {
			t.Fatalf("jsonMessage(%q) = %q, %v, %v; want %q, %v, %v", s, gm, gl, gok, wm, wl, wok)
		}
	})
}

// FuzzMinerAdd: adding any lines to a miner never panics, every non-empty
// line lands in a cluster with a non-empty template that Parse reads or
// that is the line's own punctuation, and a snapshot restores.
func FuzzMinerAdd(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "dial tcp 10.43.0.1:443: i/o timeout")
	}
	f.Add("proxy:5070 close, 0 bytes sent, lifetime 00:01", "proxy:5070 close, 451 bytes (18.4 KB) sent, lifetime <1 sec")
	f.Add("session opened for user a by (uid=0)", "session opened for user b by (uid=0)")
	f.Fuzz(func(t *testing.T, a, b string) {
		m := NewMiner(MinerOptions{MaxClusters: 4})
		if err := m.Seed("seed", "dial tcp <ip>:443: <*>"); err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{a, b, a + " " + b, b, a} {
			c, _ := m.Add(line)
			if line != "" && c.Template == "" {
				t.Fatalf("Add(%q): empty template", line)
			}
			if c.ID == "" {
				t.Fatalf("Add(%q): empty id", line)
			}
			if got, ok := m.Match(line); !ok || got.ID != c.ID {
				t.Fatalf("Match(%q) = %+v, %v after Add put it in %s", line, got, ok, c.ID)
			}
		}
		snap := m.Snapshot()
		r := NewMiner(MinerOptions{MaxClusters: 4})
		if err := r.Restore(snap); err != nil {
			t.Fatalf("Restore(Snapshot()): %v", err)
		}
		if got := r.Snapshot(); len(got) != len(snap) {
			t.Fatalf("restored %d clusters, want %d", len(got), len(snap))
		}
	})
}
