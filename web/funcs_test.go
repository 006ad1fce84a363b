package web_test

import (
	"testing"

	"github.com/incidex/incidex/kb"
	"github.com/incidex/incidex/web"
)

func TestMark(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(web.Mark(in)); got != want {
			t.Errorf("Mark(%q) = %q, want %q", in, got, want)
		}
	}
	s, e := kb.MarkStart, kb.MarkEnd
	f("plain", "plain")
	f("a "+s+"subnet.env"+e+" b", "a <mark>subnet.env</mark> b")
	// A write-up's markup is text: escaped, inside and outside the marks.
	f("<script>alert(1)</script> "+s+"<img src=x onerror=alert(1)>"+e,
		"&lt;script&gt;alert(1)&lt;/script&gt; <mark>&lt;img src=x onerror=alert(1)&gt;</mark>")
	f(`"quoted" & 'single'`, "&#34;quoted&#34; &amp; &#39;single&#39;")
	// Unbalanced markers never leave an open or stray tag.
	f(s+"open", "<mark>open</mark>")
	f("close"+e, "close")
	f(s+s+"x"+e+e, "<mark>x</mark>")
}

func TestCommand(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(web.Command(in)); got != want {
			t.Errorf("Command(%q) = %q, want %q", in, got, want)
		}
	}
	f("kubectl -n <namespace> get pod <pod>", `kubectl -n <var class="ph">&lt;namespace&gt;</var> get pod <var class="ph">&lt;pod&gt;</var>`)
	f("curl https://<node-ip>:10250/healthz", `curl https://<var class="ph">&lt;node-ip&gt;</var>:10250/healthz`)
	f("echo '<script>alert(1)</script>'", "echo &#39;<var class=\"ph\">&lt;script&gt;</var>alert(1)&lt;/script&gt;&#39;")
	f("a < b > c", "a &lt; b &gt; c")
}
