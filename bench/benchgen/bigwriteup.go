package benchgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// BigWriteup returns a Markdown write-up of about size bytes with id
// big-dump: a pasted log dump of distinct error lines (half the size),
// then a long root cause in words of its own (zephyr, quasar, …), so a
// full-text query can hit its prose without touching its log lines.
func BigWriteup(size int) []byte {
	r := rand.New(rand.NewPCG(7, 11))
	logWords := strings.Fields("sandbox network volume mount kubelet scheduler etcd quorum lease node pod retry backoff")
	prose := strings.Fields("zephyr quasar nimbus tundra obsidian saffron glacier meridian lantern cobalt harbor ember")
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString("---\nid: big-dump\ntitle: Giant log dump\n---\n# Giant log dump\n\n## Symptoms\n\n```log\n")
	w := func(ws []string) string { return ws[r.IntN(len(ws))] }
	for i := 0; b.Len() < size/2; i++ {
		fmt.Fprintf(&b, "E0101 00:00:%02d.%06d 1 %s.go:%d] %s %s failed for %s-%d: %s %d\n",
			i%60, i%1000000, w(logWords), i%900, w(logWords), w(logWords), w(logWords), i, w(logWords), i*7%1000)
	}
	b.WriteString("```\n\n## Root Cause\n\n")
	for b.Len() < size-64 {
		for range 40 {
			b.WriteString(w(prose))
			b.WriteByte(' ')
		}
		b.WriteString("end.\n")
	}
	b.WriteString("\n## Fix\n\nSplit the dump.\n")
	return []byte(b.String())
}
