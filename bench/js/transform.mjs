// Replays the recorded Transform session (js/transform-record.mjs,
// ../testdata/transform-ops.json) with the real prosemirror-transform and
// times it: the node side of BenchmarkTransformReplay.
//
//   node transform.mjs [--ops FILE] [--warmup W] [--runs N] [--iters K]
//
// The file is parsed and its start document made once, untimed. A run is
// a new Transform of the start document and every op applied in order,
// its arguments decoded from the parsed JSON (js/ops.mjs: Node.fromJSON,
// schema.markFromJSON, Slice.fromJSON …), as Transform.Apply decodes them
// in Go. W warm-up replays (default 30, at least 1), then N timed runs
// (default 10) of K replays each (default 5, so that a run's time
// includes its share of the garbage collections, as the Go benchmark's
// average over its loop does): V8 takes 15 to 25 replays to reach its steady speed here,
// 3 to 5 times that of the first replays. Every replay's final document
// is checked against the file's sha256 (outside the timing), and a
// mismatch or a throwing op exits 1. Prints one JSON object: {ops, warmup, runs,
// runs_us, cpu_runs_us, us, cpu_us, first_us, first_cpu_us, sha256_ok,
// node}: µs per replay (wall clock, and the process's CPU time with all
// threads and GC), first_ those of the first replay in the process, a
// warm-up one.

import { Transform } from "prosemirror-transform"
import { applyOp, readOps } from "./ops.mjs"
import { docSha256, flags, median, now, readText, schema } from "./lib.mjs"

let opts = flags(process.argv.slice(2), {
  ops: new URL("../testdata/transform-ops.json", import.meta.url).pathname, warmup: 30, runs: 10, iters: 5,
})

let rec = readOps(readText(opts.ops), schema)

// replay applies every op to a transform of the start document and
// returns the final document.
function replay() {
  let tr = new Transform(rec.startDoc)
  for (let i = 0; i < rec.ops.length; i++) {
    try {
      applyOp(tr, schema, rec.ops[i])
    } catch (e) {
      throw new Error(`op ${i} (${rec.ops[i].op}): ${e.message}`)
    }
  }
  return tr.doc
}

// timed returns the wall clock and CPU time in µs per replay of n
// replays, each checked against the file's sha256.
function timed(n) {
  let wall = 0, cpu = 0
  for (let i = 0; i < n; i++) {
    let cpuStart = process.cpuUsage()
    let start = now()
    let doc = replay()
    wall += (now() - start) * 1000
    let used = process.cpuUsage(cpuStart)
    cpu += used.user + used.system
    let sum = docSha256(doc)
    if (sum != rec.sha256) {
      console.error(`${opts.ops}: final document sha256 ${sum}, the file says ${rec.sha256}`)
      process.exit(1)
    }
  }
  return [wall / n, cpu / n]
}

let first = timed(1)
if (opts.warmup > 1) timed(opts.warmup - 1)
let wall = [], cpu = []
for (let r = 0; r < opts.runs; r++) {
  let [w, c] = timed(opts.iters)
  wall.push(w)
  cpu.push(c)
}

console.log(JSON.stringify({
  ops: rec.ops.length,
  warmup: opts.warmup,
  runs: opts.runs,
  iters: opts.iters,
  runs_us: wall.map(x => Math.round(x)),
  cpu_runs_us: cpu.map(x => Math.round(x)),
  us: Math.round(median(wall)),
  cpu_us: Math.round(median(cpu)),
  first_us: Math.round(first[0]),
  first_cpu_us: Math.round(first[1]),
  sha256_ok: true,
  node: process.version,
}))
