// Package metrics implements pmauthority's observers (server.Observer,
// collab.Observer, store.CommitObserver) with Prometheus metrics, which it
// registers on a prometheus.Registerer that the program gives: the
// binary's own registry (serve --metrics-addr), or an embedding app's, next
// to its other metrics. The library packages know only the observer
// interfaces; this is the one package that imports Prometheus.
//
// The metrics are named pmauthority_* and never carry a document id as a
// label (docs/operations.md lists them and says what to alert on). New
// registers only those: Go's and the process's collectors
// (collectors.NewGoCollector, collectors.NewProcessCollector) are the
// registry owner's to add, as `pmauthority serve` does.
package metrics

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store"
)

// Metrics are pmauthority's Prometheus metrics. Give the same Metrics to
// server.Config.Observer, collab.Config.Observer and the store's options
// (sqlite.Options.Observer, postgres.Options.Observer). Its methods are
// safe for concurrent use.
type Metrics struct {
	steps       prometheus.Counter
	submissions [len(transports)][len(results)]prometheus.Counter
	connections [len(transports)]prometheus.Gauge
	documents   prometheus.Gauge
	commitTime  prometheus.Observer
	commitBatch prometheus.Observer
	groups      prometheus.Observer
	drops       prometheus.Counter
	requests    *prometheus.CounterVec
	requestTime *prometheus.HistogramVec

	// routes maps each route label to its children of requests and
	// requestTime, so that a request costs no label lookup: a map never
	// modified once stored, replaced by a copy with one more route under
	// routesMu (routes are few, requests many).
	routes   atomic.Pointer[map[string]*routeMetrics]
	routesMu sync.Mutex
}

var (
	_ server.Observer      = (*Metrics)(nil)
	_ collab.Observer      = (*Metrics)(nil)
	_ collab.GroupObserver = (*Metrics)(nil)
	_ store.CommitObserver = (*Metrics)(nil)
)

// The label values of transport and result.
var (
	transports = [...]server.Transport{server.TransportWebSocket, server.TransportLongPoll}
	results    = [...]server.SubmissionResult{server.SubmissionAccepted, server.SubmissionConflict,
		server.SubmissionRejected, server.SubmissionForbidden, server.SubmissionUnavailable}
)

// NoRoute is the route label of the requests that no route takes
// (server.Observer.Request's "").
const NoRoute = "none"

// Buckets of the histograms, in seconds and operations.
var (
	// RequestBuckets go up to a long poll's wait (a minute by default).
	RequestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
	// CommitBuckets go from a commit without fsync to a slow disk's.
	CommitBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	// BatchBuckets go up to the SQLite writer's largest batch (256).
	BatchBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
	// GroupBuckets go up to the largest group of commits (64).
	GroupBuckets = []float64{1, 2, 4, 8, 16, 32, 64}
)

// New returns pmauthority's metrics, registered on reg. It fails when reg
// has metrics of the same names already (New called twice on one
// registry).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		steps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pmauthority_steps_accepted_total",
			Help: "Steps accepted and durable, submitted to this process (WebSocket and HTTP).",
		}),
		documents: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pmauthority_documents_loaded",
			Help: "Documents loaded in memory.",
		}),
		drops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pmauthority_delivery_queue_drops_total",
			Help: "WebSockets whose send queue overflowed (a client too slow for its document's changes), closed with 4008 to resync.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pmauthority_http_requests_total",
			Help: "HTTP requests answered, by route (method and pattern of the route table) and status code.",
		}, []string{"route", "code"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pmauthority_http_request_seconds",
			Help:    "Time from a request's arrival to its answer, by route (a long poll's wait included).",
			Buckets: RequestBuckets,
		}, []string{"route"}),
	}
	commitTime := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "pmauthority_store_commit_seconds",
		Help:    "Duration of the store's group commits (one transaction for the appends of many documents).",
		Buckets: CommitBuckets,
	})
	commitBatch := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "pmauthority_store_commit_batch_size",
		Help:    "Operations committed together by one group commit.",
		Buckets: BatchBuckets,
	})
	groups := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "pmauthority_commit_group_size",
		Help:    "Commits (commit mode) to one document made durable together by one store append.",
		Buckets: GroupBuckets,
	})
	m.commitTime, m.commitBatch, m.groups = commitTime, commitBatch, groups
	submissions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pmauthority_submissions_total",
		Help: "Submissions (POST /docs/{id}/events, WebSocket steps messages) answered, by transport and result: accepted, conflict, rejected, forbidden, unavailable.",
	}, []string{"transport", "result"})
	connections := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pmauthority_connections",
		Help: "Open connections of the collab API, by transport: WebSockets, and long polls waiting for news.",
	}, []string{"transport"})
	for i, t := range transports {
		m.connections[i] = connections.WithLabelValues(string(t))
		for j, r := range results {
			m.submissions[i][j] = submissions.WithLabelValues(string(t), string(r))
		}
	}
	for _, c := range []prometheus.Collector{m.steps, submissions, connections, m.documents,
		commitTime, commitBatch, groups, m.drops, m.requests, m.requestTime} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// StepsAccepted counts n accepted steps (collab.Observer).
func (m *Metrics) StepsAccepted(n int) { m.steps.Add(float64(n)) }

// DocumentsLoaded moves the loaded documents by delta (collab.Observer).
func (m *Metrics) DocumentsLoaded(delta int) { m.documents.Add(float64(delta)) }

// CommitsGrouped records n commits to one document made durable by one
// store append (collab.GroupObserver).
func (m *Metrics) CommitsGrouped(n int) { m.groups.Observe(float64(n)) }

// ObserveCommit records a group commit (store.CommitObserver).
func (m *Metrics) ObserveCommit(d time.Duration, batch int) {
	m.commitTime.Observe(d.Seconds())
	m.commitBatch.Observe(float64(batch))
}

// Submission counts a submission (server.Observer).
func (m *Metrics) Submission(t server.Transport, r server.SubmissionResult) {
	i, j := transportIndex(t), resultIndex(r)
	if i < 0 || j < 0 {
		return // not a label value of ours: not counted rather than a new series
	}
	m.submissions[i][j].Inc()
}

// Connections moves the open connections of t by delta (server.Observer).
func (m *Metrics) Connections(t server.Transport, delta int) {
	if i := transportIndex(t); i >= 0 {
		m.connections[i].Add(float64(delta))
	}
}

// DeliveryDropped counts a WebSocket send queue overflow
// (server.Observer).
func (m *Metrics) DeliveryDropped() { m.drops.Inc() }

// routeMetrics are one route's children of requests (by status code) and
// requestTime.
type routeMetrics struct {
	time  prometheus.Observer
	codes [600 - 100]atomic.Pointer[prometheus.Counter] // by status - 100
}

// Request counts and times an answered request (server.Observer).
func (m *Metrics) Request(route string, status int, d time.Duration) {
	if route == "" {
		route = NoRoute
	}
	rm := m.route(route)
	rm.time.Observe(d.Seconds())
	if status < 100 || status >= 600 {
		m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		return
	}
	slot := &rm.codes[status-100]
	c := slot.Load()
	if c == nil {
		counter := m.requests.WithLabelValues(route, strconv.Itoa(status))
		slot.CompareAndSwap(nil, &counter)
		c = slot.Load()
	}
	(*c).Inc()
}

// route returns the metrics of route, adding them on its first request.
func (m *Metrics) route(route string) *routeMetrics {
	if routes := m.routes.Load(); routes != nil {
		if rm := (*routes)[route]; rm != nil {
			return rm
		}
	}
	m.routesMu.Lock()
	defer m.routesMu.Unlock()
	old := m.routes.Load()
	if old != nil && (*old)[route] != nil {
		return (*old)[route]
	}
	routes := make(map[string]*routeMetrics, 1)
	if old != nil {
		maps.Copy(routes, *old)
	}
	rm := &routeMetrics{time: m.requestTime.WithLabelValues(route)}
	routes[route] = rm
	m.routes.Store(&routes)
	return rm
}

func transportIndex(t server.Transport) int {
	for i, v := range transports {
		if v == t {
			return i
		}
	}
	return -1
}

func resultIndex(r server.SubmissionResult) int {
	for i, v := range results {
		if v == r {
			return i
		}
	}
	return -1
}
