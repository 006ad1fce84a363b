package writeup

import (
	"strings"
	"testing"
)

// TestSignaturesFromEveryStyle: the error text of a write-up becomes a
// signature wherever its author put it.
func TestSignaturesFromEveryStyle(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"blockquoted log line", "# Proxy down\n\nApache's log filled with:\n\n> [Thu Jul 28 20:17:37 2011] [error] [client 10.0.0.9] PHP Fatal error:  Uncaught exception 'PDOException' with message 'SQLSTATE[HY000] [1040] Too many connections'\n\nWe raised max_connections.\n",
			"Too many connections"},
		{"nested blockquote", "# LB 502\n\n> The balancer said:\n> > upstream prematurely closed connection while reading response header from upstream, client: 10.1.2.3\n",
			"upstream prematurely closed connection"},
		{"curly quotes around straight ones", "# Role missing\n\nThe log said “db_1 | 2022-06-03 18:25:00.792 UTC [108] FATAL:  password authentication failed for user \"rhS1jV8\"” and nothing else.\n",
			"password authentication failed"},
		{"exception class name in quotes", "# Heap\n\nWithin a minute the log showed “java.lang.OutOfMemoryError: Java heap space” and the process stopped shipping.\n",
			"OutOfMemoryError: Java heap space"},
		{"gone away", "IL-1234 Acme · 2020-01-02 mysql\nThe scheduler died with \"(2006, 'MySQL server has gone away')\" every night.\n",
			"MySQL server has gone away"},
		{"short quote with an exception class", "IL-4410 Fernbank · 2021-03-09 aws\nThe export job stopped halfway with \"ProvisionedThroughputExceededException: Throughput exceeded\" in its log.\n",
			"ProvisionedThroughputExceededException: Throughput exceeded"},
		{"snake_case exception type in curly quotes", "# Search down\n\nEvery retried update came back with “[version_conflict_engine_exception] [doc-17]: version conflict, current version [3] is different than the one provided [2]” until the writer was fixed.\n",
			"version_conflict_engine_exception"},
		{"object status as YAML", "# Backup Job\n\n```yaml\nstatus:\n  conditions:\n  - message: Job was active longer than specified deadline\n    reason: DeadlineExceeded\n    status: \"True\"\n    type: Failed\n```\n",
			"Job was active longer than specified deadline"},
		{"Redis error reply in inline code in a nested list", "# Queue stalls\n\n- at 02:10 the producers failed with:\n  - `BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.`\n",
			"BUSY Redis is busy running a script"},
		{"Redis error reply in curly quotes", "The sessions cache refused every read with “MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.” until the link came back.\n",
			"MASTERDOWN Link with MASTER is down"},
		{"kernel hung-task warning at INFO beside the kernel's hint", "# NFS server hangs\n\nThe kernel printed `[  612.004711] INFO: task nfsd:2811 blocked for more than 120 seconds.` and then “\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.” for every nfsd thread.\n",
			"blocked for more than"},
		{"kubectl output under a command", "# OOM\n\n```console\nkubectl get pods\nNAME        READY   STATUS      RESTARTS   AGE\napi-7d9f8b  0/1     OOMKilled   4          2m\n```\n",
			"OOMKilled"},
	}
	for _, c := range cases {
		name := "w.md"
		if strings.HasPrefix(c.doc, "IL-") {
			name = "w.txt"
		}
		incs, err := ParseWriteup(name, []byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, s := range incs[0].Signatures {
			got = append(got, s.Text)
		}
		if !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s: signatures %q, want one with %q", c.name, got, c.want)
		}
	}
}

// A pasted line with no error word becomes a signature when the prose
// quotes it: its author has said that is the message. Without the quote
// it stays out (most such lines are the chatter around a failure), unless
// the write-up has no error text at all.
func TestQuotedInProseMakesAQuietLineASignature(t *testing.T) {
	block := "```\nJun 02 04:10:11 pi systemd[1]: zigbee.service: Scheduled restart job, restart counter is at 5.\nJun 02 04:10:11 pi systemd[1]: zigbee.service: Start request repeated too quickly.\n```\n"
	sigs := func(doc string) string {
		t.Helper()
		incs, err := ParseWriteup("w.md", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range incs[0].Signatures {
			got = append(got, s.Text)
		}
		return strings.Join(got, "\n")
	}
	quoted := "# Zigbee bridge stays down\n\n" + block + "\n## Cause\n\nThe unit crashed five times in ten seconds and systemd stopped trying (\"start request repeated too quickly\").\n"
	if got := sigs(quoted); !strings.Contains(got, "Start request repeated too quickly") {
		t.Errorf("the line the prose quotes is not a signature: %q", got)
	}
	if got := sigs(quoted); strings.Contains(got, "Scheduled restart job") {
		t.Errorf("a line the prose does not quote became a signature: %q", got)
	}
	failed := "```\nJun 02 04:10:11 pi systemd[1]: zigbee.service: Failed with result 'exit-code'.\n```\n"
	plain := "# Zigbee bridge stays down\n\n" + block + failed + "\n## Cause\n\nThe unit crashed five times in ten seconds.\n"
	if got := sigs(plain); strings.Contains(got, "Start request repeated") || !strings.Contains(got, "Failed with result") {
		t.Errorf("without a quote in the prose, a quiet line became a signature beside the error line: %q", got)
	}
	// A write-up with no error text anywhere has only its quiet lines to
	// go by: they are what its author pasted as the failure.
	only := "# Zigbee bridge stays down\n\n" + block + "\n## Cause\n\nThe unit crashed five times in ten seconds.\n"
	if got := sigs(only); !strings.Contains(got, "Start request repeated too quickly") {
		t.Errorf("a write-up with nothing else did not learn its pasted lines: %q", got)
	}
}

// TestEventRowsAreNotContinuations: in a log block, an indented kubectl
// event row is its own entry, and describe's Events heading and column
// heads are not text.
func TestEventRowsAreNotContinuations(t *testing.T) {
	got := logEntries([]string{
		`E0603 05:40:02.118745    1610 kubelet.go:2902] "Container runtime network not ready"`,
		`  Warning  NetworkNotReady  65s (x5 over 74s)  kubelet  network is not ready`,
		`Events:`,
		`  Type     Reason            Age   From               Message`,
		`  ----     ------            ----  ----               -------`,
		`  Warning  FailedScheduling  17m   default-scheduler  0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.`,
	})
	if len(got) != 3 || !strings.HasPrefix(got[1], "Warning  NetworkNotReady") || !strings.HasPrefix(got[2], "Warning  FailedScheduling") {
		t.Errorf("logEntries = %q, want the klog line and the two event rows", got)
	}
}

// Incident-library text as people type it: tags separated by spaces, and
// the error pasted as a paragraph of its own after a line that leads in
// to it. The pasted line is a signature; a line of prose after a lead-in
// is not.
func TestLibraryEntryWithSpacedTagsAndAPastedLine(t *testing.T) {
	src := "OPS-17 Payments · 2024-02-11 mysql compose credentials\n\n" +
		"The api container could not log in to the database after the volume was restored.\n" +
		"What the clients printed:\n\n" +
		"Access denied for user 'app'@'172.20.0.5' (using password: YES)\n\n" +
		"What we tried first:\n\n" +
		"restarted both containers twice\n\n" +
		"Symptom ? logins refused with the password from the env file\n" +
		"Root cause ? the restored volume kept the old password\n"
	incs, err := ParseWriteup("ops.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) != 1 || incs[0].Format != "library" || incs[0].ID != "OPS-17" {
		t.Fatalf("got %d incidents (%+v), want one library entry OPS-17", len(incs), incs)
	}
	inc := incs[0]
	if strings.Join(inc.Tags, ",") != "mysql,compose,credentials" {
		t.Errorf("tags %q, want mysql, compose, credentials", inc.Tags)
	}
	var sigs []string
	for _, s := range inc.Signatures {
		sigs = append(sigs, s.Text)
	}
	if len(sigs) != 1 || sigs[0] != "Access denied for user 'app'@'172.20.0.5' (using password: YES)" {
		t.Errorf("signatures %q, want the pasted line only", sigs)
	}
	// The pasted line right under its lead-in, no blank line between.
	src = "OPS-18 Payments · 2024-02-12 java\n\nThe job died at start.\nConsole, after the banner:\n" +
		"Exception in thread \"main\" java.lang.NoClassDefFoundError: com/acme/cli/Args\n\n" +
		"The jar was built without its dependencies; this went on for a while:\nnobody noticed the build change.\n"
	if incs, err = ParseWriteup("ops.txt", []byte(src)); err != nil {
		t.Fatal(err)
	}
	sigs = nil
	for _, s := range incs[0].Signatures {
		sigs = append(sigs, s.Text)
	}
	if len(sigs) != 1 || !strings.Contains(sigs[0], "NoClassDefFoundError") {
		t.Errorf("signatures %q, want the exception line only", sigs)
	}
}

// A configuration block stays configuration: its "message" and "error"
// keys become signatures only in an object's status, which has a reason.
func TestConfigBlockWithoutStatusGivesNoSignature(t *testing.T) {
	doc := "# Alert rule\n\nThe rule we shipped:\n\n```yaml\nalert: BackupFailed\nannotations:\n  message: backup job failed on {{ $labels.instance }}\n  error: see the backup dashboard\n```\n"
	incs, err := ParseWriteup("w.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range incs[0].Signatures {
		t.Errorf("signature %q from a configuration block", s.Text)
	}
}

// What is pasted around the error is not the error: a quoted alert name,
// the command that printed a table and the table's rows, an SQL query of
// the runbook. A write-up with no error word anywhere learns the pasted
// line that hints at its failure, not the kubectl rows above it.
func TestSignaturesLeaveOutWhatSurroundsTheError(t *testing.T) {
	pods := "```\n$ kubectl -n shop get pods\nNAME       READY   STATUS    RESTARTS   AGE\ncart-db-0  0/1     Pending   0          12m\nweb-5d8f   1/1     Running   0          12m\n```\n\n"
	event := "The event on the pod:\n\n```\ndefault-scheduler 0/2 nodes are available: 2 node(s) had volume node affinity conflict.\n```\n\n"
	cases := []struct{ name, doc, want string }{
		{"quoted alert name", "# Claim stuck\n\nIt paged through our \"FATAL in scheduler logs\" alert at night.\n\n" + event, "volume node affinity conflict"},
		{"kubectl rows beside the event", "# Claim stuck\n\n" + pods + event, "volume node affinity conflict"},
		{"SQL of the runbook", "# Locks\n\n```\nERROR:  canceling statement due to lock timeout\n```\n\n## Runbook\n\n```\nSELECT pid, query FROM pg_stat_activity\nWHERE state = 'idle in transaction (aborted)';\n```\n",
			"canceling statement due to lock timeout"},
	}
	for _, c := range cases {
		incs, err := ParseWriteup("w.md", []byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range incs[0].Signatures {
			got = append(got, s.Text)
		}
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: signatures %q, want only the one with %q", c.name, got, c.want)
		}
	}
}

// The parts of a write-up are found under headings as people write them:
// a short line of its own without '#' ("Why", "What we did"), and the
// headings of a postmortem that revises its first guess.
func TestCauseAndFixUnderTheHeadingsPeopleWrite(t *testing.T) {
	cases := []struct{ name, doc, cause, fix, superseded string }{
		{"line headings", "# Jobs stalled\n\nWhat we saw\n\n- producers failed with `BUSY Redis is busy running a script`\n\nWhy\n\n- a Lua sweep over two million delayed jobs ran for seconds\n\nWhat we did\n\n- deleted the stale delayed jobs\n",
			"Lua sweep over two million delayed jobs", "deleted the stale delayed jobs", ""},
		{"revised guess", "# Builds red\n\n## First guess\n\nWe blamed the CI image.\n\n## What it actually was\n\nA patch release of a library was built for a newer JDK.\n\n## Fix\n\nPinned the library.\n",
			"built for a newer JDK", "Pinned the library", "We blamed the CI image"},
	}
	for _, c := range cases {
		incs, err := ParseWriteup("w.md", []byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		inc := incs[0]
		if !strings.Contains(inc.RootCause, c.cause) {
			t.Errorf("%s: root cause %q, want it to say %q", c.name, inc.RootCause, c.cause)
		}
		if !strings.Contains(inc.Fix, c.fix) {
			t.Errorf("%s: fix %q, want it to say %q", c.name, inc.Fix, c.fix)
		}
		if c.superseded != "" && (len(inc.Superseded) == 0 || !strings.Contains(inc.Superseded[0], c.superseded)) {
			t.Errorf("%s: superseded %q, want %q", c.name, inc.Superseded, c.superseded)
		}
	}
}

// An incident library's ids may carry a date or a sequence of their own
// ("INC-2022-0315"): the entry is still an entry, its pasted line a
// signature, its fields its cause and fix.
func TestLibraryEntryWithACompoundID(t *testing.T) {
	doc := "INC-2023-0412 Ledger · 2023-04-12 mysql laravel\n\nThe nightly import failed now and then. Its log:\n\nSQLSTATE[40001]: Serialization failure: 1213 Deadlock found when trying to get lock; try restarting transaction\n\nSymptom ? import jobs fail with 1213\nRoot cause ? two workers upserting the same rows in different orders\nFix ? sort the keys, retry on 1213\n"
	incs, err := ParseWriteup("import.txt", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	inc := incs[0]
	if inc.ID != "INC-2023-0412" || inc.Organisation != "Ledger" || inc.Date != "2023-04-12" {
		t.Errorf("header = %q %q %q, want INC-2023-0412 Ledger 2023-04-12", inc.ID, inc.Organisation, inc.Date)
	}
	if len(inc.Signatures) != 1 || !strings.Contains(inc.Signatures[0].Text, "Deadlock found when trying to get lock") {
		t.Errorf("signatures = %+v, want the pasted line", inc.Signatures)
	}
	if !strings.Contains(inc.RootCause, "different orders") {
		t.Errorf("root cause = %q, want the field's", inc.RootCause)
	}
}

// A log line pasted without a fence, as a paragraph of its own under a
// lead-in ("The worker log:"), is a signature; a sentence of prose under a
// lead-in is not.
func TestUnfencedLineUnderALeadIn(t *testing.T) {
	doc := "# Builds die\n\nEvery build died a minute in. The worker log:\n\n[2021-09-03 12:36:57,381: ERROR/MainProcess] Task handler raised error: WorkerLostError('Worker exited prematurely: signal 9 (SIGKILL) Job: 348.')\n\nWhat we found:\n\nThe container was killed because its `memory` limit was too low for the failed solver.\n\nAnd then:\n\nThe node ran out of inodes on /var/lib/docker after the failed upgrade of the runtime.\n\nWe raised the limit.\n"
	got := signatureTexts(t, "w.md", doc)
	if len(got) != 1 || !strings.Contains(got[0], "WorkerLostError('Worker exited prematurely") {
		t.Errorf("signatures = %q, want only the pasted worker log line", got)
	}
}

// Teams number incidents in many forms: lower case, with a hash, with a
// hex suffix. Each is an entry; a sentence with a date is not.
func TestLibraryIDForms(t *testing.T) {
	for _, c := range []struct{ header, id string }{
		{"ir-2015-031 Collab/Files · 2015-02-16 mysql disk", "ir-2015-031"},
		{"SEV3#5521 API-Gateway · 2025-12-10 redis cluster", "SEV3#5521"},
		{"OPS-7f3a Mobile/Android · 2020-05-07 java", "OPS-7f3a"},
	} {
		doc := c.header + "\n\nThe upgrade stopped halfway. Its output:\n\nERROR 1114 (HY000) at line 9752: The table 'wp_posts' is full\n\nSymptom → upgrade fails with 1114\nRoot cause -> the datadir's volume was full\nFix ? freed space, re-ran it\nFollow-up ? alert on disk at 85%\n"
		if !IsLibrary([]byte(doc)) {
			t.Errorf("%q: not read as an incident library", c.header)
			continue
		}
		incs, err := ParseWriteup("w.txt", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		inc := incs[0]
		if inc.ID != c.id || len(inc.Signatures) != 1 {
			t.Errorf("%q: id %q, signatures %+v; want %q and the pasted line", c.header, inc.ID, inc.Signatures, c.id)
		}
		if inc.RootCause != "the datadir's volume was full" || !strings.Contains(inc.Fix, "freed space") {
			t.Errorf("%q: cause %q, fix %q: want the fields after an arrow too", c.header, inc.RootCause, inc.Fix)
		}
		if strings.Contains(inc.Symptoms, "85%") || !strings.Contains(inc.Lessons, "85%") {
			t.Errorf("%q: symptoms %q, lessons %q: a follow-up is a lesson", c.header, inc.Symptoms, inc.Lessons)
		}
	}
	if IsLibrary([]byte("Re-run · 2024-01-02 of the nightly job\n\nIt failed again.\n")) {
		t.Error("a sentence with a date was read as an entry header")
	}
}

// An entry with no error text learns the quiet line it pasted (etcd's
// warning has no error word), and a stack trace's first line is error
// text though it is one word.
func TestLibraryEntryLearnsItsQuietPastedLine(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"2016-12-22 17:00:29.475936 W | rafthttp: the clock difference against peer 5bd0394181f126dd is too high [10.449391606s > 1s]", "the clock difference against peer"},
		{"java.util.ConcurrentModificationException", "java.util.ConcurrentModificationException"},
	} {
		doc := "INC-2291 Platform · 2016-12-22 etcd\n\nThe logs filled up, every 30 seconds, with:\n\n" + c.line + "\n\nSymptom ? the warning above\nRoot cause ? one host's clock was off\n"
		incs, err := ParseWriteup("w.txt", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if sigs := incs[0].Signatures; len(sigs) != 1 || !strings.Contains(sigs[0].Text, c.want) {
			t.Errorf("signatures %+v, want the pasted %q", sigs, c.want)
		}
	}
}

// A list item under an item that leads in ("top line:") is a pasted line
// when it has a log line's firm marks (a level in capitals, a class);
// prose items under a lead-in are not.
func TestNestedListItemUnderALeadIn(t *testing.T) {
	doc := "# Stats page down\n\nObserved:\n\n- the page shows an exception dump, top line:\n  - Exception: PG::QueryCanceled: ERROR: canceling statement due to statement timeout\n- what we checked:\n  - disk: fine, the pool was not exhausted by leaked connections\n\nCause: the query outgrew statement_timeout.\n"
	got := signatureTexts(t, "w.md", doc)
	if len(got) != 1 || !strings.Contains(got[0], "canceling statement due to statement timeout") {
		t.Errorf("signatures = %q, want only the pasted exception line", got)
	}
}

// A write-up whose only log text is a quiet line in inline code (no
// error word: "full !!!") learns it; inline commands stay out.
func TestQuietInlineCodeOfAWriteupWithNoErrorText(t *testing.T) {
	doc := "# API unusable during the workshop\n\n* **11:05** dashboards spin, requests time out\n* **11:16** the uwsgi log: `Thu Oct 10 11:16:42 2019 - *** uWSGI listen queue of socket \":5000\" (fd: 3) full !!! (101/100) ***`\n* **11:40** ran `python manage.py migrate --noinput` and raised `processes`\n\n## Changes kept\n\n```\n[uwsgi]\nprocesses = 16\nlisten = 1024\n```\n"
	got := signatureTexts(t, "w.md", doc)
	if len(got) != 1 || !strings.Contains(got[0], "uWSGI listen queue") {
		t.Errorf("signatures = %q, want only the uwsgi line", got)
	}
}

// A chat thread pasted as a blockquote: the message that is one inline code
// span is the log line (without its backticks); sentences with only a
// "not" for failure, and messages with inline code in their prose, are not.
func TestChatThreadInABlockquote(t *testing.T) {
	doc := "**#data-eng**, thread from Mar 24\n\n> **tom.v** 14:03\n> `psycopg2.OperationalError: SSL SYSCALL error: EOF detected`\n>\n> **tom.v** 14:08\n> but why not on the mac\n>\n> **tom.v** 14:31\n> added `keepalives=1` to the connect call, not failing since 👍\n"
	got := signatureTexts(t, "chat.md", doc)
	if len(got) != 1 || got[0] != "psycopg2.OperationalError: SSL SYSCALL error: EOF detected" {
		t.Errorf("signatures = %q, want only the pasted error, without backticks", got)
	}
}

// An email's header gives the title and the date, and is no log text,
// quoted or not; a line pasted after "... step with" is log text.
func TestEmailNote(t *testing.T) {
	doc := "Subject: Re: [build-infra] npm EAI_AGAIN during image builds\nFrom: Rui <rui@example.dev>\nTo: eng@example.dev\nDate: Mon, 14 Apr 2025 18:05:40 +0100\n\nHi all,\n\nif your build failed today at the install step with\n\n  npm error request to https://registry.npmjs.org/pnpm failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\n\nit is DNS inside the build network.\n\n> -----Original Message-----\n> From: Jan\n> Subject: builds failed with \"request failed\" since the runner update\n>\n> Is it the registry?\n"
	incs, err := ParseWriteup("note.txt", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	inc := incs[0]
	if inc.Title != "npm EAI_AGAIN during image builds" || inc.Date != "2025-04-14" {
		t.Errorf("title %q, date %q: want the subject without Re: and the list tag, and the header's date", inc.Title, inc.Date)
	}
	var got []string
	for _, s := range inc.Signatures {
		got = append(got, s.Text)
	}
	if len(got) != 1 || !strings.Contains(got[0], "getaddrinfo EAI_AGAIN registry.npmjs.org") {
		t.Errorf("signatures = %q, want only the pasted npm error", got)
	}
}

// A Jira ticket in its wiki markup: "hN." headings, {noformat} and {code}
// blocks, {{monospace}}, "# " numbered items (no headings), and the
// ticket's summary heading as the title.
func TestJiraWikiMarkup(t *testing.T) {
	doc := "h2. [DATA-771] Users cannot delete a shipping address\n\n*Reporter:* desk\n\nh3. Problem\n\nSaving fails. The backend error is:\n\n{noformat}\nERROR: update or delete on table \"address\" violates foreign key constraint \"fk_addr\" on table \"shipment\"\n{noformat}\n\nh2. Root cause\n\nThe row is still used by {{shipment.addr_id}}.\n\n{code:sql}\nSELECT shipment_id FROM shipment WHERE addr_id = 10014763;\n{code}\n\nh2. Resolution\n\n# Told the user the address is still referenced.\n# Marked the address inactive instead.\n"
	incs, err := ParseWriteup("DATA-771.txt", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	inc := incs[0]
	if inc.Title != "[DATA-771] Users cannot delete a shipping address" {
		t.Errorf("title %q, want the ticket's summary", inc.Title)
	}
	if !strings.Contains(inc.RootCause, "`shipment.addr_id`") {
		t.Errorf("root cause %q, want the h2. section with its {{monospace}} as code", inc.RootCause)
	}
	if !strings.Contains(inc.Fix, "Marked the address inactive") {
		t.Errorf("fix %q, want both numbered items", inc.Fix)
	}
	if len(inc.Signatures) != 1 || !strings.Contains(inc.Signatures[0].Text, "violates foreign key constraint") {
		t.Errorf("signatures %+v, want the {noformat} block's line", inc.Signatures)
	}
}

// signatureTexts parses doc as the write-up file name and returns the
// texts of its first incident's signatures.
func signatureTexts(t *testing.T, name, doc string) []string {
	t.Helper()
	incs, err := ParseWriteup(name, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range incs[0].Signatures {
		got = append(got, s.Text)
	}
	return got
}

// A stack trace's header and frames are not its error: the exception
// line is. Raw <pre> in Markdown (a GitHub issue's <details> of logs) is a
// code block, and a bug template's heading is no title.
func TestStackTracesAndGitHubIssues(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"python traceback", "# Workers die\n\n```\nTraceback (most recent call last):\n  File \"/app/worker.py\", line 12, in <module>\n    open(path)\nOSError: [Errno 24] Too many open files\n```\n",
			"OSError: [Errno 24] Too many open files"},
		{"node frames", "# Queue stalls\n\n```\nReplyError: NOSCRIPT No matching script. Please use EVAL.\n    at parseError (/app/node_modules/redis-parser/lib/parser.js:179:12)\n    at parseType (/app/node_modules/redis-parser/lib/parser.js:302:14)\n```\n",
			"ReplyError: NOSCRIPT No matching script. Please use EVAL."},
		{"details of a github issue", "### Describe the bug\n\nThe worker crashes.\n\n<details><summary>Logs</summary>\n<pre>\nTraceback (most recent call last):\nOSError: [Errno 24] Too many open files\n</pre>\n</details>\n",
			"OSError: [Errno 24] Too many open files"},
	} {
		got := signatureTexts(t, "w.md", c.doc)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: signatures %q, want only %q", c.name, got, c.want)
		}
	}
	incs, err := ParseWriteup("bug-123.md", []byte("### Describe the bug\n\nThe worker crashes.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if incs[0].Title == "Describe the bug" {
		t.Errorf("title %q: a bug template's heading is a part, not the title", incs[0].Title)
	}
}

// A Notion export puts a callout in <aside>: its error is the write-up's.
func TestNotionCallout(t *testing.T) {
	doc := "# Export job fails\n\nStatus: Done\nOwner: Data team\n\n<aside>\n💡 The job log showed: java.net.UnknownHostException: db-replica.internal: Name or service not known\n</aside>\n\n## Root cause\n\nThe DNS record was removed.\n"
	if got := signatureTexts(t, "export.md", doc); len(got) != 1 || !strings.Contains(got[0], "UnknownHostException: db-replica.internal") {
		t.Errorf("signatures %q, want the callout's error", got)
	}
}

// A log line pasted inside a paragraph, on the line after words that
// lead in to it ("... ended with"), is a signature; a line of prose after
// them is not.
func TestLogLineInsideAParagraphAfterALeadIn(t *testing.T) {
	doc := "INCIDENT ID: INC-2020-0611\nTITLE: workers cannot connect to the database\n\nSUMMARY:\nThe traceback from the pool ended with\npsycopg2.OperationalError: FATAL:  remaining connection slots are reserved for non-replication superuser connections\nQueries that already had a connection kept working.\n\nROOT CAUSE:\nmax_connections was still 100.\n"
	got := signatureTexts(t, "w.txt", doc)
	if len(got) != 1 || !strings.Contains(got[0], "remaining connection slots are reserved") {
		t.Errorf("signatures = %q, want the psycopg2 line", got)
	}
	prose := "# Workers\n\nThe pool got worse and ended with\nevery worker failing: nobody could log in for an hour.\n"
	if got := signatureTexts(t, "w.md", prose); len(got) != 0 {
		t.Errorf("prose after a lead-in: signatures %q, want none", got)
	}
}

// Inline code that the words before it introduce as what a program
// printed ("... and logged `The message is ...`") is the write-up's
// message, though it reads as a sentence and has no error word.
func TestInlineCodeAfterLoggedIsAMessage(t *testing.T) {
	doc := "# Notifications rejected by the producer\n\nA few events never reached the topic. The producer threw `RecordTooLargeException` and logged `The message is 4021051 bytes when serialized which is larger than 1048576, which is the value of the max.request.size configuration.` so about 4 MB against the 1 MB default.\n\nWe raised `max.request.size` for this producer.\n"
	got := signatureTexts(t, "w.md", doc)
	if len(got) != 1 || !strings.Contains(got[0], "bytes when serialized which is larger than") {
		t.Errorf("signatures = %q, want the producer's message", got)
	}
}
