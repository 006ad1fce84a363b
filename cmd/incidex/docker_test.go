package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// image is what the Dockerfile's final stage says about how incidex runs.
type image struct {
	env         map[string]string
	uid, gid    uint32
	entrypoint  []string
	cmd         []string
	healthcheck []string
	dataChown   string // the --chown of the COPY that creates the data directory
}

func readDockerfile(t *testing.T) image {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(string(b), "\\\n", " ")
	stages := strings.Split(src, "\nFROM ")
	final := stages[len(stages)-1]
	im := image{env: map[string]string{}}
	jsonArgs := func(s string) []string {
		var a []string
		if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &a); err != nil {
			t.Fatalf("Dockerfile: %q is not a JSON argument list", s)
		}
		return a
	}
	var copies []string
	for _, l := range strings.Split(final, "\n") {
		word, rest, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch word {
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				im.env[k] = v
			}
		case "USER":
			u, g, _ := strings.Cut(rest, ":")
			uid, _ := strconv.Atoi(u)
			gid, _ := strconv.Atoi(g)
			im.uid, im.gid = uint32(uid), uint32(gid)
		case "ENTRYPOINT":
			im.entrypoint = jsonArgs(rest)
		case "CMD":
			im.cmd = jsonArgs(rest)
		case "HEALTHCHECK":
			_, c, _ := strings.Cut(rest, " CMD ")
			im.healthcheck = jsonArgs(c)
		case "COPY":
			copies = append(copies, rest)
		}
	}
	for _, c := range copies {
		f := strings.Fields(c)
		if f[len(f)-1] != im.env["INCIDEX_DATA"] {
			continue
		}
		for _, a := range f {
			if v, ok := strings.CutPrefix(a, "--chown="); ok {
				im.dataChown = v
			}
		}
	}
	if im.uid == 0 || len(im.entrypoint) == 0 || im.env["INCIDEX_DATA"] == "" {
		t.Fatalf("Dockerfile: no USER, ENTRYPOINT or INCIDEX_DATA in the final stage: %+v", im)
	}
	return im
}

// TestDockerImageStartsOnAFreshVolume runs the image's entrypoint command
// line as the image's user, with the image's environment, against a fresh
// data directory made as the image makes it, inside a root-owned
// directory (what a new named volume is). It starts, generates its tokens
// once, answers the health check, and refuses the webhook without a token.
func TestDockerImageStartsOnAFreshVolume(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs the binary as the image's uid: needs root")
	}
	im := readDockerfile(t)
	if want := fmt.Sprintf("%d:%d", im.uid, im.gid); im.dataChown != want {
		t.Fatalf("the Dockerfile does not create %s owned by its user %s (COPY --chown=%q)", im.env["INCIDEX_DATA"], want, im.dataChown)
	}
	bin := binary(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, int(im.uid), int(im.gid)); err != nil {
		t.Fatal(err)
	}
	// The image listens on all interfaces; port 0 here, as other tests
	// and processes share this machine.
	host, _, _ := strings.Cut(im.env["INCIDEX_ADDR"], ":")
	imageCmd := func(addr string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		for k, v := range im.env {
			switch k {
			case "INCIDEX_DATA":
				v = data
			case "INCIDEX_ADDR":
				v = addr
			}
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: im.uid, Gid: im.gid}}
		return cmd
	}
	start := func() (*exec.Cmd, string, string) {
		t.Helper()
		cmd := imageCmd(host+":0", append(im.entrypoint[1:], im.cmd...)...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		var before strings.Builder
		sc := bufio.NewScanner(stderr)
		done := make(chan string, 1)
		go func() {
			for sc.Scan() {
				if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
					done <- m[1]
					_, _ = io.Copy(io.Discard, stderr)
					return
				}
				before.WriteString(sc.Text() + "\n")
			}
			close(done)
		}()
		select {
		case u, ok := <-done:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("the image's command exited: %v\n%s", cmd.ProcessState, before.String())
			}
			return cmd, u, before.String()
		case <-time.After(60 * time.Second):
			t.Fatal("the image's command did not start")
		}
		return nil, "", ""
	}
	cmd, url, out := start()
	tok := regexp.MustCompile(`INCIDEX_INGEST_TOKEN=([0-9a-f]{48})`).FindStringSubmatch(out)
	if tok == nil || !strings.Contains(out, "INCIDEX_ADMIN_TOKEN=") {
		t.Fatalf("first start printed no generated tokens:\n%s", out)
	}
	post := func(token string) int {
		req, _ := http.NewRequest("POST", url+"/ingest/v1/text", strings.NewReader(e2eLine))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(""); s != 401 {
		t.Errorf("webhook without a token = %d, want 401", s)
	}
	if s := post(tok[1]); s != 200 {
		t.Errorf("webhook with the generated token = %d, want 200", s)
	}
	port := url[strings.LastIndexByte(url, ':')+1:]
	if len(im.healthcheck) > 0 {
		hc := imageCmd(host+":"+port, im.healthcheck[1:]...)
		if out, err := hc.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("HEALTHCHECK %q: %v %s", im.healthcheck, err, out)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()

	// The second start uses the stored tokens and prints none.
	_, _, out = start()
	if strings.Contains(out, tok[1]) || !strings.Contains(out, "using the tokens generated at the first start") {
		t.Errorf("second start:\n%s", out)
	}

	// Without the image's chown, the volume is root's: a plain message.
	rootOwned := filepath.Join(root, "root-owned")
	if err := os.Mkdir(rootOwned, 0o755); err != nil {
		t.Fatal(err)
	}
	data = rootOwned
	r, err := imageCmd(host+":0", append(im.entrypoint[1:], im.cmd...)...).CombinedOutput()
	want := fmt.Sprintf("data directory %s: permission denied (running as uid %d)", rootOwned, im.uid)
	if err == nil || !strings.Contains(string(r), want) {
		t.Errorf("on a root-owned volume: %v %s, want %q", err, r, want)
	}
}
