package patterns

import (
	"slices"
	"strings"
	"testing"
)

func TestClauses(t *testing.T) {
	f := func(example string, want ...string) {
		t.Helper()
		got := Clauses(example)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("Clauses(%q) = %q, want it to hold %q", example, got, w)
			}
		}
		if len(want) == 0 && len(got) > 0 {
			t.Errorf("Clauses(%q) = %q, want none", example, got)
		}
	}
	// The message inside a wrapper.
	f(`sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  password authentication failed for user "app"`,
		`password authentication failed for user "app`)
	f(`Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress`,
		`another operation (install/upgrade/rollback) is in progress`)
	// The quoted message of an exception.
	f(`PHP Fatal error:  Uncaught exception 'PDOException' with message 'SQLSTATE[HY000] [1040] Too many connections' in db.php:33`,
		`SQLSTATE[HY000] [1040] Too many connections`)
	// A run of plain words is distinctive as a phrase, though only one
	// of them is rare: docker's message after its wrapper's "http: ".
	f(`time="2016-11-11T23:08:13+01:00" level=error msg="Attempting next endpoint for push after error: Get https://10.0.0.15:5000/v2/: http: server gave HTTP response to HTTPS client"`,
		`server gave HTTP response to HTTPS client`)
	// The message without the statement or request it carried: another
	// occurrence has another, or none.
	f("SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry '7' for key 'PRIMARY' (SQL: insert into `orders` (`sku`, `qty`) values (A-1, 2))",
		"1062 Duplicate entry '7' for key 'PRIMARY")
	f(`2024/03/02 10:11:12 [error] 31#31: *88 upstream sent too big header while reading response header from upstream, client: 10.0.0.7, server: shop.example, request: "GET /cart HTTP/1.1", upstream: "http://10.0.1.4:8000/cart"`,
		`*88 upstream sent too big header while reading response header from upstream`)
	// Nothing in the context is a clause: the scheduler's preemption
	// account ends every FailedScheduling event alike.
	if cs := Clauses(`Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`); slices.ContainsFunc(cs, func(c string) bool { return strings.Contains(c, "Preemption") }) {
		t.Errorf("clauses %q: one is the preemption account", cs)
	}
	// The advice after the error's first sentence is context too: another
	// version words it otherwise.
	f(`org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member. This means that the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms. You can address this either by increasing max.poll.interval.ms or by reducing max.poll.records.`,
		`org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member`)
	// A name is not a distinctive word: a clause needs two besides it.
	f(`Error: user "7f3a9c": forbidden`)
	// Too short to stand alone.
	f(`psycopg2.errors.DeadlockDetected: deadlock detected`)
}

func TestQuotedNameWeighsLittle(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "secret", Text: `MountVolume.SetUp failed for volume "certs" : secret "coturn" not found`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Another volume and another secret: the same failure.
	line := `MountVolume.SetUp failed for volume "auth-proxy-certs" : secret "auth-proxy" not found`
	if ms := s.Match(line, nil); len(ms) == 0 || ms[0].Score < 0.8 {
		t.Errorf("Match(%q) = %v, want a score of 0.8 or more", line, ms)
	}
	// A quoted constant of the message keeps its weight: a fragment
	// naming it still finds the signature.
	s, err = Compile([]Def{{ID: "f", Group: "flannel", Text: `plugin type="flannel" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := s.MatchMode("subnet.env: no such file", Query, 0, nil); len(ms) == 0 {
		t.Errorf("a fragment naming the quoted file did not match")
	}
	// kubectl names the resource type it does not know: another type is
	// the same failure.
	s, err = Compile([]Def{{ID: "k", Group: "crd", Text: `error: the server doesn't have a resource type "certificates"`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := `error: the server doesn't have a resource type "servicemonitors"`; len(s.Match(l, nil)) == 0 {
		t.Errorf("%q did not match", l)
	}
}

// Names given without quotes (a key's value, the last word after "for
// table") are what one occurrence was about: another collection, index or
// table is the same failure.
func TestUnquotedNamesWeighLittle(t *testing.T) {
	cases := []struct{ sig, line, healthy string }{
		{`MongoError: E11000 duplicate key error collection: shop.orders index: sku_1 dup key: { : 3 }`,
			`E11000 duplicate key error index: crm.contacts.$email_1 dup key: { : null }`, ""},
		// The name at the end after a preposition and the noun; JDBC's
		// "Where: " starts the statement's context.
		{`ERROR: permission denied for table invoices Where: remote SQL command: SELECT id, total FROM billing.invoices`,
			`Caused by: org.postgresql.util.PSQLException: ERROR: permission denied for table ledger_entries`, ""},
	}
	for _, c := range cases {
		defs := []Def{{ID: "a", Group: "g", Text: c.sig}}
		for _, cl := range Clauses(c.sig) { // as the matcher compiles an example
			defs = append(defs, Def{ID: "a", Group: "g", Text: cl, Clause: true})
		}
		s, err := Compile(defs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ms := s.Match(c.line, nil); len(ms) == 0 {
			t.Errorf("%q did not match %q", c.line, c.sig)
		}
		if c.healthy != "" {
			if ms := s.Match(c.healthy, nil); len(ms) > 0 {
				t.Errorf("%q matched %q at %.2f", c.healthy, c.sig, ms[0].Score)
			}
		}
	}
}

// PostgreSQL's DETAIL (and HINT, CONTEXT, ...) says which row or statement
// the error was about; the tail after it is not a failure of its own.
// A socket errno after the call that got it is every client's: a clause
// of only that ("connect: connection refused", "dial tcp: i/o timeout")
// would match any refused connection. The errno of a resource running out
// stays one: which resource is most of the failure.
func TestNoClauseIsOnlyASocketErrno(t *testing.T) {
	for _, l := range []string{
		`Error from server (InternalError): error when creating "issuer.yaml": Internal error occurred: failed calling webhook "webhook.cert-manager.io": Post "https://cert-manager-webhook.cert-manager.svc:443/mutate?timeout=10s": dial tcp 10.96.140.7:443: connect: connection refused`,
		`time="2023-05-02T10:00:00Z" level=error msg="Failed to resync revoked tokens. retrying again in 1 minute: dial tcp: i/o timeout"`,
	} {
		for _, c := range Clauses(l) {
			if toks := Tokenize(c, nil); onlyErrno(c, toks) || c == "connect: connection refused" || c == "i/o timeout" {
				t.Errorf("Clauses(%q) holds %q: a socket errno and its call", l, c)
			}
		}
	}
	l := `failed to register layer: Error processing tar file(exit status 1): write /usr/share/vim/vim80/syntax/sisu.vim: no space left on device`
	if cs := Clauses(l); !slices.ContainsFunc(cs, func(c string) bool { return strings.HasSuffix(c, "no space left on device") }) {
		t.Errorf("Clauses(%q) = %q, want the write that ran out of space", l, cs)
	}
}

func TestClausesSkipDetailFields(t *testing.T) {
	cs := Clauses(`ERROR:  duplicate key value violates unique constraint "users_pkey" DETAIL:  Key (id)=(1) already exists.`)
	for _, c := range cs {
		if strings.HasPrefix(c, "Key (id)") {
			t.Errorf("clause %q: the DETAIL tail stands alone", c)
		}
	}
}

// Another inflection of a signature's word is the word: an older kernel's
// "Kill process" is the "Killed process" of the signature, "Endpoint" its
// "endpoints". A weak error word keeps its form: "exited with code 0" is
// not the "exit code" of a failure. And a short line is not part of a
// signature through an inflected word.
func TestInflectionsMatch(t *testing.T) {
	cases := []struct {
		sig, line string
		match     bool
	}{
		{`Memory cgroup out of memory: Killed process 3504 (java) total-vm:75350kB, anon-rss:58776kB`,
			`Memory cgroup out of memory: Kill process 24572 (java) score 0 or sacrifice child`, true},
		{`ingress: service shop/cart does not have any active endpoints`,
			`W0408 16:38:40.185591 7 controller.go:909] Service "ci/jenkins" does not have any active Endpoint.`, true},
		{`ERROR: Job failed: exit code 1`, `2021/08/07 04:43:58 [notice] 1#1: worker process 40 exited with code 0`, false},
		// A short line is no part of a signature through an inflection.
		{`ERROR 1129 (HY000): Host '10.0.0.9' is blocked because of many connection errors; unblock with 'mysqladmin flush-hosts'`,
			`Error 1040: Too many connections`, false},
	}
	for _, c := range cases {
		s, err := Compile([]Def{{ID: "a", Group: "g", Text: c.sig}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ms := s.Match(c.line, nil)
		if got := len(ms) > 0; got != c.match {
			t.Errorf("%q against %q: matched %v (%v), want %v", c.line, c.sig, got, ms, c.match)
		}
	}
}

// A line whose prefix took its level word ("... UTC [114824] ERROR:  out
// of shared memory" reads "out of shared memory" at level error) still has
// the signature's "ERROR"; the same words at level LOG do not.
func TestLevelStandsForTheSignaturesLevelWord(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "g", Text: `ERROR: out of shared memory`}, {ID: "b", Group: "h", Text: `FATAL: password authentication failed for user "app"`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := s.Match(`db-1  | 2025-11-06 22:31:17.241 UTC [114824] ERROR:  out of shared memory`, nil); len(ms) == 0 || ms[0].Sig != 0 {
		t.Errorf("an error-level line with the signature's words: %v, want signature 0", ms)
	}
	if ms := s.Match(`db-1  | 2025-11-06 22:31:17.241 UTC [114824] LOG:  out of shared memory`, nil); len(ms) > 0 {
		t.Errorf("a LOG line matched: %v", ms)
	}
	// A client library prints the server's error under its exception
	// class, without the level: the class marks the failure as the level
	// did.
	for _, l := range []string{`asyncpg.exceptions.OutOfMemoryError: out of shared memory`, `OperationalError: out of shared memory`, `psycopg2.errors.DatabaseError: out of shared memory`} {
		if ms := s.Match(l, nil); len(ms) == 0 || ms[0].Sig != 0 {
			t.Errorf("%q: %v, want signature 0", l, ms)
		}
	}
	if ms := s.Match(`note: out of shared memory`, nil); len(ms) > 0 {
		t.Errorf("a line with neither level nor class matched: %v", ms)
	}
}

// A level stands only for the level word: a signature with another error
// word ("Deadlock") needs one of its error words, whatever the line's
// level or class.
func TestLevelDoesNotStandForOtherErrorWords(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "g", Text: `Error 1213: Deadlock found when trying to get lock; try restarting transaction`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		`2024-05-02 10:11:12 ERROR Lock wait timeout exceeded; try restarting transaction`,
		`ER_LOCK_WAIT_TIMEOUT: Lock wait timeout exceeded; try restarting transaction`,
	} {
		if ms := s.MatchMode(l, Stream, 0.3, nil); len(ms) > 0 {
			t.Errorf("%q matched the deadlock at %.2f", l, ms[0].Score)
		}
	}
	if ms := s.Match(`2024-05-02 10:11:12 ERROR 1213 (40001): Deadlock found when trying to get lock; try restarting transaction`, nil); len(ms) == 0 {
		t.Error("the deadlock itself did not match")
	}
}

// The same exception class with another message is another failure: the
// JVM's "Exception in thread "main" java.lang.OutOfMemoryError" header is
// shared by every kind of OOM, and "GC overhead limit exceeded" is not
// "Direct buffer memory". A message that is only a name (the class
// NoClassDefFoundError could not find) is not another message.
func TestAnotherMessageOfTheSameClassScoresHalf(t *testing.T) {
	defs := []Def{
		{ID: "a", Group: "direct", Text: `Exception in thread "main" java.lang.OutOfMemoryError: Direct buffer memory`},
		{ID: "b", Group: "class", Text: `Exception in thread "main" java.lang.NoClassDefFoundError: com/acme/mail/Sender`},
		{ID: "c", Group: "pg", Text: `FATAL:  password authentication failed for user "app"`},
	}
	s, err := Compile(defs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := `Exception in thread "main" java.lang.OutOfMemoryError: GC overhead limit exceeded`
	if ms := s.MatchMode(l, Stream, 0.1, nil); len(ms) == 0 || ms[0].Sig != 0 || !ms[0].OtherMessage {
		t.Errorf("%q: %+v, want signature 0 halved for another message", l, ms)
	} else if ex := s.Explain(l, ms[0]); !strings.Contains(strings.Join(ex.Notes, " "), "another message") {
		t.Errorf("explanation notes %q: want the halving explained", ex.Notes)
	}
	if ms := s.Match(`Exception in thread "main" java.lang.OutOfMemoryError: Direct buffer memory`, nil); len(ms) == 0 || ms[0].OtherMessage {
		t.Errorf("the signature's own message: %+v", ms)
	}
	if ms := s.MatchMode(`Exception in thread "main" java.lang.NoClassDefFoundError: org/example/Other`, Stream, 0.1, nil); len(ms) == 0 || ms[0].Sig != 1 || ms[0].OtherMessage {
		t.Errorf("another missing class: %+v, want signature 1, not halved", ms)
	}
}

// Another exception class where the signature's stands, with nothing of
// the signature after it matched, is another failure in the same wrapper;
// a server's error under another client's class is the same failure.
func TestAnotherClassInTheSameWrapperScoresHalf(t *testing.T) {
	defs := []Def{
		{ID: "a", Group: "recursion", Text: `Exception in thread "main" java.lang.StackOverflowError`},
		{ID: "b", Group: "replica", Text: `ReplyError: READONLY You can't write against a read only replica.`},
	}
	s, err := Compile(defs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := `Exception in thread "pool-1-thread-8" java.lang.OutOfMemoryError: Java heap space`
	if ms := s.MatchMode(l, Stream, 0.1, nil); len(ms) == 0 || ms[0].Sig != 0 || !ms[0].OtherClass || ms[0].Score >= DefaultMinScore {
		t.Errorf("%q: %+v, want signature 0 halved below the threshold for another class", l, ms)
	} else if ex := s.Explain(l, ms[0]); !strings.Contains(strings.Join(ex.Notes, " "), "another exception class") {
		t.Errorf("explanation notes %q: want the halving explained", ex.Notes)
	}
	if ms := s.Match(`Exception in thread "worker-3" java.lang.StackOverflowError`, nil); len(ms) == 0 || ms[0].OtherClass {
		t.Errorf("the signature's own class in another thread: %+v", ms)
	}
	if ms := s.Match(`redis.exceptions.ReadOnlyError: READONLY You can't write against a read only replica.`, nil); len(ms) == 0 || ms[0].Sig != 1 || ms[0].OtherClass {
		t.Errorf("the server's error through another client: %+v, want signature 1, not halved", ms)
	}
}

// "Can't" is "cannot": runtimes and clients print either for the same
// failure.
func TestCantIsCannot(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "g", Text: `Error [ERR_HTTP_HEADERS_SENT]: Cannot set headers after they are sent to the client`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{`Error: Can't set headers after they are sent to the client`, `Error: Can’t set headers after they are sent to the client`} {
		if ms := s.Match(l, nil); len(ms) == 0 {
			t.Errorf("%q did not match", l)
		}
	}
	toks := Tokenize("can't cant can'ty", nil)
	if len(toks) < 3 || toks[0].Hash != hashLower("cannot") || toks[1].Hash != hashLower("cant") || toks[2].Hash != hashLower("can") {
		t.Errorf("tokens %+v: want cannot, cant, then can (can'ty is no can't)", toks)
	}
}

// After an exception class, a message that only names things (a method, a
// class path) is what this occurrence was about: another method missing
// is the same failure.
func TestTheNamesAClassGivesWeighLittle(t *testing.T) {
	s, err := Compile([]Def{{ID: "a", Group: "g", Text: `java.lang.NoSuchMethodError: com.google.common.collect.ImmutableList.toImmutableList()Ljava/util/stream/Collector;`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := `Caused by: java.lang.NoSuchMethodError: com.google.common.base.Preconditions.checkArgument(ZLjava/lang/String;Ljava/lang/Object;)V`; len(s.Match(l, nil)) == 0 {
		t.Errorf("%q did not match", l)
	}
	// With nothing but the class in common, it is a possible match.
	if l := `java.lang.NoSuchMethodError: 'okio.Buffer okio.BufferedSource.getBuffer()'`; len(s.MatchMode(l, Stream, 0.3, nil)) == 0 {
		t.Errorf("%q did not reach the possible band", l)
	}
	if ms := s.Match(`java.lang.NoSuchFieldError: INSTANCE`, nil); len(ms) > 0 {
		t.Errorf("another class matched: %+v", ms)
	}
}
