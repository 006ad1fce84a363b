package patterns

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonMessageReference is the encoding/json implementation that
// jsonMessage replaced; the two must agree on every input.
func jsonMessageReference(s string) (string, Level, bool) {
	var rec map[string]any
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return "", 0, false
	}
	var msg string
	for _, k := range [...]string{"log", "msg", "message", "MESSAGE", "short_message", "Message", "body"} {
		if v, ok := rec[k].(string); ok {
			msg = v
			break
		}
	}
	if msg == "" {
		return "", 0, false
	}
	for _, k := range [...]string{"error", "err", "Error", "reason"} {
		if v, ok := rec[k].(string); ok && v != "" && !strings.Contains(msg, v) {
			msg += ": " + v
		}
	}
	var lvl Level
	for _, k := range [...]string{"level", "severity", "lvl", "levelname", "PRIORITY"} {
		if v, ok := rec[k].(string); ok {
			lvl = ParseLevel(v)
			break
		}
	}
	return strings.TrimRight(msg, "\r\n "), lvl, true
}

var jsonCases = []string{
	`{"log":"dial tcp 10.43.0.1:443: i/o timeout\n","stream":"stderr"}`,
	`{"msg":"x","error":"y","level":"error"}`,
	`{"msg":"x","error":"x is bad","level":"warn"}`,
	`{"msg":"a \"quoted\" word","err":"e\u00e9"}`,
	`{"m\u0073g":"escaped key"}`,
	`{"msg":"first","msg":"second"}`,
	`{"msg":"first","msg":42}`,
	`{"msg":42}`,
	`{"level":"info"}`,
	`{"msg":"x"} trailing`,
	`{"msg":"x",}`,
	`{"msg":"x" "y":1}`,
	`{"msg":"bad \x escape"}`,
	"{\"msg\":\"control \x01 char\"}",
	"{\"msg\":\"invalid \xff utf8\"}",
	"{\"msg\\u00ff\":\"invalid key\", \"msg\":\"ok\"}",
	`{"msg":"n","a":[1,2.5e3,-0,{"b":null},true,false],"c":{"d":{"e":[]}}}`,
	`{"msg":"n","a":01}`,
	`{"msg":"n","a":1.}`,
	`{"msg":"n","a":-}`,
	`{"msg":"n","a":tru}`,
	`{"msg":"  trailing space  \n"}`,
	`{"body":"b","message":"m"}`,
	`{"short_message":"gelf","level":"3"}`,
	`{}`,
	`{"msg":""}`,
	`{"msg":"x","error":""}`,
	`  {"msg":"padded"}  `,
	`{"msg":"\ud83d\ude00 surrogate"}`,
	`{"msg":"\ud83d lone"}`,
	`{"a":"\u12"}`,
	`{"msg":"x","nested":{"msg":"inner"}}`,
	`{"msg":"x","PRIORITY":"3","level":7}`,
}

func TestJSONMessageMatchesReference(t *testing.T) {
	for _, s := range append(jsonCases, fuzzSeeds...) {
		gm, gl, gok := jsonMessage(s)
		wm, wl, wok := jsonMessageReference(s)
		if gm != wm || gl != wl || gok != wok {
			t.Errorf("jsonMessage(%q) = %q, %v, %v; want %q, %v, %v", s, gm, gl, gok, wm, wl, wok)
		}
	}
}

func TestJSONMessageDoesNotAllocate(t *testing.T) {
	s := `{"date":1712890863.81668,"log":"I0412 03:01:03.816680       1 main.go:231] Created subnet manager","stream":"stderr","kubernetes":{"pod_name":"kube-flannel-ds-nfq4z","labels":{"app":"flannel"}}}`
	if n := testing.AllocsPerRun(100, func() { jsonMessage(s) }); n != 0 {
		t.Errorf("jsonMessage allocated %.1f times, want 0", n)
	}
}
