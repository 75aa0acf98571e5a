// Times one typical edit against documents of N top-level paragraphs, to
// show how the cost of step.apply grows with the parent's child count.
//
//   node applysize.mjs --paragraphs N [--iters I] [--runs R]
//
// The document has N paragraphs holding the same line of text; the edit
// types one character in the middle of the middle paragraph and deletes
// it again (an insertText replace step, then a delete replace step), so
// the document keeps its size and no document's resolve cache is reused.
// Both steps are decoded once; only step.apply is timed. One warm-up run,
// then R runs of I step pairs (default about 0.2 s a run); prints
// {paragraphs, ns_per_step, runs_ns_per_step, cpu_runs_ns_per_step, iters,
// node}, the cpu figures being the process's CPU time per step.
// The Go side is BenchmarkApplyDocSize in ../applysize_test.go, which
// builds the same document and steps.

import { Step } from "prosemirror-transform"
import { flags, median, now, round, schema } from "./lib.mjs"

// line is the text of every paragraph (must match applysize_test.go).
const line = "The quick brown fox jumps over the lazy dog, then naps in the sun."

let opts = flags(process.argv.slice(2), { paragraphs: 100, iters: 0, runs: 5 })
let n = opts.paragraphs
let iters = opts.iters || Math.max(200, Math.round(2e6 / (n + 100)))

let paragraph = { type: "paragraph", content: [{ type: "text", text: line }] }
let doc = schema.nodeFromJSON({ type: "doc", content: Array.from({ length: n }, () => paragraph) })
let pos = (n >> 1) * (line.length + 2) + 1 + (line.length >> 1)
let insert = Step.fromJSON(schema, { stepType: "replace", from: pos, to: pos, slice: { content: [{ type: "text", text: "x" }] } })
let del = Step.fromJSON(schema, { stepType: "replace", from: pos, to: pos + 1 })

let runs = [], cpuRuns = []
for (let r = 0; r <= opts.runs; r++) {
  let d = doc
  let cpu = process.cpuUsage()
  let start = now()
  for (let i = 0; i < iters; i++) {
    let a = insert.apply(d)
    if (a.failed) throw new Error(a.failed)
    let b = del.apply(a.doc)
    if (b.failed) throw new Error(b.failed)
    d = b.doc
  }
  let ns = (now() - start) * 1e6 / (2 * iters)
  cpu = process.cpuUsage(cpu)
  if (!d.eq(doc)) throw new Error("insert + delete did not give the document back")
  if (r > 0) {
    runs.push(ns)
    cpuRuns.push((cpu.user + cpu.system) * 1000 / (2 * iters))
  }
}

console.log(JSON.stringify({
  paragraphs: n,
  ns_per_step: round(median(runs), 1),
  runs_ns_per_step: runs.map(x => round(x, 1)),
  cpu_runs_ns_per_step: cpuRuns.map(x => round(x, 1)),
  iters,
  node: process.version,
}))
