package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3"
)

// The sources of serve's flags besides the command line: each flag also
// comes from the environment variable envPrefix_FLAG (upper case, dashes
// as underscores: PMA_MAX_MEMORY) and from the file of --config. The
// command line wins over the environment, which wins over the file.
const (
	envPrefix  = "PMA"
	configFlag = "config"
)

// envName returns the environment variable of the flag name.
func envName(name string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseSources sets the flags of fs from args, then from the environment,
// then from the --config file (see ff.Parse). A command-line error has
// been reported by package flag when cmdline is true.
func parseSources(fs *flag.FlagSet, args []string) (cmdline bool, err error) {
	usage := fs.Usage
	fs.Usage = func() { cmdline = true } // package flag calls it on -h and errors
	defer func() { fs.Usage = usage }()
	err = ff.Parse(fs, args,
		ff.WithEnvVarPrefix(envPrefix),
		ff.WithConfigFileFlag(configFlag),
		ff.WithConfigFileParser(configParser(fs)))
	if cmdline {
		// ff wraps the error of package flag.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return true, err
	}
	// ff returns the error of opening the file as it is.
	if pe := (*iofs.PathError)(nil); errors.As(err, &pe) && error(pe) == err {
		err = fmt.Errorf("--%s: %w", configFlag, err)
	}
	return false, err
}

// configParser returns the ff.ConfigFileParser of --config files: a flag
// a line, its name (as on the command line, without dashes), a space and
// its value ("strict" alone means "strict true"); blank lines and lines
// starting with # are skipped, and " #" ends a value. A repeatable flag
// may have several lines. Names that are no flag of fs are errors, all of
// them named at once.
func configParser(fs *flag.FlagSet) ff.ConfigFileParser {
	return func(r io.Reader, set func(name, value string) error) error {
		file := fs.Lookup(configFlag).Value.String()
		var unknown []string
		sc := bufio.NewScanner(r)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' {
				continue
			}
			name, value, ok := strings.Cut(line, " ")
			if !ok {
				name, value = line, "true"
			}
			value = strings.TrimSpace(value)
			if i := strings.Index(value, " #"); i >= 0 {
				value = strings.TrimSpace(value[:i])
			}
			if name == configFlag {
				return fmt.Errorf("--%s %s: line %d: a config file cannot name another", configFlag, file, n)
			}
			if fs.Lookup(name) == nil {
				u := fmt.Sprintf("line %d: %q", n, name)
				if near := closestFlags(fs, name); len(near) > 0 {
					u += " (did you mean " + strings.Join(near, " or ") + "?)"
				}
				unknown = append(unknown, u)
				continue
			}
			if err := set(name, value); err != nil {
				// ff wraps the flag's error in one of its own.
				if inner := errors.Unwrap(err); inner != nil {
					err = inner
				}
				return fmt.Errorf("--%s %s: line %d: --%s: %w", configFlag, file, n, name, err)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("--%s %s: %w", configFlag, file, err)
		}
		if len(unknown) > 0 {
			return fmt.Errorf("--%s %s: no such flags: %s", configFlag, file, strings.Join(unknown, ", "))
		}
		return nil
	}
}

// unknownEnv returns the environment variables named like serve's (the
// prefix PMA_) that are no flag's, each with the closest flags' names.
func unknownEnv(fs *flag.FlagSet, environ []string) []string {
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, envPrefix+"_")
		if !ok || known[name] || testEnv[name] {
			continue
		}
		u := name
		if near := closestFlags(fs, strings.ToLower(strings.ReplaceAll(rest, "_", "-"))); len(near) > 0 {
			for i, n := range near {
				near[i] = envName(strings.TrimPrefix(n, "--"))
			}
			u += " (did you mean " + strings.Join(near, " or ") + "?)"
		}
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// testEnv are the PMA_ variables of the tests and benchmarks, not serve's.
var testEnv = map[string]bool{
	"PMA_REQUIRE_POSTGRES": true, "PMA_POSTGRES_BIN": true, "PMA_TRACES": true,
	"PMA_REQUIRE_BROWSER": true, "PMA_MODEL_CORPUS": true, "PMA_STEP_CORPUS": true,
	"PMA_BENCH_POSTGRES_URL": true,
}

// closestFlags returns the names (with "--") of the flags of fs closest
// to name by edit distance, when close enough to be a typo of them.
func closestFlags(fs *flag.FlagSet, name string) []string {
	name = strings.TrimLeft(name, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	best, out := -1, []string(nil)
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1) // a flag name cut short
		}
		if d > max(1, len(name)/3) {
			return
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{"--" + f.Name}
		case d == best:
			out = append(out, "--"+f.Name)
		}
	})
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// editDistance returns the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// shortUsage writes what a mistyped command line gets: the error, the
// flags closest to the one it names, if any, and where the rest is.
func shortUsage(w io.Writer, fs *flag.FlagSet, err error) {
	fmt.Fprintln(w, "pmauthority serve:", err)
	const undefined = "flag provided but not defined: "
	if name, ok := strings.CutPrefix(err.Error(), undefined); ok {
		if near := closestFlags(fs, name); len(near) > 0 {
			fmt.Fprintln(w, "did you mean", strings.Join(near, " or ")+"?")
		}
	}
	fmt.Fprintln(w, "run pmauthority serve -h for all flags")
}
