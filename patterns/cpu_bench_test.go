package patterns

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used.
// Benchmarks report it per op beside wall time: on a shared, busy machine
// wall time measures the neighbours too, CPU time much less so.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU ns per op from start (run with -cpu 1 so that the
// process's CPU time is the benchmark's).
func reportCPU(b *testing.B, start time.Duration, ops int) {
	if ops > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(ops), "cpu-ns/op")
	}
}
