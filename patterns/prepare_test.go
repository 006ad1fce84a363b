package patterns

import "testing"

func TestPrepare(t *testing.T) {
	tests := []struct {
		name, in, want string
		level          Level
	}{
		{"klog", `E0412 03:12:45.120931    2211 pod_workers.go:1301] "Error syncing pod" err="x"`, `"Error syncing pod" err="x"`, LevelError},
		{"journald around klog", `Apr 12 03:12:45 worker-2 kubelet[2211]: W0412 03:12:45.120931 2211 kubelet.go:1] "slow"`, `"slow"`, LevelWarn},
		{"journald, French locale", `déc. 11 08:29:21 lingerie systemd[1]: ebusd.service: Failed with result 'exit-code'.`, `ebusd.service: Failed with result 'exit-code'.`, LevelUnknown},
		{"journald, German locale", `Dez 17 17:48:09 nakamoto systemd[1]: bitcoind.service: Scheduled restart job`, `bitcoind.service: Scheduled restart job`, LevelUnknown},
		{"journald, lower-case month", `mar 07 13:28:11 ubuntu-miniflux systemd[1]: miniflux.service: Main process exited`, `miniflux.service: Main process exited`, LevelUnknown},
		{"a word, a number and a clock without a program tag are no header", `Retry 3 12:00:00 is not a clock prefix: x`, `Retry 3 12:00:00 is not a clock prefix: x`, LevelUnknown},
		{"compose v1 around PostgreSQL's own prefix", `db_1        | 2022-06-03 18:25:00.792 UTC [108] FATAL:  password authentication failed for user "x"`, `password authentication failed for user "x"`, LevelFatal},
		{"compose v2", `web-1  | Error: connect ECONNREFUSED 127.0.0.1:5432`, `Error: connect ECONNREFUSED 127.0.0.1:5432`, LevelUnknown},
		{"a table row is not a compose prefix", `a | b | c`, `a | b | c`, LevelUnknown},
		{"kernel ring buffer", `[  152.700479] Memory cgroup out of memory: Kill process 4142 (python3)`, `Memory cgroup out of memory: Kill process 4142 (python3)`, LevelUnknown},
		{"dmesg -T", `[Thu Dec  7 00:05:15 2017] Memory cgroup out of memory: Kill process 24572 (java)`, `Memory cgroup out of memory: Kill process 24572 (java)`, LevelUnknown},
		{"elasticsearch", `[2017-08-14T09:29:37,167][WARN ][o.e.c.r.a.DiskThresholdMonitor] [Lq-N3tZ] flood stage disk watermark [95%] exceeded`, `flood stage disk watermark [95%] exceeded`, LevelWarn},
		{"a padded bracketed level", `2023-01-09T08:51:15.226+00:00 [WARN ] something broke`, `something broke`, LevelWarn},
		{"spring boot", `2021-05-17 14:20:53.123 ERROR 1 --- [main] o.s.boot.SpringApplication : Application run failed`, `Application run failed`, LevelError},
		{"PostgreSQL LOG", `2024-01-22 22:09:59.110 UTC [1] LOG:  database system is ready to accept connections`, `database system is ready to accept connections`, LevelInfo},
		{"a bracketed level", `[ERROR] Failed to execute goal on project api: Could not resolve dependencies`, `Failed to execute goal on project api: Could not resolve dependencies`, LevelError},
		{"journald iso", `2024-04-12T03:12:45+0000 worker-2 containerd[880]: failed to reserve sandbox name`, `failed to reserve sandbox name`, LevelUnknown},
		{"logrus", `time="2024-04-12T03:12:45.120931Z" level=error msg="Failed to destroy network" error="boom"`, `msg="Failed to destroy network" error="boom"`, LevelError},
		{"cri file", `2024-04-12T03:12:45.120931Z stderr F panic: assignment to entry in nil map`, `panic: assignment to entry in nil map`, LevelUnknown},
		{"etcd's capnslog", `2016-12-22 17:00:29.475936 W | rafthttp: the clock difference against peer 5bd0394181f126dd is too high [10.449391606s > 1s]`, `rafthttp: the clock difference against peer 5bd0394181f126dd is too high [10.449391606s > 1s]`, LevelWarn},
		{"calico", `2024-04-12 03:12:45.120 [ERROR][41] plugin.go 580: Final result of CNI ADD was an error.`, `plugin.go 580: Final result of CNI ADD was an error.`, LevelError},
		{"docker json", `{"log":"E0412 03:12:45.120931 1 main.go:1] \"dial tcp 10.0.0.1:443: i/o timeout\"\n","stream":"stderr","time":"2024-04-12T03:12:45Z"}`, `"dial tcp 10.0.0.1:443: i/o timeout"`, LevelError},
		{"app json with error field", `{"level":"error","msg":"cannot connect","error":"dial tcp 10.0.0.5:6379: connect: connection refused"}`, `cannot connect: dial tcp 10.0.0.5:6379: connect: connection refused`, LevelError},
		{"plain", `dial tcp 10.43.0.1:443: i/o timeout`, `dial tcp 10.43.0.1:443: i/o timeout`, LevelUnknown},
		{"short", `x`, `x`, LevelUnknown},
		{"broken json stays", `{"log": "unterminated`, `{"log": "unterminated`, LevelUnknown},
		{"trailing newline", "connection refused\r\n", "connection refused", LevelUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Prepare(tt.in)
			if p.Text != tt.want || p.Level != tt.level {
				t.Errorf("Prepare(%q) = %q level %v, want %q level %v", tt.in, p.Text, p.Level, tt.want, tt.level)
			}
		})
	}
}

func TestIsFailure(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := IsFailure(in); got != want {
			t.Errorf("IsFailure(%q) = %v, want %v", in, got, want)
		}
	}
	f("Warning  NodeNotReady  Node is not ready", true)
	f("open /run/flannel/subnet.env: no such file or directory", true)
	f("E0412 03:12:45.120931 1 a.go:1] something odd", true)
	f("Wrote subnet file to /run/flannel/subnet.env", false)
	f("Normal  Scheduled  Successfully assigned default/x to node-1", false)
	f("valkey-0  1/1  Running  24 (3m36s ago)  28h", false)
	// kubectl get rows whose STATUS is a waiting reason of the kubelet.
	f("web-7d9f8b  0/1  ErrImageNeverPull  0  12s", true)
	f("api-5c4d7   0/1  CreateContainerConfigError  0  40s", true)
	// Redis error replies, in the capitals Redis prints them in.
	f("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", true)
	f("the worker is busy", false)
	// Error codes and replies that carry no plain error word.
	f("PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/'", true)
	f("WRONGTYPE Operation against a key holding the wrong kind of value", true)
	f("NOAUTH Authentication required.", true)
	f(`duplicate key value violates unique constraint "users_pkey"`, true)
	f("TCP: request_sock_TCP: Possible SYN flooding on port 80. Sending cookies.", true)
	f("code: 'EADDRINUSE',", true) // an errno name, as the prefilter's failure test reads it
	f("ready to accept connections", false)
}
