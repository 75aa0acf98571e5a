// Generates differential test cases for prosemirror-changeset: random
// documents on the four conformance schemas (gen-steps.mjs's), random
// histories of steps made by the Transform API (gen-steps.mjs's runOps),
// each step with an author from a small set ("" for anonymous), added to
// ChangeSet.create(doc) in one or several addSteps calls; recorded are
// the set's changes and simplifyChanges(changes, doc) on the last
// document. A few cases have long paragraphs with long replacements, for
// the diff's size limits. The output format is described in
// FORMAT-changeset.md.
//
// Usage: node gen-changeset.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte; case `id`
// depends only on the seed and `id`.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Node } from "prosemirror-model"
import { Transform, Step } from "prosemirror-transform"
import { ChangeSet, simplifyChanges } from "prosemirror-changeset"
import { loadSchemas, schemaNames } from "./schemas.mjs"
import { headerLine, runGenerator } from "./gen-cli.mjs"
import { Rand, SchemaInfo, genDoc, runOps, errMessage, errName } from "./gen-steps.mjs"

export const FORMAT_VERSION = 1

// caseSalt makes the documents of a seed other than those the other
// generators draw for it.
const caseSalt = 0x3c9a51

// AUTHORS are the steps' data: a few names, the anonymous "", and names
// that JSON must escape or that JSON.stringify writes as they are.
const AUTHORS = [[5, "alice"], [4, "bob"], [3, ""], [1, "carol <c@example.org>"], [1, "\u2028é\"q\""]]

// LETTERS makes the long texts: a few letters, spaces and non-ASCII
// letters, so that long texts share many tokens.
const LETTERS = ["a", "b", "c", "d", " ", " ", "é", "中", "😀", "ß"]

function longText(r, n) {
  let s = ""
  while (s.length < n) s += r.pick(LETTERS)
  return s
}

// mutate returns text with a few random edits (or, rarely, replaced
// whole).
function mutate(r, text) {
  if (r.chance(0.15)) return longText(r, Math.max(1, text.length + r.range(-20, 20)))
  let s = text
  for (let n = r.range(1, 8); n > 0; n--) {
    let at = r.int(s.length + 1), del = r.chance(0.5) ? r.int(10) : 0
    s = s.slice(0, at) + (r.chance(0.7) ? longText(r, r.range(1, 12)) : "") + s.slice(at + del)
  }
  return s || "x"
}

// bigHistory makes a document of long paragraphs (basic schema) and a
// history of long replacements of their text, so that changes exceed the
// diff's limits (2500 tokens for the Myers diff, 10000 for any scan).
function bigHistory(r, S) {
  let schema = S.schema, paras = []
  for (let n = r.range(1, 3); n > 0; n--)
    paras.push(schema.node("paragraph", null, [schema.text(longText(r, r.pick([1500, 3000, 6000, 11000])))]))
  let doc = schema.node("doc", null, paras)
  let calls = [], cur = doc
  for (let c = r.range(1, 2); c > 0; c--) {
    let tr = new Transform(cur)
    for (let n = r.range(1, 3); n > 0; n--) {
      // A stretch of one paragraph's text, replaced by a mutated copy.
      let paraPos = [], para = null
      tr.doc.forEach((node, pos) => paraPos.push([node, pos]))
      let [node, pos] = r.pick(paraPos)
      para = node
      let len = para.content.size
      if (!len) continue
      let a = r.chance(0.5) ? 0 : r.int(len), b = r.chance(0.5) ? len : a + r.int(len - a + 1)
      let old = para.textBetween(a, b)
      let text = mutate(r, old)
      tr.replaceWith(pos + 1 + a, pos + 1 + b, schema.text(text))
    }
    calls.push(tr)
    cur = tr.doc
  }
  return { doc, calls }
}

// replayable returns the steps of made as a server stores them: each
// read back from its JSON and applied to the document before it, up to
// the first that JSON does not carry (a node whose attributes Transform
// made but Node.fromJSON refuses).
function replayable(schema, made) {
  let tr = new Transform(made.before)
  for (let step of made.steps) {
    let copy
    try {
      copy = Step.fromJSON(schema, JSON.parse(JSON.stringify(step.toJSON())))
      if (tr.maybeStep(copy).failed) break
    } catch (e) {
      break
    }
  }
  return tr
}

function pickAuthor(r) { return r.weighted(AUTHORS) }

function makeCase(seed, id, infos) {
  let r = new Rand(seed, id + caseSalt)
  let big = r.chance(0.03)
  let S = big ? infos.basic : infos[r.weighted([[1, "text"], [4, "basic"], [3, "tables"], [4, "stress"]])]
  let doc, trs = []
  if (big) {
    let h = bigHistory(r, S)
    doc = h.doc
    trs = h.calls
  } else {
    // The document as the Go side reads it.
    doc = Node.fromJSON(S.schema, JSON.parse(JSON.stringify(genDoc(r, S).toJSON())))
    let cur = doc
    for (let n = r.chance(0.5) ? 1 : r.range(2, 4); n > 0; n--) {
      let tr = replayable(S.schema, runOps(r, S, cur, r.range(1, 8), 12, false))
      trs.push(tr)
      cur = tr.doc
    }
  }
  let set = ChangeSet.create(doc), calls = [], threw = null, last = doc
  for (let tr of trs) {
    let data = tr.steps.map(() => pickAuthor(r))
    calls.push({ steps: tr.steps.map(s => s.toJSON()), data })
    last = tr.doc
    if (threw) continue
    try {
      set = set.addSteps(tr.doc, tr.mapping.maps, data)
    } catch (e) {
      threw = { call: calls.length - 1, error: errMessage(e), errorName: errName(e) }
    }
  }
  let rec = { id, schema: S.name, kind: big ? "big" : "history", doc: doc.toJSON(), calls }
  if (threw) {
    rec.threw = threw
    return rec
  }
  rec.changes = JSON.parse(JSON.stringify(set.changes))
  try {
    rec.simplified = JSON.parse(JSON.stringify(simplifyChanges(set.changes, last)))
  } catch (e) {
    rec.threw = { call: -1, error: errMessage(e), errorName: errName(e) }
  }
  return rec
}

// generate writes the header and `count` cases, and returns counts of
// their outcomes.
export function generate({ seed, count }, write) {
  let schemas = loadSchemas(), infos = {}
  for (let name of schemaNames) infos[name] = new SchemaInfo(name, schemas[name])
  write(headerLine({
    format: "pmauthority-changeset-conformance", version: FORMAT_VERSION, seed, count, schemas: schemaNames,
    packages: ["prosemirror-changeset", "prosemirror-transform", "prosemirror-model"],
  }))
  let stats = new Map
  let bump = (key, n = 1) => stats.set(key, (stats.get(key) || 0) + n)
  for (let id = 0; id < count; id++) {
    let rec = makeCase(seed, id, infos)
    bump(rec.threw ? `threw ${rec.threw.errorName}` : rec.kind)
    bump("steps", rec.calls.reduce((n, c) => n + c.steps.length, 0))
    if (rec.calls.length > 1) bump("incremental")
    if (rec.changes) bump("changes", rec.changes.length)
    if (rec.changes && JSON.stringify(rec.changes) != JSON.stringify(rec.simplified)) bump("simplify changed")
    write(JSON.stringify(rec) + "\n")
  }
  return stats
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) runGenerator("gen-changeset", generate)
