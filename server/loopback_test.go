package server

import "testing"

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:9090": true, "app.localhost": true, "127.0.0.1": true, "127.0.0.2:80": true,
		"[::1]:9090": true, "[::1]": true, "::1": true,
		"": false, "example.com": false, "localhost.example.com": false, "10.0.0.1:9090": false, "[::2]:80": false,
		"127.0.0.1.nip.io": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v", host, got)
		}
	}
}
