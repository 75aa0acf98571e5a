package conformance

// TestTraces replays the editing traces (real keystroke-level sessions
// converted to ProseMirror steps by the real prosemirror-transform; see
// the README in the traces folder): every step decoded and applied in
// order, then the final document's JSON must hash to the recorded
// endDocSha256, after exactly the recorded number of steps.
//
// The traces are the small set committed in testdata/traces, or the
// folder PMA_TRACES names (scripts/test sets it to the full set when
// ../shared/traces is beside the repository).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// tracesHeader is line 1 of a NAME.steps.jsonl.gz file (the fields the
// replay needs; the others are for people).
type tracesHeader struct {
	Trace        string          `json:"trace"`
	Schema       string          `json:"schema"`
	StartDoc     json.RawMessage `json:"startDoc"`
	Steps        int             `json:"steps"`
	EndDocSha256 string          `json:"endDocSha256"`
}

// tracesManifest is manifest.json of the traces folder.
type tracesManifest struct {
	Files []struct {
		Trace        string `json:"trace"`
		Steps        int    `json:"steps"`
		EndDocSha256 string `json:"endDocSha256"`
		StepsFile    string `json:"stepsFile"`
		EndFile      string `json:"endFile"`
	} `json:"files"`
}

// tracesDir returns the traces folder: $PMA_TRACES, else the small set
// committed in testdata/traces. A missing folder fails the test.
func tracesDir(t *testing.T) string {
	dir := tracedoc.Dir("..")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("traces folder %s: %v (PMA_TRACES names another)", dir, err)
	}
	return dir
}

func TestTraces(t *testing.T) {
	dir := tracesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.steps.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no *.steps.jsonl.gz files", dir)
	}
	sort.Strings(files)
	// The manifest, when there is one, must list the same traces with the
	// same counts and digests as the headers.
	var manifest tracesManifest
	if data, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err == nil {
		if err := json.Unmarshal(data, &manifest); err != nil {
			t.Fatalf("manifest.json: %v", err)
		}
		var listed []string
		for _, f := range manifest.Files {
			listed = append(listed, filepath.Join(dir, f.StepsFile))
		}
		sort.Strings(listed)
		if strings.Join(listed, "\n") != strings.Join(files, "\n") {
			t.Errorf("manifest.json lists %q, the folder has %q", listed, files)
		}
	}
	basic, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".steps.jsonl.gz")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := tracesReplay(t, basic, file)
			for _, f := range manifest.Files {
				if f.Trace == name && (f.Steps != h.Steps || f.EndDocSha256 != h.EndDocSha256) {
					t.Errorf("manifest.json says %d steps and end doc %s, the header %d and %s",
						f.Steps, f.EndDocSha256, h.Steps, h.EndDocSha256)
				}
			}
		})
	}
}

// tracesReplay streams one trace, applies its steps and checks the end
// document and the step count. It returns the header.
func tracesReplay(t *testing.T, basic *model.Schema, file string) tracesHeader {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(zr, 1<<20)
	line, err := tracesLine(r)
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	var h tracesHeader
	if err := json.Unmarshal(line, &h); err != nil {
		t.Fatalf("header: %v", err)
	}
	if h.Schema != "basic" {
		t.Fatalf("header: schema %q, want basic", h.Schema)
	}
	doc, err := basic.NodeFromJSON(h.StartDoc)
	if err != nil {
		t.Fatalf("startDoc: %v", err)
	}
	start := time.Now()
	n := 0
	for {
		line, err := tracesLine(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after step %d: %v", n-1, err)
		}
		st, err := transform.StepFromJSON(basic, line)
		if err != nil {
			t.Fatalf("step %d (line %d) %s: decoding: %v", n, n+2, clip(string(line)), err)
		}
		if doc, err = st.Apply(doc); err != nil {
			t.Fatalf("step %d (line %d) %s: %v", n, n+2, clip(string(line)), err)
		}
		n++
	}
	elapsed := time.Since(start)
	if n != h.Steps {
		t.Errorf("%d steps in the file, the header says %d", n, h.Steps)
	}
	out := doc.AppendJSON(nil)
	sum := sha256.Sum256(out)
	if got := hex.EncodeToString(sum[:]); got != h.EndDocSha256 {
		t.Errorf("end doc sha256 %s, want %s (%d bytes)%s", got, h.EndDocSha256, len(out), tracesEndDiff(file, out))
	}
	t.Logf("%s: %d steps applied in %v (%.0f steps/s, decoding included), end doc %d bytes, sha256 matches: %t",
		h.Trace, n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), len(out), !t.Failed())
	return h
}

// tracesLine returns the next line (without its newline), io.EOF at the
// end.
func tracesLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: collect it.
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

// tracesEndDiff locates the first difference between Go's end document
// and the recorded one (NAME.end.json.gz beside the steps), for the
// report.
func tracesEndDiff(stepsFile string, got []byte) string {
	f, err := os.Open(strings.TrimSuffix(stepsFile, ".steps.jsonl.gz") + ".end.json.gz")
	if err != nil {
		return ""
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		return ""
	}
	want = bytes.TrimSuffix(want, []byte("\n"))
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(i-80, 0)
	return "\n\tfirst difference at byte " + strconv.Itoa(i) + ":\n\twant …" + string(want[from:min(i+80, len(want))]) +
		"\n\tgot  …" + string(got[from:min(i+80, len(got))])
}
