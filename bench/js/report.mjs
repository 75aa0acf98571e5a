// Turns the raw outputs of run.sh into the markdown tables of
// bench/out/latest.md: medians of the Go benchmark runs (`go test -bench`
// output) next to the node scripts' medians, and their ratios.
//
//   node report.mjs RAWDIR
//
// RAWDIR holds go-replay.txt, go-json.txt, go-applysize.txt (go test
// -bench output, several runs of each benchmark), the node scripts'
// outputs node-replay-NAME.R.json, node-json-NAME.R.json and
// node-applysize-N.R.json (one JSON line per invocation R; the runs of
// all invocations of a case are pooled) and info.json ({date, mode, go,
// node, cpu, cores, count}).

import fs from "node:fs"
import path from "node:path"
import { median } from "./lib.mjs"

let dir = process.argv[2]
if (!dir) throw new Error("usage: node report.mjs RAWDIR")
let read = f => fs.readFileSync(path.join(dir, f), "utf8")
let exists = f => fs.existsSync(path.join(dir, f))
let info = JSON.parse(read("info.json"))

// goBench parses go test -bench output into name -> metric -> [values],
// the name without the Benchmark prefix and the -GOMAXPROCS suffix.
function goBench(file) {
  let out = new Map()
  if (!exists(file)) return out
  for (let line of read(file).split("\n")) {
    let m = /^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$/.exec(line)
    if (!m) continue
    let metrics = out.get(m[1]) || new Map()
    out.set(m[1], metrics)
    let fields = m[2].trim().split(/\s+/)
    for (let i = 0; i + 1 < fields.length; i += 2) {
      let unit = fields[i + 1]
      if (!metrics.has(unit)) metrics.set(unit, [])
      metrics.get(unit).push(Number(fields[i]))
    }
  }
  return out
}

// goMedian returns the median of a metric of a Go benchmark, or NaN.
function goMedian(results, name, unit) {
  let values = results.get(name)?.get(unit)
  return values && values.length ? median(values) : NaN
}

// nodeResults returns the node outputs of each case whose files start
// with prefix, as [case name, [results]] sorted by name.
function nodeResults(prefix) {
  let cases = new Map()
  for (let f of fs.readdirSync(dir).sort()) {
    let m = /^(.*)\.\d+\.json$/.exec(f)
    if (!f.startsWith(prefix) || !m) continue
    let name = m[1].slice(prefix.length)
    if (!cases.has(name)) cases.set(name, [])
    cases.get(name).push(JSON.parse(read(f)))
  }
  return [...cases]
}

// pooled returns the median of a runs array pooled over results.
function pooled(results, key) {
  return median(results.flatMap(r => r[key]))
}

// fmt formats a number with thousands separators and d decimals.
function fmt(x, d = 0) {
  if (!Number.isFinite(x)) return "n/a"
  return x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d })
}

// ratio formats a / b as "1.23×".
function ratio(a, b) {
  let r = a / b
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : "n/a"
}

// bytes formats a byte count in KB (1000 bytes).
function kb(x) {
  return Number.isFinite(x) ? `${fmt(x / 1000, 1)} KB` : "n/a"
}

function table(head, rows) {
  let lines = ["| " + head.join(" | ") + " |"]
  lines.push("|" + head.map((h, i) => (i == 0 ? "---" : "---:")).join("|") + "|")
  for (let r of rows) lines.push("| " + r.join(" | ") + " |")
  return lines.join("\n")
}

let out = []
out.push(`Run ${info.date} (${info.mode}): ${info.cores} cores (${info.cpu}), shared and noisy, so only medians`)
out.push(`and ratios measured in the same run mean anything. ${info.go}, node ${info.node}. Go: median of`)
out.push(`${info.count} \`go test -bench\` runs; node: median of ${info.count} runs, each after its own warm-up run.`)
out.push(`Go and node runs of a case alternate, so both see the same load.`)
out.push(`Ratios are Go speed ÷ node speed (above 1: Go is faster), memory node ÷ Go (above 1: Go is smaller).`)
out.push(`"CPU time" compares the processes' CPU time (all threads, GC included) instead of the wall clock:`)
out.push(`it holds up better when other jobs compete for the cores.`)
out.push("")

let replay = goBench("go-replay.txt")
let rows = []
for (let [trace, ns] of nodeResults("node-replay-")) {
  let name = `Replay/${trace}`
  let steps = ns[0].steps
  let goRate = goMedian(replay, name, "steps/s")
  let nodeRate = steps / (pooled(ns, "runs_ms") / 1000)
  let goCPU = goMedian(replay, name, "cpu-ns/step"), nodeCPU = pooled(ns, "cpu_runs_ms") * 1e6 / steps
  rows.push([
    trace, fmt(steps), fmt(goRate), fmt(nodeRate), ratio(goRate, nodeRate), ratio(nodeCPU, goCPU),
    fmt(goMedian(replay, name, "B/step")), fmt(goMedian(replay, name, "allocs/step"), 1),
  ])
}
if (rows.length) {
  out.push("### Trace replay (StepFromJSON + Apply for every step), steps/s")
  out.push("")
  out.push(table(["trace", "steps", "Go steps/s", "node steps/s", "Go ÷ node", "Go ÷ node, CPU time", "Go B/step", "Go allocs/step"], rows))
  out.push("")
}

let json = goBench("go-json.txt")
rows = []
let docs = nodeResults("node-json-").sort((a, b) => a[1][0].bytes - b[1][0].bytes)
for (let [name, ns] of docs) {
  let dec = goMedian(json, `Decode/${name}`, "ns/op") / 1000
  let enc = goMedian(json, `Encode/${name}`, "ns/op") / 1000
  let mem = goMedian(json, `Decode/${name}`, "heapB/doc")
  let nodeDec = pooled(ns, "decode_runs_us"), nodeEnc = pooled(ns, "encode_runs_us")
  let nodeMem = median(ns.map(r => r.heap_per_doc))
  let decCPU = ratio(pooled(ns, "decode_cpu_runs_us"), goMedian(json, `Decode/${name}`, "cpu-ns/op") / 1000)
  let encCPU = ratio(pooled(ns, "encode_cpu_runs_us"), goMedian(json, `Encode/${name}`, "cpu-ns/op") / 1000)
  rows.push([
    `${name} (${fmt(ns[0].bytes)} B)`,
    fmt(dec), fmt(nodeDec), `${ratio(nodeDec, dec)} (${decCPU})`,
    fmt(enc), fmt(nodeEnc), `${ratio(nodeEnc, enc)} (${encCPU})`,
    kb(mem), kb(nodeMem), ratio(nodeMem, mem),
  ])
}
if (rows.length) {
  out.push("### JSON decode / encode, µs per document; memory per loaded document")
  out.push("")
  out.push("Ratios: wall clock (CPU time).")
  out.push("")
  out.push(table(["doc", "Go decode µs", "node decode µs", "Go ÷ node", "Go encode µs", "node encode µs", "Go ÷ node",
    "Go heap/doc", "node heap/doc", "node ÷ Go"], rows))
  out.push("")
}

let size = goBench("go-applysize.txt")
rows = []
let sizes = nodeResults("node-applysize-").sort((a, b) => a[1][0].paragraphs - b[1][0].paragraphs)
for (let [n, ns] of sizes) {
  let name = `ApplyDocSize/paragraphs=${n}`
  let g = goMedian(size, name, "ns/step")
  let nodeNs = pooled(ns, "runs_ns_per_step")
  let cpu = ratio(pooled(ns, "cpu_runs_ns_per_step"), goMedian(size, name, "cpu-ns/step"))
  rows.push([fmt(Number(n)), fmt(g), fmt(nodeNs), ratio(nodeNs, g), cpu, fmt(goMedian(size, name, "B/op") / 2)])
}
if (rows.length) {
  out.push("### Apply cost per step vs document size (insertText + delete in the middle paragraph), ns/step")
  out.push("")
  out.push(table(["top-level paragraphs", "Go ns/step", "node ns/step", "Go ÷ node", "Go ÷ node, CPU time", "Go B/step"], rows))
  out.push("")
}

console.log(out.join("\n"))
