package main

import "testing"

func TestParseBench(t *testing.T) {
	name, m, ok := parseBench("BenchmarkNotifyLock/nodes=3/notify=true-2         	    3000	    142267 ns/op	      7029 appends/s	         0.2465 commits/append")
	if !ok || name != "BenchmarkNotifyLock/nodes=3/notify=true" || m["ns/op"] != 142267 || m["appends/s"] != 7029 || m["commits/append"] != 0.2465 {
		t.Errorf("parseBench = %q, %v, %v", name, m, ok)
	}
	for _, line := range []string{"PASS", "ok  	pkg	1.2s", "BenchmarkX-2 10 abc ns/op", "goos: linux"} {
		if _, _, ok := parseBench(line); ok {
			t.Errorf("parseBench(%q) ok", line)
		}
	}
}
