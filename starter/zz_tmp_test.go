package starter_test

import (
	"testing"
)

func TestZRepeats(t *testing.T) {
	incs := starterIncidents(t)
	m := starterMatcher(t, incs)
	set := m.Set()
	for i := 0; i < set.Len(); i++ {
		p := set.Pattern(i)
		var h []uint64
		for _, tk := range p.Tokens {
			if tk.Kind == 0 {
				h = append(h, tk.Hash)
			} else {
				h = append(h, uint64(tk.Kind)<<56)
			}
		}
		n := len(h)
		for L := 1; L <= n/2; L++ {
			for s := 0; s+2*L <= n; s++ {
				same := true
				for k := 0; k < L; k++ {
					if h[s+k] != h[s+L+k] {
						same = false
						break
					}
				}
				if same && (L >= 2) {
					t.Logf("%s: run of %d at %d: %.120s", set.Def(i).Group, L, s, set.Template(i))
					goto next
				}
			}
		}
	next:
	}
}
