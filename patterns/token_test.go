package patterns

import (
	"strings"
	"testing"
)

// render shows a tokenisation as words and <mask>{value} pairs.
func render(line string) string {
	var b strings.Builder
	for i, t := range Tokenize(line, nil) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if t.Kind == KindWord {
			b.WriteString(t.Text(line))
			continue
		}
		b.WriteString(t.Kind.Mask() + "{" + t.Text(line) + "}")
	}
	return b.String()
}

func TestTokenizeMasks(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := render(in); got != want {
			t.Errorf("Tokenize(%q)\n got %s\nwant %s", in, got, want)
		}
	}
	// IPs with and without port; well-known ports stay literal.
	f("dial tcp 10.43.0.1:443: i/o timeout", "dial tcp <ip>{10.43.0.1} 443 i/o timeout")
	f("read udp 10.244.1.5:43012->10.96.0.10:53: i/o timeout", "read udp <ip>{10.244.1.5} <port>{43012} <ip>{10.96.0.10} 53 i/o timeout")
	f("listen on [fd00::1]:6443 and fe80::1%eth0", "listen on <ipv6>{fd00::1} 6443 and <ipv6>{fe80::1%eth0}")
	// URLs split into host, port and path segments.
	f(`Get "https://10.96.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default"`,
		"Get https <ip>{10.96.0.1} 443 apis crd.projectcalico.org v1 clusterinformations default")
	// Paths are literal, split at '/'.
	f("open /run/flannel/subnet.env: no such file or directory", "open run flannel subnet.env no such file or directory")
	// Ids, UUIDs, hex, pod names, durations, sizes, timestamps.
	f(`sandbox "4f1c0a9be3d2c7a8b1e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8"`, "sandbox <hex>{4f1c0a9be3d2c7a8b1e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8}")
	f("podUID=2c1d1a3e-4b5f-4c6d-8e7f-9a0b1c2d3e4f", "podUID <uuid>{2c1d1a3e-4b5f-4c6d-8e7f-9a0b1c2d3e4f}")
	f("pod coredns-5dd5756b68-gt7xt and kube-flannel-ds-7xk2p", "pod <pod>{coredns-5dd5756b68-gt7xt} and <pod>{kube-flannel-ds-7xk2p}")
	f("valkey-0 node01 ip-10-0-1-23.ec2.internal", "<id>{valkey-0} <id>{node01} <id>{ip-10-0-1-23.ec2.internal}")
	f("waited 1m30s for 512Mi (x4 over 3m)", "waited <duration>{1m30s} for <size>{512Mi} <num>{x4} over <duration>{3m}")
	f("at 2024-04-12T03:12:45.120931Z and 03:12:45 on 2024-04-12", "at <time>{2024-04-12T03:12:45.120931Z} and <time>{03:12:45} on <time>{2024-04-12}")
	f("took 0.25 85% -1 and 1.28.3", "took <num>{0.25} <num>{85%} <num>{1} and <num>{1.28.3}")
	// Vocabulary with digits stays literal.
	f("x509: sha256 v1beta1 ipv4 k8s utf-8 flannel.1", "x509 sha256 v1beta1 ipv4 k8s utf-8 flannel.1")
	// Punctuation, quotes and escapes separate tokens.
	f(`plugin type=\"flannel\" failed (add): can't`, "plugin type flannel failed add can't") // one word, the hash of "cannot"
	f(`line\nnext\ttab`, "line next tab")
	f("", "")
	f("   ", "")
}

func TestTokenizeBoundsTokens(t *testing.T) {
	long := strings.Repeat("word ", 10000)
	if n := len(Tokenize(long, nil)); n != maxTokens {
		t.Errorf("Tokenize(10000 words) gave %d tokens, want the cap %d", n, maxTokens)
	}
}

func TestTokenizeHashIsCaseInsensitive(t *testing.T) {
	a, b := Tokenize("ClusterInformation", nil), Tokenize("clusterinformation", nil)
	if a[0].Hash != b[0].Hash {
		t.Errorf("hash of ClusterInformation != hash of clusterinformation")
	}
}

func TestTokenizeDoesNotAllocate(t *testing.T) {
	line := `E0412 03:12:45.120931 2211 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: dial tcp 10.43.0.1:443: i/o timeout"`
	buf := make([]Token, 0, maxTokens)
	if n := testing.AllocsPerRun(100, func() { buf = Tokenize(line, buf[:0]) }); n != 0 {
		t.Errorf("Tokenize allocated %.1f times per line, want 0", n)
	}
}
