package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// crashEnv, when set, makes TestCrash the child that appends until it is
// killed; the value is the database path and the Sync, "path|sync".
const crashEnv = "PMAUTHORITY_STORE_CRASH_CHILD"

const crashDocs = 8

// The child's data is a function of the document and the version, so
// that the parent can check every byte after the crash.
func crashStep(id string, v int64) store.Step {
	return store.Step{
		JSON:     fmt.Appendf(nil, `{"doc":%q,"v":%d,"pad":"%s"}`, id, v, strings.Repeat("x", int(v*37%900))),
		ClientID: fmt.Appendf(nil, "%d", v%7),
	}
}

func crashMeta(v int64) []byte { return fmt.Appendf(nil, `{"version":%d}`, v) }

func crashSnap(v int64) []byte {
	return fmt.Appendf(nil, `{"snapshot":%d,"pad":"%s"}`, v, strings.Repeat("y", int(v%2000)))
}

// TestCrash kills a process that appends to the store at a random moment
// (in a commit or in a fold, say) and checks that the reopened store has
// every acknowledged step, and nothing half-written.
func TestCrash(t *testing.T) {
	if arg := os.Getenv(crashEnv); arg != "" {
		crashChild(arg)
		return
	}
	if testing.Short() {
		t.Skip("crash test skipped in short mode")
	}
	for round := range 3 {
		mode := []Sync{SyncFull, SyncNormal}[round%2]
		t.Run(fmt.Sprint(round, "-", mode), func(t *testing.T) { crashRound(t, mode) })
	}
}

func crashRound(t *testing.T, mode Sync) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crash.db")
	s := open(t, path, Options{})
	for d := range crashDocs {
		if err := s.Create(ctx, fmt.Sprint("d", d), "basic", crashSnap(0), crashMeta(0)); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d", crashEnv, path, mode))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	acked := map[string]int64{}
	lines := 0
	read := make(chan error)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 1 && f[0] == "ready":
				close(ready)
			case len(f) == 3 && f[0] == "ack":
				v, err := strconv.ParseInt(f[2], 10, 64)
				if err != nil {
					read <- err
					return
				}
				acked[f[1]] = max(acked[f[1]], v)
				lines++
			}
		}
		read <- sc.Err()
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("child not ready after 30 s; stderr:\n%s", stderr.Bytes())
	}
	time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v before it was killed; stderr:\n%s", err, stderr.Bytes())
	}
	if lines == 0 {
		t.Fatalf("the child acknowledged nothing; stderr:\n%s", stderr.Bytes())
	}

	s = open(t, path, Options{})
	defer closeStore(t, s)
	var check string
	if err := s.rdb.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	// Open folded the log: every step is in steps (checked below).
	if n := logRows(t, s); n != 0 {
		t.Errorf("%d rows in the log after Open", n)
	}
	total := int64(0)
	for d := range crashDocs {
		id := fmt.Sprint("d", d)
		h, err := s.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		total += h.Version
		if h.Version < acked[id] {
			t.Errorf("%s: version %d after the crash, %d acknowledged", id, h.Version, acked[id])
		}
		// Every append adds an entry: the latest is the head's, unless
		// the base holds them all.
		meta, at := h.Meta, h.MetaVersion
		if h.MetaSeq > h.MetaBase {
			entries, err := s.MetaEntries(ctx, id, h.MetaBase, h.MetaSeq)
			if err != nil || int64(len(entries)) != h.MetaSeq-h.MetaBase {
				t.Fatalf("%s: MetaEntries(%d, %d): %d entries, %v", id, h.MetaBase, h.MetaSeq, len(entries), err)
			}
			meta, at = entries[len(entries)-1].JSON, entries[len(entries)-1].Version
		}
		if !bytes.Equal(meta, crashMeta(h.Version)) || at != h.Version {
			t.Errorf("%s: meta %s at version %d, head at %d", id, meta, at, h.Version)
		}
		if !bytes.Equal(h.Snapshot.Doc, crashSnap(h.Snapshot.Version)) {
			t.Errorf("%s: snapshot at %d holds %.40s", id, h.Snapshot.Version, h.Snapshot.Doc)
		}
		steps, err := s.Steps(ctx, id, h.Oldest, h.Version)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(steps)) != h.Version-h.Oldest {
			t.Errorf("%s: %d steps after %d, version %d", id, len(steps), h.Oldest, h.Version)
		}
		for i, st := range steps {
			want := crashStep(id, h.Oldest+1+int64(i))
			if st.Version != h.Oldest+1+int64(i) || !bytes.Equal(st.JSON, want.JSON) || !bytes.Equal(st.ClientID, want.ClientID) {
				t.Errorf("%s: step %d is %d %.40s %s", id, h.Oldest+1+int64(i), st.Version, st.JSON, st.ClientID)
				break
			}
		}
		// Nothing beyond the document's version, nothing before its oldest.
		var n, lo, hi int64
		err = s.rdb.QueryRow("SELECT count(*), coalesce(min(version), 0), coalesce(max(version), 0) FROM steps WHERE doc_id = ?", id).
			Scan(&n, &lo, &hi)
		if err != nil {
			t.Fatal(err)
		}
		if n != h.Version-h.Oldest || n > 0 && (lo != h.Oldest+1 || hi != h.Version) {
			t.Errorf("%s: %d step rows %d…%d, want %d…%d", id, n, lo, hi, h.Oldest+1, h.Version)
		}
	}
	t.Logf("%d acknowledgements, %d steps after the crash", lines, total)
}

// crashChild appends to every document from its own goroutine, prints
// "ack <id> <version>" for each acknowledged append, and snapshots now and
// then, until it is killed.
func crashChild(arg string) {
	path, modeArg, _ := strings.Cut(arg, "|")
	mode, _ := strconv.Atoi(modeArg)
	s, err := Open(path, Options{Sync: Sync(mode)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Fold often, so that the kill lands in the middle of folds too.
	setFold(s, 50)
	var mu sync.Mutex
	fmt.Println("ready")
	ctx := context.Background()
	for d := range crashDocs {
		id := fmt.Sprint("d", d)
		go func() {
			for v, appends := int64(0), int64(0); ; {
				n := 1 + v%3
				steps := make([]store.Step, n)
				for i := range steps {
					steps[i] = crashStep(id, v+1+int64(i))
				}
				if err := s.Append(ctx, id, v, steps, crashMeta(v+n)); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				v += n
				appends++
				mu.Lock()
				fmt.Printf("ack %s %d\n", id, v)
				mu.Unlock()
				if v%20 < n {
					if err := s.SaveSnapshot(ctx, id, store.Snapshot{Version: v, Doc: crashSnap(v), Meta: crashMeta(v), MetaSeq: appends}, 15); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
				}
			}
		}()
	}
	time.Sleep(60 * time.Second)
	fmt.Fprintln(os.Stderr, "not killed after 60 s")
	os.Exit(1)
}
