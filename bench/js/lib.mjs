// Helpers shared by the side-by-side benchmark scripts: the "basic"
// schema built from the real JS packages, trace and document loading,
// command-line flags, medians and checksums.

import fs from "node:fs"
import zlib from "node:zlib"
import crypto from "node:crypto"
import { Schema } from "prosemirror-model"
import { schema as basicSchema } from "prosemirror-schema-basic"
import { addListNodes } from "prosemirror-schema-list"

// schema is the traces' "basic" schema: prosemirror-schema-basic plus
// prosemirror-schema-list's nodes, exactly as the traces were made with.
export const schema = new Schema({
  nodes: addListNodes(basicSchema.spec.nodes, "paragraph block*", "block"),
  marks: basicSchema.spec.marks,
})

// flags parses "--name value" pairs into an object; a flag without a
// value (followed by another flag or nothing) is true.
export function flags(argv, defaults) {
  let out = { ...defaults }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${a}`)
    let name = a.slice(2)
    if (!(name in defaults)) throw new Error(`unknown flag ${a}`)
    let next = argv[i + 1]
    if (next === undefined || next.startsWith("--")) out[name] = true
    else { out[name] = typeof defaults[name] == "number" ? Number(next) : next; i++ }
  }
  return out
}

// readText returns the UTF-8 text of file, gunzipped when it ends in .gz.
export function readText(file) {
  let data = fs.readFileSync(file)
  if (file.endsWith(".gz")) data = zlib.gunzipSync(data)
  return data.toString("utf8")
}

// readTrace returns {header, lines}: the parsed header and the raw step
// JSON lines of a NAME.steps.jsonl.gz trace file.
export function readTrace(file) {
  let lines = readText(file).split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  let header = JSON.parse(lines[0])
  lines = lines.slice(1)
  if (lines.length != header.steps)
    throw new Error(`${file}: header says ${header.steps} steps, file has ${lines.length}`)
  return { header, lines }
}

// sha256 returns the hex sha256 of the UTF-8 bytes of text.
export function sha256(text) {
  return crypto.createHash("sha256").update(text, "utf8").digest("hex")
}

// docSha256 returns the sha256 of JSON.stringify(doc.toJSON()), the
// traces' endDocSha256.
export function docSha256(doc) {
  return sha256(JSON.stringify(doc.toJSON()))
}

// median returns the median of a list of numbers.
export function median(xs) {
  let s = [...xs].sort((a, b) => a - b), m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

// now returns a monotonic time in milliseconds.
export function now() {
  return Number(process.hrtime.bigint()) / 1e6
}

// round keeps d significant decimals, for readable JSON output.
export function round(x, d = 3) {
  let f = 10 ** d
  return Math.round(x * f) / f
}
