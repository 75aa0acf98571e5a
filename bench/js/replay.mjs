// Replays a ProseMirror step trace with the real libraries and times it.
//
//   node replay.mjs --trace FILE.steps.jsonl.gz [--runs N]
//
// All step lines are JSON.parse'd first (not timed). A run starts from the
// header's startDoc and does Step.fromJSON + step.apply for every step in
// order; one warm-up run, then N timed runs. Every run's final document is
// checked against the header's endDocSha256 (outside the timing); a
// mismatch or a failed step exits 1. Prints one JSON object:
// {trace, steps, runs_ms, cpu_runs_ms, median_ms, steps_per_s, sha256_ok,
// node}; cpu_runs_ms is the process's CPU time (all threads, GC included)
// of each run.

import { Step } from "prosemirror-transform"
import { docSha256, flags, median, now, readTrace, round, schema } from "./lib.mjs"

let opts = flags(process.argv.slice(2), { trace: "", runs: 5 })
if (!opts.trace) throw new Error("usage: node replay.mjs --trace FILE.steps.jsonl.gz [--runs N]")

let { header, lines } = readTrace(opts.trace)
let stepJSON = lines.map(l => JSON.parse(l))
let startDoc = schema.nodeFromJSON(header.startDoc)

// replay applies every step to startDoc and returns the final document.
function replay() {
  let doc = startDoc
  for (let i = 0; i < stepJSON.length; i++) {
    let result = Step.fromJSON(schema, stepJSON[i]).apply(doc)
    if (result.failed) throw new Error(`${header.trace}: step ${i}: ${result.failed}`)
    doc = result.doc
  }
  return doc
}

let runs = [], cpuRuns = []
for (let r = 0; r <= opts.runs; r++) {
  let cpu = process.cpuUsage()
  let start = now()
  let doc = replay()
  let ms = now() - start
  cpu = process.cpuUsage(cpu)
  let sum = docSha256(doc)
  if (sum != header.endDocSha256) {
    console.error(`${header.trace}: final doc sha256 ${sum}, header says ${header.endDocSha256}`)
    process.exit(1)
  }
  if (r > 0) {
    runs.push(ms)
    cpuRuns.push((cpu.user + cpu.system) / 1000)
  }
}

let med = median(runs)
console.log(JSON.stringify({
  trace: header.trace,
  steps: stepJSON.length,
  runs_ms: runs.map(x => round(x, 2)),
  cpu_runs_ms: cpuRuns.map(x => round(x, 2)),
  median_ms: round(med, 2),
  steps_per_s: Math.round(stepJSON.length / (med / 1000)),
  sha256_ok: true,
  node: process.version,
}))
