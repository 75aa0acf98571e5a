// Command benchdocs writes the JSON benchmark documents (bench.DocSizes,
// built by tracedoc.BuildDoc) to a folder, for the node side of the
// benchmarks: js/json.mjs reads them, the Go benchmarks build the same
// bytes in memory.
//
//	cd bench && go run ./cmd/benchdocs -out out/docs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pmauthority/pmauthority/bench"
	"github.com/pmauthority/pmauthority/internal/tracedoc"
)

func main() {
	out := flag.String("out", "out/docs", "folder to write NAME.json into")
	traces := flag.String("traces", "", "traces folder (default $PMA_TRACES or ../shared/traces beside the repository; run in bench/)")
	flag.Parse()
	dir := *traces
	if dir == "" {
		dir = tracedoc.Dir("..")
	}
	if err := run(dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchdocs:", err)
		os.Exit(1)
	}
}

func run(tracesDir, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, d := range bench.DocSizes {
		data, err := tracedoc.BuildDoc(tracesDir, d.Bytes)
		if err != nil {
			return err
		}
		file := filepath.Join(out, d.Name+".json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes\n", file, len(data))
	}
	return nil
}
