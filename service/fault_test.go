package service_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/internal/testtrace"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/store"
	"github.com/mcpredict/mcpredict/service/work"
)

// fast makes the supervisor and the retries quick, and store writes give up
// after 50ms on a lock.
func fast(cfg *service.Config) {
	service.SetRecovery(cfg, 20*time.Millisecond, 20*time.Millisecond, 200*time.Millisecond, 50*time.Millisecond)
}

// healthz returns the status code and body of /healthz.
func healthz(t *testing.T, url string) (int, service.Health) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h service.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz body: %v", err)
	}
	return resp.StatusCode, h
}

// lockStore makes every write to the job store of dir fail, as a full or
// read-only disk would: another connection holds SQLite's write lock
// (chmod would not do, as the server keeps its files open and the tests
// may run as root). It returns the function that releases it.
func lockStore(t *testing.T, dir string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				t.Error(err)
			}
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestStoreFailure: the job store stops accepting writes in the middle of
// a job, then accepts them again. /healthz says 503 meanwhile and 200 after,
// and the job completes by itself with the report of predict.Run, on the
// local pool and with NATS workers.
func TestStoreFailure(t *testing.T) {
	for _, executor := range []string{"local", "nats"} {
		t.Run(executor, func(t *testing.T) {
			ctx := ctxT(t, 2*time.Minute)
			dir := t.TempDir()
			trace := testtrace.Write(t, t.TempDir(), "gen.csv", 4, 2, 0) // 12 models
			total := testtrace.Models(4, 2)
			cfg := service.Config{DataDir: dir, Workers: 2}
			fast(&cfg)
			h := newHolder(2)
			var url string
			if executor == "local" {
				service.SetBeforeCheck(&cfg, h.hook)
			} else {
				emb, err := queue.StartEmbedded(ctx, "127.0.0.1:0", t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(emb.Shutdown)
				url = emb.URL()
				q, err := queue.Open(ctx, url, queue.Options{AckWait: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(q.Close)
				cfg.Queue = q
			}
			e := start(t, cfg)
			j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var release func()
			if executor == "local" {
				waitFor(t, ctx, "2 results", func() bool {
					jv, err := e.c.Job(ctx, j.ID)
					return err == nil && jv.Done == 2
				})
				release = lockStore(t, dir)
				h.mu.Lock()
				close(h.release) // the other checks run; their results cannot be stored
				h.mu.Unlock()
			} else {
				// Fail the store before the job has even started; the
				// workers then deliver every result during the failure.
				release = lockStore(t, dir)
				w := &queue.Worker{URL: url, Concurrency: 2, Checkers: &work.Checkers{}}
				wctx, stop := context.WithCancel(ctx)
				var wg sync.WaitGroup
				wg.Go(func() { w.Run(wctx) })
				t.Cleanup(func() { stop(); wg.Wait() })
			}
			waitFor(t, ctx, "/healthz to say 503", func() bool {
				code, hz := healthz(t, e.hs.URL)
				return code == http.StatusServiceUnavailable && hz.Store == "failing" && len(hz.Problems) > 0
			})
			time.Sleep(300 * time.Millisecond) // several supervisor rounds and retries fail
			if code, hz := healthz(t, e.hs.URL); code != http.StatusServiceUnavailable || !strings.Contains(strings.Join(hz.Problems, ";"), "job store failing") {
				t.Errorf("/healthz during the failure: %d %+v", code, hz)
			}
			jv, err := e.c.Job(ctx, j.ID)
			if err != nil || jv.State.Final() {
				t.Fatalf("job during the failure: %+v %v", jv, err)
			}
			if hz, err := e.c.Health(ctx); err == nil || hz.Store != "failing" || !strings.Contains(err.Error(), "job store failing") {
				t.Errorf("client.Health during the failure: %+v %v", hz, err)
			}
			release()
			jv, err = e.c.Wait(ctx, j.ID, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if jv.Done != total || jv.State != store.Done {
				t.Errorf("job after the failure: %+v", jv)
			}
			rep, err := e.c.Report(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameReport(t, rep, runReport(t, trace, trace, service.JobOptions{}))
			waitFor(t, ctx, "/healthz to say 200", func() bool {
				code, hz := healthz(t, e.hs.URL)
				return code == http.StatusOK && hz.Status == "ok" && hz.Store == "ok" && hz.ActiveJobs == 0
			})
		})
	}
}

// TestNATSRestart stops the NATS server in the middle of a job and starts it
// again, with its streams or without them (all queued items lost). /healthz
// says 503 while it is down; the job completes by itself with the report of
// predict.Run.
func TestNATSRestart(t *testing.T) {
	for _, keep := range []bool{true, false} {
		name := map[bool]string{true: "streams kept", false: "streams lost"}[keep]
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 2*time.Minute)
			natsDir := t.TempDir()
			emb, err := queue.StartEmbedded(ctx, "127.0.0.1:0", natsDir)
			if err != nil {
				t.Fatal(err)
			}
			url := emb.URL()
			listen := strings.TrimPrefix(url, "nats://")
			t.Cleanup(func() { emb.Shutdown() })
			log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			q, err := queue.Open(ctx, url, queue.Options{AckWait: time.Second, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(q.Close)
			cfg := service.Config{Queue: q, Log: log}
			fast(&cfg)
			e := start(t, cfg)

			trace := testtrace.Write(t, t.TempDir(), "gen.csv", 4, 2, 0) // 12 models
			total := testtrace.Models(4, 2)
			// The worker stops after its 3rd result until released.
			var n atomic.Int64
			held, release := make(chan struct{}), make(chan struct{})
			w := &queue.Worker{URL: url, Concurrency: 1, Log: log, Checkers: &work.Checkers{}, OnResult: func(work.Result) {
				if n.Add(1) == 3 {
					close(held)
					<-release
				}
			}}
			wctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { w.Run(wctx) })
			t.Cleanup(func() { stop(); wg.Wait() })

			j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-held:
			case <-ctx.Done():
				t.Fatal("the worker did not check 3 models")
			}
			emb.Shutdown()
			waitFor(t, ctx, "/healthz to say 503", func() bool {
				code, hz := healthz(t, e.hs.URL)
				return code == http.StatusServiceUnavailable && hz.NATS == "disconnected"
			})
			if !keep {
				natsDir = t.TempDir()
			}
			emb, err = queue.StartEmbedded(ctx, listen, natsDir)
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			jv, err := e.c.Wait(ctx, j.ID, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if jv.Done != total {
				t.Errorf("job after the restart: %+v", jv)
			}
			rep, err := e.c.Report(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameReport(t, rep, runReport(t, trace, trace, service.JobOptions{}))
			waitFor(t, ctx, "/healthz to say 200", func() bool {
				code, hz := healthz(t, e.hs.URL)
				return code == http.StatusOK && hz.NATS == "connected"
			})
		})
	}
}

// TestNoWorkers: models queued on NATS with no worker to take them make
// /healthz unhealthy after NoWorkersAfter; a worker makes it healthy again.
func TestNoWorkers(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	emb, q := startQueue(t, ctx)
	cfg := service.Config{Queue: q, NoWorkersAfter: 200 * time.Millisecond}
	fast(&cfg)
	e := start(t, cfg)
	if code, _ := healthz(t, e.hs.URL); code != http.StatusOK {
		t.Errorf("/healthz with nothing queued: %d", code)
	}
	j, err := e.c.UploadFile(ctx, example, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "/healthz to say no worker", func() bool {
		code, hz := healthz(t, e.hs.URL)
		return code == http.StatusServiceUnavailable && strings.Contains(strings.Join(hz.Problems, ";"), "no worker has taken one")
	})
	w := &queue.Worker{URL: emb.URL(), Checkers: &work.Checkers{}}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(wctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	if _, err := e.c.Wait(ctx, j.ID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "/healthz to say 200", func() bool {
		code, _ := healthz(t, e.hs.URL)
		return code == http.StatusOK
	})
}
