package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid the permission tests run as when the tests run as root
// (root passes every permission check, so they run the binary as nobody).
const nobody = 65534

// asUser runs incidex as a user without write access to what root
// created: the binary as uid nobody when the test runs as root, else
// in-process (this user's permission bits apply).
func asUser(t *testing.T, dir string, args ...string) (res result, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		return incidex(t, dir, "", args...), os.Geteuid()
	}
	bin := binary(t)
	_ = os.Chmod(filepath.Dir(bin), 0o755)
	cmd := exec.Command(bin, append(args, "--data", dir)...)
	cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}, nobody
}

// chmodTree sets every directory to dirMode and file to fileMode, and puts
// them back writable when the test ends so that t.TempDir can remove them.
func chmodTree(t *testing.T, root string, dirMode, fileMode os.FileMode) {
	t.Helper()
	walk := func(dm, fm os.FileMode) error {
		return filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if info.IsDir() {
				return os.Chmod(p, dm)
			}
			return os.Chmod(p, fm)
		})
	}
	t.Cleanup(func() { _ = walk(0o755, 0o644) })
	if err := walk(dirMode, fileMode); err != nil {
		t.Fatal(err)
	}
	// The test's own temporary parent is 0700: let the other user in.
	if err := os.Chmod(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A data directory this user cannot write (a read-only mount, another
// user's files) still answers every lookup, and nothing in it changes.
func TestReadOnlyDataDirectory(t *testing.T) {
	dir := starterDir(t)
	chmodTree(t, dir, 0o555, 0o444)
	before, _ := os.ReadDir(dir)
	for _, args := range [][]string{
		{"list"},
		{"show", "oom-killed"},
		{"search", "subnet.env"},
		{"match", "subnet.env: no such file"},
		{"check"},
		{"feedback", "list"},
	} {
		r, _ := asUser(t, dir, args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%s on a read-only data directory: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	after, _ := os.ReadDir(dir)
	if fmt.Sprint(names(before)) != fmt.Sprint(names(after)) {
		t.Errorf("the read-only data directory changed: %v, then %v", names(before), names(after))
	}
	// A write says what is wrong.
	r, uid := asUser(t, dir, "ingest", ".")
	want := fmt.Sprintf("incidex ingest: data directory %s: permission denied (running as uid %d)", dir, uid)
	if r.code != 2 || strings.TrimSpace(r.stderr) != want {
		t.Errorf("ingest on a read-only data directory: exit %d %q, want 2 %q", r.code, r.stderr, want)
	}
}

func TestDataDirectoryPermissionDenied(t *testing.T) {
	dir := starterDir(t)
	chmodTree(t, dir, 0o755, 0o644)
	if err := os.Chmod(dir, 0o700); err != nil { // its owner only
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"list", "match"} {
		args := []string{cmd}
		if cmd == "match" {
			args = append(args, "x")
		}
		r, uid := asUser(t, dir, args...)
		want := fmt.Sprintf("incidex %s: data directory %s: permission denied (running as uid %d)", cmd, dir, uid)
		if r.code != 2 || strings.TrimSpace(r.stderr) != want {
			t.Errorf("%s: exit %d %q, want 2 %q", cmd, r.code, r.stderr, want)
		}
	}
	// A new data directory inside one this user cannot write.
	sub := filepath.Join(dir, "new")
	r, uid := asUser(t, sub, "list")
	if want := fmt.Sprintf("data directory %s: permission denied (running as uid %d)", sub, uid); r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("list on %s: exit %d %q, want %q", sub, r.code, r.stderr, want)
	}
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
