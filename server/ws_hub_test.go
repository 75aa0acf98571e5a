package server

import (
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/transform"
)

// TestHubMapSteps: the hub keeps the maps and sizes the authority gives
// with each step and maps stored selections through them; a step without
// its map (loaded from the store without replay) turns presence off.
func TestHubMapSteps(t *testing.T) {
	s, _ := newServer(t, Config{})
	c := &wsConn{anchor: 2, head: 3, joined: true}
	h := &wsHub{s: s, id: "d", sizes: []int{4}, conns: []*wsConn{c}, stopped: true}
	insert2 := transform.NewStepMap([]int{1, 0, 2}, false) // 2 inserted at 1
	h.mapSteps([]collab.StepRecord{{Map: insert2, Size: 6}})
	if c.anchor != 4 || c.head != 5 || len(h.maps) != 1 || len(h.sizes) != 2 || h.sizes[1] != 6 || h.noMaps {
		t.Fatalf("after a step: selection %d-%d, %d maps, sizes %v", c.anchor, c.head, len(h.maps), h.sizes)
	}
	h.mapSteps([]collab.StepRecord{{Map: insert2, Size: 8}, {Size: 9}})
	if !h.noMaps || h.maps != nil || h.sizes != nil || c.anchor != -1 || c.head != -1 || !c.changed {
		t.Fatalf("after a step without a map: noMaps %v, %d maps, selection %d-%d", h.noMaps, len(h.maps), c.anchor, c.head)
	}
	// Presence stays off: selections are ignored, later steps too.
	if !h.setPresence(c, 0, 1, 1) || c.anchor != -1 {
		t.Fatalf("presence accepted while off: %d", c.anchor)
	}
	h.mapSteps([]collab.StepRecord{{Map: insert2, Size: 10}})
	if h.maps != nil {
		t.Fatal("maps kept while presence is off")
	}
}
