// Turns the outputs of bench/transform.sh into a markdown table: the
// medians of Go's BenchmarkTransformReplay runs and of js/transform.mjs's
// timed runs (µs per replay of the recorded session, wall clock and CPU
// time), their spread (lowest–highest) and the node/Go ratios.
//
//   node transform-report.mjs GO.txt NODE.jsonl

import fs from "node:fs"
import { median, round } from "./lib.mjs"

let [goFile, nodeFile] = process.argv.slice(2)
if (!nodeFile) throw new Error("usage: node transform-report.mjs GO.txt NODE.jsonl")

let go = { wall: [], cpu: [] }
for (let line of fs.readFileSync(goFile, "utf8").split("\n")) {
  let m = /^BenchmarkTransformReplay(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) cpu-ns\/op/.exec(line)
  if (!m) continue
  go.wall.push(Number(m[1]) / 1000)
  go.cpu.push(Number(m[2]) / 1000)
}
let node = { wall: [], cpu: [], first: [] }, rounds = 0, ops = 0, warmup = 0, iters = 0, version = ""
for (let line of fs.readFileSync(nodeFile, "utf8").split("\n")) {
  if (!line) continue
  let r = JSON.parse(line)
  rounds++
  ops = r.ops
  warmup = r.warmup
  iters = r.iters
  version = r.node
  node.wall.push(...r.runs_us)
  node.cpu.push(...r.cpu_runs_us)
  node.first.push(r.first_cpu_us)
}
if (!go.wall.length || !node.wall.length) throw new Error("no figures for Go or node")

let fmt = x => String(Math.round(x))
let spread = xs => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`
let lines = [
  `Replay of the recorded Transform session (${ops} ops on the 50 KB document), ${rounds} rounds ` +
    `(Go: ${go.wall.length} benchmark runs; node ${version}: ${node.wall.length} timed runs of ${iters} replays, ` +
    `after ${warmup} warm-up replays in each round). ` +
    "Medians, µs per replay, lowest–highest in brackets.",
  "",
  "| | Go | node | node/Go |",
  "|---|---:|---:|---:|",
]
for (let [name, k] of [["wall", "wall"], ["CPU", "cpu"]]) {
  let g = median(go[k]), n = median(node[k])
  lines.push(`| ${name} | ${fmt(g)} (${spread(go[k])}) | ${fmt(n)} (${spread(node[k])}) | ${round(n / g, 2)}× |`)
}
lines.push("", `node's first replay in each process (JIT not yet warm): median ${fmt(median(node.first))} µs CPU ` +
  `(${spread(node.first)}), ${round(median(node.first) / median(go.cpu), 2)}× Go's.`)
console.log(lines.join("\n"))
