package collab_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// An authority over an in-memory store: a client loads a document, submits
// a step, and another client receives it.
func Example() {
	a, err := collab.New(collab.Config{
		Store: memstore.New(),
		Schemas: func(name string) (*model.Schema, bool) {
			s, err := schemas.Get(name)
			return s, err == nil
		},
		DefaultSchema: "basic",
		AutoCreate:    true,
	})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	ctx := context.Background()

	st, _ := a.Get(ctx, "notes", "alice")
	fmt.Printf("version %d: %s\n", st.Version, st.DocJSON)

	res, err := a.Submit(ctx, "notes", "alice", collab.Submission{
		Version:  st.Version,
		Steps:    [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}`)},
		ClientID: collab.ClientID("42"),
	})
	fmt.Println("accepted, now at version", res.Version, err)

	// Bob was at version 0: he gets the step, with its author.
	ev, _ := a.Events(ctx, "notes", "bob", 0, 0)
	fmt.Printf("%s\n", ev.AppendJSON(nil))

	// Bob's own step, made on version 0, must wait until he has rebased it.
	_, err = a.Submit(ctx, "notes", "bob", collab.Submission{
		Version:  0,
		Steps:    [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Yo"}]}}`)},
		ClientID: collab.ClientID("7"),
	})
	fmt.Println(errors.Is(err, collab.ErrConflict), err)

	// Output:
	// version 0: {"type":"doc","content":[{"type":"paragraph"}]}
	// accepted, now at version 1 <nil>
	// {"version":1,"commentVersion":0,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}],"clientIDs":[42],"comment":[],"users":2}
	// true Version not current
}

// A subscription waits for the next change: this is the long poll
// behind GET /docs/{id}/events.
func ExampleAuthority_Subscribe() {
	clock := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	a, _ := collab.New(collab.Config{Store: memstore.New(), Schemas: lookupSchema, AutoCreate: true, Now: clock})
	defer a.Close()
	ctx := context.Background()
	// Alice opens the document first: had she joined while Bob waits,
	// the new user count would answer his poll at once.
	a.Get(ctx, "notes", "alice")

	sub, _ := a.Subscribe(ctx, "notes", "bob", 0, 0)
	defer sub.Close()
	// A comment-only change is news too.
	a.Submit(ctx, "notes", "alice", collab.Submission{
		Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 0, To: 2, Text: "nice"}},
	})
	ev, _ := sub.Next(ctx)
	fmt.Printf("%s\n", ev.AppendJSON(nil))
	// Output:
	// {"version":0,"commentVersion":1,"steps":[],"clientIDs":[],"comment":[{"type":"create","id":1,"text":"nice","from":0,"to":2,"time":"2026-05-01T12:00:00Z"}],"users":2}
}
