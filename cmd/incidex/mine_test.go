package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incidex/incidex/patterns"
)

const mineInput = `E0412 03:12:45.120931    2211 kubelet.go:2855] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active 3m5.2s ago; threshold is 3m0s"
dial tcp 10.43.0.1:443: i/o timeout
E0412 03:13:45.120931    2211 kubelet.go:2855] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active 4m1s ago; threshold is 3m0s"
dial tcp 10.43.9.7:443: i/o timeout
dial tcp 10.43.2.2:443: i/o timeout
`

func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code := run(context.Background(), args, e)
	return code, out.String(), errOut.String()
}

func TestMineJSON(t *testing.T) {
	code, out, stderr := runIn(t, mineInput, "mine", "--json", "-")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var lines []mineLine
	var summary struct {
		Clusters []mineCluster `json:"clusters"`
	}
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"clusters"`) {
			if err := json.Unmarshal(sc.Bytes(), &summary); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if summary.Clusters != nil {
			t.Fatalf("line after the summary: %s", sc.Text())
		}
		var l mineLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v in %s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) != 5 {
		t.Fatalf("%d line objects, want 5:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if l.Line != i+1 || l.Cluster == "" || l.Template == "" {
			t.Errorf("line object %d = %+v", i+1, l)
		}
	}
	if lines[1].Cluster != lines[3].Cluster || lines[0].Cluster != lines[2].Cluster || lines[0].Cluster == lines[1].Cluster {
		t.Errorf("clusters of the lines = %v, want lines 1,3 and 2,4,5 together", lines)
	}
	want := []mineCluster{
		{Cluster: lines[1].Cluster, Template: "dial tcp <ip>:443: i/o timeout", Size: 3},
		{Cluster: lines[0].Cluster, Template: `"Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active <duration> ago; threshold is <duration>"`, Size: 2},
	}
	if len(summary.Clusters) != len(want) {
		t.Fatalf("summary = %+v, want %+v", summary.Clusters, want)
	}
	for i := range want {
		if summary.Clusters[i] != want[i] {
			t.Errorf("summary[%d] = %+v, want %+v", i, summary.Clusters[i], want[i])
		}
	}
}

func TestMineText(t *testing.T) {
	code, out, stderr := runIn(t, mineInput, "mine")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	head, tail, ok := strings.Cut(out, "\n\n")
	if !ok {
		t.Fatalf("no blank line before the summary:\n%s", out)
	}
	rows := strings.Split(strings.TrimSpace(head), "\n")
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5:\n%s", len(rows), out)
	}
	f := strings.Split(rows[1], "\t")
	if len(f) != 3 || f[0] != "2" || f[2] != "dial tcp <ip>:443: i/o timeout" {
		t.Errorf("row 2 = %q, want 2<TAB><id><TAB>dial tcp <ip>:443: i/o timeout", rows[1])
	}
	if !strings.HasPrefix(tail, "2 clusters\n3\t"+f[1]+"\tdial tcp <ip>:443: i/o timeout\n") {
		t.Errorf("summary = %q", tail)
	}
}

func TestMineErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"file argument", "", []string{"mine", "some.log"}},
		{"bad flag", "", []string{"mine", "--nope", "-"}},
		{"bad max", "", []string{"mine", "--max-clusters", "0", "-"}},
		{"line too long", strings.Repeat("x", maxStreamLine+1) + "\n", []string{"mine", "-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, stderr := runIn(t, tt.stdin, tt.args...); code != exitError || stderr == "" {
				t.Errorf("exit %d, stderr %q; want %d and a message", code, stderr, exitError)
			}
		})
	}
	if code, out, _ := runIn(t, "", "mine", "--json", "-"); code != exitOK || out != `{"clusters":[]}`+"\n" {
		t.Errorf("empty input: exit %d, output %q", code, out)
	}
}

// TestMineFinal: with --final, and by default for lines within the window,
// every line is printed with the cluster it ended in, so lines that a later
// merge joined share one ID, which the summary lists; with --window 0 the
// first lines keep the IDs they were printed with.
func TestMineFinal(t *testing.T) {
	in := "session opened for user cyrus by (uid=0)\nsession opened for user news by (uid=0)\nsession opened for user test by (uid=0)\n"
	ids := func(args ...string) (map[string]bool, string) {
		code, out, stderr := runIn(t, in, args...)
		if code != exitOK {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		seen := map[string]bool{}
		var summary string
		for _, row := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(row, `{"clusters"`) {
				summary = row
				continue
			}
			var l mineLine
			if err := json.Unmarshal([]byte(row), &l); err != nil {
				t.Fatalf("%v in %s", err, row)
			}
			seen[l.Cluster] = true
		}
		return seen, summary
	}
	if got, _ := ids("mine", "--json", "--window", "0", "-"); len(got) != 2 {
		t.Errorf("--window 0: %d cluster IDs, want 2 (the third line merged the first two)", len(got))
	}
	for _, args := range [][]string{{"mine", "--json", "--final", "-"}, {"mine", "--json", "-"}} {
		got, summary := ids(args...)
		if len(got) != 1 {
			t.Fatalf("%v: %d cluster IDs, want 1", args, len(got))
		}
		for id := range got {
			if !strings.Contains(summary, `"cluster":"`+id+`"`) {
				t.Errorf("%v: ID %s not in the summary %s", args, id, summary)
			}
		}
	}
	// A window of 2 prints the first two before the third merges them.
	if got, _ := ids("mine", "--json", "--window", "2", "-"); len(got) != 2 {
		t.Errorf("--window 2: %d cluster IDs, want 2", len(got))
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMineLiveInputIsNotHeldBack: lines held for the window are printed
// once the input pauses, so a live tail shows them within about a second.
func TestMineLiveInputIsNotHeldBack(t *testing.T) {
	pr, pw := io.Pipe()
	var out lockedBuffer
	m := patterns.NewMiner(patterns.MinerOptions{})
	done := make(chan error, 1)
	go func() { done <- mineStream(t.Context(), pr, &out, m, true, defaultMineWindow) }()
	if _, err := io.WriteString(pw, "disk quota exceeded on volume vol-17\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(mineIdle + 3*time.Second)
	for !strings.Contains(out.String(), `"line":1`) {
		if time.Now().After(deadline) {
			t.Fatalf("line 1 not printed %s after the input paused; output %q", mineIdle+3*time.Second, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
