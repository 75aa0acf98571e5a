// Unit tests of the history panel's pure parts (src/history.js): the
// grouping of steps into entries, the authors' colours, and the
// decorations of a /changes answer.

import { test } from "node:test"
import assert from "node:assert/strict"
import { groupSteps, AuthorColors, changeDecorations, burstGap } from "../src/history.js"
import { palette } from "../src/identity.js"
import { schema } from "../src/schema.js"
import { Mapping, StepMap } from "prosemirror-transform"

const t0 = Date.parse("2026-12-04T10:00:00Z")
const at = ms => new Date(t0 + ms).toISOString()
const step = (version, author, ms, clientID = 7) => ({ version, step: {}, clientID, author, time: at(ms) })

test("groupSteps: a burst of one author is one entry", () => {
  let steps = [
    step(1, "alice", 0), step(2, "alice", 1000), step(3, "alice", 2000),
    step(4, "bob", 2500, 8), step(5, "bob", 3000, 8),
    step(6, "alice", 4000),
  ]
  assert.deepEqual(groupSteps(steps), [
    { from: 0, to: 3, author: "alice", restore: false, start: t0, end: t0 + 2000, steps: 3 },
    { from: 3, to: 5, author: "bob", restore: false, start: t0 + 2500, end: t0 + 3000, steps: 2 },
    { from: 5, to: 6, author: "alice", restore: false, start: t0 + 4000, end: t0 + 4000, steps: 1 },
  ])
})

test("groupSteps: a pause longer than the gap starts an entry", () => {
  let steps = [step(10, "alice", 0), step(11, "alice", burstGap), step(12, "alice", 2 * burstGap + 1)]
  let entries = groupSteps(steps)
  assert.deepEqual(entries.map(e => [e.from, e.to]), [[9, 11], [11, 12]])
  assert.deepEqual(groupSteps(steps, 10).map(e => [e.from, e.to]), [[9, 10], [10, 11], [11, 12]])
})

test("groupSteps: anonymous steps by client id, restores alone, gaps in versions", () => {
  let steps = [
    step(1, null, 0, 1), step(2, null, 10, 1), step(3, null, 20, 2),
    step(4, "ada", 30, "restore"), step(5, "ada", 40, 3),
    step(9, "ada", 50, 3),
  ]
  let entries = groupSteps(steps)
  assert.deepEqual(entries.map(e => [e.from, e.to, e.author, e.restore]),
    [[0, 2, "", false], [2, 3, "", false], [3, 4, "ada", true], [4, 5, "ada", false], [8, 9, "ada", false]])
  assert.deepEqual(groupSteps([]), [])
})

test("AuthorColors: the palette in the order authors come, one colour each", () => {
  let colors = new AuthorColors()
  assert.equal(colors.of("bob"), palette[0])
  assert.equal(colors.of("alice"), palette[1])
  assert.equal(colors.of("bob"), palette[0])
  assert.equal(colors.of(""), palette[2])
})

const doc = text => schema.node("doc", null, text.map(t => schema.node("paragraph", null, t ? [schema.text(t)] : [])))

test("changeDecorations: inserted spans inline, deleted text in a widget", () => {
  // "hello world" → "hello brave new globe": bob inserted "brave ",
  // alice "new ", and alice replaced "world" by "globe".
  let docA = doc(["hello world"]), docB = doc(["hello brave new globe"])
  let changes = [
    { fromA: 7, toA: 7, fromB: 7, toB: 17, deleted: [], inserted: [{ length: 6, data: "bob" }, { length: 4, data: "alice" }] },
    { fromA: 7, toA: 12, fromB: 17, toB: 22, deleted: [{ length: 5, data: "alice" }], inserted: [{ length: 5, data: "alice" }] },
  ]
  let colors = new AuthorColors(), colorOf = a => colors.of(a)
  let decos = changeDecorations(changes, docA, docB, colorOf)
  let inline = decos.filter(d => d.from < d.to)
  assert.deepEqual(inline.map(d => [d.from, d.to, docB.textBetween(d.from, d.to), d.type.attrs["data-author"], d.type.attrs.style]), [
    [7, 13, "brave ", "bob", `--pma-author: ${palette[0]}`],
    [13, 17, "new ", "alice", `--pma-author: ${palette[1]}`],
    [17, 22, "globe", "alice", `--pma-author: ${palette[1]}`],
  ])
  let widgets = decos.filter(d => d.from == d.to)
  assert.equal(widgets.length, 1)
  assert.equal(widgets[0].from, 17)
  assert.match(widgets[0].spec.key, /^del:17:alice5$/)
})

test("changeDecorations: mapped through later steps, out of range skipped", () => {
  let docA = doc(["ab"]), docB = doc(["abc"])
  let changes = [
    { fromA: 3, toA: 3, fromB: 3, toB: 4, deleted: [], inserted: [{ length: 1, data: "" }] },
    // Beyond docA: skipped.
    { fromA: 40, toA: 41, fromB: 3, toB: 3, deleted: [{ length: 1, data: "x" }], inserted: [] },
    // Beyond the document: skipped.
    { fromA: 1, toA: 1, fromB: 90, toB: 95, deleted: [], inserted: [{ length: 5, data: "x" }] },
  ]
  // A later local step inserted two characters at 1.
  let mapping = new Mapping([new StepMap([1, 0, 2])])
  let after = doc(["xxabc"])
  let decos = changeDecorations(changes, docA, after, a => a || "anon", mapping)
  assert.deepEqual(decos.map(d => [d.from, d.to, d.type.attrs["data-author"]]), [[5, 6, ""]])
})
