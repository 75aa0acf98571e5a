// Checks deliveries with the standardwebhooks package's Webhook.verify,
// as a receiver using that library would. Reads on stdin a JSON array of
// {"secret": base64 of the key, "headers": {...}, "body": "..."} and
// prints one line per delivery: "ok", or the verification error.
import { Webhook } from "standardwebhooks";

let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const d of JSON.parse(input)) {
  const key = Buffer.from(d.secret, "base64");
  try {
    // The two ways the library takes a key: whsec_ and its base64, or
    // the raw bytes.
    new Webhook("whsec_" + d.secret).verify(d.body, d.headers);
    new Webhook(new Uint8Array(key), { format: "raw" }).verify(d.body, d.headers);
    console.log("ok");
  } catch (e) {
    console.log(String(e.message || e));
  }
}
