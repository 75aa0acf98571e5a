package bench

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// tracesDir returns the traces folder, skipping the benchmark when there
// is none.
func tracesDir(b *testing.B) string {
	dir := tracedoc.Dir("..")
	files, _ := filepath.Glob(filepath.Join(dir, "*.steps.jsonl.gz"))
	if len(files) == 0 {
		b.Skipf("no traces in %s (set PMA_TRACES)", dir)
	}
	return dir
}

// basicSchema returns the built-in "basic" schema, the traces' schema.
func basicSchema(b *testing.B) *model.Schema {
	s, err := schemas.Get("basic")
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// cpuTime returns the CPU time (user + system) the process has used, all
// threads together: on a loaded machine it tracks the work done better
// than the wall-clock time, which includes waiting for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports cpu, the CPU time of b's loop, per operation as
// cpu-ns/op, or per step as cpu-ns/step when an operation is steps > 1
// steps.
func reportCPU(b *testing.B, cpu time.Duration, steps int) {
	unit := "cpu-ns/op"
	if steps > 1 {
		unit = "cpu-ns/step"
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*steps), unit)
}
