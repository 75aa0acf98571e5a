// Document ids as the server accepts them (docs/api.md): any name of 1 to
// 512 bytes of UTF-8 without control characters, other than "." and "..".
// Names are ids as they are: spaces, accents, emoji and "/" included (the
// pages percent-encode them in URLs).
export const maxDocIDBytes = 512

const controls = /[\u0000-\u001f\u007f-\u009f]/
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

// validDocID reports whether the server accepts id.
export function validDocID(id) {
  if (typeof id != "string" || !id || id == "." || id == "..") return false
  if (controls.test(id) || loneSurrogate.test(id)) return false
  return new TextEncoder().encode(id).length <= maxDocIDBytes
}

// docIDFromName turns a name typed by the user into an id: the name
// without the spaces around it, or null when the server would refuse it.
export function docIDFromName(name) {
  let id = name.trim()
  return validDocID(id) ? id : null
}
