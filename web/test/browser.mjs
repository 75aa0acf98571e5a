// Browser test of the demo pages against a running pmauthority: two
// users (separate browser contexts) edit one new document at the same
// time, and their editors and the server must agree.
//
// What it does and checks:
//   1. Alice opens the list page and creates the document with the form;
//      Bob opens the list page, finds the document in it and opens it.
//   2. Both see each other: the other's name in the peers list and the
//      other's cursor decoration (.pma-cursor, named by data-name) in the editor;
//      the editors and the list page show the same user count.
//   3. They type at the same time in different paragraphs, split
//      paragraphs (Enter) and apply bold (Mod-b), then wait until both are
//      synced; both editors hold the same document, equal to the one the
//      server answers (GET /docs/{id}), with everyone's text, the splits
//      and the bold marks.
//   4. Alice comments a range (Ctrl-Alt-M, the panel's input); Bob sees
//      the highlight and the comment in the panel, deletes it; it
//      disappears for Alice and the server.
//   5. Bob's connection is cut (the WebSocket is closed under him); he
//      types while reconnecting, and both converge again.
// Screenshots of both editors and of the list page go to --out.
//
// Usage: node test/browser.mjs --url http://127.0.0.1:8080 [--out DIR]
//        [--chromium /usr/bin/chromium] [--headed]

import { chromium } from "playwright-core"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

function parseArgs(argv) {
  let args = { url: process.env.PMA_URL || "", out: path.join(here, "out"), chromium: "/usr/bin/chromium", headed: false }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (a == "--headed") args.headed = true
    else if (["--url", "--out", "--chromium"].includes(a) && i + 1 < argv.length) args[a.slice(2)] = argv[++i]
    else throw new Error(`unknown argument ${a}`)
  }
  if (!args.url) throw new Error("usage: node test/browser.mjs --url http://HOST:PORT [--out DIR] [--chromium PATH]")
  args.url = args.url.replace(/\/+$/, "")
  args.out = path.resolve(args.out)
  return args
}

const args = parseArgs(process.argv.slice(2))
const timeout = 20000

function log(...parts) {
  console.log(`[browser ${new Date().toISOString().slice(11, 23)}]`, ...parts)
}

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

async function openUser(browser, name, color) {
  let context = await browser.newContext({ viewport: { width: 1000, height: 700 } })
  await context.addInitScript(([name, color]) => {
    localStorage.setItem("pmauthority.name", name)
    localStorage.setItem("pmauthority.color", color)
  }, [name, color])
  let page = await context.newPage()
  page.setDefaultTimeout(timeout)
  page.errors = []
  page.on("pageerror", e => page.errors.push(`${name}: ${e.message}`))
  page.on("console", m => { if (m.type() == "error") page.errors.push(`${name} console: ${m.text()}`) })
  page.on("response", r => { if (r.status() >= 400) page.errors.push(`${name}: ${r.status()} for ${r.url()}`) })
  page.userName = name
  return { context, page }
}

// editorState returns what an editor holds: the doc JSON, its text and
// whether everything is confirmed by the server.
function editorState(page) {
  return page.evaluate(() => {
    let { client, view } = window.pma
    let doc = view.state.doc
    return {
      doc: JSON.stringify(doc.toJSON()),
      text: doc.textBetween(0, doc.content.size, "\n"),
      synced: client.synced,
    }
  })
}

async function waitSynced(...pages) {
  for (let page of pages) await page.waitForFunction(() => window.pma?.client?.synced && window.pma.view)
}

// converge waits until both editors are synced and hold the same doc.
async function converge(a, b) {
  let deadline = Date.now() + timeout
  for (;;) {
    await waitSynced(a, b)
    let [sa, sb] = await Promise.all([editorState(a), editorState(b)])
    if (sa.synced && sb.synced && sa.doc == sb.doc) return sa
    if (Date.now() > deadline)
      throw new Error(`editors did not converge:\n${a.userName}: ${sa.text}\n${b.userName}: ${sb.text}`)
    await a.waitForTimeout(100)
  }
}

async function serverDoc(id) {
  let res = await fetch(`${args.url}/docs/${encodeURIComponent(id)}`)
  check(res.ok, `GET /docs/${id} answered ${res.status}`)
  return res.json()
}

// typeSlowly types with a delay per key so that two users' keystrokes
// interleave.
async function typeSlowly(page, text) {
  await page.keyboard.type(text, { delay: 15 })
}

async function seesCursorOf(page, name) {
  await page.locator(`.ProseMirror .pma-cursor[data-name="${name}"]`).first().waitFor({ state: "attached" })
}

async function main() {
  fs.mkdirSync(args.out, { recursive: true })
  let browser = await chromium.launch({
    executablePath: args.chromium,
    headless: !args.headed,
    args: ["--no-sandbox"],
  })
  let alice, bob
  try {
    alice = await openUser(browser, "Alice Test", "#d0342c")
    bob = await openUser(browser, "Bob Test", "#1a73e8")
    let a = alice.page, b = bob.page
    let id = "browser-test-" + Date.now().toString(36) + "-" + Math.floor(Math.random() * 1e6).toString(36)

    // 1. Alice creates the document from the list page, Bob opens it from the list.
    log("creating", id)
    await a.goto(args.url + "/")
    await a.locator("#docid").fill(id)
    await a.locator("#create button[type=submit]").click()
    await a.waitForURL(`**/edit/${id}`)
    await a.locator(".ProseMirror").waitFor()
    await waitSynced(a)
    await b.goto(args.url + "/")
    let link = b.locator("#docs a", { hasText: id })
    await link.waitFor()
    await b.screenshot({ path: path.join(args.out, "list.png") })
    await link.click()
    await b.waitForURL(`**/edit/${id}`)
    await b.locator(".ProseMirror").waitFor()
    await waitSynced(b)
    for (let p of [a, b]) await p.locator("#status[data-status=online]").waitFor()

    // 2. Presence: names in the peers list, cursors in the editors.
    await a.locator(".ProseMirror").click()
    await b.locator(".ProseMirror").click()
    await a.locator("#peers .peer", { hasText: "Bob Test" }).waitFor()
    await b.locator("#peers .peer", { hasText: "Alice Test" }).waitFor()
    await seesCursorOf(a, "Bob Test")
    await seesCursorOf(b, "Alice Test")
    // One user count, the server's, on the editors and the list page:
    // without a token a user is an address, and both are at 127.0.0.1
    // (the peers lists show each of them).
    for (let p of [a, b]) await p.locator("#users", { hasText: /^1 user$/ }).waitFor()
    let list = await alice.context.newPage()
    await list.goto(args.url + "/")
    let count = await list.locator("#docs li", { has: list.locator("a", { hasText: id }) }).locator(".count").textContent()
    check(count == "1 editing now", `the list page says ${JSON.stringify(count)}, the editors "1 user"`)
    await list.close()
    log("both online and seeing each other")

    // 3. Concurrent typing in different paragraphs, splits and bold.
    await typeSlowly(a, "Alice one")
    await a.keyboard.press("Enter")
    await typeSlowly(a, "Alice two")
    await converge(a, b)
    await b.keyboard.press("ControlOrMeta+End")
    await b.keyboard.press("Enter")
    await typeSlowly(b, "Bob three")
    await converge(a, b)
    log("first paragraphs in")

    await a.keyboard.press("ControlOrMeta+Home")
    await b.keyboard.press("ControlOrMeta+End")
    await Promise.all([
      (async () => {
        await typeSlowly(a, "Start ")
        await a.keyboard.press("End")
        await a.keyboard.press("Enter") // split after "Start Alice one"
        await typeSlowly(a, "Alice inserted")
        await a.keyboard.press("Shift+Home")
        await a.keyboard.press("ControlOrMeta+b")
      })(),
      (async () => {
        await typeSlowly(b, " and more")
        await b.keyboard.press("Enter")
        await b.keyboard.press("ControlOrMeta+b")
        await typeSlowly(b, "Bob bold")
        await b.keyboard.press("ControlOrMeta+b")
        await typeSlowly(b, " plain")
      })(),
    ])
    let state = await converge(a, b)
    let doc = JSON.parse(state.doc)
    let server = await serverDoc(id)
    check(JSON.stringify(server.doc) == state.doc, `server doc ${JSON.stringify(server.doc)}\n!= editors' ${state.doc}`)
    let paragraphs = doc.content.map(n => (n.content || []).map(t => t.text).join(""))
    log("converged:", JSON.stringify(paragraphs))
    let want = ["Start Alice one", "Alice inserted", "Alice two", "Bob three and more", "Bob bold plain"]
    check(JSON.stringify(paragraphs) == JSON.stringify(want), `paragraphs ${JSON.stringify(paragraphs)}, want ${JSON.stringify(want)}`)
    let bold = doc.content.flatMap(n => n.content || []).filter(t => (t.marks || []).some(m => m.type == "strong")).map(t => t.text)
    check(JSON.stringify(bold) == JSON.stringify(["Alice inserted", "Bob bold"]), `bold texts ${JSON.stringify(bold)}`)
    for (let p of [a, b]) check((await p.locator(".ProseMirror strong").count()) == 2, `${p.userName} shows 2 bold runs`)
    await seesCursorOf(a, "Bob Test")
    await seesCursorOf(b, "Alice Test")
    await a.screenshot({ path: path.join(args.out, "alice.png") })
    await b.screenshot({ path: path.join(args.out, "bob.png") })

    // 4. Comments: Alice comments "Alice two", Bob sees it and deletes it.
    await a.keyboard.press("ControlOrMeta+Home")
    await a.keyboard.press("ArrowDown")
    await a.keyboard.press("ArrowDown")
    await a.keyboard.press("Home")
    await a.keyboard.press("Shift+End")
    await a.keyboard.press("Control+Alt+m")
    await a.locator(".composer textarea").fill("Check this paragraph")
    await a.keyboard.press("Enter")
    await converge(a, b)
    let comments = (await serverDoc(id)).comments
    check(comments.length == 1 && comments[0].text.startsWith("Check this paragraph\n\u2014 Alice Test, "), `server comments ${JSON.stringify(comments)}`)
    let highlight = b.locator(".ProseMirror .pma-comment")
    await highlight.first().waitFor()
    check((await highlight.allTextContents()).join("") == "Alice two", "Bob's highlight covers \"Alice two\"")
    let card = b.locator(".comments-list .comment", { hasText: "Check this paragraph" })
    await card.waitFor()
    await b.screenshot({ path: path.join(args.out, "bob-comment.png") })
    await card.locator(".comment-delete").click()
    // Bob's cursor, now inside the comment, may split Alice's highlight in
    // two: wait until none is left.
    await a.locator(".ProseMirror .pma-comment").first().waitFor({ state: "detached" })
    await converge(a, b)
    comments = (await serverDoc(id)).comments
    check(comments.length == 0, `server comments after delete ${JSON.stringify(comments)}`)
    log("comment added, seen, deleted")

    // 5. Bob's connection drops; he types while it is down; both converge.
    await b.keyboard.press("ControlOrMeta+End")
    await b.evaluate(() => window.pma.client.ws.close())
    await typeSlowly(b, " offline")
    await typeSlowly(a, "!")
    state = await converge(a, b)
    check(state.text.includes("Bob bold plain offline"), `Bob's text typed while reconnecting is in: ${state.text}`)
    check(JSON.stringify((await serverDoc(id)).doc) == state.doc, "server doc after reconnection")
    await seesCursorOf(a, "Bob Test")
    log("reconnected and converged")

    let errors = [...a.errors, ...b.errors]
    check(errors.length == 0, "page errors:\n" + errors.join("\n"))
    log("PASS; screenshots in", args.out)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})
