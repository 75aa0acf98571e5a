package collab_test

import (
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

func TestStateJSON(t *testing.T) {
	basic, _ := lookupSchema("basic")
	doc, err := basic.NodeFromJSON([]byte(paragraph("hi")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		state collab.State
		want  string
	}{
		{collab.State{Doc: doc}, `{"doc":` + paragraph("hi") + `,"users":0,"version":0,"comments":[],"commentVersion":0}`},
		{collab.State{Doc: doc, DocJSON: []byte(`{"cached":1}`), Users: 3, Version: 12, CommentVersion: 4, Comments: []collab.Comment{
			{From: 1, To: 2, Text: "<a & b>\n\"q\"", ID: 4294967295},
			{From: 2, To: 3, Text: "", ID: -1},
		}}, `{"doc":{"cached":1},"users":3,"version":12,"comments":[{"from":1,"to":2,"text":"<a & b>\n\"q\"","id":4294967295},{"from":2,"to":3,"text":"","id":-1}],"commentVersion":4}`},
	}
	for _, tt := range tests {
		if got := string(tt.state.AppendJSON([]byte("x"))); got != "x"+tt.want {
			t.Errorf("State.AppendJSON:\n got %s\nwant x%s", got, tt.want)
		}
	}
}

func TestEventsJSON(t *testing.T) {
	tests := []struct {
		events collab.Events
		want   string
	}{
		{collab.Events{}, `{"version":0,"commentVersion":0,"steps":[],"clientIDs":[],"comment":[],"users":0}`},
		{collab.Events{
			Version: 9, CommentVersion: 2, Users: 5,
			Steps: []collab.StepRecord{
				{JSON: []byte(`{"stepType":"replace","from":1,"to":2}`), ClientID: collab.ClientID("4294967295")},
				{JSON: []byte(`{"stepType":"replace","from":3,"to":4}`), ClientID: collab.ClientID(`"abc"`)},
			},
			Comment: []collab.CommentEvent{
				{Type: "create", ID: 7, From: 1, To: 3, Text: "t\u2028"},
				{Type: "delete", ID: 8, From: 5, To: 6, Text: "ignored"},
			},
		}, `{"version":9,"commentVersion":2,"steps":[{"stepType":"replace","from":1,"to":2},{"stepType":"replace","from":3,"to":4}],"clientIDs":[4294967295,"abc"],` +
			`"comment":[{"type":"create","id":7,"text":"t` + "\u2028" + `","from":1,"to":3},{"type":"delete","id":8}],"users":5}`},
	}
	for _, tt := range tests {
		if got := string(tt.events.AppendJSON(nil)); got != tt.want {
			t.Errorf("Events.AppendJSON:\n got %s\nwant %s", got, tt.want)
		}
	}
}
