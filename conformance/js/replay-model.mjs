// Replays a model case file (FORMAT-model.md) against prosemirror-model
// using only what the format documents, and reports every field that
// does not come out the same. It is the reference reader: the Go test
// does the same with pmauthority's model package.
//
// Usage: node replay-model.mjs FILE

import fs from "node:fs"
import { createHash } from "node:crypto"
import { Node, Fragment } from "prosemirror-model"
import { loadSchemas } from "./schemas.mjs"

const file = process.argv[2]
if (!file) {
  console.error("usage: node replay-model.mjs FILE")
  process.exit(2)
}

const schemas = loadSchemas()
const lines = fs.readFileSync(file, "utf8").split("\n")
if (lines[lines.length - 1] === "") lines.pop()
const header = JSON.parse(lines[0])
if (header.format != "pmauthority-model-conformance" || header.version != 1) throw new Error("unexpected header")
if (lines.length - 1 != header.count) throw new Error(`header says ${header.count} cases, file has ${lines.length - 1}`)

let failures = 0
function fail(c, what, want, got) {
  failures++
  if (failures <= 50) console.error(`case ${c.id} (${c.schema}, ${c.kind}): ${what}: want ${JSON.stringify(want)} got ${JSON.stringify(got)}`)
}

function run(f) {
  try { return { value: f() } } catch (e) { return { error: e.message, errorType: e.constructor.name } }
}

const json = n => (n ? JSON.stringify(n.toJSON()) : null)

// digestEq compares a recorded value under the digest rule.
function digestEq(recorded, text) {
  if (text === null || recorded === null) return recorded === text
  if (recorded.startsWith("sha256:")) {
    return Buffer.byteLength(text, "utf8") > 200 && recorded == "sha256:" + createHash("sha256").update(text, "utf8").digest("hex")
  }
  return recorded === text && Buffer.byteLength(text, "utf8") <= 200
}

// rawInput cuts the exact bytes of the "input" value out of a line.
function rawInput(line, c) {
  let prefix = `{"id":${c.id},"schema":${JSON.stringify(c.schema)},"kind":${JSON.stringify(c.kind)},"input":`
  if (!line.startsWith(prefix)) throw new Error(`case ${c.id}: unexpected key order`)
  let rest = line.slice(prefix.length)
  // The value ends at the first `,"error":` or `,"output":` that leaves a
  // complete JSON value before it (earlier ones are inside strings).
  for (let key of [',"error":', ',"output":']) {
    for (let i = rest.indexOf(key); i >= 0; i = rest.indexOf(key, i + 1)) {
      try { JSON.parse(rest.slice(0, i)); return rest.slice(0, i) } catch { /* inside the value */ }
    }
  }
  throw new Error(`case ${c.id}: no result keys`)
}

for (let i = 1; i < lines.length; i++) {
  let line = lines[i], c = JSON.parse(line), schema = schemas[c.schema]
  let text = rawInput(line, c)
  let parsed = run(() => Node.fromJSON(schema, JSON.parse(text)))
  if (parsed.error !== undefined) {
    if (c.error !== parsed.error) fail(c, "error", c.error, parsed.error)
    if (c.errorType !== parsed.errorType) fail(c, "errorType", c.errorType, parsed.errorType)
    continue
  }
  if (c.error !== undefined) { fail(c, "error", c.error, null); continue }
  let doc = parsed.value, size = doc.content.size
  if (c.output !== json(doc)) fail(c, "output", c.output, json(doc))
  let chk = run(() => doc.check())
  if (c.check !== (chk.error ?? null)) fail(c, "check", c.check, chk.error ?? null)
  if (c.size !== size) fail(c, "size", c.size, size)
  if (c.textContent !== doc.textContent) fail(c, "textContent", c.textContent, doc.textContent)
  let tb = doc.textBetween(0, size, "\n", "*")
  if (c.textBetween !== tb) fail(c, "textBetween", c.textBetween, tb)

  for (let p of c.positions) {
    let r = run(() => doc.resolve(p.pos))
    if (r.error !== undefined) {
      if (p.error !== r.error) fail(c, `resolve(${p.pos})`, p.error, r.error)
      continue
    }
    let $p = r.value, got = {
      depth: $p.depth, parentOffset: $p.parentOffset, textOffset: $p.textOffset,
      levels: Array.from({ length: $p.depth + 1 }, (_, d) => [$p.node(d).type.name, $p.index(d), $p.indexAfter(d),
        $p.start(d), $p.end(d), d ? $p.before(d) : null, d ? $p.after(d) : null]),
      marks: JSON.stringify($p.marks().map(m => m.toJSON())),
      childAfter: (({ index, offset, node }) => [index, offset, node ? node.type.name : null])(doc.childAfter(p.pos)),
      childBefore: (({ index, offset, node }) => [index, offset, node ? node.type.name : null])(doc.childBefore(p.pos)),
      sharedDepth: $p.sharedDepth(p.other),
      blockRange: (r => r && [r.start, r.end, r.depth, r.startIndex, r.endIndex])($p.blockRange(doc.resolve(p.other))),
    }
    for (let k in got) if (JSON.stringify(p[k]) !== JSON.stringify(got[k])) fail(c, `pos ${p.pos} ${k}`, p[k], got[k])
    if (!digestEq(p.nodeAfter, json($p.nodeAfter))) fail(c, `pos ${p.pos} nodeAfter`, p.nodeAfter, json($p.nodeAfter))
    if (!digestEq(p.nodeBefore, json($p.nodeBefore))) fail(c, `pos ${p.pos} nodeBefore`, p.nodeBefore, json($p.nodeBefore))
    if (!digestEq(p.nodeAt, json(doc.nodeAt(p.pos)))) fail(c, `pos ${p.pos} nodeAt`, p.nodeAt, json(doc.nodeAt(p.pos)))
  }

  for (let s of c.slices) {
    let r = run(() => JSON.stringify(doc.slice(s.from, s.to).toJSON()))
    if (r.error !== undefined) { if (s.error !== r.error) fail(c, `slice ${s.from}-${s.to}`, s.error, r.error); continue }
    if (!digestEq(s.slice, r.value)) fail(c, `slice ${s.from}-${s.to}`, s.slice, r.value)
    if (s.textBetween !== undefined && s.textBetween !== doc.textBetween(s.from, s.to, "\n", "*"))
      fail(c, `textBetween ${s.from}-${s.to}`, s.textBetween, doc.textBetween(s.from, s.to, "\n", "*"))
    if (s.rangeHasMark && s.rangeHasMark.result !== doc.rangeHasMark(s.from, s.to, schema.marks[s.rangeHasMark.mark]))
      fail(c, `rangeHasMark ${s.from}-${s.to}`, s.rangeHasMark.result, !s.rangeHasMark.result)
  }

  for (let m of c.matches) {
    let type = schema.nodes[m.type]
    let frag = Fragment.fromArray(m.fragment.map(n => Node.fromJSON(schema, n)))
    if (frag.childCount != m.fragment.length) fail(c, `match ${m.type} fragment length`, m.fragment.length, frag.childCount)
    let match = type.contentMatch.matchFragment(frag), got = null
    if (match) {
      let fill = match.fillBefore(Fragment.empty, true), wrap = match.findWrapping(schema.nodes[m.match && m.match.wrapTarget])
      got = {
        validEnd: match.validEnd,
        defaultType: match.defaultType ? match.defaultType.name : null,
        edgeCount: match.edgeCount,
        edges: Array.from({ length: match.edgeCount }, (_, e) => match.edge(e).type.name),
        fill: fill ? JSON.stringify(fill.content.map(n => n.toJSON())) : null,
        wrapTarget: m.match && m.match.wrapTarget,
        wrapping: wrap ? wrap.map(t => t.name) : null,
      }
    }
    if (JSON.stringify(m.match) !== JSON.stringify(got)) fail(c, `match ${m.type}`, m.match, got)
    let fb = type.contentMatch.fillBefore(frag, true)
    let fbText = fb ? JSON.stringify(fb.content.map(n => n.toJSON())) : null
    if (m.fillBeforeToEnd !== fbText) fail(c, `fillBeforeToEnd ${m.type}`, m.fillBeforeToEnd, fbText)
    if (type.hasRequiredAttrs() != !("createAndFill" in m)) fail(c, `createAndFill presence ${m.type}`, !type.hasRequiredAttrs(), "createAndFill" in m)
    if ("createAndFill" in m && !digestEq(m.createAndFill, json(type.createAndFill(null, frag))))
      fail(c, `createAndFill ${m.type}`, m.createAndFill, json(type.createAndFill(null, frag)))
  }

  for (let r of c.replace) {
    let slice = doc.slice(r.sliceFrom, r.sliceTo)
    if (!digestEq(r.slice, JSON.stringify(slice.toJSON()))) fail(c, "replace slice", r.slice, JSON.stringify(slice.toJSON()))
    let res = run(() => doc.replace(r.from, r.to, slice))
    if (res.error !== undefined) {
      if (r.error !== res.error || r.errorType !== res.errorType) fail(c, `replace ${r.from}-${r.to}`, [r.error, r.errorType], [res.error, res.errorType])
      continue
    }
    if (!digestEq(r.result, json(res.value))) fail(c, `replace ${r.from}-${r.to}`, r.result, json(res.value))
    let chk = run(() => res.value.check())
    if (r.check !== (chk.error ?? null)) fail(c, `replace ${r.from}-${r.to} check`, r.check, chk.error ?? null)
  }
}

if (failures) {
  console.error(`${failures} mismatch(es)`)
  process.exit(1)
}
console.log(`${header.count} cases replayed, all fields match`)
