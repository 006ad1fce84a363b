package cluster

import "testing"

// FuzzParseAppliedSet: no panic; a set that parses encodes to text that
// parses to the same set, and its bitmap stays within the bound.
func FuzzParseAppliedSet(f *testing.F) {
	for _, s := range []string{"applied:0", "applied:5:Ag", "applied:200:_w", "12345", "applied:18446744073709551000:AQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseAppliedSet(in, 4096)
		if err != nil {
			return
		}
		enc := s.Encode()
		back, err := ParseAppliedSet(enc, 4096)
		if err != nil {
			t.Fatalf("ParseAppliedSet(%q) ok, but its encoding %q: %v", in, enc, err)
		}
		if back.Encode() != enc || back.Floor() != s.Floor() {
			t.Fatalf("%q: encoding %q re-encodes as %q", in, enc, back.Encode())
		}
		if len(s.words) > 4096/64+1 {
			t.Fatalf("%q: %d bitmap words past the bound", in, len(s.words))
		}
		for q := s.Floor(); q < s.Floor()+4200 && q >= s.Floor(); q++ {
			if s.Has(q) != back.Has(q) {
				t.Fatalf("%q: Has(%d) differs after a round trip", in, q)
			}
		}
	})
}
