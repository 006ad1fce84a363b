package main

import "testing"

// TestProseSummary: the one-line fix and cause of `incidex match` leave
// code blocks out, and fall back to the first command when there is
// nothing else.
func TestProseSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Restart flannel.\n\n```bash\nkubectl -n kube-flannel delete pod -l app=flannel\n```\n\nThen check.", "Restart flannel.\n\n\nThen check."},
		{"```bash\n# Restart kube-proxy on the node\nkubectl -n kube-system delete pod -l k8s-app=kube-proxy\n```", "$ kubectl -n kube-system delete pod -l k8s-app=kube-proxy"},
		{"No code here.", "No code here."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := proseSummary(tt.in); got != tt.want {
			t.Errorf("proseSummary(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
