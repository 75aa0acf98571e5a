//go:build !linux

package main

import "testing"

// testImage runs the image on Linux only (podman).
func testImage(t *testing.T, ctx string) {
	t.Skip("the image is run on Linux (podman)")
}
