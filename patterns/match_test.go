package patterns

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// fixtureDefs are signatures as incidex extracts them from write-ups in the
// two seed formats: a wrapped kubectl describe event and a quoted log line.
var fixtureDefs = []Def{
	{ID: "flannel-event", Group: "flannel", Text: `Warning  FailedCreatePodSandBox  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox: plugin type="flannel" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory. Check the flannel pod log for this node.`},
	{ID: "flannel-notready", Group: "flannel", Text: `Warning  NodeNotReady            Node is not ready`},
	{ID: "calico-quote", Group: "IL-0087", Text: `Final result of CNI DEL was an error. error=error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`},
	{ID: "redis-refused", Group: "redis", Text: `Error: dial tcp 10.0.4.17:6379: connect: connection refused (redis: can't reach master)`},
}

func fixtureSet(t testing.TB) *Set {
	t.Helper()
	s, err := Compile(fixtureDefs, Options{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func best(s *Set, line string, mode Mode) (string, float64) {
	ms := s.MatchMode(line, mode, 0, nil)
	if len(ms) == 0 {
		return "", 0
	}
	return s.Def(ms[0].Sig).Group, ms[0].Score
}

func TestMatchFindsIncident(t *testing.T) {
	s := fixtureSet(t)
	tests := []struct {
		name, line, want string
		mode             Mode
	}{
		{"typed fragment", "subnet.env: no such file", "flannel", Query},
		{"typed exact-IP line", "dial tcp 10.43.0.1:443: i/o timeout", "IL-0087", Query},
		{"kubelet klog line, other sandbox id and pod", `E0412 03:12:45.120931    2211 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"4f1c0a9be3d2c7a8b1e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8\": plugin type=\"flannel\" failed (add): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory" pod="towerops/valkey-0"`, "flannel", Stream},
		{"wording drift", "loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory", "flannel", Stream},
		{"flannel plugin's own wording", "failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory", "flannel", Stream},
		{"calico form, other VIP", `error getting ClusterInformation: Get "https://10.96.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.96.0.1:443: i/o timeout`, "IL-0087", Stream},
		{"JSON-wrapped with escaped quotes", `{"log":"2024-04-12 03:12:45.120 [ERROR][41] plugin.go 580: Final result of CNI DEL was an error. error=error getting ClusterInformation: Get \"https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default\": dial tcp 10.43.0.1:443: i/o timeout\n","stream":"stderr"}`, "IL-0087", Stream},
		{"event as exporters send it", "Warning NodeNotReady Node is not ready", "flannel", Stream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, score := best(s, tt.line, tt.mode)
			if got != tt.want {
				t.Errorf("Match(%q) = %q (%.2f), want %q", tt.line, got, score, tt.want)
			}
		})
	}
}

func TestMatchRejectsNormalLines(t *testing.T) {
	s := fixtureSet(t)
	for _, line := range []string{
		"Wrote subnet file to /run/flannel/subnet.env",
		`I0412 03:12:45.120931    2211 server.go:1] "Started kubelet"`,
		`10.0.0.1 - - [12/Apr/2024:03:12:45 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.28"`,
		"Normal  Scheduled  Successfully assigned default/web-5d4f8b7c9-x2x7k to worker-2",
		"",
	} {
		for _, mode := range []Mode{Stream, Query} {
			if got, score := best(s, line, mode); got != "" {
				t.Errorf("Match(%q, mode %d) = %q (%.2f), want no match", line, mode, got, score)
			}
		}
	}
	// A generic phrase in a stream is not enough to name an incident.
	if got, score := best(s, "connection refused", Stream); got != "" {
		t.Errorf("Match(connection refused, Stream) = %q (%.2f), want no match", got, score)
	}
}

func TestMatchExactValueScoresAboveMask(t *testing.T) {
	s := fixtureSet(t)
	exact := `error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`
	other := strings.ReplaceAll(exact, "10.43.0.1", "10.96.0.1")
	_, se := best(s, exact, Stream)
	_, so := best(s, other, Stream)
	if !(se > so && so > 0) {
		t.Errorf("score(exact IP) = %.3f, score(other IP) = %.3f: want exact > other > 0", se, so)
	}
}

func TestMatchBoostOrdersOverlappingGroups(t *testing.T) {
	line := "open /run/flannel/subnet.env: no such file or directory"
	defs := []Def{
		{ID: "a", Group: "race", Text: line, Boost: 0.97},
		{ID: "b", Group: "missing", Text: line},
	}
	s, err := Compile(defs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := s.Match(line, nil)
	if len(ms) != 2 || s.Def(ms[0].Sig).Group != "missing" || ms[1].Score >= ms[0].Score {
		t.Errorf("Match = %+v, want missing first and race second with a lower score", ms)
	}
}

func TestMatchOnePerGroup(t *testing.T) {
	s, err := Compile([]Def{
		{ID: "a", Group: "g", Text: "dial tcp 10.0.0.1:6379: connect: connection refused"},
		{ID: "b", Group: "g", Text: "redis: dial tcp 10.0.0.1:6379: connect: connection refused"},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := s.Match("redis: dial tcp 10.0.0.9:6379: connect: connection refused", nil); len(ms) != 1 || ms[0].Sig != 1 {
		t.Errorf("Match = %+v, want one match, from the closer signature b", ms)
	}
}

func TestMatchHealthyCorpusHasNoMatch(t *testing.T) {
	s := fixtureSet(t)
	f, err := os.Open("../testdata/corpus/healthy.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if ms := s.Match(sc.Text(), nil); len(ms) > 0 {
			t.Errorf("healthy line %d matched %s (%.2f): %s", n, s.Def(ms[0].Sig).ID, ms[0].Score, sc.Text())
		}
	}
	if n < 500 {
		t.Fatalf("healthy corpus has %d lines, want at least 500", n)
	}
}

func TestMatchNonMatchingLineDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	s := fixtureSet(t)
	line := `Apr 12 03:06:19 cp-1 kubelet[2426]: I0412 03:06:19.642957    2426 pod_startup_latency_tracker.go:102] "Observed pod startup duration" pod="monitoring/grafana-t74md6g9j-rhpwk" podStartSLOduration=6.495149991`
	dst := make([]Match, 0, 8)
	s.Match(line, dst) // warm the pool
	if n := testing.AllocsPerRun(200, func() { dst = s.Match(line, dst[:0]) }); n != 0 {
		t.Errorf("Match of a non-matching line allocated %.1f times, want 0", n)
	}
}

func TestExplain(t *testing.T) {
	s := fixtureSet(t)
	line := `error getting ClusterInformation: Get "https://10.96.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.96.0.1:443: i/o timeout`
	ms := s.Match(line, nil)
	if len(ms) == 0 {
		t.Fatal("no match")
	}
	ex := s.Explain(line, ms[0])
	status := map[string]Status{}
	for _, tk := range ex.Tokens {
		status[tk.Text] = tk.Status
	}
	if status["ClusterInformation"] != Literal || status["10.96.0.1"] != Masked || status["timeout"] != Literal {
		t.Errorf("Explain statuses = %v, want ClusterInformation literal, 10.96.0.1 masked, timeout literal", status)
	}
	if !strings.Contains(strings.Join(ex.Missing, " "), "Final") || !strings.Contains(strings.Join(ex.Missing, " "), "DEL") {
		t.Errorf("Explain missing = %v, want the signature's words the line lacks (Final, DEL)", ex.Missing)
	}
	if ex.Captures["ip"] != "10.96.0.1" || ex.Captures["port"] != "443" {
		t.Errorf("Explain captures = %v, want ip 10.96.0.1 and port 443", ex.Captures)
	}
}

func TestCapturesKeyValues(t *testing.T) {
	text := `"Error syncing pod" err="x" pod="towerops/valkey-0" podUID="2c1d1a3e-4b5f-4c6d-8e7f-9a0b1c2d3e4f" node="worker-7" open /run/flannel/subnet.env: no such file`
	c := Captures(text, Tokenize(text, nil))
	want := map[string]string{"namespace": "towerops", "pod": "valkey-0", "pod_uid": "2c1d1a3e-4b5f-4c6d-8e7f-9a0b1c2d3e4f", "node": "worker-7", "path": "/run/flannel/subnet.env"}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("Captures[%q] = %q, want %q (all: %v)", k, c[k], v, c)
		}
	}
}

func TestFill(t *testing.T) {
	got := Fill("talosctl -n <node-ip> get machineconfig; kubectl -n <namespace> describe pod <pod> <unknown>", map[string]string{"node_ip": "10.0.0.7", "namespace": "billing", "pod": "rabbitmq-0"})
	want := "talosctl -n 10.0.0.7 get machineconfig; kubectl -n billing describe pod rabbitmq-0 <unknown>"
	if got != want {
		t.Errorf("Fill = %q, want %q", got, want)
	}
}

func TestParse(t *testing.T) {
	p, err := Parse("dial tcp <ip>:443: i/o timeout after <duration> <*>")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Template(), "dial tcp <ip>:443: i/o timeout after <duration> <*>"; got != want {
		t.Errorf("Template() = %q, want %q", got, want)
	}
	_, err = Parse("connect to <ipp> refused")
	se, ok := err.(*SyntaxError)
	if !ok || se.Pos != 11 || !strings.Contains(se.Msg, "<ipp>") {
		t.Errorf("Parse(<ipp>) error = %v, want a SyntaxError at offset 11 naming <ipp>", err)
	}
	if _, err := Parse("err: <nil> and <none>"); err != nil {
		t.Errorf("Parse(<nil>) = %v, want <nil> and <none> taken as text", err)
	}
	if _, err := Parse("   "); err == nil {
		t.Errorf("Parse(blank) = nil error, want one")
	}
}

func TestFromExampleTemplateAndPins(t *testing.T) {
	p := FromExample(`E0412 03:12:45.120931 1 a.go:1] dial tcp 10.43.0.1:443: i/o timeout for sandbox "4f1c0a9be3d2c7a8"`, nil)
	if got, want := p.Template(), `dial tcp <ip>:443: i/o timeout for sandbox "<hex>"`; got != want {
		t.Errorf("Template() = %q, want %q", got, want)
	}
	p = FromExample("dial tcp 10.43.0.1:443: i/o timeout", []string{"10.43.0.1"})
	if got, want := p.Template(), "dial tcp 10.43.0.1:443: i/o timeout"; got != want {
		t.Errorf("pinned Template() = %q, want %q", got, want)
	}
}

func TestCompileReportsBadTemplate(t *testing.T) {
	_, err := Compile([]Def{{ID: "bad", Text: "x <nope> y", Template: true}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "signature bad") {
		t.Errorf("Compile(bad template) = %v, want an error naming the signature", err)
	}
}

// adversarial returns the 1,000 synthetic signatures of the benchmarks,
// compiled, and the lines to try them on: every healthy corpus line, every
// variant line and its first half (as a typed fragment).
func adversarial(t *testing.T) (*Set, []string) {
	t.Helper()
	s, err := Compile(benchDefs(t, 1000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, "../testdata/corpus/healthy.log")
	for _, l := range variantLines(t) {
		lines = append(lines, l, l[:len(l)/2])
	}
	return s, lines
}

// TestMatchTopEqualsPrefixOfAll: MatchTop stops scoring early, but must
// return exactly the first N matches the full MatchMode returns, on the
// adversarial 1,000-signature set where most lines half-match many
// signatures.
func TestMatchTopEqualsPrefixOfAll(t *testing.T) {
	s, lines := adversarial(t)
	pruned := 0
	for _, mode := range []Mode{Stream, Query} {
		for _, line := range lines {
			all := s.MatchMode(line, mode, 0, nil)
			for _, top := range []int{1, 2, 3, 10} {
				got := s.MatchTop(line, mode, 0, top, nil)
				want := all[:min(top, len(all))]
				if len(all) > top {
					pruned++
				}
				if !slices.Equal(got, want) {
					t.Fatalf("mode %d top %d, line %q:\n got  %+v\n want %+v", mode, top, line, got, want)
				}
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no line had more matches than the top asked for: the test proves nothing")
	}
}

// TestBoundsHoldScores: the prefilter's bound and the bag bound never fall
// below the score a full alignment gives, so no signature that reaches the
// threshold is ever skipped. Every signature of the adversarial
// 1,000-signature set is scored directly against every corpus line (and
// half lines, as typed fragments), in both modes and at two thresholds.
func TestBoundsHoldScores(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine's arithmetic, 50 s under -race; the plain run checks it")
	}
	s, lines := adversarial(t)
	checked := 0
	for _, mode := range []Mode{Stream, Query} {
		for _, min := range []float32{0.5, 0.3} {
			for _, line := range lines {
				checked += checkBounds(t, s, line, mode, min)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no signature reached a threshold: the test proves nothing")
	}
	t.Logf("%d (line, signature) pairs at or above the threshold checked", checked)
}

func checkBounds(t *testing.T, s *Set, line string, mode Mode, min float32) int {
	t.Helper()
	sc := s.getScratch()
	defer s.scratch.Put(sc)
	p := Prepare(line)
	sc.toks = tokenizeLazy(p.Text, sc.toks[:0])
	sc.level = p.Level
	bound := map[int32][2]float32{}
	if s.prefilter(p.Text, mode, min, sc) {
		for _, c := range sc.cands {
			bag := s.bagBound(&s.pats[c.sig], sc, mode, min) * s.pats[c.sig].boost
			bound[c.sig] = [2]float32{c.bound, bag}
		}
	} else {
		s.weighLine(sc)
		s.markLine(sc)
	}
	if sc.pendN > 0 {
		s.resolvePending(p.Text, sc)
	}
	n := 0
	for i := range s.pats {
		c := &s.pats[i]
		stream, frag := s.score(c, p.Text, sc, mode)
		score := min32(max(stream, frag)*c.boost, 1)
		if score < min {
			continue
		}
		n++
		b, ok := bound[int32(i)]
		switch {
		case !ok:
			t.Fatalf("mode %d min %.1f: signature %d scores %.3f but the prefilter dropped it; line %q", mode, min, i, score, line)
		case score > b[0]+boundSlack || score > b[1]+boundSlack:
			t.Fatalf("mode %d min %.1f: signature %d scores %.3f above its bounds (prefilter %.3f, bag %.3f); line %q", mode, min, i, score, b[0], b[1], line)
		}
	}
	return n
}

// TestMatchNegatedLineScoresLower: a line with every word of a signature,
// in order, but a negation put between two of them (or one left out) says
// the opposite, and scores half; a loose alignment whose gap happens to
// hold "not" is not a negation.
func TestMatchNegatedLineScoresLower(t *testing.T) {
	s, err := Compile([]Def{
		{ID: "disk", Group: "disk", Text: "KubeletHasDiskPressure kubelet has disk pressure"},
		{ID: "notready", Group: "notready", Text: "Warning  NodeNotReady  Node is not ready"},
		{ID: "manifest", Group: "manifest", Text: "manifest unknown"},
		{ID: "pool", Group: "pool", Text: "HikariPool-1 - Connection is not available, request timed out after 30000ms."},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	score := func(line, group string) float64 {
		for _, m := range s.MatchMode(line, Stream, 0.01, nil) {
			if s.Def(m.Sig).Group == group {
				return m.Score
			}
		}
		return 0
	}
	for _, tt := range []struct{ group, says, negated string }{
		{"disk", "DiskPressure True KubeletHasDiskPressure kubelet has disk pressure", "DiskPressure False KubeletHasNoDiskPressure kubelet has no disk pressure"},
		{"notready", "Warning NodeNotReady Node is not ready", "Normal NodeNotReady Node is ready"},
		// The line joins the words on either side of a negated phrase it
		// leaves out: nginx's "Connection timed out" is no pool that "is
		// not available".
		{"pool", "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30005ms.", "2018/02/05 22:18:57 [error] 10#0: *55 upstream timed out (110: Connection timed out) while connecting to upstream, client: 192.168.99.1"},
	} {
		pos, neg := score(tt.says, tt.group), score(tt.negated, tt.group)
		if pos < s.MinScore() || neg >= s.MinScore() || neg > pos*0.55 {
			t.Errorf("%s: %q scores %.3f, negated %q %.3f: want a match and under half of it, below the threshold %.2f", tt.group, tt.says, pos, tt.negated, neg, s.MinScore())
		}
		ms := s.MatchMode(tt.negated, Stream, 0.01, nil)
		if len(ms) == 0 {
			t.Fatalf("%q: no match at 0.01", tt.negated)
		}
		if ex := s.Explain(tt.negated, ms[0]); !slices.ContainsFunc(ex.Notes, func(n string) bool { return strings.Contains(n, "opposite") }) {
			t.Errorf("explanation of %q has no negation note: %q", tt.negated, ex.Notes)
		}
	}
	if got := score("Error response from daemon: manifest for acme/web:1.0 not found: manifest unknown", "manifest"); got != 1 {
		t.Errorf("manifest unknown with a far-away 'not' = %.3f, want 1", got)
	}
}

// TestScatteredWordsScoreHalf: a long line that has a short signature's
// words one by one, each among other words, does not print its message;
// the same words together do.
func TestScatteredWordsScoreHalf(t *testing.T) {
	s, err := Compile([]Def{{ID: "auth", Group: "auth", Text: `{"t":{"$date":"2023-04-02T10:11:12.000+00:00"},"s":"I","c":"ACCESS","id":20436,"ctx":"conn12","msg":"Checking authorization failed","attr":{"error":{"code":13,"codeName":"Unauthorized"}}}`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	far := `E0618 04:49:34.054469 1 sync.go:242] Error checking ACME domain validation: error getting authorization for domains: rate limited: too many failed authorizations recently`
	ms := s.MatchMode(far, Stream, 0.01, nil)
	if len(ms) == 0 || !ms[0].Scattered || ms[0].Score >= s.MinScore() {
		t.Fatalf("%q: %+v, want the match halved below %.2f for scattered words", far, ms, s.MinScore())
	}
	if ex := s.Explain(far, ms[0]); !strings.Contains(strings.Join(ex.Notes, " "), "one by one") {
		t.Errorf("explanation notes %q: want the halving explained", ex.Notes)
	}
	near := `{"t":{"$date":"2024-01-09T08:00:00.000+00:00"},"s":"I","c":"ACCESS","id":20436,"ctx":"conn7","msg":"Checking authorization failed","attr":{"error":{"code":13}}}`
	if ms := s.Match(near, nil); len(ms) == 0 || ms[0].Scattered {
		t.Errorf("%q: %+v, want a match, not halved", near, ms)
	}
	// A word the line repeats: the alignment may take the first
	// "connect", but the line has "connect ECONNREFUSED" together.
	s, err = Compile([]Def{{ID: "mongo", Group: "mongo", Text: `connect ECONNREFUSED ::1:27017`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	twice := `MongoError: failed to connect to server [127.0.0.1:27017] on first connect [MongoError: connect ECONNREFUSED 127.0.0.1:27017]`
	if ms := s.MatchMode(twice, Stream, 0.01, nil); len(ms) == 0 || ms[0].Scattered {
		t.Errorf("%q: %+v, want a match, not halved", twice, ms)
	}
}

// TestMatchRepeatedRunCountsOnce: a signature that repeats itself
// ("manifest unknown: manifest unknown", as Docker prints it) is aligned as
// one copy, so a line with its two words the other way round ("code =
// Unknown desc = reading manifest", any containerd pull error) does not
// match the middle of the pair; the real message still scores 1, and the
// explanation names each missing word once.
func TestMatchRepeatedRunCountsOnce(t *testing.T) {
	s, err := Compile([]Def{
		{ID: "m", Group: "m", Text: "manifest unknown: manifest unknown", Template: true},
		{ID: "o", Group: "o", Text: "toomanyrequests: You have reached your pull rate limit", Template: true},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	score := func(line string) float64 {
		for _, m := range s.MatchMode(line, Stream, 0.01, nil) {
			if s.Def(m.Sig).Group == "m" {
				return m.Score
			}
		}
		return 0
	}
	if got := score(`rpc error: code = Unknown desc = reading manifest 3.1.0 in docker.io/grafana/loki: toomanyrequests: You have reached your pull rate limit`); got >= s.MinScore() {
		t.Errorf("'Unknown ... manifest' scores %.3f against 'manifest unknown: manifest unknown', want below %.2f", got, s.MinScore())
	}
	for _, line := range []string{
		"Error response from daemon: manifest for acme/web:1.0 not found: manifest unknown: manifest unknown",
		"reading manifest v3 in quay.io/acme/worker: manifest unknown",
	} {
		if got := score(line); got != 1 {
			t.Errorf("%q scores %.3f, want 1", line, got)
		}
	}
	line := "reading manifest v3 in quay.io/acme/worker: manifest unknown"
	ms := s.MatchMode(line, Stream, 0, nil)
	if len(ms) == 0 {
		t.Fatalf("%q: no match", line)
	}
	ex := s.Explain(line, ms[0])
	var sig []string
	for _, tok := range ex.Tokens {
		if tok.Sig != "" {
			sig = append(sig, tok.Sig)
		}
	}
	if len(ex.Missing) != 0 || !slices.Equal(sig, []string{"manifest", "unknown"}) {
		t.Errorf("%q: missing %q, aligned %q: want none missing, each word aligned once", line, ex.Missing, sig)
	}
}

func TestRepeatedRuns(t *testing.T) {
	for _, tt := range []struct {
		typ  []int32
		want []bool
	}{
		{[]int32{0, 1, 0, 1}, []bool{false, false, true, true}},
		{[]int32{0, 1, 0, 1, 0, 1, 2}, []bool{false, false, true, true, true, true, false}},
		{[]int32{0, 1, 2, 3, 1, 2, 3, 4}, []bool{false, false, false, false, true, true, true, false}},
		{[]int32{0, 0, 1}, []bool{false, false, false}}, // a single word twice is not a run
		{[]int32{0, 1, 2, 0, 1}, []bool{false, false, false, false, false}},
		{[]int32{0, 1, 0, 1, 2, 0, 1, 2}, []bool{false, false, true, true, false, false, false, false}}, // the first run found wins
	} {
		ntypes := int(slices.Max(tt.typ)) + 1
		b := compileBuf{typ: tt.typ}
		if got := b.repeatedRuns(ntypes); !slices.Equal(got, tt.want) {
			t.Errorf("repeatedRuns(%v) = %v, want %v", tt.typ, got, tt.want)
		}
	}
}

// A signature whose only failure evidence is its level (PostgreSQL prints
// "FATAL:  the database system is starting up") does not match a line that
// has neither a warning level nor an error word: the same server's
// "database system is ready to accept connections".
func TestLevelIsTheFailureOfASignatureWithoutErrorWords(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "pg", Text: `Jan 25 11:46:27 db-1 sh[6467]: 2016-01-25 11:46:27 UTC FATAL:  the database system is starting up`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		`2024-06-20 13:01:14.268 UTC [57] LOG:  database system is ready to accept connections`,
		`LOG:  database system was shut down at 2017-02-13 10:44:02 UTC`,
	} {
		if ms := s.MatchTop(l, Stream, 0.3, 1, nil); len(ms) > 0 {
			t.Errorf("healthy %q matched at %.2f", l, ms[0].Score)
		}
	}
	if ms := s.MatchTop(`2021-03-01 10:00:00.123 UTC [88] FATAL:  the database system is starting up`, Stream, 0, 1, nil); len(ms) == 0 {
		t.Error("the same failure did not match")
	}
}

// TestNegatedStemIsTheUnWord: "didn't tolerate" is "untolerated", "not
// authorized" is "Unauthorized": a runtime or version prints one where the
// write-up's has the other. The line's negation is not read as saying the
// opposite, and the stem alone is not the word; a signature that has the
// stem itself ("Name or service not known") keeps it.
func TestNegatedStemIsTheUnWord(t *testing.T) {
	s, err := Compile([]Def{
		{ID: "taint", Group: "taint", Text: `Warning FailedScheduling default-scheduler 0/3 nodes are available: 3 node(s) untolerated taint`},
		{ID: "auth", Group: "auth", Text: `Error response from registry: Unauthorized`},
		{ID: "dns", Group: "dns", Text: `java.net.UnknownHostException: kafka: Name or service not known`},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, group string }{
		{`0/5 nodes are available: 5 node(s) didn't tolerate taint`, "taint"},
		{`0/5 nodes are available: 5 node(s) did not tolerate taint`, "taint"},
		{`error from registry: not authorized`, "auth"},
	} {
		ms := s.Match(tt.line, nil)
		if len(ms) == 0 || s.Def(ms[0].Sig).Group != tt.group || ms[0].Negated {
			t.Errorf("%q: %+v, want %s, not negated", tt.line, ms, tt.group)
		}
	}
	for _, l := range []string{`0/5 nodes are available: 5 node(s) tolerate taint`, `registry: authorized`} {
		if ms := s.Match(l, nil); len(ms) > 0 {
			t.Errorf("%q: %+v, want no match: the stem without a negation is not the word", l, ms)
		}
	}
	if ms := s.Match(`java.net.UnknownHostException: kafka: Name or service not known`, nil); len(ms) == 0 || ms[0].Score < 0.99 {
		t.Errorf("the signature's own 'not known': %+v, want a full match", ms)
	}
}

// TestWrapperWithoutItsNegatedMessageScoresHalf: a signature whose
// distinctive words are all in its wrapper ("Error response from
// daemon:") and whose message is a negation and plain words ("No such
// container") needs the negation: the daemon's other errors that name a
// container are other failures; its older wording "no such id" is not.
func TestWrapperWithoutItsNegatedMessageScoresHalf(t *testing.T) {
	s, err := Compile([]Def{{ID: "gone", Group: "gone", Text: `Error response from daemon: No such container: 4f2b9c1d7e3a`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := `Error response from daemon: conflict: unable to delete 8000bafa387b (cannot be forced) - image is being used by running container 1d36e81c665f`
	ms := s.MatchMode(other, Stream, 0.01, nil)
	if len(ms) == 0 || !ms[0].OtherTail || ms[0].Score >= s.MinScore() {
		t.Fatalf("%q: %+v, want the match halved below %.2f", other, ms, s.MinScore())
	}
	if ex := s.Explain(other, ms[0]); !strings.Contains(strings.Join(ex.Notes, " "), "No such container") {
		t.Errorf("explanation notes %q: want the message it lacks named", ex.Notes)
	}
	for _, l := range []string{`Error response from daemon: No such container: web-1`, `Error response from daemon: no such id: test-mysql-2`} {
		if ms := s.Match(l, nil); len(ms) == 0 || ms[0].OtherTail {
			t.Errorf("%q: %+v, want a match, not halved", l, ms)
		}
	}
}

// TestClassUnderAnotherPackageIsTheClass: Django re-raises SQLite's
// sqlite3.OperationalError as django.db.utils.OperationalError, Java
// clients print a class with or without its package: the class name is
// what both have.
func TestClassUnderAnotherPackageIsTheClass(t *testing.T) {
	s, err := Compile([]Def{
		{ID: "table", Group: "table", Text: `django.db.utils.OperationalError: no such table: event_type`},
		{ID: "host", Group: "host", Text: `Caused by: java.net.UnknownHostException: kafka-0.kafka-headless: Name or service not known`},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, group string }{
		{`sqlite3.OperationalError: no such table: event_type`, "table"},
		{`OperationalError: no such table: event_type`, "table"},
		{`UnknownHostException: kafka-0.kafka-headless: Name or service not known`, "host"},
	} {
		ms := s.Match(tt.line, nil)
		if len(ms) == 0 || s.Def(ms[0].Sig).Group != tt.group || ms[0].Score < 0.85 {
			t.Errorf("%q: %+v, want %s at 0.85 or more", tt.line, ms, tt.group)
		}
	}
	if ms := s.Match(`sqlite3.IntegrityError: UNIQUE constraint failed: users.email`, nil); len(ms) > 0 {
		t.Errorf("another class of the same package: %+v, want no match", ms)
	}
}
