// Times the export of a document with the real libraries: Markdown with
// prosemirror-markdown's defaultMarkdownSerializer.serialize(doc), HTML
// with DOMSerializer.fromSchema(schema).serializeFragment(doc.content) in
// a jsdom document and the top nodes' outerHTML joined, text with
// doc.textBetween(0, size, "\n\n", leafText) (hard_break → "\n"), as
// package export and conformance/js/gen-export.mjs define them; and
// "parse", Markdown in: that Markdown parsed back by prosemirror-
// markdown's MarkdownParser with the schema (its sha256 is of the
// document's JSON).
//
//   node export.mjs --doc FILE [--iters N] [--runs R]
//
// One warm-up run, then R timed runs of N exports each; prints one JSON
// object {doc, bytes, iters, node, FORMAT_us, FORMAT_cpu_us, FORMAT_runs_us,
// FORMAT_cpu_runs_us, FORMAT_sha256, FORMAT_bytes} for each FORMAT of
// text, markdown, parse, html: median µs per export (wall clock and process CPU
// time) and the sha256 of the output, to compare with pmauthority's.

import { DOMSerializer } from "prosemirror-model"
import { defaultMarkdownSerializer, defaultMarkdownParser, MarkdownParser } from "prosemirror-markdown"
import markdownit from "markdown-it"
import { JSDOM } from "jsdom"
import { flags, median, now, readText, round, schema, sha256 } from "./lib.mjs"

let opts = flags(process.argv.slice(2), { doc: "", iters: 0, runs: 5 })
if (!opts.doc) throw new Error("usage: node export.mjs --doc FILE [--iters N] [--runs R]")

let text = readText(opts.doc)
let bytes = Buffer.byteLength(text, "utf8")
let iters = opts.iters || Math.max(5, Math.round(5e6 / bytes))
let doc = schema.nodeFromJSON(JSON.parse(text))
let document = new JSDOM("").window.document
let serializer = DOMSerializer.fromSchema(schema)
let leafText = node => node.type.name == "hard_break" ? "\n" : ""
// Markdown in: the document's Markdown parsed back with its schema, as
// package export's ParseMarkdown does.
let markdown = defaultMarkdownSerializer.serialize(doc)
let parser = new MarkdownParser(schema, markdownit("commonmark", { html: false }), defaultMarkdownParser.tokens)

let formats = {
  text: () => doc.textBetween(0, doc.content.size, "\n\n", leafText),
  markdown: () => defaultMarkdownSerializer.serialize(doc),
  parse: () => parser.parse(markdown),
  html: () => {
    let frag = serializer.serializeFragment(doc.content, { document })
    let out = ""
    for (let n of frag.childNodes) out += n.outerHTML
    return out
  },
}

let result = { doc: opts.doc, bytes, iters, node: process.version }
let sink
for (let [name, f] of Object.entries(formats)) {
  let wall = [], cpu = []
  for (let r = 0; r <= opts.runs; r++) {
    let cpuStart = process.cpuUsage()
    let start = now()
    for (let i = 0; i < iters; i++) sink = f()
    let us = (now() - start) * 1000 / iters
    let used = process.cpuUsage(cpuStart)
    if (r > 0) {
      wall.push(us)
      cpu.push((used.user + used.system) / iters)
    }
  }
  let out = f()
  if (name == "parse") out = JSON.stringify(out.toJSON())
  Object.assign(result, {
    [name + "_us"]: round(median(wall), 1),
    [name + "_cpu_us"]: round(median(cpu), 1),
    [name + "_runs_us"]: wall.map(x => round(x, 1)),
    [name + "_cpu_runs_us"]: cpu.map(x => round(x, 1)),
    [name + "_sha256"]: sha256(out),
    [name + "_bytes"]: Buffer.byteLength(out, "utf8"),
  })
}
if (sink === undefined) throw new Error("unreachable")
console.log(JSON.stringify(result))
