package webhook_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/webhook"
)

// A Sender is an Authority's AfterCommit hook.
func ExampleSender() {
	sender, err := webhook.New(webhook.Config{URL: "https://backend.example.com/pmauthority", Secret: []byte("the shared secret")})
	if err != nil {
		log.Fatal(err)
	}
	cfg := collab.Config{AfterCommit: sender.AfterCommit /* , Store, Schemas … */}
	_ = cfg
	// After the Authority is closed, deliver what is pending:
	// sender.Close(ctx)
}

// A receiver checks the signature of the raw body before it trusts it.
func ExampleVerify() {
	secret := []byte("the shared secret")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil || !webhook.Verify(secret, body, r.Header.Get(webhook.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		fmt.Printf("%s (delivery %s)\n", body, r.Header.Get(webhook.DeliveryHeader))
		w.WriteHeader(http.StatusNoContent)
	})
	body := `{"doc":"d","version":3,"updated":"2026-01-01T00:00:00Z"}`
	for _, sig := range []string{webhook.Sign(secret, []byte(body)), webhook.Sign([]byte("another"), []byte(body))} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
		r.Header.Set(webhook.SignatureHeader, sig)
		r.Header.Set(webhook.DeliveryHeader, webhook.DeliveryID("d", 3))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// {"doc":"d","version":3,"updated":"2026-01-01T00:00:00Z"} (delivery 3ac9b21a32c902cc48bcb7504eb77dc7)
	// 204
	// 401
}
