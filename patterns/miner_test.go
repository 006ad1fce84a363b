package patterns

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// groupingAccuracy is the LogHub benchmark's measure: a line counts when
// the lines of its predicted cluster are exactly the lines of its event.
func groupingAccuracy(pred, truth []string) float64 {
	byPred := map[string][]int{}
	byTruth := map[string]int{}
	for i := range pred {
		byPred[pred[i]] = append(byPred[pred[i]], i)
		byTruth[truth[i]]++
	}
	ok := 0
	for _, idx := range byPred {
		ev := truth[idx[0]]
		if byTruth[ev] != len(idx) {
			continue
		}
		same := true
		for _, i := range idx {
			same = same && truth[i] == ev
		}
		if same {
			ok += len(idx)
		}
	}
	return float64(ok) / float64(len(pred))
}

type expectedEvent struct {
	File  string `json:"file"`
	Event string `json:"event"`
	Lines []int  `json:"lines"`
}

// goldenCluster is one line of a miner golden file.
type goldenCluster struct {
	Template string `json:"template"`
	Size     int64  `json:"size"`
	Lines    []int  `json:"lines"`
}

func readExpected(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("testdata/miner/expected.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	labels := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expectedEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		for _, n := range e.Lines {
			for len(labels[e.File]) < n {
				labels[e.File] = append(labels[e.File], "")
			}
			labels[e.File][n-1] = e.Event
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return labels
}

// TestMinerCorpus mines each labelled corpus in testdata/miner, checks the
// grouping accuracy against expected.jsonl and the clusters against the
// golden files (UPDATE_GOLDEN=1 rewrites them).
func TestMinerCorpus(t *testing.T) {
	labels := readExpected(t)
	files, _ := filepath.Glob("testdata/miner/*.log")
	if len(files) == 0 {
		t.Fatal("no corpus in testdata/miner")
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			lines := readLines(t, path)
			truth := labels[name]
			if len(truth) != len(lines) {
				t.Fatalf("expected.jsonl labels %d lines of %s, the file has %d", len(truth), name, len(lines))
			}
			m := NewMiner(MinerOptions{})
			ids := make([]string, len(lines))
			for i, l := range lines {
				c, _ := m.Add(l)
				ids[i] = c.ID
			}
			pred := make([]string, len(ids))
			members := map[string][]int{}
			for i, id := range ids {
				c, ok := m.Resolve(id)
				if !ok {
					t.Fatalf("Resolve(%q) of line %d: no cluster", id, i+1)
				}
				pred[i] = c.ID
				members[c.ID] = append(members[c.ID], i+1)
			}
			ga := groupingAccuracy(pred, truth)
			t.Logf("%s: %d lines, %d clusters, grouping accuracy %.3f", name, len(lines), m.Len(), ga)
			if ga < 0.95 {
				t.Errorf("grouping accuracy %.3f, want at least 0.95", ga)
			}
			var got []goldenCluster
			for _, c := range m.Clusters() {
				got = append(got, goldenCluster{Template: c.Template, Size: c.Size, Lines: members[c.ID]})
			}
			checkGolden(t, filepath.Join("testdata/miner/golden", strings.TrimSuffix(name, ".log")+".golden"), got)
		})
	}
}

func checkGolden(t *testing.T, path string, got []goldenCluster) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, g := range got {
		if err := enc.Encode(g); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("clusters differ from %s (UPDATE_GOLDEN=1 rewrites it):\n%s", path, lineDiff(string(want), b.String()))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

func TestMinerTemplates(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{
			name:  "ip and port masked, well-known port kept",
			lines: []string{"dial tcp 10.43.0.1:443: i/o timeout", "dial tcp 10.43.7.9:443: i/o timeout"},
			want:  "dial tcp <ip>:443: i/o timeout",
		},
		{
			name: "word that varies becomes <*>",
			lines: []string{
				"Invalid user webmaster from 173.234.31.186",
				"Invalid user admin123 from 52.80.34.196",
			},
			want: "Invalid user <*> from <ip>",
		},
		{
			name: "klog prefix stripped, key=value masked",
			lines: []string{
				`E0412 03:12:45.120931    2211 kubelet.go:2855] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active 3m5.2s ago; threshold is 3m0s"`,
				`E0412 03:14:45.120931    2211 kubelet.go:2855] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active 4m1s ago; threshold is 3m0s"`,
			},
			want: `"Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active <duration> ago; threshold is <duration>"`,
		},
		{
			name: "a number with a unit is one value",
			lines: []string{
				"Block broadcast_9 stored as values in memory (estimated size 8.8 KB, free 14.0 KB)",
				"Block broadcast_0 stored as values in memory (estimated size 384.0 B, free 317.5 KB)",
			},
			want: "Block <*> stored as values in memory (estimated size <*>, free <num> KB)",
		},
		{
			name: "optional stretch becomes a gap",
			lines: []string{
				"proxy.example.com:5070 close, 0 bytes sent, 0 bytes received, lifetime 00:01",
				"proxy.example.com:5070 close, 451 bytes sent, 18846 bytes (18.4 KB) received, lifetime <1 sec",
				"proxy.example.com:5070 close, 1190 bytes (1.16 KB) sent, 1671 bytes (1.63 KB) received, lifetime 00:02",
			},
			want: "proxy.example.com:<port> close, <num> bytes <*> sent, <num> bytes <*> received, lifetime <*>",
		},
		{
			name:  "line without tokens",
			lines: []string{"----", "----"},
			want:  "----",
		},
		{
			name:  "blank line",
			lines: []string{"   ", "\t"},
			want:  "<blank>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMiner(MinerOptions{})
			var c Cluster
			for _, l := range tt.lines {
				c, _ = m.Add(l)
			}
			if c.Template != tt.want {
				t.Errorf("template after %q = %q, want %q", tt.lines, c.Template, tt.want)
			}
			if m.Len() != 1 {
				t.Errorf("%d clusters, want 1: %+v", m.Len(), m.Clusters())
			}
			if c.Size != int64(len(tt.lines)) {
				t.Errorf("size %d, want %d", c.Size, len(tt.lines))
			}
		})
	}
}

// TestMinerKeepsApart: lines that differ by one fixed word are different
// events, and so are lines whose words differ in more than a few places.
func TestMinerKeepsApart(t *testing.T) {
	tests := []struct {
		name string
		a, b string
	}{
		{"first word", "boot (command 1911)", "wait (command 1975)"},
		{"state word", "[instance: b9000564-fe1a-409b-b8cc-1e88b294cd1d] VM Started (Lifecycle Event)", "[instance: b9000564-fe1a-409b-b8cc-1e88b294cd1d] VM Paused (Lifecycle Event)"},
		{"bytes and values", "Block rdd_2_2 stored as bytes in memory (estimated size 850.0 B, free 320.3 KB)", "Block rdd_2_3 stored as values in memory (estimated size 930.0 B, free 321.2 KB)"},
		{"suffix", "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.1.2.3", "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.1.2.3  user=root"},
		{"short", "startAnimation begin", "startAnimation end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMiner(MinerOptions{})
			a, _ := m.Add(tt.a)
			b, isNew := m.Add(tt.b)
			if !isNew || a.ID == b.ID {
				t.Errorf("Add(%q) joined %q, want a cluster of its own", tt.b, a.Template)
			}
		})
	}
}

// TestMinerSiblings: three templates that differ only by one word at the
// same position are merged, and their IDs resolve to the merged cluster.
func TestMinerSiblings(t *testing.T) {
	m := NewMiner(MinerOptions{})
	var ids []string
	for _, u := range []string{"cyrus", "news", "test"} {
		c, _ := m.Add("session opened for user " + u + " by (uid=0)")
		ids = append(ids, c.ID)
	}
	if m.Len() != 1 {
		t.Fatalf("%d clusters, want 1: %+v", m.Len(), m.Clusters())
	}
	c := m.Clusters()[0]
	if want := "session opened for user <*> by (uid=<num>)"; c.Template != want || c.Size != 3 {
		t.Errorf("cluster %q size %d, want %q size 3", c.Template, c.Size, want)
	}
	for _, id := range ids {
		if r, ok := m.Resolve(id); !ok || r.ID != c.ID {
			t.Errorf("Resolve(%q) = %+v, %v; want %s", id, r, ok, c.ID)
		}
	}
}

func TestMinerSeed(t *testing.T) {
	m := NewMiner(MinerOptions{})
	if err := m.Seed("apiserver-timeout", "dial tcp <ip>:443: i/o timeout"); err != nil {
		t.Fatal(err)
	}
	if err := m.Seed("image-pull", `Failed to pull image <*>: <*> not found`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, id string }{
		{"dial tcp 10.43.0.1:443: i/o timeout", "apiserver-timeout"},
		{`E0412 03:12:45.120931 2211 log.go:32] dial tcp 10.96.0.1:443: i/o timeout`, "apiserver-timeout"},
		{`Failed to pull image "nginx:1.25": rpc error: code = NotFound desc = docker.io/library/nginx:1.25 not found`, "image-pull"},
	} {
		c, isNew := m.Add(tt.line)
		if c.ID != tt.id || !c.Seeded || isNew {
			t.Errorf("Add(%q) = %+v, new %v; want seeded cluster %s", tt.line, c, isNew, tt.id)
		}
	}
	c, _ := m.Resolve("apiserver-timeout")
	if c.Size != 2 || c.Template != "dial tcp <ip>:443: i/o timeout" {
		t.Errorf("seeded cluster = %+v, want size 2 and its template unchanged", c)
	}
	// A line the seed does not explain starts its own cluster.
	if c, isNew := m.Add("dial tcp 10.43.0.1:6443: connect: connection refused"); !isNew || c.Seeded {
		t.Errorf("Add(other) = %+v, new %v; want a new unseeded cluster", c, isNew)
	}
	for _, bad := range []struct{ id, tmpl string }{
		{"", "x"},
		{"apiserver-timeout", "anything"},
		{"x", "dial <ipp>"},
		{"y", "   "},
	} {
		if err := m.Seed(bad.id, bad.tmpl); err == nil {
			t.Errorf("Seed(%q, %q) = nil, want an error", bad.id, bad.tmpl)
		}
	}
}

func TestMinerMatchChangesNothing(t *testing.T) {
	m := NewMiner(MinerOptions{})
	m.Add("Invalid user webmaster from 173.234.31.186")
	before := m.Snapshot()
	c, ok := m.Match("Invalid user admin123 from 52.80.34.196")
	if !ok || c.Template != "Invalid user webmaster from <ip>" {
		t.Errorf("Match = %+v, %v; want the webmaster template as it is", c, ok)
	}
	if _, ok := m.Match("something else entirely"); ok {
		t.Error("Match(unknown) = true, want false")
	}
	if after := m.Snapshot(); !slices.Equal(before, after) {
		t.Errorf("Match changed the miner: %+v -> %+v", before, after)
	}
}

func TestMinerEviction(t *testing.T) {
	m := NewMiner(MinerOptions{MaxClusters: 3})
	if err := m.Seed("known", "known failure <*>"); err != nil {
		t.Fatal(err)
	}
	first, _ := m.Add("alpha failed to start")
	for _, l := range []string{"beta is down", "gamma lost its lease", "delta ran out of disk"} {
		m.Add(l)
	}
	if got := m.Len(); got != 4 { // three unseeded and the seed
		t.Errorf("Len = %d, want 4", got)
	}
	if _, ok := m.Resolve(first.ID); ok {
		t.Errorf("least recently used cluster %q still there", first.Template)
	}
	if _, ok := m.Resolve("known"); !ok {
		t.Error("seeded cluster was evicted")
	}
	// Using a cluster keeps it.
	m.Add("beta is down")
	m.Add("epsilon timed out")
	if _, ok := m.Match("beta is down"); !ok {
		t.Error("recently used cluster was evicted")
	}
	for i := range 1000 {
		m.Add(fmt.Sprintf("unique message number %c%c%c here", 'a'+i%26, 'a'+i/26%26, 'a'+i/676))
	}
	if got := m.Len(); got > 4 {
		t.Errorf("Len = %d after many lines, want at most 4", got)
	}
}

func TestMinerSnapshotRestore(t *testing.T) {
	m := NewMiner(MinerOptions{})
	if err := m.Seed("known", "dial tcp <ip>:443: i/o timeout"); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, "testdata/miner/kubelet.log")
	for _, l := range lines {
		m.Add(l)
	}
	snap := m.Snapshot()
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back []Cluster
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	r := NewMiner(MinerOptions{})
	if err := r.Restore(back); err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshot(); !slices.Equal(got, snap) {
		t.Fatalf("Restore(Snapshot()) = %+v, want %+v", got, snap)
	}
	// The restored miner puts the same lines in the same clusters.
	for _, l := range lines {
		want, _ := m.Match(l)
		got, ok := r.Match(l)
		if !ok || got.ID != want.ID {
			t.Fatalf("after restore Match(%q) = %+v, %v; want %s", l, got, ok, want.ID)
		}
	}
	for _, bad := range [][]Cluster{
		{{ID: "", Template: "x"}},
		{{ID: "a", Template: "x"}, {ID: "a", Template: "y"}},
		{{ID: "a", Template: ""}},
		{{ID: "a", Template: "x", Size: -1}},
	} {
		if err := r.Restore(bad); err == nil {
			t.Errorf("Restore(%+v) = nil, want an error", bad)
		}
	}
	if got := r.Snapshot(); !slices.Equal(got, snap) {
		t.Error("a failed Restore changed the miner")
	}
	// Restoring more than MaxClusters keeps the largest.
	small := NewMiner(MinerOptions{MaxClusters: 2})
	if err := small.Restore(snap); err != nil {
		t.Fatal(err)
	}
	got := small.Snapshot()
	var unseeded []Cluster
	for _, c := range snap {
		if !c.Seeded {
			unseeded = append(unseeded, c)
		}
	}
	if len(got) != 3 || got[0] != unseeded[0] || got[1] != unseeded[1] {
		t.Errorf("Restore into MaxClusters 2 kept %+v, want the seed and the 2 largest", got)
	}
}

// TestMinerConcurrent adds lines from many goroutines (run with -race) and
// checks that every line is counted once.
func TestMinerConcurrent(t *testing.T) {
	lines := readLines(t, "testdata/miner/containerd.log")
	m := NewMiner(MinerOptions{})
	const workers = 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				m.Add(lines[(i+w*17)%len(lines)])
				if i%10 == 0 {
					m.Match(lines[i])
					m.Clusters()
				}
			}
		}()
	}
	wg.Wait()
	var total int64
	for _, c := range m.Clusters() {
		total += c.Size
	}
	if want := int64(workers * len(lines)); total != want {
		t.Errorf("sizes add up to %d, want %d", total, want)
	}
}

// TestMinerIDsStable: the same lines give the same IDs in a new miner.
func TestMinerIDsStable(t *testing.T) {
	lines := readLines(t, "testdata/miner/app.log")
	run := func() []string {
		m := NewMiner(MinerOptions{})
		var ids []string
		for _, l := range lines {
			c, _ := m.Add(l)
			ids = append(ids, c.ID)
		}
		return ids
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Error("IDs differ between two runs over the same lines")
	}
}

// TestMinerBoundedWork: a stream of lines that all start new templates,
// and very long lines, cost bounded time, and the miner stays within
// MaxClusters.
func TestMinerBoundedWork(t *testing.T) {
	m := NewMiner(MinerOptions{MaxClusters: 500})
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon")
	start := time.Now()
	for i := range 20000 {
		var b strings.Builder
		for j := range 3 + i%12 {
			b.WriteString(words[(i*7+j*13+i/20)%len(words)])
			b.WriteByte(' ')
			b.WriteString(words[(i/len(words)+j)%len(words)])
			b.WriteByte(' ')
		}
		m.Add(b.String())
	}
	long := strings.Repeat("open /run/flannel/subnet.env: no such file or directory 10.43.0.1:443 ", 1<<20/70)
	m.Add(long)
	m.Add(long + " more")
	if got := m.Len(); got > 500 {
		t.Errorf("Len = %d, want at most MaxClusters 500", got)
	}
	// A quadratic slip would take minutes; the plain run takes half a
	// second. Under -race (ten times slower, and sharing two cores with
	// the other packages' tests in CI) a time says nothing.
	if d := time.Since(start); d > 20*time.Second && !raceEnabled {
		t.Errorf("took %v, want well under 20s", d)
	}
}
