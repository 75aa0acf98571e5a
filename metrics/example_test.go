package metrics_test

import (
	"bufio"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/metrics"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// An app that embeds pmauthority registers its metrics on the app's own
// registry, next to its other metrics, and gives the one Metrics to the
// authority, the server and the store (sqlite.Options.Observer,
// postgres.Options.Observer; memstore has no group commit). The app
// serves the registry where it likes: here on a handler of its own.
func Example() {
	reg := prometheus.NewRegistry()
	appRequests := prometheus.NewCounter(prometheus.CounterOpts{Name: "app_requests_total", Help: "The app's own."})
	reg.MustRegister(appRequests)
	m, err := metrics.New(reg)
	if err != nil {
		log.Fatal(err)
	}

	auth, err := collab.New(collab.Config{Store: memstore.New(), Schemas: lookupSchema, AutoCreate: true, Observer: m})
	if err != nil {
		log.Fatal(err)
	}
	defer auth.Close()
	srv, err := server.New(server.Config{Collab: auth, Observer: m, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	app := httptest.NewServer(srv)
	defer app.Close()
	appMetrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer appMetrics.Close()

	step := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}`
	for _, version := range []int{0, 0} { // the second is stale: 409
		resp, err := http.Post(app.URL+"/docs/notes/events", "application/json",
			strings.NewReader(fmt.Sprintf(`{"version":%d,"clientID":1,"steps":[%s]}`, version, step)))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
	}
	appRequests.Inc()

	resp, err := http.Get(appMetrics.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range []string{"app_requests_total ", "pmauthority_steps_accepted_total ", "pmauthority_documents_loaded ",
			`pmauthority_submissions_total{result="accepted",transport="longpoll"}`, `pmauthority_submissions_total{result="conflict",transport="longpoll"}`,
			`pmauthority_http_requests_total{`} {
			if strings.HasPrefix(line, name) {
				fmt.Println(line)
			}
		}
	}
	// Output:
	// app_requests_total 1
	// pmauthority_documents_loaded 1
	// pmauthority_http_requests_total{code="200",route="POST /docs/{id}/events"} 1
	// pmauthority_http_requests_total{code="409",route="POST /docs/{id}/events"} 1
	// pmauthority_steps_accepted_total 1
	// pmauthority_submissions_total{result="accepted",transport="longpoll"} 1
	// pmauthority_submissions_total{result="conflict",transport="longpoll"} 1
}
