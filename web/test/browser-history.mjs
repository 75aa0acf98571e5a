// Browser test of the editor page's history panel against a running
// pmauthority with auth (tokens minted here with the HS256 secret):
// Alice and Bob, each with a token of their own, type in turn; Alice
// saves a checkpoint after her first burst. Alice's panel then lists one
// entry per burst (alice, bob, alice, newest first) with the checkpoint
// among them, as GET /steps and /checkpoints have them; "changes since"
// the empty document shows both authors' insertions in two distinct
// colours (the decorations' computed colours, the legend's), and since
// the checkpoint Bob's deletion struck through in his colour; each
// download (Markdown, HTML, text; current and an older version) is
// what GET /export answers; restoring Bob's version makes both pages
// and the server hold that version's document again. Bob's panel,
// reading 20 steps at a time, lists the same entries once it has loaded
// the older ones.
//
// Usage: node test/browser-history.mjs --url http://127.0.0.1:8080 --secret HS256-SECRET
//        [--out DIR] [--chromium PATH]

import { chromium } from "playwright-core"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { log, check, newID, openPage, waitSynced, converge, timeout } from "./lib.mjs"

let args = { out: "test/out/history", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "secret"]) if (!args[k]) throw new Error("missing --" + k)
args.url = args.url.replace(/\/+$/, "")

// mint returns an HS256 token of sub (shown as name) with role on the
// document id.
function mint(sub, name, id, role) {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  let now = Math.floor(Date.now() / 1000)
  let data = part({ alg: "HS256", typ: "JWT" }) + "." + part({ sub, name, docs: { [id]: role }, iat: now, exp: now + 3600 })
  return data + "." + crypto.createHmac("sha256", args.secret).update(data).digest("base64url")
}

let id = newID("history")
const tokens = { alice: mint("alice", "Alice Author", id, "edit"), bob: mint("bob", "Bob Author", id, "edit") }

// api fetches path of the document's API as alice.
async function api(p) {
  let res = await fetch(`${args.url}/docs/${encodeURIComponent(id)}${p}`, { headers: { Authorization: "Bearer " + tokens.alice } })
  check(res.ok, `GET ${p}: ${res.status} ${await res.clone().text()}`)
  return res
}

async function openAs(browser, who) {
  let context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true })
  let page = await openPage(context, who)
  await page.goto(`${args.url}/edit/${encodeURIComponent(id)}#token=${encodeURIComponent(tokens[who])}`)
  await page.locator(".ProseMirror").waitFor()
  await waitSynced(page)
  return page
}

// rgb is a #rrggbb colour as computed styles write it.
function rgb(hex) {
  let n = parseInt(hex.slice(1), 16)
  return `rgb(${n >> 16}, ${(n >> 8) & 255}, ${n & 255})`
}

// historyRows returns the panel's rows: {kind, version, title, checkpoint}.
function historyRows(page) {
  return page.$$eval(".history-list > li.history-item", lis => lis.map(li => ({
    kind: [...li.classList].find(c => c.startsWith("history-") && c != "history-item").slice(8),
    version: Number(li.dataset.version), title: li.querySelector(".history-title").textContent,
    checkpoint: li.dataset.checkpoint ?? null,
  })))
}

// waitRows waits until the panel's top row is of version (the panel reads
// the history again once the edits pause) and returns the rows.
async function waitRows(page, version) {
  await page.waitForFunction(v => document.querySelector(".history-list > li.history-item")?.dataset.version == String(v), version)
  return historyRows(page)
}

// download clicks button and returns the downloaded file's text.
async function download(page, button) {
  let [file] = await Promise.all([page.waitForEvent("download"), button.click()])
  return { name: file.suggestedFilename(), text: fs.readFileSync(await file.path(), "utf8") }
}

// decorations returns the page's change decorations with their
// author, text and computed colour.
function decorations(page, selector, property) {
  return page.$$eval(selector, (els, property) => els.map(el => ({
    author: el.dataset.author, text: el.textContent, color: getComputedStyle(el)[property],
  })), property)
}

async function main() {
  fs.mkdirSync(args.out, { recursive: true })
  let started = Date.now()
  let browser = await chromium.launch({ executablePath: args.chromium, args: ["--no-sandbox"] })
  try {
    let a = await openAs(browser, "alice")
    await a.locator(".ProseMirror").click()
    await a.keyboard.type("Alice wrote this.", { delay: 10 })
    await converge(a)
    let b = await openAs(browser, "bob")
    await converge(a, b)

    // Alice's checkpoint after her first burst.
    await a.click("#history-toggle")
    await a.locator("#history").waitFor()
    await a.fill(".history-checkpoint-form input", "first draft")
    await a.click(".history-checkpoint-form button[type=submit]")
    await a.locator(".history-checkpoint", { hasText: "first draft" }).waitFor()
    let [cp] = (await (await api("/checkpoints")).json()).checkpoints
    check(cp && cp.name == "first draft" && cp.author == "alice", "the checkpoint: " + JSON.stringify(cp))

    // Bob replaces "this." and adds his sentence; then Alice a paragraph.
    await b.locator(".ProseMirror p").first().click()
    await b.keyboard.press("End")
    for (let i = 0; i < 5; i++) await b.keyboard.press("Backspace")
    await b.keyboard.type("that. Bob added more.", { delay: 10 })
    await converge(a, b)
    await a.locator(".ProseMirror p").first().click()
    await a.keyboard.press("End")
    await a.keyboard.press("Enter")
    await a.keyboard.type("Alice again.", { delay: 10 })
    let text = await converge(a, b)
    check(text == "Alice wrote that. Bob added more.\nAlice again.", "the document: " + JSON.stringify(text))

    // The entries: one per burst, newest first, the checkpoint among
    // them at its version, and the empty document at the bottom.
    let { steps, version } = await (await api("/steps?limit=1000")).json()
    let rows = await waitRows(a, version)
    log("history:", JSON.stringify(rows))
    let entries = rows.filter(r => r.kind == "entry")
    check(entries.map(r => r.title.split(" ·")[0]).join(",") == "alice,bob,alice", "the entries' authors: " + JSON.stringify(rows))
    let bobEnd = steps.filter(s => s.author == "bob").at(-1).version
    check(entries[0].version == version && entries[1].version == bobEnd && entries[2].version == cp.version,
      `the entries' versions ${entries.map(e => e.version)}, want ${version}, ${bobEnd}, ${cp.version}`)
    let cpRow = rows.findIndex(r => r.kind == "checkpoint")
    check(cpRow == 2 && rows[cpRow].version == cp.version && rows[cpRow].checkpoint == "first draft",
      "the checkpoint's row: " + JSON.stringify(rows))
    check(rows.at(-1).kind == "start" && rows.at(-1).version == 0, "the last row: " + JSON.stringify(rows.at(-1)))
    let stepsOf = who => steps.filter(s => s.author == who).length
    check(entries[1].title == `bob · ${stepsOf("bob")} changes`, "Bob's entry: " + entries[1].title)

    // Changes since the empty document: every character inserted, in
    // its author's colour, two distinct ones.
    await a.click(".history-list > li.history-start")
    await a.locator(".history-legend", { hasText: "Changes since version 0" }).waitFor()
    let ins = await decorations(a, ".ProseMirror .pma-inserted", "borderBottomColor")
    let legend = await a.$$eval(".history-authors li", lis => lis.map(li => ({
      author: li.dataset.author, color: getComputedStyle(li.querySelector(".swatch")).backgroundColor })))
    log("inserted:", JSON.stringify(ins), "legend:", JSON.stringify(legend))
    let colorOf = Object.fromEntries(legend.map(l => [l.author, l.color]))
    check(colorOf.alice && colorOf.bob && colorOf.alice != colorOf.bob, "the legend: " + JSON.stringify(legend))
    let by = who => ins.filter(d => d.author == who)
    check(by("alice").every(d => d.color == colorOf.alice) && by("bob").every(d => d.color == colorOf.bob),
      "a decoration not in its author's colour: " + JSON.stringify(ins))
    check(ins.every(d => d.author == "alice" || d.author == "bob"), "a decoration of someone else: " + JSON.stringify(ins))
    let textOf = who => by(who).map(d => d.text).join("")
    check(textOf("alice").includes("Alice wrote") && textOf("alice").includes("Alice again.") && textOf("bob").includes("Bob added more."),
      `the authors' text: alice ${JSON.stringify(textOf("alice"))}, bob ${JSON.stringify(textOf("bob"))}`)
    check(ins.map(d => d.text).join("") == text.replace("\n", ""), "the insertions are not the whole text: " + JSON.stringify(ins))
    await a.screenshot({ path: path.join(args.out, "changes-since-0.png") })

    // Since the checkpoint: Bob's deletion, struck through in his colour.
    await a.click(".history-list > li.history-checkpoint")
    await a.locator(".history-legend", { hasText: "Changes since checkpoint" }).waitFor()
    let del = await decorations(a, ".ProseMirror .pma-deleted", "color")
    log("deleted:", JSON.stringify(del))
    check(del.some(d => d.author == "bob" && d.text.includes("this") && d.color == colorOf.bob), "Bob's deletion: " + JSON.stringify(del))
    check(await a.$eval(".ProseMirror .pma-deleted", el => getComputedStyle(el).textDecorationLine) == "line-through", "the deletion is not struck through")
    let since = await decorations(a, ".ProseMirror .pma-inserted", "borderBottomColor")
    check(!since.some(d => d.text.includes("Alice wrote")), "text older than the checkpoint is marked: " + JSON.stringify(since))
    await a.screenshot({ path: path.join(args.out, "changes-since-checkpoint.png") })
    await a.click(".history-clear")
    await a.waitForFunction(() => !document.querySelector(".ProseMirror .pma-inserted, .ProseMirror .pma-deleted"))

    // Downloads of the current version, each as GET /export writes it.
    for (let format of ["markdown", "html", "text"]) {
      let got = await download(a, a.locator(`.history-download button[data-format=${format}]`))
      let want = await (await api(`/export?format=${format}`)).text()
      check(got.text == want, `the ${format} download differs from the export:\n${got.text}\n---\n${want}`)
      check(got.name.startsWith(id + "."), "the file name " + got.name)
    }
    // And of an older version: Bob's entry, its actions once clicked.
    let bobRow = a.locator(`.history-list > li.history-entry[data-version="${bobEnd}"]`)
    await bobRow.click()
    await bobRow.locator(".history-actions").waitFor()
    let older = await download(a, bobRow.locator(".history-actions button[data-format=text]"))
    let olderWant = await (await api(`/export?format=text&version=${bobEnd}`)).text()
    check(older.text == olderWant && olderWant.includes("Bob added more.") && !olderWant.includes("Alice again."),
      `the download of version ${bobEnd}: ${JSON.stringify(older.text)}, want ${JSON.stringify(olderWant)}`)
    check(older.name == `${id}-v${bobEnd}.txt`, "the file name " + older.name)

    // Restoring Bob's version: both pages and the server hold it again.
    let atBob = JSON.stringify((await (await api(`?version=${bobEnd}`)).json()).doc)
    await bobRow.locator(".history-restore").click()
    await a.waitForFunction(() => !window.pma.view.state.doc.textContent.includes("Alice again."))
    let restored = await converge(a, b)
    check(restored == "Alice wrote that. Bob added more.", "after the restore: " + JSON.stringify(restored))
    let server = await (await api("")).json()
    check(JSON.stringify(server.doc) == atBob, `the server's document ${JSON.stringify(server.doc)}, want ${atBob}`)
    for (let p of [a, b]) check(await p.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON())) == atBob, p.label + "'s document after the restore")
    rows = await waitRows(a, server.version)
    check(rows[0].kind == "restore" && rows[0].title == "alice restored a version", "the restore's entry: " + JSON.stringify(rows[0]))
    await a.screenshot({ path: path.join(args.out, "restored.png") })

    // Bob's panel reading 20 steps at a time: "Load older" until the
    // start gives the entries Alice's panel has.
    await b.evaluate(() => { window.pma.history.windowSteps = 20 })
    await b.click("#history-toggle")
    await waitRows(b, server.version)
    let loads = 0
    for (; await b.locator(".history-more button").count(); loads++) {
      check(loads < 10, "Bob's panel loads older steps forever")
      let from = await b.evaluate(() => window.pma.history.loadedFrom)
      await b.click(".history-more button")
      await b.waitForFunction(from => window.pma.history.loadedFrom < from && !document.querySelector(`.history-more[data-from="${from}"]`), from)
    }
    let bobRows = await historyRows(b)
    log(`Bob's panel: the start after ${loads} loads of older steps`)
    check(loads >= 2 && JSON.stringify(bobRows) == JSON.stringify(rows),
      `Bob's rows after ${loads} loads:\n${JSON.stringify(bobRows)}\nAlice's:\n${JSON.stringify(rows)}`)

    for (let p of [a, b]) {
      check(p.errors.length == 0, "page errors:\n" + p.errors.join("\n"))
    }
    log(`browser-history: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  } finally {
    await browser.close()
  }
}

setTimeout(() => { console.error("browser-history: over 60 s"); process.exit(1) }, 3 * timeout).unref()
main().catch(e => { console.error(e); process.exit(1) })
