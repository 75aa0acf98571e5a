// Browser test of server-side edits (POST /docs/{id}/edits) against a
// running pmauthority: Alice and Bob type in the demo page, each in a
// paragraph of their own, while a backend sends edits several times
// over, each found by text in the document it read a moment before:
//   - a Markdown paragraph after the paragraph it found,
//   - a list wrap of the paragraph it inserted,
//   - bold on a phrase it found,
//   - a stale edit: text it read, which Alice has changed since, must be
//     refused with 409 and change nothing.
// At the end both pages and the server hold the same document, with
// everyone's text: every keystroke of Alice and Bob, and every edit the
// server accepted. The editors see the backend's name in their peers.
//
// Usage: node test/browser-edits.mjs --url http://127.0.0.1:8080 [--out DIR]
//        [--chromium /usr/bin/chromium] [--headed]

import { chromium } from "playwright-core"
import path from "node:path"
import { parseArgs, log, check, newID, newUser, openDoc, converge, serverDoc, serverText } from "./lib.mjs"

const args = parseArgs(process.argv.slice(2),
  "usage: node test/browser-edits.mjs --url http://HOST:PORT [--out DIR] [--chromium PATH] [--headed]")

const rounds = 4

// edit posts an edit request and returns [status, answer].
async function edit(id, body) {
  let res = await fetch(`${args.url}/docs/${encodeURIComponent(id)}/edits`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  })
  return [res.status, await res.json()]
}

// read returns the version of the server's document, as a backend reads it.
async function read(id) {
  let st = await serverDoc(args.url, id)
  return st.version
}

async function main() {
  let browser = await chromium.launch({ executablePath: args.chromium, headless: !args.headed, args: ["--no-sandbox"] })
  try {
    let alice = await newUser(browser, "Alice Edits"), bob = await newUser(browser, "Bob Edits")
    let a = alice.page, b = bob.page
    let id = newID("browser-edits")
    await openDoc(a, args.url, id)
    await a.locator(".ProseMirror").click()
    await a.keyboard.type("Alice starts here.")
    await a.keyboard.press("Enter")
    await a.keyboard.type("Bob starts here.")
    await converge(a)
    await openDoc(b, args.url, id)
    await converge(a, b)
    // Bob's caret at the end of his paragraph, Alice's at the end of hers.
    await b.locator(".ProseMirror p", { hasText: "Bob starts here." }).click()
    await b.keyboard.press("End")
    await a.locator(".ProseMirror p", { hasText: "Alice starts here." }).click()
    await a.keyboard.press("End")

    let alicePieces = [], bobPieces = [], accepted = []
    for (let r = 0; r < rounds; r++) {
      let base = await read(id)
      let typing = Promise.all([
        (async () => { alicePieces.push(`a${r}z`); await a.keyboard.type(` a${r}x`, { delay: 20 }) })(),
        (async () => { bobPieces.push(`b${r}y`); await b.keyboard.type(` b${r}y`, { delay: 20 }) })(),
      ])
      // While they type: a Markdown paragraph after Bob's paragraph, found
      // by its start in the document read before.
      let [st, ans] = await edit(id, { base, name: "Backend", edits: [
        { op: "insert", target: { text: { find: "Bob starts here." } }, at: "after", markdown: `Server note ${r} with *emphasis*` },
      ] })
      check(st == 200, `round ${r}: the insert answered ${st} ${JSON.stringify(ans)}`)
      accepted.push(`Server note ${r} with emphasis`)
      if (r == 0) {
        for (let p of [a, b]) await p.locator("#peers .peer", { hasText: "Backend" }).first().waitFor({ state: "attached" })
      }
      // Then, from the version it got: wrap that paragraph in a list and
      // make a phrase of it bold.
      ;[st, ans] = await edit(id, { base: ans.version, name: "Backend", edits: [
        { op: "wrapInList", target: { text: { find: `Server note ${r} with` } }, type: "bullet_list" },
        { op: "addMark", target: { text: { find: `note ${r}` } }, mark: { type: "strong" } },
      ] })
      check(st == 200, `round ${r}: the wrap and bold answered ${st} ${JSON.stringify(ans)}`)
      await typing
      await converge(a, b)
      // A stale edit: Alice's last word as a backend read it, which she
      // changes before the edit arrives.
      base = await read(id)
      await a.keyboard.press("Backspace")
      await a.keyboard.type("z")
      await converge(a, b)
      let [stale, sans] = await edit(id, { base, name: "Backend", edits: [
        { op: "replaceText", target: { text: { find: `a${r}x` } }, text: "overwritten" },
      ] })
      check(stale == 409, `round ${r}: the stale edit answered ${stale} ${JSON.stringify(sans)}, want 409`)
      log(`round ${r}: edits accepted (version ${ans.version}), the stale one refused`)
    }
    await a.screenshot({ path: path.join(args.out, "edits-alice.png") })
    await b.screenshot({ path: path.join(args.out, "edits-bob.png") })

    let text = await converge(a, b)
    let server = await serverText(args.url, id)
    let docA = await a.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON()))
    let docS = JSON.stringify((await serverDoc(args.url, id)).doc)
    check(docA == docS, `the pages and the server differ:\npages:  ${docA}\nserver: ${docS}`)
    for (let piece of [...alicePieces, ...bobPieces, "Alice starts here.", "Bob starts here."])
      check(text.includes(piece), `"${piece}" is missing from the document:\n${text}`)
    for (let note of accepted) check(text.includes(note), `"${note}" is missing from the document:\n${text}`)
    check(!text.includes("overwritten"), `a stale edit was applied:\n${text}`)
    let doc = JSON.parse(docS)
    let lists = doc.content.filter(n => n.type == "bullet_list").length
    check(lists >= 1, `no list in the document: ${docS}`)
    check(docS.includes(`{"type":"strong"}`) && docS.includes(`{"type":"em"}`), `bold or emphasis missing: ${docS}`)
    log("pages and server agree:", JSON.stringify(server))
    for (let p of [a, b]) check(p.errors.length == 0, "page errors:\n" + p.errors.join("\n"))
  } finally {
    await browser.close()
  }
}

main().catch(e => { console.error(e); process.exit(1) })
