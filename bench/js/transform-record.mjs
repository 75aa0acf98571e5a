// Records an editing session as Transform method calls, for the Transform
// API benchmark (bench/transform.sh): from the 50 KB benchmark document
// (go run ./cmd/benchdocs), a seeded sequence of calls on the evolving
// document, made with the real prosemirror-transform the way an editor
// makes them: typing at a cursor (insert), backspace and selection deletes
// (delete, deleteRange), Enter (split, at depth 2 in list items, with a
// paragraph after a heading), backspace at a block's start (join of two
// textblocks, or of lists and blockquotes at a joinPoint, where canJoin
// allows it), strong, em and link on and off
// (addMark, removeMark), block type changes (setBlockType to heading,
// paragraph, code_block), wrapping in a blockquote or bullet list (wrap
// with findWrapping of a blockRange), lifting out (lift to liftTarget),
// and copy and paste (replaceRange with a slice of the document).
//
//   node transform-record.mjs --doc 50KB.json [--seed N] [--count N] [--out FILE]
//
// Each call is written in pmauthority's op format (transform/ops.go) and
// kept only when it runs, from that JSON, without throwing (js/ops.mjs's
// applyOp); the next is made on the document it leaves. The output is one
// JSON object: {format, seed, count, versions, sha256, doc, ops, after}:
// the sha256 of the final document (of JSON.stringify(doc.toJSON()), as
// the traces' endDocSha256), the start document, the ops one per line,
// and the sha256 of the document after each op, to find the first op
// whose result differs when a replay's final document does. The same document, seed and count
// give the same file byte for byte.

import fs from "node:fs"
import { Transform, canJoin, canSplit, findWrapping, joinPoint, liftTarget } from "prosemirror-transform"
import { applyOp } from "./ops.mjs"
import { docSha256, flags, readText, schema } from "./lib.mjs"

let opts = flags(process.argv.slice(2), { doc: "", seed: 1, count: 2000, out: "" })
if (!opts.doc) throw new Error("usage: node transform-record.mjs --doc FILE [--seed N] [--count N] [--out FILE]")

// Rand is mulberry32: small, fast and the same on every node.
class Rand {
  constructor(seed) { this.s = seed >>> 0 }
  next() {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  int(n) { return Math.floor(this.next() * n) }
  chance(p) { return this.next() < p }
  pick(list) { return list[this.int(list.length)] }
  weighted(pairs) {
    let total = pairs.reduce((s, [w]) => s + w, 0), x = this.next() * total
    for (let [w, v] of pairs) if ((x -= w) < 0) return v
    return pairs[pairs.length - 1][1]
  }
}

const WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which " +
  "but have an they you were her all she there would their we him been has when who will more no if out so " +
  "document editor step schema node mark transform collaborative paste latency server replica").split(" ")

let r = new Rand(opts.seed)
let doc = schema.nodeFromJSON(JSON.parse(readText(opts.doc)))
let startJSON = doc.toJSON()
let cursor = 1

// textblocks lists [pos, node] of the document's textblocks, pos before
// the node.
function textblocks() {
  let out = []
  doc.descendants((node, pos) => {
    if (node.isTextblock) { out.push([pos, node]); return false }
    return true
  })
  return out
}

// textPos returns a position inside a textblock: near the cursor (the
// user goes on where they were) or in a random textblock.
function textPos(near = 0.6) {
  let $c = doc.resolve(Math.min(cursor, doc.content.size))
  if ($c.parent.isTextblock && r.chance(near)) return cursor
  let [pos, node] = r.pick(textblocks())
  return pos + 1 + r.int(node.content.size + 1)
}

// spanEnd returns a position after from in the same textblock, at most
// max characters on.
function spanEnd(from, max) {
  let $from = doc.resolve(from)
  return Math.min($from.end(), from + 1 + r.int(max))
}

// laterTextPos returns the end of a selection from from that may cross
// blocks: a position in one of the textblocks that start after from
// (from's own only when from is at its start) and less than max
// positions on, or from when there is none or the pick lands before it.
function laterTextPos(from, max) {
  let blocks = textblocks().filter(([pos]) => pos + 1 >= from - 1 && pos < from + max)
  let [pos, node] = r.pick(blocks.length ? blocks : textblocks())
  return Math.max(from, pos + 1 + r.int(node.content.size + 1))
}

// words returns n words of WORDS joined by spaces.
function words(n) {
  let out = []
  for (let i = 0; i < n; i++) out.push(r.pick(WORDS))
  return out.join(" ")
}

// markJSON returns the JSON of a strong, em or link mark.
function markJSON() {
  let kind = r.weighted([[4, "strong"], [4, "em"], [2, "link"]])
  if (kind != "link") return { type: kind }
  return { type: "link", attrs: { href: `https://example.com/p/${r.int(10000)}`, title: null } }
}

// rangeJSON returns a NodeRange in the op format.
function rangeJSON(rng) { return { from: rng.$from.pos, to: rng.$to.pos, depth: rng.depth } }

// blockRange returns the blockRange of a span of one to a few textblocks
// from pos, or null.
function blockRange(pos) {
  let to = r.chance(0.6) ? pos : laterTextPos(pos, 400)
  return doc.resolve(pos).blockRange(doc.resolve(to))
}

// Each generator returns an op for the current document, or null when
// it found nothing to do where it looked.
const OPS = {
  type() {
    let pos = textPos(0.85), $pos = doc.resolve(pos)
    let text = r.chance(0.7) ? words(1) + " " : words(1 + r.int(4)) + (r.chance(0.3) ? ". " : " ")
    let node = { type: "text", text }
    let marks = $pos.marks().filter(m => $pos.parent.type.allowsMarkType(m.type))
    if (marks.length) node.marks = marks.map(m => m.toJSON())
    return { op: "insert", args: [pos, node] }
  },
  backspace() {
    let pos = textPos(0.85), $pos = doc.resolve(pos)
    let n = Math.min(pos - $pos.start(), 1 + r.int(r.chance(0.8) ? 3 : 20))
    return n > 0 ? { op: "delete", args: [pos - n, pos] } : null
  },
  deleteRange() {
    let from = textPos(0.3)
    return { op: "deleteRange", args: [from, laterTextPos(from, 120)] }
  },
  split() {
    let pos = textPos(0.85), $pos = doc.resolve(pos)
    if ($pos.depth >= 2 && $pos.node(-1).type.name == "list_item" && r.chance(0.6) && canSplit(doc, pos, 2))
      return { op: "split", args: [pos, 2] }
    if ($pos.parent.type.name == "heading" && pos == $pos.end()) {
      let after = [{ type: schema.nodes.paragraph }]
      if (canSplit(doc, pos, 1, after)) return { op: "split", args: [pos, 1, [{ type: "paragraph" }]] }
    }
    return canSplit(doc, pos) ? { op: "split", args: [pos] } : null
  },
  join() {
    // joinPoint finds joins of wrapping nodes (lists, blockquotes); two
    // textblocks join at the boundary between them.
    let [pos] = r.pick(textblocks())
    let point = joinPoint(doc, pos + 1, -1) ?? pos
    return canJoin(doc, point) ? { op: "join", args: [point] } : null
  },
  addMark() {
    let from = textPos(0.5)
    let to = r.chance(0.85) ? spanEnd(from, 40) : laterTextPos(from, 300)
    return from < to ? { op: "addMark", args: [from, to, markJSON()] } : null
  },
  removeMark() {
    let from = textPos(0.5), to = spanEnd(from, 60), found = []
    doc.nodesBetween(from, to, n => { if (n.isText) found.push(...n.marks) })
    if (from >= to) return null
    let how = r.weighted([[5, "mark"], [3, "type"], [1, "all"]])
    if (how == "all" || !found.length) return { op: "removeMark", args: [from, to, null] }
    let m = r.pick(found)
    return { op: "removeMark", args: [from, to, how == "type" ? m.type.name : m.toJSON()] }
  },
  setBlockType() {
    let from = textPos(0.6), to = r.chance(0.7) ? from : laterTextPos(from, 200)
    let kind = r.weighted([[4, "heading"], [4, "paragraph"], [1, "code_block"]])
    if (kind == "heading") return { op: "setBlockType", args: [from, to, "heading", { level: 1 + r.int(3) }] }
    return { op: "setBlockType", args: [from, to, kind] }
  },
  wrap() {
    let rng = blockRange(textPos(0.4))
    if (!rng) return null
    let type = schema.nodes[r.chance(0.5) ? "blockquote" : "bullet_list"]
    let wrappers = findWrapping(rng, type)
    if (!wrappers) return null
    return { op: "wrap", args: [rangeJSON(rng), wrappers.map(w => ({ type: w.type.name, attrs: w.attrs == null ? null : w.attrs }))] }
  },
  lift() {
    let deep = textblocks().filter(([pos]) => doc.resolve(pos + 1).depth >= 2)
    if (!deep.length) return null
    let [pos, node] = r.pick(deep)
    let rng = blockRange(pos + 1 + r.int(node.content.size + 1))
    let target = rng && liftTarget(rng)
    return target == null ? null : { op: "lift", args: [rangeJSON(rng), target] }
  },
  paste() {
    let a = textPos(0.2), b = r.chance(0.5) ? spanEnd(a, 80) : laterTextPos(a, 400)
    if (a >= b) return null
    let slice = doc.slice(a, b).toJSON()
    let at = textPos(0.7), to = r.chance(0.8) ? at : spanEnd(at, 20)
    return { op: "replaceRange", args: [at, to, slice] }
  },
}

const WEIGHTS = [
  [30, "type"], [10, "backspace"], [3, "deleteRange"], [7, "split"], [4, "join"], [8, "addMark"],
  [4, "removeMark"], [5, "setBlockType"], [3, "wrap"], [3, "lift"], [4, "paste"],
]

let ops = [], after = [], tries = 0, kinds = {}
while (ops.length < opts.count) {
  if (++tries > opts.count * 20) throw new Error(`only ${ops.length} ops after ${tries} tries`)
  let kind = r.weighted(WEIGHTS)
  let op = OPS[kind]()
  if (!op) continue
  op = JSON.parse(JSON.stringify(op))
  let tr = new Transform(doc)
  try { applyOp(tr, schema, op) } catch (e) { continue }
  if (!tr.docChanged) continue
  doc = tr.doc
  let [a, b] = op.args
  cursor = Math.min(tr.mapping.map(typeof b == "number" ? b : typeof a == "number" ? a : cursor), doc.content.size)
  ops.push(op)
  after.push(docSha256(doc))
  kinds[op.op] = (kinds[op.op] || 0) + 1
}

let versions = {}
for (let p of ["prosemirror-transform", "prosemirror-model"])
  versions[p] = JSON.parse(fs.readFileSync(new URL(`node_modules/${p}/package.json`, import.meta.url), "utf8")).version

let head = { format: "pmauthority-transform-ops", seed: opts.seed, count: ops.length, versions, sha256: docSha256(doc) }
let text = JSON.stringify(head).slice(0, -1) + `,\n"doc":${JSON.stringify(startJSON)},\n"ops":[\n` +
  ops.map(op => JSON.stringify(op)).join(",\n") + `\n],\n"after":${JSON.stringify(after)}}\n`
if (opts.out) fs.writeFileSync(opts.out, text)
else process.stdout.write(text)
console.error(`transform-record: seed=${opts.seed} ops=${ops.length} tries=${tries} ` +
  `doc ${JSON.stringify(startJSON).length} -> ${JSON.stringify(doc.toJSON()).length} bytes; ` +
  Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(", "))
