// Package webhook tells another service, over HTTP, that documents
// changed: after changes are durable, a Sender POSTs one small JSON
// notice per document, {"doc", "version", "updated"} (and optionally the
// document itself), signed with HMAC-SHA256 of the body
// (SignatureHeader) and carrying a delivery id for deduplication
// (DeliveryHeader). Each also carries the headers of Standard Webhooks
// (IDHeader, TimestampHeader, StandardSignatureHeader), whose signature
// covers the id and the time of the attempt as well as the body.
//
// Notices are debounced and coalesced: a document's changes within
// Config.Debounce of each other (at most Config.MaxDelay after the first
// unsent one) make one notice, of the latest version, and a document has
// at most one notice waiting and one being delivered. A failed delivery
// (no answer, or a status other than 2xx) is retried with exponential
// back-off, with the latest version by then. Nothing of this ever blocks
// the caller: Sender.AfterCommit, which is a collab.Config.AfterCommit
// hook, only records the change. The documents waiting are bounded
// (Config.MaxPending); a change to one more is dropped and counted.
//
// Receivers check the signature with Verify or VerifyStandard (or a
// Standard Webhooks library, given the secret's bytes as its key), and
// should treat a notice as "document D is at version V or later": they
// may see a version more than once (at-least-once delivery), and never a
// version older than one already delivered for the same document by the
// same Sender.
package webhook
