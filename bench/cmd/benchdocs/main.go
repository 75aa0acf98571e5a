// Command benchdocs writes the JSON benchmark documents (bench.DocSizes,
// built by bench.BuildDoc) to a folder, for the node side of the
// benchmarks: js/json.mjs reads them, the Go benchmarks build the same
// bytes in memory.
//
//	go run ./bench/cmd/benchdocs -out bench/out/docs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pmauthority/pmauthority/bench"
)

func main() {
	out := flag.String("out", "bench/out/docs", "folder to write NAME.json into")
	traces := flag.String("traces", "", "traces folder (default $PMA_TRACES or ../shared/traces beside the repository)")
	flag.Parse()
	dir := *traces
	if dir == "" {
		dir = bench.TracesDir("bench")
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
		data, err := bench.BuildDoc(tracesDir, d.Bytes)
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
