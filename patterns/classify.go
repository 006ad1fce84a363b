package patterns

import "strings"

// pieceStats are counts taken in the tokenizer's pass over a piece.
type pieceStats struct {
	digits, letters, run, maxRun int
}

// classify returns the kind of a piece that has no ':' or '/' left in it.
func classify(s string) Kind { return classifyHashed(s, hashLower(s)) }

// classifyHashed is classify for a piece whose hash is known.
func classifyHashed(s string, hash uint64) Kind {
	var st pieceStats
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case isDigit(b):
			st.digits++
			st.run++
			if st.run > st.maxRun {
				st.maxRun = st.run
			}
			continue
		case isLetter(b):
			st.letters++
		}
		st.run = 0
	}
	return classifyWith(s, hash, st)
}

// classifyWith classifies a piece whose hash and counts are known.
func classifyWith(s string, hash uint64, st pieceStats) Kind {
	if st.digits == 0 || len(s) == 0 || (st.letters > 0 && lexicon[hash]) {
		return KindWord
	}
	if k, ok := classifyNumeric(s, st.letters); ok {
		return k
	}
	if isUUID(s) {
		return KindUUID
	}
	if isHexID(s, st.digits) {
		return KindHex
	}
	if isPodName(s) {
		return KindPod
	}
	if isInstanceName(s, st.digits, st.maxRun) {
		return KindID
	}
	return KindWord
}

// classifyNumeric recognises numbers, IPv4 addresses, dates, durations and
// sizes: pieces that start with a digit (or x for "x4" event counts).
func classifyNumeric(s string, letters int) (Kind, bool) {
	if letters == 0 {
		if isIPv4(s) {
			return KindIPv4, true
		}
		if isDate(s) {
			return KindTime, true
		}
		if isNumber(s) {
			return KindNum, true
		}
	}
	if !isDigit(s[0]) {
		if (s[0] == 'x' || s[0] == 'X') && allDigits(s[1:]) { // "(x4 over 3m)"
			return KindNum, true
		}
		return 0, false
	}
	if isDuration(s) {
		return KindDuration, true
	}
	if isSize(s) {
		return KindSize, true
	}
	if isTimestamp(s) { // 2024-04-12T03 when a ':' split it, or compact forms
		return KindTime, true
	}
	return 0, false
}

// isNumber: 42, -1, 3.14, 1,024, 85%, 1.28.3 (versions vary too).
func isNumber(s string) bool {
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i++
	}
	if i >= len(s) || !isDigit(s[i]) {
		return false
	}
	for ; i < len(s); i++ {
		b := s[i]
		if isDigit(b) || b == '.' || b == ',' || b == '_' {
			continue
		}
		if b == '%' && i == len(s)-1 {
			continue
		}
		return false
	}
	return true
}

func isIPv4(s string) bool {
	parts, val, nd := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if nd == 0 || nd > 3 || val > 255 {
				return false
			}
			parts++
			val, nd = 0, 0
			continue
		}
		if !isDigit(s[i]) {
			return false
		}
		val = val*10 + int(s[i]-'0')
		nd++
	}
	return parts == 4
}

func isIPv6(s string) bool {
	if len(s) < 2 || !(isHex(s[0]) || s[0] == ':' || s[0] == '[') {
		return false
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	if p := strings.IndexByte(s, '%'); p > 0 { // fe80::1%eth0
		s = s[:p]
	}
	colons, double := 0, false
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == ':':
			colons++
			if i+1 < len(s) && s[i+1] == ':' {
				double = true
			}
		case isHex(b), b == '.':
		default:
			return false
		}
	}
	return colons >= 2 && (double || colons == 7) && len(s) >= 2
}

// isClock: 03:12:45, 03:12:45.120931, 3:12, 03:12:45Z, 03:12:45+02:00.
func isClock(s string) bool {
	i := digitsAt(s, 0)
	if i < 1 || i > 2 || i >= len(s) || s[i] != ':' {
		return false
	}
	j := digitsAt(s, i+1)
	if j-i-1 != 2 {
		return false
	}
	if j < len(s) && s[j] == ':' {
		k := digitsAt(s, j+1)
		if k-j-1 != 2 {
			return false
		}
		j = k
	}
	return fractionAndZone(s, j)
}

// isDate: 2024-04-12 or 2024/04/12 (the latter only reaches here unsplit in templates).
func isDate(s string) bool {
	return len(s) == 10 && digitsAt(s, 0) == 4 && (s[4] == '-' || s[4] == '/') &&
		digitsAt(s, 5) == 7 && s[7] == s[4] && digitsAt(s, 8) == 10
}

// isTimestamp: RFC 3339 and ISO forms, 2024-04-12T03:12:45.120931Z, 20240412T031245Z.
func isTimestamp(s string) bool {
	if len(s) >= 13 && isDate(s[:10]) && (s[10] == 'T' || s[10] == 't' || s[10] == '_') {
		rest := s[11:]
		if isClock(rest) {
			return true
		}
		n := digitsAt(rest, 0)
		return n == 2 && fractionAndZone(rest, n) // split at ':' earlier
	}
	if len(s) >= 15 && digitsAt(s, 0) == 8 && (s[8] == 'T' || s[8] == 't') {
		n := digitsAt(s, 9)
		return n >= 13 && fractionAndZone(s, n)
	}
	return false
}

func fractionAndZone(s string, i int) bool {
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		j := digitsAt(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i == len(s) {
		return true
	}
	switch s[i] {
	case 'Z', 'z':
		return i == len(s)-1
	case '+', '-':
		rest := s[i+1:]
		return isClock(rest) || (len(rest) == 4 && allDigits(rest)) || (len(rest) == 2 && allDigits(rest))
	}
	return false
}

func digitsAt(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// isDuration: Go durations (1m30s, 250ms, 2h0m0s, 3.5µs) and k8s ages (28h, 3d).
func isDuration(s string) bool {
	i, units := 0, 0
	for i < len(s) {
		j := digitsAt(s, i)
		if j == i {
			return false
		}
		if j < len(s) && s[j] == '.' {
			k := digitsAt(s, j+1)
			if k == j+1 {
				return false
			}
			j = k
		}
		u := unitLen(s[j:])
		if u == 0 {
			return false
		}
		i = j + u
		units++
	}
	return units > 0
}

func unitLen(s string) int {
	for _, u := range [...]string{"ns", "us", "µs", "ms", "s", "m", "h", "d"} {
		if len(s) >= len(u) && s[:len(u)] == u {
			// "ms" must not be read as "m" followed by garbage.
			return len(u)
		}
	}
	return 0
}

// isSize: 512Mi, 1.5GiB, 100MB, 4096k, 20G.
func isSize(s string) bool {
	j := digitsAt(s, 0)
	if j < len(s) && s[j] == '.' {
		j = digitsAt(s, j+1)
	}
	switch s[j:] {
	case "B", "b", "KB", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "Ki", "Mi", "Gi", "Ti", "Pi",
		"k", "K", "M", "G", "T", "bytes", "kb", "mb", "gb":
		return true
	}
	return false
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
			continue
		}
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isHexID: container and sandbox ids, digests, trace ids, commit hashes:
// seven or more hex digits with at least one digit, optionally 0x-prefixed.
func isHexID(s string, digits int) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) < 7 || digits == 0 {
		return false
	}
	letters := 0
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
		if !isDigit(s[i]) {
			letters++
		}
	}
	return letters > 0 || len(s) >= 16
}

// k8sRand is the alphabet of Kubernetes' random name suffixes and
// pod-template hashes (no vowels, no 0, 1, 3).
var k8sRand = func() (a [256]bool) {
	for _, c := range "bcdfghjklmnpqrstvwxz2456789" {
		a[c] = true
	}
	return a
}()

func allK8sRand(s string) bool {
	for i := 0; i < len(s); i++ {
		if !k8sRand[s[i]] {
			return false
		}
	}
	return true
}

// isPodName: generated pod names, <base>-<hash>-<xxxxx>, <base>-<xxxxx>,
// <cronjob>-<digits>-<xxxxx>, where the suffix comes from Kubernetes'
// random alphabet and holds a digit.
func isPodName(s string) bool {
	d := strings.LastIndexByte(s, '-')
	if d <= 0 || len(s)-d-1 != 5 {
		return false
	}
	suffix := s[d+1:]
	if !allK8sRand(suffix) || !hasDigit(suffix) {
		return false
	}
	for i := 0; i < d; i++ {
		b := s[i]
		if !(isDigit(b) || (b >= 'a' && b <= 'z') || b == '-' || b == '.') {
			return false
		}
	}
	return true
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// lexicon holds the hashes of words with digits that are vocabulary, not
// instance names.
var lexicon = func() map[uint64]bool {
	m := make(map[uint64]bool, len(lexiconWords))
	for w := range lexiconWords {
		m[hashLower(w)] = true
	}
	return m
}()

var lexiconWords = map[string]bool{
	"x509": true, "sha256": true, "sha512": true, "sha384": true, "sha1": true, "md5": true,
	"ipv4": true, "ipv6": true, "utf-8": true, "utf8": true, "base64": true, "x86_64": true,
	"amd64": true, "arm64": true, "int32": true, "int64": true, "uint32": true, "uint64": true,
	"float64": true, "cgroup2": true, "cgroupv2": true, "cgroupv1": true, "http2": true,
	"ec2": true, "s3": true, "k8s": true, "k3s": true, "rke2": true, "iptables-nft": true,
	"ip6tables": true, "ip6tables-restore": true, "ip6tables-save": true, "nf_tables": true,
	"tls1.2": true, "tls1.3": true, "oauth2": true, "e2e": true, "x509v3": true,
	"p99": true, "p95": true, "p50": true, "bpf2bpf": true, "nft_chain_nat_ipv4": true,
	"vxlan0": true, "cni0": true, "docker0": true, "eth0": true, "lo0": true, "tunl0": true,
}

// isInstanceName: names that carry an instance number and vary between
// machines and runs: node01, ip-10-0-1-23, valkey-0, worker-3, ens192.
func isInstanceName(s string, digits, maxRun int) bool {
	if isAPIVersion(s) {
		return false
	}
	if d := strings.LastIndexByte(s, '-'); d > 0 && d < len(s)-1 && allDigits(s[d+1:]) && isLetter(s[0]) {
		return true // statefulset ordinals, node-1
	}
	return maxRun >= 2 || digits >= 3
}

// isAPIVersion: v1, v2beta1, v1alpha3.
func isAPIVersion(s string) bool {
	if len(s) < 2 || (s[0] != 'v' && s[0] != 'V') {
		return false
	}
	i := digitsAt(s, 1)
	if i == 1 {
		return false
	}
	if i == len(s) {
		return true
	}
	rest := s[i:]
	for _, p := range [...]string{"alpha", "beta"} {
		if len(rest) > len(p) && rest[:len(p)] == p && digitsAt(rest, len(p)) == len(rest) {
			return true
		}
	}
	return false
}
