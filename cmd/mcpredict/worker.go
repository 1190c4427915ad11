package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const workerDescription = `
Checks models for a "mcpredict serve --nats URL" (or --embedded-nats)
server: takes work items from the NATS JetStream work queue, checks each with
the engine and patterns of its job, and publishes the result. Start as many
workers, on as many machines, as needed; a worker that dies mid-model has its
model redelivered to another one.

The server decides what is checked and the Spin limits of each model (the
job's options, and "mcpredict serve --timeout --memory", sent with every
item); --memory here applies only to items that carry no memory limit. A
server started with --shards N sends shards instead of models: the worker
fetches the job's trace from the queue's trace store, parses it (in
--temp-dir; --input-format and --max-events as run's), and projects and
checks the shard's models itself.

Workers need spin and gcc (sudo apt-get install spin gcc), except with
--native-only, where items that need Spin fail their job.`

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("worker", "--nats URL [flags]", workerDescription, stderr)
	natsURL := fs.String("nats", os.Getenv("MCPREDICT_NATS"), "the NATS `URL` of the work queue (default $MCPREDICT_NATS)")
	jobs := fs.Int("jobs", 0, "models checked in parallel (default: number of CPUs)")
	name := fs.String("name", "", "worker name in results and logs (default host:pid)")
	keep := fs.String("keep-models", "", "keep each model's Promela file and Spin output under `DIR`")
	memory := fs.Int("memory", 1024, "Spin memory limit per model in MB, for items that carry none (the server sends its --memory)")
	cacheDir := fs.String("cache-dir", "", "verdict cache `DIR` (default: mcpredict/verdicts under the user cache directory)")
	noCache := fs.Bool("no-cache", false, "do not read or write the verdict cache")
	nativeOnly := fs.Bool("native-only", false, "run without spin and gcc (only native-engine items succeed)")
	verbose := fs.Bool("v", false, "log every model")
	tempDir := fs.String("temp-dir", "", "`DIR` where the traces of shards are fetched and spilled (default $TMPDIR, else /tmp)")
	maxEvents := fs.Int("max-events", tracemodel.DefaultMaxEvents, "most events accepted in a shard's trace, as run's (0: no limit but the 2^31-1 the model can index)")
	var inf inputFlags // trace formats of shards (formats.go)
	inf.register(fs)
	// --timeout is the server's, sent with every item: refused with the
	// reason, not as an unknown flag.
	args, refused, err := takeFlags(fs, args, "timeout")
	if err != nil || len(refused) > 0 { // err: --timeout without a value
		return fail(stderr, "worker", &predict.UsageError{Msg: "--timeout is the server's (mcpredict serve --timeout): every item carries its time limit"})
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 || *natsURL == "" {
		fmt.Fprintln(stderr, "mcpredict worker: want --nats URL and no arguments (see mcpredict worker -h)")
		return exitUsage
	}
	removeStaleWorkDirs(stderr, "worker")
	var tools spinrunner.Tools
	if !*nativeOnly {
		if tools, err = spinrunner.FindTools(); err != nil {
			return fail(stderr, "worker", err)
		}
	}
	if *keep != "" {
		// Absolute: every model runs in a work directory of its own.
		abs, err := filepath.Abs(*keep)
		if err == nil {
			err = os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			return fail(stderr, "worker", &predict.UsageError{Msg: "--keep-models: " + err.Error()})
		}
		*keep = abs
	}
	var vc *cache.Dir
	if !*noCache {
		dir := *cacheDir
		if dir == "" {
			if dir, err = cache.DefaultPath(); err != nil {
				return fail(stderr, "worker", &predict.UsageError{Msg: err.Error()})
			}
		}
		if vc, err = cache.Open(dir); err != nil {
			return fail(stderr, "worker", &predict.UsageError{Msg: "--cache-dir: " + err.Error()})
		}
	}
	if *jobs <= 0 {
		*jobs = runtime.NumCPU()
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if *maxEvents <= 0 {
		*maxEvents = -1 // no limit
	}
	checkers := &work.Checkers{Tools: tools, KeepDir: *keep, MemoryMB: *memory, Cache: vc}
	plugins := inf.host(stderr, "worker")
	defer plugins.Close()
	sw := &service.ShardWorker{
		OpenTrace: func(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error) {
			if format == "" {
				format = inf.format
			}
			return plugins.OpenNamed(ctx, path, name, format, opts)
		},
		Checkers: checkers, TempDir: *tempDir, MaxEvents: *maxEvents,
	}
	w := &queue.Worker{
		URL: *natsURL, Name: *name, Concurrency: *jobs, Log: log,
		Checkers: checkers, Shards: sw.Do,
	}
	if *verbose {
		w.OnResult = func(r work.Result) {
			log.Debug("model checked", "job", r.Job, "task", r.Task, "violations", len(r.Result.Violations), "elapsed", r.Elapsed, "error", r.Err)
		}
	}
	fmt.Fprintf(stderr, "mcpredict worker: taking work from %s\n", *natsURL)
	if err := w.Run(ctx); err != nil {
		return fail(stderr, "worker", err)
	}
	return exitOK
}
