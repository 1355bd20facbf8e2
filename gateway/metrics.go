package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the gateway's Prometheus series, on a registry of its own so
// several gateways in one process (tests) do not collide.
type metrics struct {
	reg      *prometheus.Registry
	failOpen *prometheus.CounterVec
	pending  prometheus.GaugeFunc
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(pending func() float64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.failOpen = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_gateway_fail_open_total",
		Help: "Requests served without limiter, quota or idempotency because Redis could not be reached, by stage.",
	}, []string{"stage"})
	m.pending = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ledgerlane_gateway_usage_journal_pending",
		Help: "Metered requests counted during a Redis outage and not yet reconciled.",
	}, pending)
	// Routes are the route table's patterns ("/v1/transactions/{id}"), never
	// raw paths, so the label set stays as small as the table.
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_gateway_requests_total",
		Help: "HTTP requests answered, by method, route pattern and status code.",
	}, []string{"method", "route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ledgerlane_gateway_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by method and route pattern.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.reg.MustRegister(m.failOpen, m.pending, m.requests, m.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe records one answered request. Methods outside the standard set
// are counted as OTHER so that a client cannot mint label values.
func (m *metrics) observe(method, route string, status int, d time.Duration) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "OTHER"
	}
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

// Metrics serves the gateway's metrics; mount it on an internal port only.
func (g *Gateway) Metrics() http.Handler {
	return promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{})
}
