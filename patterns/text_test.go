package patterns

import (
	"slices"
	"testing"
)

// Three short write-ups in the words teams use, each about one failure.
var textKB = []struct{ id, text string }{
	{"es-flood", `Indexing stopped overnight: Elasticsearch put every index read-only.
The data node disk went past the flood-stage watermark (95%), so Elasticsearch set the
index.blocks.read_only_allow_delete block and Logstash retried its bulk requests forever.
Logstash log: retrying failed action with response code: 403 (cluster_block_exception)`},
	{"pg-clients", `Postgres refused new connections during the load test.
The database log said FATAL: sorry, too many clients already. max_connections was 100 and a few
slots are reserved for superusers; every worker pod opened its own pool, so the backends
outgrew the limit.`},
	{"tls-sans", `Browsers got a certificate warning on the new staging host.
The ingress controller logged that the certificate is valid for *.example.io, not the new
staging host:
the secret's certificate had no subject alternative name (SAN) for it, so the hostname check
failed and clients saw the altnames of another domain.`},
}

func textIndex(t testing.TB, docs ...struct{ id, text string }) *TextIndex {
	t.Helper()
	var ids []string
	var words [][]uint64
	for _, d := range docs {
		ids = append(ids, d.id)
		words = append(words, TextHashes(d.text))
	}
	return NewTextIndex(ids, words)
}

func TestTextBackgroundWeighsGenericWordsLow(t *testing.T) {
	bg := loadBackground()
	for _, w := range []string{"failed", "connection", "invalid", "type", "request"} {
		if got := bg.bg(hashLower(w)); got > 0.5 {
			t.Errorf("background weight of %q = %.2f, want at most 0.5: it is in many generic messages", w, got)
		}
	}
	for _, w := range []string{"altnames", "watermark", "superusers"} {
		if got := bg.bg(hashLower(w)); got < textStrongBg {
			t.Errorf("background weight of %q = %.2f, want at least %.1f: it is rare in generic messages", w, got, textStrongBg)
		}
	}
}

// Another client prints the same failure in other words; the write-up's
// prose has them.
func TestTextTierMatchesAnotherWordingThroughTheProse(t *testing.T) {
	x := textIndex(t, textKB...)
	for _, c := range []struct {
		line, want string
		confident  bool
	}{
		{`[2019-04-02T10:11:12,123][WARN ][o.e.c.r.a.DiskThresholdMonitor] [node-1] flood stage disk watermark [95%] exceeded on [node-1][/data], all indices on this node will be marked read-only`, "es-flood", true},
		// Two distinctive words in common (slots, superusers): possible.
		{`2024-06-07 10:32:02 UTC [66057] FATAL:  remaining connection slots are reserved for superusers`, "pg-clients", false},
	} {
		m, ok := x.Match(c.line)
		if !ok || m.Confident != c.confident || x.Group(m.Group) != c.want {
			t.Errorf("Match(%.60q) = %+v, %v; want a match of %s, confident %v", c.line, m, ok, c.want, c.confident)
			continue
		}
		if lo, hi := 0.3, 0.45; c.confident && (m.Score < 0.5 || m.Score > 0.7) || !c.confident && (m.Score < lo || m.Score > hi) {
			t.Errorf("text score %.3f out of its band (confident %v)", m.Score, c.confident)
		}
		var distinct []string
		for _, tt := range x.Terms(c.line, m.Group) {
			if tt.Distinct {
				distinct = append(distinct, tt.Word)
			}
		}
		if len(distinct) != m.Strong || c.confident && len(distinct) < textStrongConfident {
			t.Errorf("evidence %v, strong %d: want the distinctive words the match counted", distinct, m.Strong)
		}
	}
}

func TestTextTierNeedsALineThatReadsAsAFailure(t *testing.T) {
	x := textIndex(t, textKB...)
	for _, l := range []string{
		`[2019-04-02T10:11:12,123][INFO ][o.e.c.s.ClusterSettings] updating [cluster.routing.allocation.disk.watermark.flood_stage] from [95%] to [97%]`,
		`LOG:  max_connections = 200, superuser_reserved_connections = 3`,
	} {
		if m, ok := x.Match(l); ok {
			t.Errorf("healthy line %.60q matched %s (%+v)", l, x.Group(m.Group), m)
		}
	}
}

// Errors of failures the write-ups do not hold share only generic words
// with them, and those weigh little whatever the knowledge base's size.
func TestTextTierLeavesOtherFailuresAlone(t *testing.T) {
	x := textIndex(t, textKB...)
	for _, l := range []string{
		`psql: error: connection to server at "db" (10.0.0.5), port 5432 failed: Connection refused`,
		`ERROR: failed to validate the request: invalid type for field "index"`,
		`x509: certificate has expired or is not yet valid: current time 2024-01-01T00:00:00Z is after 2023-12-31T23:59:59Z`,
		`java.lang.OutOfMemoryError: Java heap space`,
	} {
		if m, ok := x.Match(l); ok && m.Confident {
			t.Errorf("unknown failure %.60q matched %s confidently (%+v, terms %v)", l, x.Group(m.Group), m, x.Terms(l, m.Group))
		}
	}
}

func TestTextTierWithOneWriteup(t *testing.T) {
	x := textIndex(t, textKB[1])
	m, ok := x.Match(`FATAL:  remaining connection slots are reserved for superusers`)
	if !ok || x.Group(m.Group) != "pg-clients" {
		t.Fatalf("got %+v, %v; want pg-clients", m, ok)
	}
	if _, ok := x.Match(`dial tcp 10.0.0.5:5432: connect: connection refused`); ok {
		t.Error("a generic connection error matched the only write-up")
	}
}

func TestTextWordsLeaveOutTheLinesStructure(t *testing.T) {
	var got []string
	textWords(`level=error msg="error: exec failed" path=/usr/local/bin/entrypoint.sh {"component": "scheduler"} java.lang.OutOfMemoryError, client: 10.0.0.1, upstream: "http://x"`, true,
		textLook, func(h uint64, w string, _ bool, _ uint32) {
			if h != 0 {
				got = append(got, w)
			}
		})
	want := []string{"exec", "failed", "entrypoint", "sh", "scheduler", "OutOfMemoryError", "http"}
	if !slices.Equal(got, want) {
		t.Errorf("words %q, want %q", got, want)
	}
}

func TestTextTierMatchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	x := textIndex(t, textKB...)
	x.Match("warm up: failed") // the scratch pool
	for _, l := range []string{
		"GET /healthz 200 1.2ms",
		`flood stage disk watermark [95%] exceeded on [node-1], all indices on this node will be marked read-only`,
	} {
		if n := testing.AllocsPerRun(100, func() { x.Match(l) }); n != 0 {
			t.Errorf("Match(%.30q) allocates %.1f times per call, want 0", l, n)
		}
	}
}

func TestTextIndexWordsRoundTrip(t *testing.T) {
	x := textIndex(t, textKB...)
	y := NewTextIndex([]string{"es-flood", "pg-clients", "tls-sans"}, x.Words())
	l := `Error: Hostname/IP does not match certificate's altnames: Host: a.example.com. is not in the cert's altnames`
	mx, okx := x.Match(l)
	my, oky := y.Match(l)
	if okx != oky || mx != my {
		t.Errorf("rebuilt index: %+v %v, want %+v %v", my, oky, mx, okx)
	}
}
