package conformance

// TestStepsCLI drives step corpus cases through the real command line,
// `pmauthority apply --jsonl` (DESIGN.md, "Command line"), the interface
// other conformance suites use: one request {schema, doc, steps,
// positions} per case, its answer compared with the recorded "doc",
// failing step and message, "mapped", "mappedFlags" and "inverted". Its
// subtest "throughput" measures lines per second on small requests and
// only logs the figure.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// stepsCLISample is the most cases of one corpus file sent through the
// command line (spread evenly over the file); the committed corpus is
// small enough to go through whole.
const stepsCLISample = 10000

func TestStepsCLI(t *testing.T) {
	bin := stepsBuildCLI(t)
	schemas := loadSchemas(t)
	t.Run("corpus", func(t *testing.T) {
		for _, file := range corpusFiles(stepsCommitted, "PMA_STEP_CORPUS") {
			lines := stepsReadCorpus(t, file)
			every := (len(lines) + stepsCLISample - 1) / stepsCLISample
			var sample [][]byte
			for i := 0; i < len(lines); i += every {
				sample = append(sample, lines[i])
			}
			stepsCheckCLI(t, bin, file, stepsReplayLines(schemas, sample))
		}
	})
	t.Run("throughput", func(t *testing.T) {
		if testing.Short() {
			t.Skip("measures the command line on 200,000 requests")
		}
		stepsMeasureCLI(t, bin)
	})
}

// stepsReplayLines replays case lines in Go (in parallel), for the
// command-line checks; unreadable lines give nil.
func stepsReplayLines(schemas map[string]*model.Schema, lines [][]byte) []*stepsCaseRun {
	runs := make([]*stepsCaseRun, len(lines))
	var stats stepsStats
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(lines); i += workers {
				_, runs[i] = stepsCheckCase(schemas, lines[i], &stats)
			}
		})
	}
	wg.Wait()
	return runs
}

// stepsBuildCLI builds cmd/pmauthority into a temporary directory.
func stepsBuildCLI(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build cmd/pmauthority: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "pmauthority")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/pmauthority/pmauthority/cmd/pmauthority").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/pmauthority: %v\n%s", err, out)
	}
	return bin
}

// stepsSchemaArg names a corpus schema for the command line: the
// built-in name where there is one, else the path of its spec file.
func stepsSchemaArg(t testing.TB, name string) string {
	if name == "text" || name == "basic" {
		return name
	}
	p, err := filepath.Abs(schemaFiles[name])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stepsRequest builds the request line of a case: {schema, doc, steps}
// plus "positions" when the case records them. Steps are the exact texts
// of the case (stepsText joined when present, FORMAT-steps.md).
func stepsRequest(t testing.TB, cr *stepsCaseRun) []byte {
	sc := cr.sc
	b := []byte(`{"schema":`)
	b = append(b, jsonString(stepsSchemaArg(t, sc.Schema))...)
	b = append(b, `,"doc":`...)
	b = append(b, sc.Doc...)
	b = append(b, `,"steps":[`...)
	for i, text := range cr.run.texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, text...)
	}
	b = append(b, ']')
	if sc.Positions != nil {
		b = append(b, `,"positions":`...)
		b = append(b, stepsIntsText(sc.Positions)...)
	}
	return append(b, '}')
}

// stepsAnswer is an answer line of apply --jsonl.
type stepsAnswer struct {
	Doc         json.RawMessage   `json:"doc"`
	Mapped      []json.RawMessage `json:"mapped"`
	MappedFlags []json.RawMessage `json:"mappedFlags"`
	Inverted    []json.RawMessage `json:"inverted"`
	Error       *struct {
		Step    *int            `json:"step"`
		Message json.RawMessage `json:"message"`
	} `json:"error"`
}

// stepsCLITimeout bounds one run of the command: it is killed after
// that, so that a stuck pipe fails the test rather than hanging it.
const stepsCLITimeout = 5 * time.Minute

// stepsCLI is a running `pmauthority apply --jsonl`, fed by a goroutine.
type stepsCLI struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr bytes.Buffer
	out    *bufio.Reader
}

// stepsStartCLI starts `pmauthority apply --jsonl` and writes total
// request lines to it, cycling through lines, then closes its input. The
// answers are read (concurrently) with next.
func stepsStartCLI(t testing.TB, bin string, lines [][]byte, total int) *stepsCLI {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepsCLITimeout)
	c := &stepsCLI{cancel: cancel}
	c.cmd = exec.CommandContext(ctx, bin, "apply", "--jsonl", "--schema", stepsSchemaArg(t, "stress"))
	c.cmd.Stderr = &c.stderr
	c.cmd.WaitDelay = time.Second
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	c.out = bufio.NewReaderSize(stdout, 1<<20)
	go func() {
		w := bufio.NewWriterSize(stdin, 1<<20)
		for i := range total {
			w.Write(lines[i%len(lines)])
			w.WriteByte('\n')
		}
		w.Flush()
		stdin.Close()
	}()
	return c
}

// next returns the next answer line, without its newline.
func (c *stepsCLI) next() ([]byte, error) {
	line, err := c.out.ReadBytes('\n')
	if err == io.EOF && len(line) > 0 {
		err = io.ErrUnexpectedEOF
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}

// wait waits for the command to exit, after its last answer.
func (c *stepsCLI) wait(t testing.TB) {
	t.Helper()
	defer c.cancel()
	if _, err := c.next(); err != io.EOF {
		t.Errorf("pmauthority apply --jsonl: more output than answers (%v)", err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("pmauthority apply --jsonl: %v\n%s", err, c.stderr.Bytes())
	}
}

// stepsRunCLI sends lines to `pmauthority apply --jsonl` and returns its
// answer lines.
func stepsRunCLI(t testing.TB, bin string, lines [][]byte) [][]byte {
	t.Helper()
	c := stepsStartCLI(t, bin, lines, len(lines))
	answers := make([][]byte, len(lines))
	for i := range answers {
		line, err := c.next()
		if err != nil {
			c.cancel()
			t.Fatalf("pmauthority apply --jsonl, answer %d of %d: %v\n%s", i, len(lines), err, c.stderr.Bytes())
		}
		answers[i] = line
	}
	c.wait(t)
	return answers
}

// stepsCheckCLI sends the cases through the command line and compares
// the answers with the corpus.
func stepsCheckCLI(t *testing.T, bin, file string, runs []*stepsCaseRun) {
	t.Helper()
	var reqs [][]byte
	var cases []*stepsCaseRun
	for _, cr := range runs {
		if cr != nil {
			reqs = append(reqs, stepsRequest(t, cr))
			cases = append(cases, cr)
		}
	}
	answers := stepsRunCLI(t, bin, reqs)
	checks := make([]*caseCheck, len(cases))
	for i, cr := range cases {
		checks[i] = stepsCheckAnswer(cr, answers[i])
	}
	r := newCorpusReport(checks)
	r.report(t, file+" through apply --jsonl")
}

// stepsCheckAnswer compares one answer of the command line with the case
// it answers.
func stepsCheckAnswer(cr *stepsCaseRun, line []byte) *caseCheck {
	sc, run := cr.sc, cr.run
	kind := sc.Mutation
	if kind == "" {
		kind = "generated"
	}
	c := &caseCheck{id: sc.Case, schema: sc.Schema, kind: kind}
	var a stepsAnswer
	if err := strictUnmarshal(line, &a); err != nil {
		c.fail("answer", "", "an answer line", fmt.Sprintf("%s (%v)", line, err))
		return c
	}
	res := &sc.Result
	// The first step whose inversion threw in JS (-1: none). A step that
	// cannot be inverted fails a request with positions.
	invAt, invThrown := -1, stepsThrown{}
	for i, inv := range sc.Inverted {
		if inv[0] == '{' && strictUnmarshal(inv, &invThrown) == nil {
			invAt = i
			break
		}
	}
	switch {
	case cr.byDesign && (invAt < 0 || invAt >= run.fail):
		// Go rejects a position where JS went on: the in-process error.
		c.eq("error.step", "", jsonInt(run.fail), stepsAnswerStep(&a))
		c.eq("error.message", "", jsonString(run.err.Error()), stepsAnswerMessage(&a))
	case cr.byDesign:
		// An earlier step cannot be inverted: the request fails there.
		c.eq("error.step", "inverted", jsonInt(invAt), stepsAnswerStep(&a))
		if invThrown.ErrorName != "TypeError" {
			stepsCheckCLIMessage(c, "error.message", "inverted", invThrown.Error, &a)
		}
	case res.Doc == nil:
		c.eq("error.step", "", jsonInt(*res.FailedStep), stepsAnswerStep(&a))
		if res.ErrorName != "TypeError" {
			stepsCheckCLIMessage(c, "error.message", "", res.Error, &a)
		}
	case invAt >= 0:
		c.eq("error.step", "inverted", jsonInt(invAt), stepsAnswerStep(&a))
		if invThrown.ErrorName != "TypeError" {
			stepsCheckCLIMessage(c, "error.message", "inverted", invThrown.Error, &a)
		}
	default:
		if a.Error != nil {
			c.fail("doc", "", "(an answer with doc)", string(line))
			return c
		}
		c.eq("doc", "", res.Doc, jsonString(string(a.Doc)))
		stepsEqList(c, "mapped", sc.Mapped, a.Mapped, func(b []byte) []byte { return b })
		stepsEqList(c, "mappedFlags", sc.MappedFlags, a.MappedFlags, func(b []byte) []byte { return b })
		stepsEqList(c, "inverted", sc.Inverted, a.Inverted, func(b []byte) []byte { return jsonString(string(b)) })
	}
	return c
}

// stepsEqList compares a recorded list with the answer's, element by
// element, each answer element rendered by render.
func stepsEqList(c *caseCheck, field string, want, got []json.RawMessage, render func([]byte) []byte) {
	if len(want) != len(got) {
		c.fail(field, "length", fmt.Sprint(len(want)), fmt.Sprint(len(got)))
		return
	}
	for i := range want {
		c.eq(field, fmt.Sprint(i), want[i], render(got[i]))
	}
}

func stepsAnswerStep(a *stepsAnswer) []byte {
	if a.Error == nil || a.Error.Step == nil {
		return nil
	}
	return jsonInt(*a.Error.Step)
}

func stepsAnswerMessage(a *stepsAnswer) []byte {
	if a.Error == nil {
		return nil
	}
	return a.Error.Message
}

// stepsCheckCLIMessage checks the message of an error answer against the
// recorded JS message: equal, or the JS message followed by " (at " …
// ")", the field a *model.JSONError names (the only text the command
// line adds to a JS message). A failed inversion is reported as
// "invert: " and the message.
func stepsCheckCLIMessage(c *caseCheck, field, where string, want json.RawMessage, a *stepsAnswer) {
	c.fields++
	js, err := jsonscan.NewDecoder(want).ReadString()
	if err != nil || a.Error == nil {
		c.diffs = append(c.diffs, fieldDiff{field: field, where: where, want: shown(want), got: shown(stepsAnswerMessage(a))})
		return
	}
	got, err := jsonscan.NewDecoder(a.Error.Message).ReadString()
	if err != nil {
		c.diffs = append(c.diffs, fieldDiff{field: field, where: where, want: shown(want), got: shown(a.Error.Message)})
		return
	}
	if where == "inverted" {
		js = "invert: " + js
	}
	if got == js || strings.HasPrefix(got, js+" (at ") && strings.HasSuffix(got, ")") {
		return
	}
	c.diffs = append(c.diffs, fieldDiff{field: field, where: where, want: shown(want), got: shown(a.Error.Message)})
}

// stepsMeasureCLI times apply --jsonl on 200,000 small requests, twice:
// prosemirror-v8-perf's request (reqtest.Seed) and the committed step
// corpus's requests (about 800 bytes, with positions, four schemas)
// over and over. It logs lines per second of wall-clock time and per CPU
// second of the command (the test machine may be shared), and checks
// that every answer equals the first answer to the same request.
func stepsMeasureCLI(t *testing.T, bin string) {
	schemas := loadSchemas(t)
	var reqs [][]byte
	for _, cr := range stepsReplayLines(schemas, stepsReadCorpus(t, stepsCommitted)) {
		if cr != nil {
			reqs = append(reqs, stepsRequest(t, cr))
		}
	}
	seed := []byte(`{"schema":"text",` + strings.TrimPrefix(reqtest.Seed, "{"))
	stepsTimeCLI(t, bin, "prosemirror-v8-perf request", [][]byte{seed}, [][]byte{[]byte(reqtest.SeedAnswer)})
	stepsTimeCLI(t, bin, "step corpus requests", reqs, stepsRunCLI(t, bin, reqs))
}

// stepsTimeCLI sends 200,000 requests, cycling through reqs, whose
// answers must be want, and logs the rate.
func stepsTimeCLI(t *testing.T, bin, name string, reqs, want [][]byte) {
	const total = 200000
	size := 0
	for _, r := range reqs {
		size += len(r)
	}
	// The timing includes starting the process (milliseconds): the
	// command buffers its answers, so a first request cannot be timed
	// apart.
	start := time.Now()
	c := stepsStartCLI(t, bin, reqs, total)
	differ := 0
	for i := range total {
		line, err := c.next()
		if err != nil {
			c.cancel()
			t.Fatalf("answer %d: %v\n%s", i, err, c.stderr.Bytes())
		}
		if !bytes.Equal(line, want[i%len(reqs)]) {
			differ++
		}
	}
	elapsed := time.Since(start)
	c.wait(t)
	if differ > 0 {
		t.Errorf("%s: %d of %d answers differ from the expected answer", name, differ, total)
	}
	cmd := c.cmd
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t.Logf("apply --jsonl, %s: %d lines (%d distinct, avg %d bytes) in %v: %.0f lines/s wall clock, %.0f lines per CPU second of the command (DESIGN.md: >50k lines/s)",
		name, total, len(reqs), size/len(reqs), elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), float64(total)/cpu.Seconds())
}
