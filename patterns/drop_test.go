package patterns

import (
	"slices"
	"testing"
)

// TestGenericClausesLeftOut: a clause too generic to stand alone leaves
// the set as though it had never been in its defs, both when its words
// are all its line's (the rest is kept as compiled) and when it has a word
// its line lacks (the rest is compiled again with the IDF that leaves).
func TestGenericClausesLeftOut(t *testing.T) {
	lines := []Def{
		{ID: "a", Group: "disk", Text: `kubelet: eviction manager: node has disk pressure, evicting pod web-7f9c`},
		{ID: "b", Group: "dns", Text: `coredns: plugin/errors: read udp 10.0.0.7:53: i/o timeout resolving registry.internal`},
		{ID: "c", Group: "tls", Text: `x509: certificate signed by unknown authority while pulling image registry.internal/app:1.4`},
		{ID: "d", Group: "oom", Text: `Memory cgroup out of memory: Killed process 4242 (java) total-vm:8123456kB`},
	}
	for _, tc := range []struct {
		name    string
		generic Def // a clause of lines[0]
	}{
		{"words of its line", Def{ID: "a", Group: "disk", Text: `pod web-7f9c`, Clause: true}},
		{"a word its line lacks", Def{ID: "a", Group: "disk", Text: `the pod web-7f9c`, Clause: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stand := Def{ID: "a", Group: "disk", Text: `node has disk pressure, evicting pod web-7f9c`, Clause: true}
			with := slices.Concat(lines[:1], []Def{tc.generic, stand}, lines[1:])
			without := slices.Concat(lines[:1], []Def{stand}, lines[1:])
			sw, err := Compile(with, Options{})
			if err != nil {
				t.Fatal(err)
			}
			so, err := Compile(without, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sw.Len() != len(without) {
				t.Fatalf("%d signatures, want %d: the generic clause %q was kept", sw.Len(), len(without), tc.generic.Text)
			}
			for i := range without {
				if sw.Def(i).Text != without[i].Text {
					t.Fatalf("signature %d is %q, want %q", i, sw.Def(i).Text, without[i].Text)
				}
			}
			probes := []string{
				`Warning Evicted: the node had disk pressure; evicting pod web-7f9c now`,
				`eviction manager: node has disk pressure`,
				`read udp 10.0.0.9:53: i/o timeout`,
				`x509: certificate signed by unknown authority`,
				`Killed process 777 (java) total-vm:1000kB`,
				`the pod web-1234 is ready`,
			}
			for _, d := range with {
				probes = append(probes, d.Text)
			}
			matched := 0
			for _, mode := range []Mode{Stream, Query} {
				for _, l := range probes {
					got := sw.MatchMode(l, mode, 0.01, nil)
					want := so.MatchMode(l, mode, 0.01, nil)
					matched += len(got)
					if !slices.Equal(got, want) {
						t.Errorf("mode %d, %q: got %+v, want %+v (the set compiled without the clause)", mode, l, got, want)
					}
				}
			}
			if matched < len(probes) {
				t.Fatalf("%d matches over %d probes in two modes: too few to compare the sets", matched, len(probes))
			}
		})
	}
}
