package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/pgtest"
)

// TestClusterCommitsPostgresRestart runs commit-mode writers (POST
// /docs/{id}/commits) against the three nodes of a cluster, all on one
// document, and stops PostgreSQL for two seconds while they write. A
// writer answered 503 sends the same commit (same ref, version and
// steps) again after its Retry-After, as a client does: a commit that
// the database took before the answer was lost is answered as it was,
// wherever it is sent. Each commit inserts a marker of its own. At the
// end every node serves the same document, with every acknowledged
// marker exactly once and as many steps as commits: nothing acknowledged
// lost, nothing applied twice, across nodes and the restart.
func TestClusterCommitsPostgresRestart(t *testing.T) {
	url := pgtest.URL(t)
	c := startCluster(t, url, nil)
	const id, writers = "commit-restart", 6
	var (
		stop        atomic.Bool
		unavailable atomic.Int64
		wg          sync.WaitGroup
		mu          sync.Mutex
		acked       []string // markers
		failed      error
	)
	for w := range writers {
		wg.Go(func() {
			p := c.nodes[w%len(c.nodes)]
			version := int64(0)
			for n := 1; !stop.Load(); n++ {
				ref := fmt.Sprintf("w%d-%d", w, n)
				marker := "[" + ref + "]"
				body := fmt.Appendf(nil, `{"version":%d,"ref":%q,"clientID":%d,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":%q}]}}]}`,
					version, ref, w+1, marker)
				for {
					status, resp, header, err := p.do("POST", "/docs/"+id+"/commits", "application/json", body, nil)
					if err == nil && status == http.StatusServiceUnavailable {
						unavailable.Add(1)
						wait, _ := time.ParseDuration(header.Get("Retry-After") + "s")
						time.Sleep(max(wait, 100*time.Millisecond))
						continue
					}
					var ans struct {
						Version int64             `json:"version"`
						Steps   []json.RawMessage `json:"steps"`
					}
					if err == nil && status == http.StatusOK {
						err = json.Unmarshal(resp, &ans)
					} else if err == nil {
						err = fmt.Errorf("%d %s", status, clip(string(resp)))
					}
					if err == nil && (len(ans.Steps) != 1 || !strings.Contains(string(ans.Steps[0]), marker)) {
						err = fmt.Errorf("answer %s", clip(string(resp)))
					}
					mu.Lock()
					if err != nil {
						failed = fmt.Errorf("writer %d, commit %s: %v", w, ref, err)
						stop.Store(true)
					} else {
						acked = append(acked, marker)
					}
					mu.Unlock()
					version = ans.Version
					break
				}
			}
		})
	}
	time.Sleep(time.Second)
	pgtest.Stop(t)
	defer func() {
		if pgtest.Stopped() {
			pgtest.Start(t)
		}
	}()
	time.Sleep(2 * time.Second)
	pgtest.Start(t)
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	if unavailable.Load() == 0 {
		t.Errorf("no commit was answered 503 while PostgreSQL was down")
	}
	// Every node catches up with the others (NOTIFY).
	deadline := time.Now().Add(20 * time.Second)
	for i, p := range c.nodes {
		st := getDocState(t, p.base+"/docs/"+id)
		for st.Version < int64(len(acked)) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			st = getDocState(t, p.base+"/docs/"+id)
		}
		doc := string(st.Doc)
		if st.Version != int64(len(acked)) || strings.Count(doc, "[w") != len(acked) {
			t.Errorf("node %d: version %d and %d markers for %d acknowledged commits of one step each", i, st.Version, strings.Count(doc, "[w"), len(acked))
		}
		for _, m := range acked {
			if n := strings.Count(doc, m); n != 1 {
				t.Errorf("node %d: the marker %s of an acknowledged commit is %d times in the document", i, m, n)
			}
		}
	}
	t.Logf("%d commits acknowledged by 3 nodes; %d answers 503 while PostgreSQL was down, each commit sent again", len(acked), unavailable.Load())
	if len(acked) < 20 {
		t.Errorf("only %d commits acknowledged: the load did not run", len(acked))
	}
}
