package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store/sqlite"
)

// writer submits steps to the document id on the server at base until
// stop is set, counting the acknowledged ones.
type writer struct {
	id    string
	acked atomic.Int64
}

func (w *writer) run(t *testing.T, base string, stop *atomic.Bool) {
	client := &http.Client{Timeout: 30 * time.Second}
	for v := int64(0); !stop.Load(); v++ {
		body := fmt.Sprintf(`{"version":%d,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"%s-%d "}]}}],"clientID":1}`, v, w.id, v)
		resp, err := client.Post(base+"/docs/"+w.id+"/events", "application/json", strings.NewReader(body))
		if err != nil {
			t.Errorf("%s: %v", w.id, err)
			return
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s at %d: %d %s", w.id, v, resp.StatusCode, got)
			return
		}
		w.acked.Store(v + 1)
	}
}

// startWriters starts one writer per document on the server at base,
// and returns them once each has had 10 steps acknowledged, with a
// function that stops them.
func startWriters(t *testing.T, base string, ids ...string) ([]*writer, func()) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	var ws []*writer
	for _, id := range ids {
		w := &writer{id: id}
		ws = append(ws, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(t, base, &stop)
		}()
	}
	stopAll := func() {
		stop.Store(true)
		wg.Wait()
	}
	t.Cleanup(stopAll)
	for _, w := range ws {
		for w.acked.Load() < 10 {
			if t.Failed() {
				stopAll()
				t.FailNow()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return ws, stopAll
}

// checkPrefix checks that each document of the store at backup holds a
// prefix of the same document's steps in the store at orig, and returns
// the documents' versions in the backup.
func checkPrefix(t *testing.T, orig, backup string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	o, err := sqlite.Open(orig, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := sqlite.Open(backup, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	list, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]int64{}
	for _, d := range list {
		bs, err := b.Steps(ctx, d.ID, 0, d.Version)
		if err != nil {
			t.Fatal(err)
		}
		inStore, err := o.Steps(ctx, d.ID, 0, d.Version)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != int(d.Version) || len(inStore) != int(d.Version) {
			t.Fatalf("%s at %d: %d steps in the backup, %d in the store", d.ID, d.Version, len(bs), len(inStore))
		}
		for i := range bs {
			if !bytes.Equal(bs[i].JSON, inStore[i].JSON) {
				t.Fatalf("%s: step %d is %s in the backup, %s in the store", d.ID, i+1, bs[i].JSON, inStore[i].JSON)
			}
		}
		versions[d.ID] = d.Version
	}
	return versions
}

// TestBackupWhileServing backs the store of a serving server up while
// writers submit steps, restores the backup into another directory,
// verifies it and serves it.
func TestBackupWhileServing(t *testing.T) {
	data := t.TempDir()
	addr, stderr, stop := startServe(t, "--data", data, "--sync", "normal", "--snapshot-every", "7")
	ids := []string{"w0", "w1", "w2"}
	ws, stopWriters := startWriters(t, "http://"+addr, ids...)
	backup := filepath.Join(t.TempDir(), "backup.db")
	code, stdout, errs := runCmd(t, "backup", "--data", data, "--to", backup)
	before := make([]int64, len(ws))
	for i, w := range ws {
		before[i] = w.acked.Load()
	}
	stopWriters()
	if code != 0 || !strings.HasPrefix(stdout, "backed up 3 documents, ") || !strings.Contains(stdout, " to "+backup) {
		t.Fatalf("backup: exit %d\n%s%s", code, stdout, errs)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, stderr)
	}
	if code, _, errs := runCmd(t, "backup", "--data", data, "--to", backup); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("backup to an existing file: exit %d, %s", code, errs)
	}

	restored := t.TempDir()
	if code, stdout, errs := runCmd(t, "restore", "--from", backup, "--data", restored); code != 0 || !strings.HasPrefix(stdout, "restored 3 documents") {
		t.Fatalf("restore: exit %d\n%s%s", code, stdout, errs)
	}
	if code, _, errs := runCmd(t, "restore", "--from", backup, "--data", restored); code != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("restore over a store: exit %d, %s", code, errs)
	}
	if code, stdout, errs := runCmd(t, "verify", "--data", restored); code != 0 || !strings.Contains(stdout, "verified 3 documents") || !strings.Contains(stdout, "\nOK\n") {
		t.Errorf("verify of the backup: exit %d\n%s%s", code, stdout, errs)
	}
	if code, stdout, errs := runCmd(t, "verify", "--data", data); code != 0 || !strings.Contains(stdout, "\nOK\n") {
		t.Errorf("verify of the store: exit %d\n%s%s", code, stdout, errs)
	}
	versions := checkPrefix(t, filepath.Join(data, "pmauthority.db"), filepath.Join(restored, "pmauthority.db"))
	for i, id := range ids {
		// The writers went on while the backup ran: it holds at least
		// what was acknowledged when it started.
		if v := versions[id]; v < 10 || v > before[i]+1 {
			t.Errorf("%s: version %d in the backup; 10 acknowledged before it, %d after", id, v, before[i])
		}
	}

	// A server serves the restored store.
	addr, _, stop = startServe(t, "--data", restored)
	resp, err := http.Get("http://" + addr + "/docs/w1")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Version int64 }
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Version != versions["w1"] {
		t.Errorf("the restored w1: version %d (%v), want %d", doc.Version, err, versions["w1"])
	}
	if code := stop(); code != 0 {
		t.Errorf("serve of the restored store: exit %d", code)
	}
}

// TestBackupBinary runs the binary: serve under load, backup meanwhile,
// SIGTERM, then verify on the store the server wrote and on the backup.
func TestBackupBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "pmauthority")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := &crashRun{t: t, bin: bin, dir: t.TempDir(), args: []string{"--snapshot-every", "20"}}
	p := r.start()
	_, stopWriters := startWriters(t, p.base, "a", "b")
	backup := filepath.Join(t.TempDir(), "backup.db")
	out, err := exec.Command(bin, "backup", "--data", r.dir, "--to", backup).CombinedOutput()
	stopWriters()
	if err != nil || !strings.HasPrefix(string(out), "backed up 2 documents") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	p.term()
	out, err = exec.Command(bin, "verify", "--data", r.dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verified 2 documents") || !strings.HasSuffix(string(out), "\nOK\n") {
		t.Errorf("verify of the server's store: %v\n%s", err, out)
	}
	restored := t.TempDir()
	if out, err := exec.Command(bin, "restore", "--from", backup, "--data", restored).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "verify", "--data", restored).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "\nOK\n") {
		t.Errorf("verify of the backup: %v\n%s", err, out)
	}
	checkPrefix(t, filepath.Join(r.dir, "pmauthority.db"), filepath.Join(restored, "pmauthority.db"))
	if _, err := os.Stat(backup); err != nil {
		t.Error(err)
	}
}
