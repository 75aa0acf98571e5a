// Times JSON decoding and encoding of a document with the real libraries
// and measures the memory a loaded document takes.
//
//   node --expose-gc json.mjs --doc FILE[.gz] [--iters N] [--runs R] [--copies K]
//
// decode: JSON.parse(text) + schema.nodeFromJSON(obj), from the document's
// text already in a string; encode: JSON.stringify(doc.toJSON()). Each run
// times N iterations; one warm-up run, then R timed runs, median µs per
// document. The encoded text must equal the file's (it was made by
// JSON.stringify(doc.toJSON()) too), else exit 1.
//
// memory: K documents loaded with JSON.parse + nodeFromJSON are kept
// alive; the heapUsed and RSS growth after full collections, divided by K.
// The defaults for N and K depend on the document size; the Go benchmarks
// in ../json_test.go use the same formulas.
//
// Prints one JSON object: {doc, bytes, sha256, decode_us, encode_us,
// decode_runs_us, encode_runs_us, decode_cpu_runs_us, encode_cpu_runs_us,
// iters, copies, heap_per_doc, rss_per_doc, node}; the *_cpu_* figures are
// the process's CPU time (all threads, GC included) per document.

import { flags, median, now, readText, round, schema, sha256 } from "./lib.mjs"

let opts = flags(process.argv.slice(2), { doc: "", iters: 0, runs: 5, copies: 0 })
if (!opts.doc) throw new Error("usage: node --expose-gc json.mjs --doc FILE [--iters N] [--runs R] [--copies K]")
if (typeof global.gc != "function") throw new Error("run node with --expose-gc")

let text = readText(opts.doc)
let bytes = Buffer.byteLength(text, "utf8")
let iters = opts.iters || Math.max(5, Math.round(20e6 / bytes))
let copies = opts.copies || Math.max(10, Math.round(20e6 / bytes))

let doc = schema.nodeFromJSON(JSON.parse(text))
if (JSON.stringify(doc.toJSON()) !== text) {
  console.error(`${opts.doc}: JSON.stringify(doc.toJSON()) differs from the file`)
  process.exit(1)
}

// timeRuns returns the wall-clock and CPU µs per call of f, over R runs of
// N calls after one warm-up run, as {wall: [...], cpu: [...]}.
function timeRuns(f) {
  let wall = [], cpu = []
  for (let r = 0; r <= opts.runs; r++) {
    let cpuStart = process.cpuUsage()
    let start = now()
    for (let i = 0; i < iters; i++) f()
    let us = (now() - start) * 1000 / iters
    let used = process.cpuUsage(cpuStart)
    if (r > 0) {
      wall.push(us)
      cpu.push((used.user + used.system) / iters)
    }
  }
  return { wall, cpu }
}

let sink
let decodeRuns = timeRuns(() => { sink = schema.nodeFromJSON(JSON.parse(text)) })
let encodeRuns = timeRuns(() => { sink = JSON.stringify(doc.toJSON()) })

// settle collects garbage until the heap stops shrinking and returns the
// memory usage.
function settle() {
  for (let i = 0; i < 3; i++) global.gc()
  return process.memoryUsage()
}

sink = null
let before = settle()
let kept = []
for (let k = 0; k < copies; k++) kept.push(schema.nodeFromJSON(JSON.parse(text)))
let after = settle()
if (kept.length != copies) throw new Error("unreachable")

console.log(JSON.stringify({
  doc: opts.doc,
  bytes,
  sha256: sha256(text),
  decode_us: round(median(decodeRuns.wall), 1),
  encode_us: round(median(encodeRuns.wall), 1),
  decode_runs_us: decodeRuns.wall.map(x => round(x, 1)),
  encode_runs_us: encodeRuns.wall.map(x => round(x, 1)),
  decode_cpu_runs_us: decodeRuns.cpu.map(x => round(x, 1)),
  encode_cpu_runs_us: encodeRuns.cpu.map(x => round(x, 1)),
  iters,
  copies,
  heap_per_doc: Math.round((after.heapUsed - before.heapUsed) / copies),
  rss_per_doc: Math.round((after.rss - before.rss) / copies),
  node: process.version,
}))
