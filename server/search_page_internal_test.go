package server

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCauseLine: a root cause in a list is its first paragraph with the
// source's hard line breaks joined, and a long one ends at a word with an
// ellipsis, never mid-word.
func TestCauseLine(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := causeLine(in); got != want {
			t.Errorf("causeLine(%q) = %q, want %q", in, got, want)
		}
	}
	f("The API server resolves the webhook service to its endpoints and connects to them directly from the\ncontrol plane, so a NetworkPolicy that blocks it times out.\n\nMore detail.",
		"The API server resolves the webhook service to its endpoints and connects to them directly from the control plane, so a NetworkPolicy that blocks it times out.")
	f("## Cause\n\n**kube-apiserver** is down:\n- etcd unreachable", "Cause")
	f("- `etcd` is unreachable\n- the disk is full", "etcd is unreachable")
	f("The file is missing when:\n- the pod is crash-looping", "The file is missing when:")
	long := strings.Repeat("flanneld writes the subnet file only after registering ", 6)
	got := causeLine(long)
	if !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 221 || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")+" ") {
		t.Errorf("causeLine(long) = %q, want at most %d runes ending at a word, with an ellipsis", got, 220)
	}
}
