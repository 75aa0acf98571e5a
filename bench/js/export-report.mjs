// Turns the outputs of bench/export.sh into a markdown table: the medians
// of Go's BenchmarkExport runs and of js/export.mjs's runs (µs per export,
// wall clock and CPU time) and node/Go ratios.
//
//   node export-report.mjs GO.txt NODE.jsonl

import fs from "node:fs"
import { median, round } from "./lib.mjs"

let [goFile, nodeFile] = process.argv.slice(2)
if (!nodeFile) throw new Error("usage: node export-report.mjs GO.txt NODE.jsonl")

let go = {}
for (let line of fs.readFileSync(goFile, "utf8").split("\n")) {
  let m = /^Benchmark(Export\/(\w+)|MarkdownParse)\/50KB(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) cpu-ns\/op/.exec(line)
  if (!m) continue
  m = [m[0], m[2] || "parse", m[3], m[4]]
  let e = go[m[1]] ||= { wall: [], cpu: [] }
  e.wall.push(Number(m[2]) / 1000)
  e.cpu.push(Number(m[3]) / 1000)
}
let node = {}, runs = 0, version = ""
for (let line of fs.readFileSync(nodeFile, "utf8").split("\n")) {
  if (!line) continue
  let r = JSON.parse(line)
  runs++
  version = r.node
  for (let f of ["text", "markdown", "parse", "html"]) {
    let e = node[f] ||= { wall: [], cpu: [] }
    e.wall.push(...r[f + "_runs_us"])
    e.cpu.push(...r[f + "_cpu_runs_us"])
  }
}

let fmt = x => x >= 100 ? String(Math.round(x)) : String(round(x, 1))
let lines = [
  `Export of the 50 KB document, ${runs} rounds (Go: ${go.markdown ? go.markdown.wall.length : 0} benchmark runs per format; node ${version}: ${node.markdown ? node.markdown.wall.length : 0} timed runs). Medians, µs per export.`,
  "",
  "| format | Go wall | node wall | ratio | Go CPU | node CPU | ratio (CPU) |",
  "|---|---:|---:|---:|---:|---:|---:|",
]
for (let f of ["text", "markdown", "parse", "html"]) {
  if (!go[f] || !node[f]) throw new Error(`no figures for ${f}`)
  let gw = median(go[f].wall), nw = median(node[f].wall), gc = median(go[f].cpu), nc = median(node[f].cpu)
  lines.push(`| ${f == "parse" ? "Markdown in (parse)" : f} | ${fmt(gw)} | ${fmt(nw)} | ${round(nw / gw, 2)}× | ${fmt(gc)} | ${fmt(nc)} | ${round(nc / gc, 2)}× |`)
}
console.log(lines.join("\n"))
