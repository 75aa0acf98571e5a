// Generates differential test cases for commit mode's rebase: random
// concurrent histories on the four conformance schemas (a client's
// steps and the steps another client got accepted first, both made on
// the same document with gen-steps.mjs's random documents and edits),
// with what prosemirror-collab 1.3.1's own rebaseSteps makes of them.
// The output format is described in FORMAT-rebase.md.
//
// Usage: node gen-rebase.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte; case `id`
// depends only on the seed and `id`. Without --seed a random seed is
// chosen; it is printed on stderr either way.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Node } from "prosemirror-model"
import { Step, Transform } from "prosemirror-transform"
import { rebaseSteps } from "prosemirror-collab"
import { loadSchemas, schemaNames } from "./schemas.mjs"
import { headerLine, runGenerator } from "./gen-cli.mjs"
import { Rand, SchemaInfo, genDoc, runOps, errMessage, errName, stepJSONText } from "./gen-steps.mjs"

export const FORMAT_VERSION = 1

// caseSalt makes the cases of a seed other documents than gen-steps.mjs
// draws for the same seed.
const caseSalt = 0x2eba5e

// branch makes up to `target` steps on doc with the Transform API and
// keeps those that survive a JSON round trip and apply from their JSON
// form, as an authority receives them. It returns the steps and the
// document before each and after the last.
function branch(r, S, doc, target, log) {
  let tr = runOps(r, S, doc, target, 10, false, log)
  return replay(S, doc, tr.steps)
}

// replay round-trips steps through JSON and applies them from doc, up to
// the first that does not.
function replay(S, doc, steps) {
  let out = [], docs = [doc]
  for (let s of steps) {
    let step, res
    try {
      step = Step.fromJSON(S.schema, JSON.parse(stepJSONText(s)))
      res = step.apply(docs[docs.length - 1])
    } catch (e) { break }
    if (res.failed != null) break
    out.push(step)
    docs.push(res.doc)
  }
  return { steps: out, docs }
}

// concurrent makes the steps accepted before the client's: mostly a
// random branch of 1–4 steps, sometimes with the inverse of its last
// step after it (an undo in the history), sometimes starting with the
// client's own first step (the same edit made twice), sometimes none.
function concurrent(r, S, doc, mine, log) {
  let kind = r.weighted([[14, "branch"], [3, "undo"], [2, "same"], [1, "none"]])
  if (kind == "none") return { kind, steps: [] }
  let pre = kind == "same" && mine.length ? [mine[0]] : []
  let start = pre.length ? pre[0].apply(doc).doc : doc
  let b = branch(r, S, start, r.range(1, 4), log)
  let steps = pre.concat(b.steps)
  if (kind == "undo" && b.steps.length) {
    let last = b.steps.length - 1
    try { steps.push(b.steps[last].invert(b.docs[last])) } catch (e) { /* no undo */ }
  }
  return { kind, steps: replay(S, doc, steps).steps }
}

// rebase runs prosemirror-collab's rebaseSteps as receiveTransaction
// does: the client's document has its unconfirmed steps applied, and
// each Rebaseable holds a step and its inverse. The steps are wrapped
// to see which one rebaseSteps is at when it throws (it calls only
// their map), and origin is each step's index, to tell which were kept.
function rebase(steps, docs, over) {
  let n = steps.length, inverted = []
  for (let i = 0; i < n; i++) {
    try {
      inverted.push(steps[i].invert(docs[i]))
    } catch (e) {
      return { threw: { phase: "invert", step: i, error: errMessage(e), errorName: errName(e) } }
    }
  }
  let tr = new Transform(docs[n])
  let at = -1, kept = [], dropped = [], before = 0
  // settle records whether the step mapped last was applied.
  let settle = () => {
    if (at < 0) return
    if (tr.steps.length > before) kept.push(at)
    else dropped.push(at)
  }
  let rebaseables = steps.map((s, i) => ({
    step: { map(mapping) { settle(); at = i; before = tr.steps.length; return s.map(mapping) } },
    inverted: inverted[i],
    origin: i,
  }))
  let result, thrown = null
  try {
    result = rebaseSteps(rebaseables, over, tr)
  } catch (e) {
    thrown = e
  }
  let rec = {}
  // The document once the inverses applied: the one over applies to.
  if (tr.steps.length >= n) rec.undone = (tr.docs.length > n ? tr.docs[n] : tr.doc).eq(docs[0])
  if (thrown) {
    let th = { phase: null, step: null, error: errMessage(thrown), errorName: errName(thrown) }
    if (tr.steps.length < n) {
      th.phase = "undo"
      th.step = n - 1 - tr.steps.length
    } else if (at < 0) {
      th.phase = "over"
      th.step = tr.steps.length - n
    } else {
      // In the redo loop: maybeStep threw, or the inverse of the step it
      // applied did.
      th.phase = tr.steps.length > before ? "reinvert" : "apply"
      th.step = at
      th.steps = tr.steps.slice(n + over.length).map(s => s.toJSON())
      th.dropped = dropped
    }
    rec.threw = th
    return rec
  }
  let origins = new Set(result.map(x => x.origin))
  rec.result = {
    steps: result.map(x => x.step.toJSON()),
    dropped: steps.map((s, i) => i).filter(i => !origins.has(i)),
    doc: tr.doc.toJSON(),
  }
  return rec
}

function makeCase(seed, id, infos) {
  let r = new Rand(seed, id + caseSalt)
  let S = infos[r.weighted([[1, "text"], [4, "basic"], [3, "tables"], [4, "stress"]])]
  let docJSON = genDoc(r, S).toJSON()
  // The document as the authority reads it.
  let doc = Node.fromJSON(S.schema, JSON.parse(JSON.stringify(docJSON)))
  let ops = []
  let mine = { steps: [], docs: [doc] }
  for (let attempt = 0; attempt < 3 && !mine.steps.length; attempt++) {
    mine = branch(r, S, doc, r.range(1, 5), ops)
  }
  let overOps = []
  let over = concurrent(r, S, doc, mine.steps, overOps)
  let rec = {
    id, schema: S.name, over: over.kind,
    ops: ops.concat(overOps.map(o => "over: " + o)),
    doc: doc.toJSON(),
    steps: mine.steps.map(s => s.toJSON()),
    overSteps: over.steps.map(s => s.toJSON()),
  }
  return Object.assign(rec, rebase(mine.steps, mine.docs, over.steps))
}

// generate writes the header and `count` cases, and returns counts of
// their outcomes.
export function generate({ seed, count }, write) {
  let schemas = loadSchemas(), infos = {}
  for (let name of schemaNames) infos[name] = new SchemaInfo(name, schemas[name])
  write(headerLine({
    format: "pmauthority-rebase-conformance", version: FORMAT_VERSION, seed, count, schemas: schemaNames,
    packages: ["prosemirror-collab", "prosemirror-transform", "prosemirror-model"],
  }))
  let stats = new Map
  let bump = key => stats.set(key, (stats.get(key) || 0) + 1)
  for (let id = 0; id < count; id++) {
    let rec = makeCase(seed, id, infos)
    if (rec.threw) bump(`threw in ${rec.threw.phase}`)
    else {
      bump(rec.result.dropped.length ? "some dropped" : "all kept")
      if (!rec.result.steps.length) bump("none kept")
    }
    if (rec.undone === false) bump("undone to another doc")
    bump(`over ${rec.over}`)
    write(JSON.stringify(rec) + "\n")
  }
  return stats
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) runGenerator("gen-rebase", generate)
