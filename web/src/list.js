// The list page, /: the documents of the server (GET /docs) and a form
// that opens a new one. Its URLs are relative to the page, so that it
// works under any prefix (the page's path ends with a slash).

import "./style.css"
import { docIDFromName } from "./docid.js"
import { h } from "../client/src/dom.js"
import { loadToken } from "./token.js"

const $ = id => document.getElementById(id)

function editURL(id) {
  return "edit/" + encodeURIComponent(id)
}

function users(n) {
  return n ? `${n} editing now` : ""
}

// changed says when a document last changed: "just now", "5 min ago",
// "3 h ago", or the date.
function changed(updated, now = Date.now()) {
  let t = Date.parse(updated)
  if (!Number.isFinite(t)) return ""
  let s = Math.max(0, (now - t) / 1000)
  if (s < 60) return "changed just now"
  if (s < 3600) return `changed ${Math.floor(s / 60)} min ago`
  if (s < 86400) return `changed ${Math.floor(s / 3600)} h ago`
  return "changed " + new Date(t).toLocaleDateString()
}

function details(d) {
  let parts = [`version ${d.version ?? 0}`]
  let when = d.updated ? changed(d.updated) : ""
  if (when) parts.push(when)
  return parts.join(" · ")
}

async function loadDocs() {
  let list = $("docs")
  let docs
  try {
    let headers = { Accept: "application/json" }
    let token = loadToken()
    if (token) headers.Authorization = "Bearer " + token
    let res = await fetch("docs", { headers })
    if (res.status == 404) throw new Error("the collab API is not enabled on this server")
    if (res.status == 401) throw new Error("this server needs a token: open the page with #token=…")
    if (!res.ok) throw new Error(`the server answered ${res.status}`)
    docs = await res.json()
  } catch (e) {
    list.replaceChildren(h("li", { class: "empty" }, "Could not load the documents: " + e.message))
    return
  }
  if (!docs.length) {
    list.replaceChildren(h("li", { class: "empty" }, "No documents yet: create one above."))
    return
  }
  list.replaceChildren(...docs.map(d =>
    h("li", {}, h("a", { href: editURL(d.id) }, d.id),
      h("span", { class: "details" }, details(d)),
      h("span", { class: "count" }, users(d.users)))))
}

$("create").addEventListener("submit", e => {
  e.preventDefault()
  let id = docIDFromName($("docid").value)
  if (!id) {
    $("create-error").textContent = "A name is 1 to 512 bytes of text without control characters, and not . or .."
    $("docid").focus()
    return
  }
  location.href = editURL(id)
})
// The hint says, before creating, which id a name becomes.
const defaultHint = $("create-hint").textContent
$("docid").addEventListener("input", () => {
  $("create-error").textContent = ""
  let name = $("docid").value.trim(), id = docIDFromName(name)
  $("create-hint").textContent = id && id != $("docid").value ? `Opens as “${id}” (without the spaces around it).` : defaultHint
})

loadDocs()
