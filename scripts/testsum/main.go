// Command testsum reads the output of `go test -json` and writes what a
// plain `go test` prints (one line per package, the output of failed
// tests, build errors), plus one line per skipped top-level test, and
// appends the run's counts of passed, failed and skipped tests (subtests
// included) to a file. With -total it prints the sum of the counts in
// that file instead, as "N passed, N failed, N skipped". With -keep, the
// lines that tests wrote (passed ones too) matching a regular expression
// are also written to -keep-file, in the order they came. scripts/test
// uses it for the summary that ends the test command, and for the counts
// of the differential tests.
//
//	go test -json ./... | testsum -counts FILE -label "go test ./..." [-keep RE -keep-file FILE]
//	testsum -total FILE
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// event is a line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action      string
	Package     string
	ImportPath  string // of build-output events
	Test        string
	Output      string
	FailedBuild string
}

// counts are the tests of a run, by result.
type counts struct{ pass, fail, skip int }

func main() {
	countsFile := flag.String("counts", "", "append the run's counts to `file`")
	label := flag.String("label", "go test", "what the run was, for the counts file")
	total := flag.String("total", "", "print the sum of the counts in `file` and exit")
	keep := flag.String("keep", "", "write the tests' output lines matching `regexp` to -keep-file")
	keepFile := flag.String("keep-file", "", "the `file` for -keep")
	flag.Parse()
	var keepRE *regexp.Regexp
	if *keep != "" {
		re, err := regexp.Compile(*keep)
		if err != nil || *keepFile == "" {
			fmt.Fprintln(os.Stderr, "testsum: -keep needs a valid regexp and -keep-file:", err)
			os.Exit(2)
		}
		keepRE = re
	}
	if *total != "" {
		if err := printTotal(os.Stdout, *total); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		return
	}
	c, kept, err := summarize(os.Stdin, os.Stdout, keepRE)
	if keepRE != nil {
		if werr := os.WriteFile(*keepFile, []byte(strings.Join(kept, "")), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "testsum:", werr)
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
	}
	if *countsFile != "" {
		f, ferr := os.OpenFile(*countsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if ferr == nil {
			_, ferr = fmt.Fprintf(f, "%d %d %d %s\n", c.pass, c.fail, c.skip, *label)
			if cerr := f.Close(); ferr == nil {
				ferr = cerr
			}
		}
		if ferr != nil {
			fmt.Fprintln(os.Stderr, "testsum:", ferr)
			os.Exit(2)
		}
	}
	if err != nil || c.fail > 0 {
		os.Exit(1)
	}
}

// summarize reads the events of in and writes the summary to out. Lines
// that are not JSON (such as what go vet prints before the tests) are
// written as they are. It returns the tests' output lines that keep
// matches (none when keep is nil).
func summarize(in io.Reader, out io.Writer, keep *regexp.Regexp) (counts, []string, error) {
	var c counts
	var kept []string
	held := map[string][]string{} // output of running tests, by package and test
	failedIn := map[string]int{}  // failed tests, by package
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test == "":
			// The package's own lines: "ok", "FAIL", "?", panics
			// outside tests. "PASS" and "FAIL" alone are noise.
			if e.Action == "output" && e.Output != "PASS\n" && e.Output != "FAIL\n" {
				fmt.Fprint(out, e.Output)
			}
			if e.Action == "fail" && failedIn[e.Package] == 0 {
				// A package that failed without a failed test: a
				// build error, a panic in TestMain, a timeout.
				c.fail++
			}
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
			if keep != nil && keep.MatchString(e.Output) {
				kept = append(kept, e.Output)
			}
		case e.Action == "pass":
			c.pass++
			delete(held, key)
		case e.Action == "skip":
			c.skip++
			if !strings.Contains(e.Test, "/") {
				fmt.Fprintf(out, "--- SKIP: %s %s%s\n", e.Package, e.Test, skipReason(held[key]))
			}
			delete(held, key)
		case e.Action == "fail":
			c.fail++
			failedIn[e.Package]++
			fmt.Fprintf(out, "=== %s %s\n%s", e.Package, e.Test, strings.Join(held[key], ""))
			delete(held, key)
		}
	}
	return c, kept, sc.Err()
}

// skipReason returns ": " and the last line that a skipped test logged
// before its "--- SKIP" line (the reason it gave), or "".
func skipReason(output []string) string {
	for i := len(output) - 1; i >= 0; i-- {
		s := strings.TrimSpace(output[i])
		if s != "" && !strings.HasPrefix(s, "--- SKIP") && !strings.HasPrefix(s, "=== ") {
			return ": " + s
		}
	}
	return ""
}

// printTotal writes the counts of each run recorded in file, then their
// sum as the last line.
func printTotal(out io.Writer, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var sum counts
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var c counts
		var label string
		n, _ := fmt.Sscanf(line, "%d %d %d", &c.pass, &c.fail, &c.skip)
		if n != 3 {
			return fmt.Errorf("%s: not a counts line: %q", file, line)
		}
		if f := strings.SplitN(line, " ", 4); len(f) == 4 {
			label = f[3]
		}
		fmt.Fprintf(out, "  %s: %d passed, %d failed, %d skipped\n", label, c.pass, c.fail, c.skip)
		sum.pass += c.pass
		sum.fail += c.fail
		sum.skip += c.skip
	}
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", sum.pass, sum.fail, sum.skip)
	return nil
}
