// Browser test of the app's BeforeSubmit hook: in the demo editor under
// the app's /collab/, a user types text, then inserts an image. The server
// refuses the image (403, "images are not allowed in this app"): the
// editor shows the message, reloads the document and ends with the
// server's document, which has the text and no image.
//
// Usage: node refusal.mjs --url http://127.0.0.1:8090/collab [--out DIR]
//        [--chromium /usr/bin/chromium]
// (playwright-core comes from web/node_modules.)

import { createRequire } from "node:module"
import path from "node:path"

const { chromium } = createRequire(new URL("../../web/package.json", import.meta.url))("playwright-core")

function parseArgs(argv) {
  let args = { url: "", out: "", chromium: "/usr/bin/chromium" }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (["--url", "--out", "--chromium"].includes(a) && i + 1 < argv.length) args[a.slice(2)] = argv[++i]
    else throw new Error(`unknown argument ${a}`)
  }
  if (!args.url) throw new Error("usage: node refusal.mjs --url http://HOST:PORT/collab [--out DIR] [--chromium PATH]")
  args.url = args.url.replace(/\/+$/, "")
  return args
}

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

const args = parseArgs(process.argv.slice(2))
const timeout = 20000

// editorState returns what the editor holds.
function editorState(page) {
  return page.evaluate(() => {
    let { client, view } = window.pma
    let doc = view.state.doc
    let images = 0
    doc.descendants(n => { if (n.type.name == "image") images++ })
    return { doc: JSON.stringify(doc.toJSON()), text: doc.textContent, images, synced: client.synced }
  })
}

async function main() {
  let browser = await chromium.launch({ executablePath: args.chromium, headless: true, args: ["--no-sandbox"] })
  try {
    let page = await browser.newPage()
    page.setDefaultTimeout(timeout)
    let errors = []
    page.on("pageerror", e => errors.push(e.message))
    let id = "refusal-" + Date.now().toString(36)
    await page.goto(`${args.url}/edit/${id}`)
    await page.locator("#status[data-status=online]").waitFor()
    await page.locator(".ProseMirror").click()
    await page.keyboard.type("Some text", { delay: 10 })
    await page.waitForFunction(() => window.pma.client.synced && window.pma.view.state.doc.textContent == "Some text")

    // Insert an image, as the menu's "Insert image" does.
    await page.evaluate(() => {
      let view = window.pma.view
      let image = view.state.schema.nodes.image.create({ src: "https://example.com/cat.png", alt: "a cat" })
      view.dispatch(view.state.tr.replaceSelectionWith(image))
    })
    await page.locator("#notice", { hasText: "images are not allowed in this app (403)" }).waitFor()
    await page.waitForFunction(() => {
      let { client, view } = window.pma
      let images = 0
      view.state.doc.descendants(n => { if (n.type.name == "image") images++ })
      return client.synced && images == 0
    })
    await page.locator("#status[data-status=online]").waitFor()
    let state = await editorState(page)
    check(state.text == "Some text", `the editor's text is ${JSON.stringify(state.text)}`)
    let res = await fetch(`${args.url}/docs/${id}`)
    check(res.ok, `GET /docs/${id}: ${res.status}`)
    let server = await res.json()
    check(JSON.stringify(server.doc) == state.doc, `server doc ${JSON.stringify(server.doc)} != editor's ${state.doc}`)
    if (args.out) await page.screenshot({ path: path.join(args.out, "refusal.png") })
    check(errors.length == 0, "page errors:\n" + errors.join("\n"))
    console.log(`PASS: the image was refused; the document is at version ${server.version}: ${state.doc}`)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})
