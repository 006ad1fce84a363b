package server

import "testing"

func TestErrorLine(t *testing.T) {
	t.Parallel()
	f := func(line string, want bool) {
		t.Helper()
		if got := errorLine(line); got != want {
			t.Errorf("errorLine(%q) = %v, want %v", line, got, want)
		}
	}
	// Level or words say error or warning.
	f(`E1201 03:04:06.000101     911 widget.go:88] "Frobnicator failed"`, true)
	f(`W1201 03:04:06.000101     911 widget.go:88] frobnicator queue at 90% of capacity`, true)
	f(`time="2026-12-01T03:04:11Z" level=error msg="shim exited"`, true)
	f(`{"level":"warn","msg":"queue nearly full"}`, true)
	f(`  Warning  BackOff  3m (x12 over 10m)  kubelet  Back-off restarting container`, true)
	f(`5m          Warning   BackOff   pod/web-1   Back-off restarting container`, true)
	f(`2026-12-01 03:04:05 ERROR [pool] widget pool exhausted`, true)
	f(`FATAL: could not open the widget store`, true)
	f(`panic: runtime error: invalid memory address or nil pointer dereference`, true)
	f(`Traceback (most recent call last):`, true)
	f(`java.lang.IllegalStateException: widget already groked`, true)
	f(`dial tcp 10.43.0.1:443: i/o timeout`, true)
	f(`      Reason:       CrashLoopBackOff`, true)
	// Neither: info levels, Normal events, descriptions.
	f(`I1201 03:04:05.200000     911 pod_workers.go:1298] "Error syncing pod, skipping" err="failed"`, false)
	f(`time="2026-12-01T03:04:11Z" level=info msg="StartContainer returns successfully"`, false)
	f(`  Normal   SandboxChanged  90s (x3 over 2m)  kubelet  Pod sandbox changed, it will be killed and re-created.`, false)
	f(`Tolerations:      node.kubernetes.io/not-ready:NoExecute op=Exists for 300s`, false)
	f(`  Ready             False`, false)
	f(`goroutine 1 [running]:`, false)
	f(`Started kubelet.service - kubelet: The Kubernetes Node Agent.`, false)
	f(`wrote 3 records to stderr.log`, false)
}

func TestRepeatKey(t *testing.T) {
	t.Parallel()
	a := `Dec 01 03:04:06 worker-3 kubelet[911]: E1201 03:04:06.000101     911 widget.go:88] "failed" err="widget 17"`
	b := `Dec 01 03:04:09 worker-3 kubelet[911]: E1201 03:04:09.000404     911 widget.go:88] "failed" err="widget 20"`
	c := `Dec 01 03:04:09 worker-3 kubelet[911]: E1201 03:04:09.000404     911 widget.go:88] "failed" err="gadget 20"`
	if repeatKey(a) != repeatKey(b) {
		t.Errorf("repeatKey(%q) = %q, repeatKey(%q) = %q, want equal", a, repeatKey(a), b, repeatKey(b))
	}
	if repeatKey(b) == repeatKey(c) {
		t.Errorf("repeatKey(%q) = repeatKey(%q), want different", b, c)
	}
}
