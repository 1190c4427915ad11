package service

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcpredict/mcpredict/service/store"
)

// metrics are the server's Prometheus metrics, on a registry of its own so
// that two servers in one process (tests) do not collide.
type metrics struct {
	reg          *prometheus.Registry
	submitted    prometheus.Counter
	rejected     *prometheus.CounterVec
	finished     *prometheus.CounterVec
	models       prometheus.Counter
	checkSeconds prometheus.Histogram
	spinSeconds  prometheus.Counter
	violations   prometheus.Counter
	requests     *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		submitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpredict_jobs_submitted_total", Help: "Jobs accepted.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpredict_jobs_rejected_total", Help: "Submissions refused, by reason.",
		}, []string{"reason"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpredict_jobs_finished_total", Help: "Jobs that reached a final state, by state.",
		}, []string{"state"}),
		models: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpredict_models_checked_total", Help: "Model results received (a redelivered model counts again).",
		}),
		checkSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "mcpredict_model_check_seconds", Help: "Time to check one model, on the worker.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}),
		spinSeconds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpredict_spin_seconds_total", Help: "Time spent checking models that went through Spin.",
		}),
		violations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpredict_violations_total", Help: "Violation instances in finished reports.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpredict_http_requests_total", Help: "HTTP requests, by route and status code.",
		}, []string{"route", "code"}),
	}
	m.reg.MustRegister(m.submitted, m.rejected, m.finished, m.models, m.checkSeconds, m.spinSeconds,
		m.violations, m.requests, newStoreCollector(s),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// storeCollector reports the gauges that the job store knows: jobs by state
// and the queue depth, read at scrape time so that they are right after a
// restart too.
type storeCollector struct {
	s                         *Server
	jobs, depth, pendingItems *prometheus.Desc
}

func newStoreCollector(s *Server) *storeCollector {
	return &storeCollector{
		s:    s,
		jobs: prometheus.NewDesc("mcpredict_jobs", "Jobs by state.", []string{"state"}, nil),
		depth: prometheus.NewDesc("mcpredict_queue_depth",
			"Models of queued and running jobs without a result yet (waiting or being checked).", nil, nil),
		pendingItems: prometheus.NewDesc("mcpredict_nats_pending_items",
			"Items in the NATS work stream (only with --nats).", nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.depth
	ch <- c.pendingItems
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.s.st.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	for _, st := range []store.State{store.Queued, store.Running, store.Done, store.Failed, store.Canceled} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
	jobs, err := c.s.st.Jobs(ctx, 0, store.Queued, store.Running)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.depth, err)
		return
	}
	depth := 0
	for _, j := range jobs {
		depth += j.Total - j.Done
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(depth))
	if c.s.cfg.Queue != nil {
		if n, err := c.s.cfg.Queue.Pending(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(c.pendingItems, prometheus.GaugeValue, float64(n))
		}
	}
}
