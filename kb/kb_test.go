package kb_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/kb/kbtest"
)

var ctx = context.Background()

func write(t *testing.T, k *kb.KB, path string, incs ...*kb.Incident) {
	t.Helper()
	if err := k.Write(ctx, kb.Write{Source: kb.Source{Path: path, Hash: path}, Incidents: incs}); err != nil {
		t.Fatalf("Write(%s): %v", path, err)
	}
}

func searchIDs(t *testing.T, k *kb.KB, q string) []string {
	t.Helper()
	res, err := k.Search(ctx, kb.SearchRequest{Query: q, Size: 50})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestWriteGetRoundTrip(t *testing.T) {
	k := kbtest.Open(t)
	inc := kbtest.Incident("a", "Alpha fails", "dial tcp 10.0.0.1:443: i/o timeout")
	inc.Superseded = []string{"first guess"}
	write(t, k, "a.md", inc)
	got, err := k.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Alpha fails" || got.Superseded[0] != "first guess" || len(got.Signatures) != 1 || got.CreatedAt.IsZero() {
		t.Errorf("Get = %+v", got)
	}
	if _, err := k.Get(ctx, "nope"); !errors.Is(err, kb.ErrNotFound) {
		t.Errorf("Get(nope) = %v, want ErrNotFound", err)
	}
}

func TestRewriteUpdatesWithoutDuplicates(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "f.txt", kbtest.Incident("IL-1", "one", "x failed"), kbtest.Incident("IL-2", "two", "y failed"))
	first, _ := k.Get(ctx, "IL-1")
	// The file changes: IL-1 is edited, IL-2 removed, IL-3 added.
	write(t, k, "f.txt", kbtest.Incident("IL-1", "one, edited", "x failed"), kbtest.Incident("IL-3", "three", "z failed"))
	list, err := k.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "IL-1,IL-3" {
		t.Errorf("List = %v, want IL-1,IL-3", ids)
	}
	got, _ := k.Get(ctx, "IL-1")
	if got.Title != "one, edited" || !got.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("IL-1 = %q created %v, want the edit with the original creation time %v", got.Title, got.CreatedAt, first.CreatedAt)
	}
	if ids := searchIDs(t, k, "two"); len(ids) != 0 {
		t.Errorf("search finds removed IL-2: %v", ids)
	}
}

func TestConflictingSources(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("same", "from a", ""))
	err := k.Write(ctx, kb.Write{Source: kb.Source{Path: "b.md", Hash: "b"}, Incidents: []*kb.Incident{kbtest.Incident("same", "from b", "")}})
	if !errors.Is(err, kb.ErrConflict) || !strings.Contains(err.Error(), "a.md") {
		t.Errorf("Write from another source = %v, want ErrConflict naming a.md", err)
	}
	got, _ := k.Get(ctx, "same")
	if got.Title != "from a" {
		t.Errorf("conflicting write changed the incident: %q", got.Title)
	}
}

func TestValidation(t *testing.T) {
	k := kbtest.Open(t)
	bad := kbtest.Incident("x", "", "")
	err := k.Write(ctx, kb.Write{Source: kb.Source{Path: "x.md"}, Incidents: []*kb.Incident{bad}})
	var ve *kb.ValidationError
	if !errors.As(err, &ve) || ve.Field != "title" {
		t.Errorf("Write(no title) = %v, want a ValidationError on title", err)
	}
	if n, _ := k.Count(ctx); n != 0 {
		t.Errorf("a failed write left %d incidents", n)
	}
}

func TestSearchFindsLogPieces(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "f.md", kbtest.Incident("flannel", "Flannel sandbox failures", `plugin type="flannel" failed (add): failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory`))
	write(t, k, "c.md", kbtest.Incident("calico", "Calico cannot reach the API", `error getting ClusterInformation: Get "https://10.43.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.43.0.1:443: i/o timeout`))
	write(t, k, "o.md", kbtest.Incident("other", "Disk full on node", `write /var/lib/containerd: no space left on device`))
	for q, want := range map[string]string{
		"subnet.env": "flannel", "/run/flannel/subnet.env": "flannel", "10.43.0.1": "calico",
		"i/o timeout": "calico", "clusterinformation": "calico", "cluster information": "calico",
		"FailedCreatePodSandBox flannel": "flannel", "no space left": "other",
	} {
		if ids := searchIDs(t, k, q); len(ids) == 0 || ids[0] != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ids, want)
		}
	}
	res, err := k.Search(ctx, kb.SearchRequest{Query: "subnet.env"})
	if err != nil {
		t.Fatal(err)
	}
	var frag string
	for _, fs := range res.Hits[0].Fragments {
		frag += strings.Join(fs, " ")
	}
	if !strings.Contains(frag, kb.MarkStart+"subnet.env"+kb.MarkEnd) {
		t.Errorf("fragments %q do not mark subnet.env", frag)
	}
}

func TestSearchFiltersAndSyntax(t *testing.T) {
	k := kbtest.Open(t)
	a := kbtest.Incident("a", "timeout in alpha", "x timeout")
	a.Tags = []string{"dns"}
	write(t, k, "a.md", a)
	write(t, k, "b.md", kbtest.Incident("b", "timeout in beta", "y timeout"))
	if ids := searchIDs(t, k, "timeout tag:dns"); strings.Join(ids, ",") != "a" {
		t.Errorf("Search(timeout tag:dns) = %v, want [a]", ids)
	}
	_, err := k.Search(ctx, kb.SearchRequest{Query: `title:"unclosed`, Syntax: true})
	var ve *kb.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "bad query syntax") {
		t.Errorf("Search(bad syntax) = %v, want a ValidationError", err)
	}
	if _, err := k.Search(ctx, kb.SearchRequest{Query: "  "}); !errors.As(err, &ve) {
		t.Errorf("Search(empty) = %v, want a ValidationError", err)
	}
}

// TestIndexRepairAfterCrash simulates the two crash windows: SQLite written
// but the index not (a pending row survives), and an index entry whose
// incident is gone from SQLite. The next Open makes search agree with SQLite.
func TestIndexRepairAfterCrash(t *testing.T) {
	dir := t.TempDir()
	k, err := kb.Open(ctx, kb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	write(t, k, "a.md", kbtest.Incident("keep", "kept incident", "alpha failed"))
	write(t, k, "b.md", kbtest.Incident("ghost", "ghost incident", "beta failed"))
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	// Behind the KB's back: delete "ghost" from SQLite only, and add "late"
	// to SQLite only, with the pending row a crash would leave.
	db, err := sql.Open("sqlite", dir+"/"+kb.DBFile)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "DELETE FROM incidents WHERE id = 'ghost'")
	mustExec(t, db, `INSERT INTO incidents (id, title, doc, hash, created_at, updated_at) VALUES ('late', 'late incident', '{"id":"late","title":"late incident","root_cause_status":"known"}', 'h', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')`)
	mustExec(t, db, "INSERT INTO index_pending (incident_id, seq) VALUES ('late', 99)")
	_ = db.Close()

	k = kbtest.OpenDir(t, dir)
	if ids := searchIDs(t, k, "late"); strings.Join(ids, ",") != "late" {
		t.Errorf("after reopen, search(late) = %v, want [late]", ids)
	}
	if ids := searchIDs(t, k, "ghost"); len(ids) != 0 {
		t.Errorf("after reopen, search(ghost) = %v, want nothing", ids)
	}
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestIndexLockedByAnotherOpener(t *testing.T) {
	dir := t.TempDir()
	kbtest.OpenDir(t, dir)
	_, err := kb.Open(ctx, kb.Options{Dir: dir, LockWait: 100e6})
	if !errors.Is(err, kb.ErrIndexLocked) {
		t.Fatalf("second Open = %v, want ErrIndexLocked", err)
	}
	k2, err := kb.Open(ctx, kb.Options{Dir: dir, LockWait: 100e6, IndexOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close()
	if !k2.IndexLocked() {
		t.Errorf("IndexLocked() = false, want true")
	}
	// Writes still land in SQLite, queued for the index holder.
	write(t, k2, "x.md", kbtest.Incident("x", "x", "x failed"))
	if _, err := k2.Search(ctx, kb.SearchRequest{Query: "x"}); !errors.Is(err, kb.ErrIndexLocked) {
		t.Errorf("Search without the index = %v, want ErrIndexLocked", err)
	}
}

func TestSyncPendingFromAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	holder := kbtest.OpenDir(t, dir)
	other, err := kb.Open(ctx, kb.Options{Dir: dir, LockWait: 100e6, IndexOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	write(t, other, "x.md", kbtest.Incident("written-elsewhere", "written elsewhere", "x failed"))
	_ = other.Close()
	n, err := holder.SyncPending(ctx)
	if err != nil || n != 1 {
		t.Fatalf("SyncPending = %d, %v; want 1", n, err)
	}
	if ids := searchIDs(t, holder, "elsewhere"); len(ids) != 1 {
		t.Errorf("search after sync = %v", ids)
	}
}

func TestReindex(t *testing.T) {
	k := kbtest.Open(t)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "alpha failed"))
	if err := k.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := searchIDs(t, k, "alpha"); len(ids) != 1 {
		t.Errorf("search after reindex = %v", ids)
	}
}

func TestDeleteAndGeneration(t *testing.T) {
	k := kbtest.Open(t)
	g0, _ := k.Generation(ctx)
	write(t, k, "a.md", kbtest.Incident("a", "alpha", "alpha failed"))
	g1, _ := k.Generation(ctx)
	if err := k.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	g2, _ := k.Generation(ctx)
	if !(g0 < g1 && g1 < g2) {
		t.Errorf("generations %d %d %d, want increasing", g0, g1, g2)
	}
	if err := k.Delete(ctx, "a"); !errors.Is(err, kb.ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if sigs, _ := k.Signatures(ctx); len(sigs) != 0 {
		t.Errorf("signatures survive their incident: %v", sigs)
	}
}

func TestMatcherFromKB(t *testing.T) {
	k := kbtest.Open(t)
	a := kbtest.Incident("a", "alpha", "dial tcp 10.43.0.1:443: i/o timeout while getting ClusterInformation")
	a.Runbook = []kb.Step{{Command: "kubectl -n <namespace> get pod <pod>"}}
	write(t, k, "a.md", a)
	m, err := k.Matcher(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	hits := m.Match(`E0412 1 x.go:1] "boom" err="dial tcp 10.96.0.1:443: i/o timeout while getting ClusterInformation" pod="kube-system/calico-node-x7k2p"`, kb.MatchOptions{Explain: true})
	if len(hits) != 1 || hits[0].Incident.ID != "a" || hits[0].Explain == nil {
		t.Fatalf("Match = %+v", hits)
	}
	steps := kb.FillRunbook(hits[0].Incident.Runbook, hits[0].Captures)
	if steps[0].Command != "kubectl -n kube-system get pod calico-node-x7k2p" {
		t.Errorf("filled runbook = %q", steps[0].Command)
	}
}
