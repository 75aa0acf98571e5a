// The page's token (docs/auth.md): taken from the URL fragment
// (#token=…), which browsers send to no server, kept per tab in
// sessionStorage, and taken out of the address bar so that a copied link
// does not carry it.

const tokenKey = "pmauthority.token"

// loadToken returns the token of the fragment, or the tab's ("" when
// there is none).
export function loadToken() {
  let m = /(?:^#|&)token=([^&]*)/.exec(location.hash)
  if (m) {
    let token = ""
    try { token = decodeURIComponent(m[1]) } catch { /* not a token */ }
    try { sessionStorage.setItem(tokenKey, token) } catch { /* storage disabled: this page only */ }
    history.replaceState(null, "", location.pathname + location.search)
    return token
  }
  try { return sessionStorage.getItem(tokenKey) || "" } catch { return "" }
}

const ranks = { read: 1, comment: 2, edit: 3, admin: 4 }

// claims returns the claims of token ({} when it is not a JWT). The
// page does not check the signature: the server does.
function claims(token) {
  try {
    let payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")
    let c = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(payload), c => c.charCodeAt(0))))
    return c && typeof c == "object" ? c : {}
  } catch {
    return {}
  }
}

// nameOf returns the name others see for the holder of token, as the
// server takes it (docs/auth.md): its "name" claim, else its "sub", cut
// to 64 characters ("" when it has neither).
export function nameOf(token) {
  let c = claims(token)
  let name = typeof c.name == "string" && c.name ? c.name : typeof c.sub == "string" ? c.sub : ""
  return name.slice(0, 64)
}

// subOf returns the principal of token, its "sub" claim, as the server
// records it as the author of comments ("" when it has none).
export function subOf(token) {
  let sub = claims(token).sub
  return typeof sub == "string" ? sub : ""
}

// roleOf returns the role that the "docs" claim of token gives on the
// document id ("" for none), as the server computes it: the highest role
// of the patterns that match (an exact id, or a prefix ending in *). It
// is for what the page shows; the server decides what is allowed.
export function roleOf(token, id) {
  let docs = claims(token).docs
  let best = ""
  for (let [pattern, role] of Object.entries(docs || {})) {
    let matches = pattern.endsWith("*") ? id.startsWith(pattern.slice(0, -1)) : pattern == id
    if (matches && (ranks[role] || 0) > (ranks[best] || 0)) best = role
  }
  return best
}

// mayEdit tells whether role allows steps.
export function mayEdit(role) {
  return (ranks[role] || 0) >= ranks.edit
}

// mayComment tells whether role allows comments (creating and deleting).
export function mayComment(role) {
  return (ranks[role] || 0) >= ranks.comment
}
