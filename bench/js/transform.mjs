// Replays the recorded Transform session (js/transform-record.mjs,
// ../testdata/transform-ops.json) with the real prosemirror-transform and
// times it: the node side of BenchmarkTransformReplay.
//
//   node transform.mjs [--ops FILE] [--warmup W] [--runs N]
//
// The file is parsed and its start document made once, untimed. A run is
// a new Transform of the start document and every op applied in order,
// its arguments decoded from the parsed JSON (js/ops.mjs: Node.fromJSON,
// schema.markFromJSON, Slice.fromJSON …), as Transform.Apply decodes them
// in Go. W warm-up runs (default 30), then N timed runs (default 10):
// V8 takes 15 to 25 replays to reach its steady speed here, which is 3
// to 5 times that of the first replays. Every run's final document is
// checked against the file's sha256 (outside the timing), and a mismatch
// or a throwing op exits 1. Prints one JSON object: {ops, warmup, runs,
// runs_us, cpu_runs_us, us, cpu_us, first_us, first_cpu_us, sha256_ok,
// node}: µs per replay (wall clock, and the process's CPU time with all
// threads and GC), first_ those of the first replay in the process.

import { Transform } from "prosemirror-transform"
import { applyOp, readOps } from "./ops.mjs"
import { docSha256, flags, median, now, readText, schema } from "./lib.mjs"

let opts = flags(process.argv.slice(2), {
  ops: new URL("../testdata/transform-ops.json", import.meta.url).pathname, warmup: 30, runs: 10,
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

let wall = [], cpu = [], first
for (let r = 0; r < opts.warmup + opts.runs; r++) {
  let cpuStart = process.cpuUsage()
  let start = now()
  let doc = replay()
  let us = (now() - start) * 1000
  let used = process.cpuUsage(cpuStart)
  let sum = docSha256(doc)
  if (sum != rec.sha256) {
    console.error(`${opts.ops}: final document sha256 ${sum}, the file says ${rec.sha256}`)
    process.exit(1)
  }
  if (r == 0) first = [us, used.user + used.system]
  if (r >= opts.warmup) {
    wall.push(us)
    cpu.push(used.user + used.system)
  }
}

console.log(JSON.stringify({
  ops: rec.ops.length,
  warmup: opts.warmup,
  runs: opts.runs,
  runs_us: wall.map(x => Math.round(x)),
  cpu_runs_us: cpu,
  us: Math.round(median(wall)),
  cpu_us: Math.round(median(cpu)),
  first_us: Math.round(first[0]),
  first_cpu_us: first[1],
  sha256_ok: true,
  node: process.version,
}))
