// Browser test of client/example-tiptap (pmauthority-client inside a
// Tiptap editor, Tiptap from npm) against a running pmauthority that also
// serves the built example (client/example-tiptap/build.mjs --outdir) at
// URL/tiptap-example/, on its origin (TestTiptapExample sets that up).
// Tia types in Tiptap (with bold), Dan in the demo editor; both editors
// and the server agree, and each sees the other's presence.
//
// Usage: node test/browser-tiptap.mjs --url http://127.0.0.1:8080 [--out DIR]

import { chromium } from "playwright-core"
import path from "node:path"
import { parseArgs, log, check, newID, newUser, openDoc, waitSynced, editorText, serverDoc } from "./lib.mjs"

const args = parseArgs(process.argv.slice(2), "usage: node test/browser-tiptap.mjs --url http://HOST:PORT [--out DIR] [--chromium PATH] [--headed]")

async function main() {
  let browser = await chromium.launch({ executablePath: args.chromium, headless: !args.headed, args: ["--no-sandbox"] })
  try {
    let id = newID("tiptap")
    let tia = await newUser(browser, "Tia"), dan = await newUser(browser, "Dan")
    let t = tia.page, d = dan.page
    await t.goto(`${args.url}/tiptap-example/index.html?doc=${encodeURIComponent(id)}&server=${encodeURIComponent(args.url + "/")}&name=Tia`)
    await t.waitForFunction(() => window.example?.client?.synced && window.example.editor.isEditable)
      .catch(e => { throw new Error(`the Tiptap page did not connect (${e.message}):\n${t.errors.join("\n")}`) })
    await t.locator(".tiptap").click()
    await t.keyboard.type("Hello from Tiptap", { delay: 10 })
    await t.keyboard.press("ControlOrMeta+b")
    await t.keyboard.type(" bold", { delay: 10 })
    await t.waitForFunction(() => window.example.client.synced)

    await openDoc(d, args.url, id)
    check((await editorText(d)) == "Hello from Tiptap bold", `Dan's editor has Tia's text: ${JSON.stringify(await editorText(d))}`)
    check((await d.locator(".ProseMirror strong").allTextContents()).join("") == " bold", "and her bold")
    await d.locator(".ProseMirror").click()
    await d.keyboard.press("ControlOrMeta+End")
    await d.keyboard.type(" and Dan", { delay: 10 })
    await waitSynced(d)
    await t.waitForFunction(() => window.example.editor.getText() == "Hello from Tiptap bold and Dan")
    let server = (await serverDoc(args.url, id)).doc
    let tiptapDoc = await t.evaluate(() => window.example.editor.getJSON())
    check(JSON.stringify(server) == JSON.stringify(tiptapDoc), `the server ${JSON.stringify(server)}\n!= Tiptap's ${JSON.stringify(tiptapDoc)}`)
    check(JSON.stringify(server) == await d.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON())), "the server and the demo editor agree")

    await t.locator(`.tiptap .pma-cursor[data-name="Dan"]`).waitFor({ state: "attached" })
    await d.locator("#peers .peer", { hasText: "Tia" }).waitFor()
    await t.locator("#peers", { hasText: "Dan" }).waitFor()
    await t.screenshot({ path: path.join(args.out, "tiptap.png") })
    let errors = [...t.errors, ...d.errors]
    check(errors.length == 0, "page errors:\n" + errors.join("\n"))
    log("PASS; screenshot in", args.out)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})
