package conformance

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/auth"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestClientIDSpoof is issue 21's reproduction of a client id taken by
// another principal, with the real prosemirror-collab client
// (js/client-id-spoof.mjs): Alice and Mallory both have the edit role;
// Mallory submits a step under Alice's client id while Alice has one
// unsent. Mallory must be refused (403 naming the client id), and Alice,
// once synced, must see the server's document. (Accepted, Mallory's step
// is taken by Alice's client as the confirmation of her own, and dropped:
// Alice sees "Hello Alice", the server holds "AliceMALLORY".)
func TestClientIDSpoof(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	secret := []byte("a secret of at least thirty-two bytes for the test")
	key, err := auth.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := auth.New(auth.Config{Keys: []auth.Key{key}})
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	defer st.Close()
	a, err := collab.New(collab.Config{Store: st, Schemas: collabSchemas, DefaultSchema: "basic", AutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv, err := server.New(server.Config{Collab: a, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	base, stopServe := serveLoopback(t, srv)
	defer func() {
		if err := stopServe(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	token := func(sub string) string {
		g, err := auth.ParseGrant("notes=edit")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := auth.Mint(secret, auth.NewClaims(sub, sub, auth.Grants{g}, time.Now(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "js/client-id-spoof.mjs", "--url", base, "--doc", "notes",
		"--alice", token("alice"), "--mallory", token("mallory"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client-id-spoof.mjs: %v\n%s", err, stderr.String())
	}
	var res struct {
		Mallory struct {
			Status   int
			Body     string
			ClientID json.RawMessage
		}
		Alice struct {
			Doc      json.RawMessage
			Version  int64
			Sendable bool
		}
		Server struct {
			Doc     json.RawMessage
			Version int64
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("mallory: %d %s; alice at %d: %s; server at %d: %s", res.Mallory.Status, res.Mallory.Body,
		res.Alice.Version, res.Alice.Doc, res.Server.Version, res.Server.Doc)
	if res.Mallory.Status != 403 || !strings.Contains(res.Mallory.Body, "client id "+string(res.Mallory.ClientID)) {
		t.Errorf("mallory's POST under alice's client id %s: %d %s, want 403 naming it", res.Mallory.ClientID, res.Mallory.Status, res.Mallory.Body)
	}
	if string(res.Alice.Doc) != string(res.Server.Doc) || res.Alice.Version != res.Server.Version || res.Alice.Sendable {
		t.Errorf("alice's view differs from the server's:\nalice  (version %d, sendable %v) %s\nserver (version %d) %s",
			res.Alice.Version, res.Alice.Sendable, res.Alice.Doc, res.Server.Version, res.Server.Doc)
	}
}
