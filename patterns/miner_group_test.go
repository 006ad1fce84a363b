package patterns

import (
	"fmt"
	"testing"
)

// TestMinerNoCatchAll: a template whose positions turned to <*> one at a
// time must not end up taking any line of its length. Here two sibling
// merges leave "resize:flags=<num> <*> <*> visible=true"; a line of four
// other words faces it with a word against a variable at each end.
func TestMinerNoCatchAll(t *testing.T) {
	m := NewMiner(MinerOptions{})
	a, _ := m.Add("resize:flags=2 pinned=true sticky=true visible=true")
	m.Add("resize:flags=3 pinned=false sticky=false visible=true")
	for _, line := range []string{"cache warmed entries: 0", "Releasing wake lock PowerManager.Display"} {
		c, _ := m.Add(line)
		if c.ID == a.ID {
			t.Errorf("Add(%q) joined %q", line, c.Template)
		}
	}
	if r, _ := m.Resolve(a.ID); r.Size != 2 {
		t.Errorf("resize cluster = %+v, want its 2 lines", r)
	}
}

// TestMinerVariablesOfOtherSkeletons: one-field lines whose variables have
// different skeletons are different events, also once each template's
// values differ in kind.
func TestMinerVariablesOfOtherSkeletons(t *testing.T) {
	m := NewMiner(MinerOptions{})
	a1, _ := m.Add("ready=true,level=5,mask=0x4f,user=0")
	a2, _ := m.Add("ready=true,level=5,mask=0x2,user=0")
	b1, _ := m.Add("dismiss,index:0")
	b2, _ := m.Add("dismiss,index:-1")
	if a1.ID != a2.ID || b1.ID != b2.ID {
		t.Fatalf("clusters %s %s %s %s, want the two ready= and the two dismiss lines together", a1.ID, a2.ID, b1.ID, b2.ID)
	}
	ra, _ := m.Resolve(a1.ID)
	rb, _ := m.Resolve(b1.ID)
	if ra.ID == rb.ID || m.Len() != 2 {
		t.Errorf("ready= and dismiss lines merged: %+v", m.Clusters())
	}
}

// TestMinerWordsAgainstVariables: a template of variables only does not
// take a line of as many fields whose words it has none of.
func TestMinerWordsAgainstVariables(t *testing.T) {
	m := NewMiner(MinerOptions{})
	for i := range 5 {
		m.Add(fmt.Sprintf("tick:17000009%d00000 %d 0 %d", i, 10+i, i))
	}
	c, isNew := m.Add("reload : 5120 retry 0")
	if !isNew {
		t.Errorf("reload line joined %q", c.Template)
	}
}

// TestMinerDominantWord: one word held by nearly all lines of its event is
// a constant; the two rare words beside it make events of their own. Three
// words that share the lines are values of one variable.
func TestMinerDominantWord(t *testing.T) {
	m := NewMiner(MinerOptions{})
	line := func(user string, i int) string {
		return fmt.Sprintf("login failure; tty=ssh rhost=10.0.%d.%d user=%s", i/200, i%200, user)
	}
	for i := range 30 {
		m.Add(line("root", i))
	}
	m.Add(line("guest", 31))
	m.Add(line("deploy", 32))
	if m.Len() != 3 {
		t.Errorf("%d clusters, want 3 (root, guest, deploy): %+v", m.Len(), m.Clusters())
	}
	m = NewMiner(MinerOptions{})
	for i := range 30 {
		m.Add(line([]string{"root", "guest", "deploy"}[i%3], i))
	}
	if m.Len() != 1 {
		t.Errorf("%d clusters, want 1: %+v", m.Len(), m.Clusters())
	}
}

// TestMinerAddedWords: a line with a word more than a template of another
// length does not join it through a variable of the template.
func TestMinerAddedWords(t *testing.T) {
	m := NewMiner(MinerOptions{})
	a, _ := m.Add("login failure; tty=ssh ruser= rhost=10.2.3.4")
	m.Add("login failure; tty=ssh ruser= rhost=gw.example.com")
	c, _ := m.Add("login failure; tty=ssh ruser= rhost=10.9.9.9  user=test")
	if c.ID == a.ID {
		t.Errorf("line with user=test joined %q", c.Template)
	}
}

// TestMinerDotLeaders: in "label......value" words the label is fixed:
// another label is another field, and the template prints it.
func TestMinerDotLeaders(t *testing.T) {
	m := NewMiner(MinerOptions{})
	a, _ := m.Add("cache fault: 0x0000001f")
	m.Add("cache fault: 0x000000a2")
	b, _ := m.Add("cache fault register...........0")
	b2, _ := m.Add("cache fault register...........1")
	if a.ID == b.ID {
		t.Errorf("dotted line joined %q", a.Template)
	}
	if want := "cache fault register...........<*>"; b2.Template != want {
		t.Errorf("template %q, want %q", b2.Template, want)
	}
	r := NewMiner(MinerOptions{})
	if err := r.Restore(m.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if c, isNew := r.Add("cache fault register...........7"); isNew || c.ID != b2.ID || c.Template != b2.Template {
		t.Errorf("after Restore the line went to %+v, want %+v", c, b2)
	}
}
