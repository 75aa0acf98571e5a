// UnsavedStore keeps a client's unconfirmed changes in IndexedDB, so
// that they survive a reload while offline (CollabClient's persist
// option). One record per client id under the store's name (a document):
//
//   {id: name + "\n" + clientID, name, clientID, version, doc, steps,
//    commentVersion, comments, events, savedAt}
//
// doc is the document at version (the last confirmed one), comments the
// comments the server has, in that document; steps are the unconfirmed
// steps after it and events the unsent comment events (positions in the
// document after the steps). Each tab writes its own record (its client
// id's), and a new client takes one (claim) and deletes it in the same
// transaction, so that two tabs never restore the same changes.

const dbName = "pmauthority-client"
const storeName = "unsaved"

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
}

export class UnsavedStore {
  constructor(name, indexedDB) {
    this.name = name
    this.idb = indexedDB
    this.db = null
  }

  // available tells whether the environment has IndexedDB.
  static available() {
    return typeof globalThis.indexedDB?.open == "function"
  }

  async open() {
    if (!this.db) {
      let req = this.idb.open(dbName, 1)
      req.onupgradeneeded = () => req.result.createObjectStore(storeName, { keyPath: "id" })
      this.db = request(req)
    }
    return this.db
  }

  // claim returns one record of the name, deleted from the store, or
  // null when there is none.
  async claim() {
    let db = await this.open()
    let tx = db.transaction(storeName, "readwrite")
    let store = tx.objectStore(storeName)
    let range = IDBKeyRange.bound(this.name + "\n", this.name + "\n\uffff")
    let cursor = await request(store.openCursor(range))
    let record = null
    if (cursor) {
      record = cursor.value
      cursor.delete()
    }
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve
      tx.onerror = tx.onabort = () => reject(tx.error)
    })
    return record
  }

  // put writes the record of clientID (replacing its last one).
  async put(clientID, record) {
    let db = await this.open()
    let tx = db.transaction(storeName, "readwrite")
    tx.objectStore(storeName).put({ ...record, id: this.name + "\n" + clientID, name: this.name, clientID })
    return new Promise((resolve, reject) => {
      tx.oncomplete = resolve
      tx.onerror = tx.onabort = () => reject(tx.error)
    })
  }

  // delete forgets the record of clientID.
  async delete(clientID) {
    let db = await this.open()
    let tx = db.transaction(storeName, "readwrite")
    tx.objectStore(storeName).delete(this.name + "\n" + clientID)
    return new Promise((resolve, reject) => {
      tx.oncomplete = resolve
      tx.onerror = tx.onabort = () => reject(tx.error)
    })
  }
}
