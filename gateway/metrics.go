package gateway

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the gateway's Prometheus series, on a registry of its own so
// several gateways in one process (tests) do not collide.
type metrics struct {
	reg      *prometheus.Registry
	failOpen *prometheus.CounterVec
	pending  prometheus.GaugeFunc
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
	m.reg.MustRegister(m.failOpen, m.pending, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Metrics serves the gateway's metrics; mount it on an internal port only.
func (g *Gateway) Metrics() http.Handler {
	return promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{})
}
