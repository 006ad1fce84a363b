package decode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goldenNow is the receive time of every golden request.
var goldenNow = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// updateGolden rewrites golden files instead of comparing with them.
var updateGolden = os.Getenv("UPDATE_GOLDEN") != ""

// goldenRequest builds the request for a testdata/<format>/<name>.in file. The name's
// second extension gives the Content-Type: .msgpack, .pb, .txt, .ndjson, else JSON.
func goldenRequest(t testing.TB, path string) Request {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := Format(filepath.Base(filepath.Dir(path)))
	return Request{
		Format:      f,
		Path:        goldenPaths[f],
		ContentType: goldenContentType(f, path),
		Body:        body,
		Now:         goldenNow,
	}
}

var goldenPaths = map[Format]string{
	FormatLoki:          "/loki/api/v1/push",
	FormatOTLP:          "/v1/logs",
	FormatElasticsearch: "/_bulk",
}

func goldenContentType(f Format, path string) string {
	switch filepath.Ext(strings.TrimSuffix(path, ".in")) {
	case ".msgpack":
		if f == FormatFluentd {
			return "application/x-msgpack"
		}
		return "application/msgpack"
	case ".pb":
		return "application/x-protobuf"
	case ".txt":
		return "text/plain; charset=utf-8"
	case ".ndjson":
		return "application/x-ndjson"
	}
	return "application/json"
}

// goldenResult is what a golden file holds: Decode's result and error.
type goldenResult struct {
	Error string `json:",omitempty"`
	Result
}

func marshalGolden(t testing.TB, res Result, err error) []byte {
	t.Helper()
	g := goldenResult{Result: res}
	if err != nil {
		g.Error = err.Error()
	}
	out, mErr := json.MarshalIndent(g, "", "  ")
	if mErr != nil {
		t.Fatal(mErr)
	}
	return append(out, '\n')
}

// checkGolden compares got with the golden file, or rewrites it under UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./ingest to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Decode(%s) mismatch (-golden +got):\n%s", path, diff)
	}
}

// writeTestdata stores a body built by a sender's library as a golden input, under
// UPDATE_GOLDEN=1, so that the golden and fuzz tests replay it.
func writeTestdata(t *testing.T, path string, body []byte) {
	t.Helper()
	if !updateGolden {
		return
	}
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, body) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

func goldenInputs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*/*.in files")
	}
	return files
}

func TestDecodeGolden(t *testing.T) {
	t.Parallel()
	for _, in := range goldenInputs(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(in, "testdata"+string(filepath.Separator)), ".in")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := goldenRequest(t, in)
			res, err := Decode(req, Limits{})
			checkGolden(t, strings.TrimSuffix(in, ".in")+".golden", marshalGolden(t, res, err))
		})
	}
}
