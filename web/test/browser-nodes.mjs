// Browser test of the editor page against two nodes of a cluster (two
// pmauthority serve processes on one PostgreSQL): Alice's browser talks
// to the first node, Bob's to the second, on one document. Scenarios
// (--only picks some):
//
//   typing   Alice types on node A, Bob opens the document on node B and
//            sees her text; then both type at once in different
//            paragraphs, and each sees the other's words: both editors
//            converge, and both nodes serve that document.
//   cursors  each sees the other's cursor (.pma-cursor named by
//            data-name) and name in the peers list: presence across
//            nodes.
// Screenshots go to --out.
//
// Usage: node test/browser-nodes.mjs --url http://NODE-A,http://NODE-B [--out DIR]
//        [--only typing,cursors] [--chromium /usr/bin/chromium] [--headed]

import { chromium } from "playwright-core"
import path from "node:path"
import { parseArgs, log, check, newID, newUser, openDoc, converge, editorText, serverText } from "./lib.mjs"

const args = parseArgs(process.argv.slice(2),
  "usage: node test/browser-nodes.mjs --url http://NODE-A,http://NODE-B [--out DIR] [--only NAMES] [--chromium PATH] [--headed]")
const urls = args.url.split(",").map(u => u.replace(/\/+$/, ""))
check(urls.length == 2 && urls[0] != urls[1], `--url: want two different nodes, got ${args.url}`)

// open opens the document id for Alice on node A and, after she typed a
// line, for Bob on node B.
async function open(browser, id) {
  let alice = await newUser(browser, "Alice"), bob = await newUser(browser, "Bob")
  let a = alice.page, b = bob.page
  await openDoc(a, urls[0], id)
  await a.locator(".ProseMirror").click()
  await a.keyboard.type("Alice on node A")
  await a.keyboard.press("Enter")
  await a.keyboard.type("Her second line")
  await converge(a)
  await openDoc(b, urls[1], id)
  await converge(a, b)
  return { alice, bob, a, b }
}

async function typing(browser) {
  let id = newID("nodes")
  let { alice, bob, a, b } = await open(browser, id)
  check((await editorText(b)).includes("Alice on node A"), "Bob, on node B, sees what Alice typed on node A")

  // Both at once: Alice at the end of her first line, Bob in a new
  // paragraph at the end.
  await a.locator(".ProseMirror > p").nth(0).click()
  await a.keyboard.press("End")
  await b.locator(".ProseMirror").click()
  await b.keyboard.press("Control+End")
  await b.keyboard.press("Enter")
  await Promise.all([
    a.keyboard.type(" and more from A", { delay: 20 }),
    b.keyboard.type("Bob on node B types too", { delay: 20 }),
  ])
  let text = await converge(a, b)
  check(text == "Alice on node A and more from A\nHer second line\nBob on node B types too",
    `both editors hold both users' words: ${JSON.stringify(text)}`)
  for (let url of urls) {
    let server = await serverText(url, id)
    check(server == text, `${url} serves ${JSON.stringify(server)}, the editors hold ${JSON.stringify(text)}`)
  }
  await a.screenshot({ path: path.join(args.out, "nodes-alice.png") })
  await b.screenshot({ path: path.join(args.out, "nodes-bob.png") })
  await finish([a, b], [alice, bob])
}

async function cursors(browser) {
  let id = newID("nodes-cursors")
  let { alice, bob, a, b } = await open(browser, id)
  await b.locator(".ProseMirror").click()
  await b.keyboard.press("Control+End")
  await b.keyboard.type(" (Bob)")
  await a.keyboard.press("Home")
  await converge(a, b)
  await a.locator("#peers .peer", { hasText: "Bob" }).waitFor()
  await b.locator("#peers .peer", { hasText: "Alice" }).waitFor()
  await a.locator(`.ProseMirror .pma-cursor[data-name="Bob"]`).first().waitFor({ state: "attached" })
  await b.locator(`.ProseMirror .pma-cursor[data-name="Alice"]`).first().waitFor({ state: "attached" })
  await a.screenshot({ path: path.join(args.out, "nodes-cursors-alice.png") })
  await finish([a, b], [alice, bob])
}

// finish checks the pages had no errors and closes the contexts.
async function finish(pages, users) {
  let errors = pages.flatMap(p => p.errors)
  for (let u of users) await u.context.close()
  check(errors.length == 0, "page errors:\n" + errors.join("\n"))
}

const scenarios = { typing, cursors }

async function main() {
  let names = args.only ? args.only.split(",") : Object.keys(scenarios)
  for (let n of names) check(n in scenarios, `unknown scenario ${n}`)
  let browser = await chromium.launch({ executablePath: args.chromium, headless: !args.headed, args: ["--no-sandbox"] })
  try {
    for (let n of names) {
      log("scenario", n)
      await scenarios[n](browser)
      log("scenario", n, "PASS")
    }
    log("PASS; screenshots in", args.out)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})
