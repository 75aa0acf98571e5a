// Browser test of client/example-tiptap (Tiptap's StarterKit with the
// PmAuthority extension of pmauthority-client/tiptap, Tiptap from npm)
// against a running pmauthority whose default schema is the example's
// schema.json and that serves the built example (client/example-tiptap/
// build.mjs --outdir) at URL/tiptap-example/, on its origin
// (TestTiptapExample sets that up), or with --app APP at APP, an origin
// of its own that the server allows (--allow-origin; the walkthrough of
// cmd/pmauthority, TestWalkthrough, serves it so).
//
// Tia and Tom edit one document in two Tiptap editors: the text and the
// marks converge with the server's document; Tiptap's update event fires
// for the other's steps; undo takes back only the editor's own changes;
// each sees the other's caret; an unmounted editor follows, a resync keeps
// the editing, and a document whose content the schema does not allow
// loads. The page's exportSchema() is schema.json.
// Then a document of the "basic" schema: Tiptap's bold is refused by the
// server, and the page shows the server's message (not just "offline");
// and a document Tiptap cannot read says so.
//
// Usage: node test/browser-tiptap.mjs --url http://127.0.0.1:8080 [--app URL] [--out DIR]

import { chromium } from "playwright-core"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs, log, check, newID, newUser, serverDoc, timeout } from "./lib.mjs"

const args = parseArgs(process.argv.slice(2), "usage: node test/browser-tiptap.mjs --url http://HOST:PORT [--app URL] [--out DIR] [--chromium PATH] [--headed]")
const here = path.dirname(fileURLToPath(import.meta.url))
const schemaFile = path.join(here, "..", "client", "example-tiptap", "schema.json")

function pageURL(id, name) {
  let app = args.app ? args.app.replace(/\/+$/, "") : `${args.url}/tiptap-example`
  return `${app}/index.html?doc=${encodeURIComponent(id)}&server=${encodeURIComponent(args.url + "/")}&name=${name}`
}

// open loads the example on id and waits for the document.
async function open(page, id, name) {
  await page.goto(pageURL(id, name))
  await page.waitForFunction(() => window.example?.client?.synced)
    .catch(e => { throw new Error(`the Tiptap page did not connect (${e.message}):\n${page.errors.join("\n")}`) })
}

const text = page => page.evaluate(() => window.example.editor.getText())
const docJSON = page => page.evaluate(() => JSON.stringify(window.example.editor.getJSON()))
const synced = (...pages) => Promise.all(pages.map(p => p.waitForFunction(() => window.example.client.synced)))

// converge waits until the editors are synced with the same document, the
// server's, and returns it.
async function converge(id, ...pages) {
  let deadline = Date.now() + timeout
  for (;;) {
    await synced(...pages)
    let docs = await Promise.all(pages.map(docJSON))
    let server = JSON.stringify((await serverDoc(args.url, id)).doc)
    if (docs.every(d => d == server)) return server
    if (Date.now() > deadline) throw new Error(`editors did not converge:\nserver ${server}\n${docs.join("\n")}`)
    await pages[0].waitForTimeout(50)
  }
}

async function main() {
  let browser = await chromium.launch({ executablePath: args.chromium, headless: !args.headed, args: ["--no-sandbox"] })
  try {
    let id = newID("tiptap")
    let tia = (await newUser(browser, "Tia")).page, tom = (await newUser(browser, "Tom")).page
    await open(tia, id, "Tia")
    check(await tia.evaluate(() => window.example.exportSchema()) == fs.readFileSync(schemaFile, "utf8"),
      "exportSchema(editor) in the page is client/example-tiptap/schema.json (run node export-schema.mjs there)")
    check(!(await tia.evaluate(() => window.example.editor.can().undo())), "loading the document is not undoable")

    await tia.locator(".tiptap").click()
    await tia.keyboard.type("Hello from Tia", { delay: 5 })
    await tia.keyboard.press("ControlOrMeta+b")
    await tia.keyboard.type(" bold", { delay: 5 })
    await synced(tia)

    await open(tom, id, "Tom")
    check(await text(tom) == "Hello from Tia bold", `Tom's editor has Tia's text: ${JSON.stringify(await text(tom))}`)
    check((await tom.locator(".tiptap strong").allTextContents()).join("") == " bold", "and her bold")
    await converge(id, tia, tom)
    log("Tom's editor loaded Tia's text")

    // Tiptap's update event fires for the other's steps.
    let remoteBefore = await tia.evaluate(() => window.example.updates.remote)
    await tom.locator(".tiptap").click()
    await tom.keyboard.press("ControlOrMeta+End")
    await tom.keyboard.press("Enter")
    await tom.keyboard.type("Tom was here", { delay: 5 })
    await tia.waitForFunction(() => window.example.editor.getText().endsWith("Tom was here"))
    let remoteAfter = await tia.evaluate(() => window.example.updates.remote)
    check(remoteAfter > remoteBefore, `Tia's editor emitted update for Tom's steps (${remoteBefore} → ${remoteAfter})`)
    check(await tia.evaluate(() => window.example.updates.local) > 0, "and for her own typing")
    await converge(id, tia, tom)

    // Undo in Tia's editor takes back her changes only, Tom's stay.
    await tia.locator(".tiptap").click()
    await tia.keyboard.press("ControlOrMeta+Home")
    await tia.keyboard.type("Tia again: ", { delay: 5 })
    await converge(id, tia, tom)
    await tia.evaluate(async () => {
      let { editor } = window.example
      for (let i = 0; i < 50 && editor.can().undo(); i++) editor.commands.undo()
    })
    let after = await converge(id, tia, tom)
    check(await text(tia) == "\n\nTom was here", `after Tia's undo only Tom's text is left: ${JSON.stringify(await text(tia))} (${after})`)
    check(await tom.evaluate(() => window.example.editor.can().undo()), "Tom can still undo his own typing")
    await tom.evaluate(async () => {
      let { editor } = window.example
      for (let i = 0; i < 50 && editor.can().undo(); i++) editor.commands.undo()
    })
    await converge(id, tia, tom)
    check(await text(tom) == "", `after Tom's undo too the document is empty: ${JSON.stringify(await text(tom))}`)
    await tom.evaluate(() => window.example.editor.commands.insertContent("Back again"))
    await tia.waitForFunction(() => window.example.editor.getText() == "Back again")
    log("undo is per editor")

    // Both type at once: the steps that lose the race are rebased
    // (receiveTransaction through Tiptap's dispatch) and sent again.
    await tia.locator(".tiptap").click()
    await tia.keyboard.press("ControlOrMeta+Home")
    await tom.locator(".tiptap").click()
    await tom.keyboard.press("ControlOrMeta+End")
    await Promise.all([tia.keyboard.type("<tia>", { delay: 15 }), tom.keyboard.type("<tom>", { delay: 15 })])
    await converge(id, tia, tom)
    check(await text(tia) == "<tia>Back again<tom>", `concurrent typing: ${JSON.stringify(await text(tia))}`)

    // A resync (a snapshot into an editor that has a document) keeps the
    // document and the editing.
    await tia.evaluate(() => window.example.client.restart("test"))
    await synced(tia)
    await tia.keyboard.type("!", { delay: 5 })
    await converge(id, tia, tom)
    check(await text(tom) == "<tia>!Back again<tom>", `after Tia's resync: ${JSON.stringify(await text(tom))}`)
    // An unmounted editor (Tiptap keeps its state) follows too, and
    // shows the document when mounted again.
    await tom.evaluate(() => window.example.editor.unmount())
    await tia.keyboard.type("?", { delay: 5 })
    await tom.waitForFunction(() => window.example.editor.state.doc.textContent == "<tia>!?Back again<tom>")
    await tom.evaluate(() => window.example.editor.mount(document.querySelector("#editor")))
    await tom.locator(".tiptap", { hasText: "<tia>!?Back again<tom>" }).waitFor()
    await converge(id, tia, tom)
    log("concurrent typing, a resync, an unmounted editor")

    // Each sees the other's caret.
    await tia.locator(".tiptap").click()
    await tom.locator(".tiptap").click()
    await tia.locator(`.tiptap .pma-cursor[data-name="Tom"]`).waitFor({ state: "attached" })
    await tom.locator(`.tiptap .pma-cursor[data-name="Tia"]`).waitFor({ state: "attached" })
    await tia.locator("#peers", { hasText: "Tom" }).waitFor()
    await tia.screenshot({ path: path.join(args.out, "tiptap.png") })
    let errors = [...tia.errors, ...tom.errors]
    check(errors.length == 0, "page errors:\n" + errors.join("\n"))
    log("remote carets shown")

    // A document whose top node's content the schema does not allow (the
    // server takes it unless --strict): loaded as it is, and editable.
    let emptyID = newID("tiptap-empty")
    let res = await fetch(`${args.url}/docs`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: emptyID, doc: { type: "doc" } }) })
    check(res.status == 201, `POST /docs with an empty doc: ${res.status}`)
    await open(tom, emptyID, "Tom")
    check(await docJSON(tom) == `{"type":"doc"}`, `the empty document: ${await docJSON(tom)}`)
    await tom.evaluate(() => window.example.editor.commands.insertContent({ type: "paragraph", content: [{ type: "text", text: "filled" }] }))
    await converge(emptyID, tom)
    check(await text(tom) == "filled", `the empty document filled: ${JSON.stringify(await text(tom))}`)
    errors = [...tia.errors, ...tom.errors]
    check(errors.length == 0, "page errors:\n" + errors.join("\n"))
    log("a document the schema does not allow loads")

    // A document of another schema: the server's refusal is shown.
    let basicID = newID("tiptap-basic")
    res = await fetch(`${args.url}/docs`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: basicID, schema: "basic" }) })
    check(res.status == 201, `POST /docs with the basic schema: ${res.status}`)
    let other = (await newUser(browser, "Ola")).page
    await open(other, basicID, "Ola")
    await other.locator(".tiptap").click()
    await other.keyboard.press("ControlOrMeta+b")
    await other.keyboard.type("bold", { delay: 5 })
    await other.locator("#notice", { hasText: "There is no mark type bold in this schema" }).waitFor()
    log("a refused step shows:", await other.locator("#notice").textContent())

    let listID = newID("tiptap-list")
    res = await fetch(`${args.url}/docs`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({
      id: listID, schema: "basic",
      doc: { type: "doc", content: [{ type: "bullet_list", content: [{ type: "list_item", content: [{ type: "paragraph" }] }] }] },
    }) })
    check(res.status == 201, `POST /docs with a bullet_list: ${res.status}`)
    await other.goto(pageURL(listID, "Ola"))
    await other.locator("#notice", { hasText: "cannot read" }).waitFor()
    await other.locator("#status", { hasText: "offline: unreadable document" }).waitFor()
    log("an unreadable document shows:", await other.locator("#notice").textContent())
    log("PASS; screenshot in", args.out)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})
