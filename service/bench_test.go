package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/internal/testtrace"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/spinrunner"
)

// BenchmarkWorkers measures the throughput of the NATS scale-out, in models
// per second, with one and two workers on this machine (each checking one
// model at a time). With the native engine a model takes well under a
// millisecond, so it measures the queue's overhead; with Spin every model is
// compiled and run, which is where a second worker pays off.
//
//	go test -run '^$' -bench Workers -benchtime 3x ./service/
func BenchmarkWorkers(b *testing.B) {
	cases := []struct {
		engine        string
		workers, vars int // of the generated trace
	}{
		{"native", 8, 10}, // 280 models
		{"spin", 4, 2},    // 12 models
	}
	for _, c := range cases {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("engine=%s/workers=%d", c.engine, n), func(b *testing.B) {
				benchWorkers(b, c.engine, n, c.workers, c.vars)
			})
		}
	}
}

func benchWorkers(b *testing.B, engine string, nworkers, threads, vars int) {
	ctx := context.Background()
	var tools spinrunner.Tools
	if engine != "native" {
		var err error
		if tools, err = spinrunner.FindTools(); err != nil {
			b.Skip(err)
		}
	}
	emb, err := queue.StartEmbedded(ctx, "127.0.0.1:0", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Shutdown()
	q, err := queue.Open(ctx, emb.URL(), queue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	srv, err := service.Start(ctx, service.Config{DataDir: b.TempDir(), Resolve: resolve, Queue: q})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	e := &env{srv: srv}
	e.hs, e.c = serveHTTP(srv)
	defer e.hs.Close()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range nworkers {
		w := &queue.Worker{URL: emb.URL(), Name: fmt.Sprint("w", i), Concurrency: 1, Checkers: &work.Checkers{Tools: tools}}
		wg.Go(func() { w.Run(wctx) })
	}
	defer func() { stop(); wg.Wait() }()
	trace := testtrace.Write(b, b.TempDir(), "bench.csv", threads, vars, 0)
	models := testtrace.Models(threads, vars)
	var busy time.Duration
	for b.Loop() {
		t0 := time.Now()
		j, err := e.c.UploadFile(ctx, trace, service.JobOptions{Engine: engine})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.c.Wait(ctx, j.ID, 5*time.Millisecond); err != nil {
			b.Fatal(err)
		}
		busy += time.Since(t0)
	}
	b.ReportMetric(float64(models*b.N)/busy.Seconds(), "models/s")
	b.ReportMetric(float64(models), "models/job")
}
