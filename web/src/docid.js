// Document ids as the server accepts them: 1 to 128 of [A-Za-z0-9._~-].
export const docIDPattern = /^[A-Za-z0-9._~-]{1,128}$/

// docIDFromName turns a name typed by the user into an id: spaces become
// dashes; it returns null when what is left is not a valid id.
export function docIDFromName(name) {
  let id = name.trim().replace(/\s+/g, "-")
  return docIDPattern.test(id) ? id : null
}
