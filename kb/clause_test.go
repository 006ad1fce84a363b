package kb

import (
	"strings"
	"testing"

	"github.com/incidex/incidex/patterns"
)

// TestMatchThroughClause: a one-example write-up matches the same error
// printed inside another wrapper, through the clause of its line that
// names the error, and the explanation says so.
func TestMatchThroughClause(t *testing.T) {
	sigs := []Signature{
		{ID: "s-pg", IncidentID: "pg-auth", Kind: SigQuote, Text: `PG::ConnectionBad: FATAL:  password authentication failed for user "svc_7f3a"`},
		{ID: "s-mysql", IncidentID: "mysql-conns", Kind: SigCode, Text: `[Thu Jul 28 20:17:37 2011] [error] [client 192.168.0.9] PHP Fatal error:  Uncaught exception 'PDOException' with message 'SQLSTATE[HY000] [1040] Too many connections' in common.inc.php:33`},
	}
	refs := map[string]*IncidentRef{"pg-auth": {ID: "pg-auth"}, "mysql-conns": {ID: "mysql-conns"}}
	m, err := NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		`psycopg2.OperationalError: connection to server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed for user "dev"`: "pg-auth",
		`"error": "pq: password authentication failed for user \"dev\""`:                                                                          "pg-auth",
		`PDOException: SQLSTATE[HY000] [1040] Too many connections`:                                                                               "mysql-conns",
	} {
		hits := m.Match(line, MatchOptions{Mode: patterns.Stream, Explain: true})
		if len(hits) == 0 || hits[0].Incident.ID != want {
			t.Errorf("Match(%q) = %v, want %s", line, hits, want)
			continue
		}
		if want == "pg-auth" && !strings.Contains(strings.Join(hits[0].Explain.Notes, " "), "clause") {
			t.Errorf("Match(%q): notes %q do not name the clause", line, hits[0].Explain.Notes)
		}
		if hits[0].Signature.ID != sigs[0].ID && hits[0].Signature.ID != sigs[1].ID {
			t.Errorf("Match(%q): signature %q, want the write-up's own", line, hits[0].Signature.ID)
		}
	}
	// A curated knowledge base matches as written: no clauses.
	cur := []Signature{{ID: "c", IncidentID: "pg-auth", Kind: SigCurated, Text: "x"}, sigs[0]}
	m, err = NewMatcher(cur, refs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Set().Len() != 2 {
		t.Errorf("with a curated signature the set has %d patterns, want 2", m.Set().Len())
	}
}

func TestMatchBands(t *testing.T) {
	sigs := []Signature{{ID: "s", IncidentID: "redis-oom", Kind: SigCode, Text: `OOM command not allowed when used memory > 'maxmemory'`}}
	m, err := NewMatcher(sigs, map[string]*IncidentRef{"redis-oom": {ID: "redis-oom"}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf, poss := m.MatchBands(`ReplyError: OOM command not allowed when used memory > 'maxmemory'.`, MatchOptions{Mode: patterns.Stream})
	if len(conf) != 1 || len(poss) != 0 {
		t.Errorf("full line: confident %v possible %v, want one confident", conf, poss)
	}
	conf, poss = m.MatchBands(`maxmemory reached, command not allowed`, MatchOptions{Mode: patterns.Stream})
	for _, h := range poss {
		if h.Score >= patterns.DefaultMinScore || h.Score < PossibleMinScore {
			t.Errorf("possible hit scores %.2f, outside the band", h.Score)
		}
	}
	if len(conf) > 0 && len(poss) > 0 {
		t.Errorf("both bands for one line")
	}
}

// TestMatchThroughEquivalentWording: a write-up that pasted Go's
// "x509: certificate signed by unknown authority" matches Java's and
// curl's wordings of the same failure, a little below its own words, and
// the explanation names the wording and its family. Half of a wording is
// not enough, and a curated incident gets no equivalents.
func TestMatchThroughEquivalentWording(t *testing.T) {
	sigs := []Signature{
		{ID: "s-ca", IncidentID: "private-ca", Kind: SigCode, Text: `Error response from daemon: Get "https://harbor.corp.example/v2/": x509: certificate signed by unknown authority`},
		{ID: "s-pool", IncidentID: "pool", Kind: SigCode, Text: `java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30000ms.`},
	}
	refs := map[string]*IncidentRef{"private-ca": {ID: "private-ca"}, "pool": {ID: "pool"}}
	m, err := NewMatcher(sigs, refs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		`javax.net.ssl.SSLHandshakeException: PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path to requested target`:                 "private-ca",
		`curl: (60) SSL certificate problem: unable to get local issuer certificate`:                                                                                                                              "private-ca",
		`org.apache.tomcat.jdbc.pool.PoolExhaustedException: [http-nio-8080-exec-5] Timeout: Pool empty. Unable to fetch a connection in 30 seconds, none available[size:100; busy:100; idle:0; lastwait:30000].`: "pool",
	} {
		hits := m.Match(line, MatchOptions{Mode: patterns.Stream, Explain: true})
		if len(hits) == 0 || hits[0].Incident.ID != want {
			t.Errorf("Match(%q) = %v, want %s", line, hits, want)
			continue
		}
		notes := strings.Join(hits[0].Explain.Notes, " ")
		if !strings.Contains(notes, "another wording") || !strings.Contains(notes, "table of equivalent wordings") {
			t.Errorf("Match(%q): notes %q do not name the equivalent wording", line, notes)
		}
		if hits[0].Score >= 0.95 || hits[0].Score < patterns.DefaultMinScore {
			t.Errorf("Match(%q): score %.2f, want confident and below a match of the write-up's own words", line, hits[0].Score)
		}
	}
	// "Data too large" is not "Request Entity Too Large"; nor is a
	// certificate saved "certificate in certificate chain". Another
	// runtime's pool is not the JVM's: its settings are what a fix changes.
	for _, line := range []string{
		`sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30`,
		`org.elasticsearch.common.breaker.CircuitBreakingException: [parent] Data too large, data for [<http_request>] would be larger than limit`,
		`Congratulations! Your certificate and chain have been saved at: /etc/letsencrypt/live/example.com/fullchain.pem`,
	} {
		if hits := m.Match(line, MatchOptions{Mode: patterns.Stream, MinScore: PossibleMinScore}); len(hits) != 0 {
			t.Errorf("Match(%q) = %v, want nothing", line, hits)
		}
	}
	cur := []Signature{{ID: "c", IncidentID: "private-ca", Kind: SigCurated, Text: sigs[0].Text}}
	if m, err = NewMatcher(cur, refs, 0, 0); err != nil {
		t.Fatal(err)
	}
	if m.Set().Len() != 1 {
		t.Errorf("a curated signature has %d patterns, want 1: curated incidents match as written", m.Set().Len())
	}
}

// TestMatchThroughTheWordingALineHolds: a long line whose failure is one
// wording of the table (an ACME client's request that ended in Go's
// unknown-authority error) matches that wording in another wrapper, as a
// clause of its own words would.
func TestMatchThroughTheWordingALineHolds(t *testing.T) {
	sigs := []Signature{{ID: "s", IncidentID: "acme", Kind: SigCode, Text: `renewing certificate: [example.org] Renew: creating new order: provisioning client: performing request: Get "https://acme-v02.api.letsencrypt.org/directory": x509: certificate signed by unknown authority (ca=https://acme-v02.api.letsencrypt.org/directory)`}}
	m, err := NewMatcher(sigs, map[string]*IncidentRef{"acme": {ID: "acme"}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `docker: Error while pulling image: Get https://index.docker.io/v1/repositories/library/hello-world/images: x509: certificate signed by unknown authority.`
	hits := m.Match(line, MatchOptions{Mode: patterns.Stream, Explain: true})
	if len(hits) == 0 || hits[0].Score < 0.9 {
		t.Fatalf("Match(%q) = %v, want acme at a clause's score", line, hits)
	}
	if notes := strings.Join(hits[0].Explain.Notes, " "); !strings.Contains(notes, "the part of the signature's line that says the failure") {
		t.Errorf("notes %q do not say which part of the line matched", notes)
	}
}
