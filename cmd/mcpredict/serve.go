package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const serveDescription = `
Runs the prediction service: an HTTP JSON API to submit traces (upload, or a
server-side path under --allow-path), list jobs, follow a job's progress,
fetch its report in every format, and cancel it. Jobs are kept in an SQLite
database under --data, so a restart loses nothing: queued and running jobs
resume where they were.

By default the models of each trace are checked on a pool of --jobs
goroutines in this process. With --nats URL they go to a NATS JetStream work
queue instead, and "mcpredict worker --nats URL" processes on any machine
check them. --embedded-nats starts a JetStream server inside this process
(listening on --nats-listen, storing under --data) for single-machine use:
other processes can then run workers against it too.

The check flags below are the defaults of every job; a submission may
override vars, threads, patterns, pattern, engine, no_boundaries, lenient and
strict_sync (--strict-sync is the default of every job).

A job may ask for reproduce (the job option reproduce): once its report
is assembled, this process runs "mcpredict reproduce" on its trace, which
starts the program the trace's header names, at its recorded path, with its
recorded arguments, as this server's user. Only programs under an
--allow-reproduce DIR are run (without one, such jobs are refused), one
job's directed runs at a time, each job for at most --reproduce-budget;
workers on NATS never run programs. The schedules and the directed runs'
traces stay under --data, in reproduce/JOB.

The token comes from --token-file or $MCPREDICT_TOKEN. See docs/service.md.`

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", "[flags]", serveDescription, stderr)
	var cf checkFlags
	cf.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "HTTP listen `address` (port 0: any free port)")
	data := fs.String("data", "mcpredict-data", "data `DIR`: job database, stored traces, embedded NATS streams")
	natsURL := fs.String("nats", "", "send work items to the NATS JetStream server at `URL`")
	embedded := fs.Bool("embedded-nats", false, "start a JetStream server in this process and use it")
	natsListen := fs.String("nats-listen", "127.0.0.1:4222", "listen `address` of the embedded NATS server (port 0: any)")
	workers := fs.Int("workers", -1, "with NATS, in-process workers (default: none with --nats, --jobs with --embedded-nats)")
	shards := fs.Int("shards", 0, "with NATS, split each job's models into `N` shards that the workers project from the trace themselves (0: the server projects every model)")
	ackWait := fs.Duration("ack-wait", queue.DefaultAckWait, "with NATS, redeliver an item whose worker is silent this long")
	tokenFile := fs.String("token-file", "", "read the API bearer token from `FILE` (default $MCPREDICT_TOKEN; none: no auth)")
	srcRoot := fs.String("src-root", "", "source `DIR` (the repository) for the snippets of html reports; sarif paths relative to it, absolute ones under it too")
	expand := fs.Bool("expand", false, "list every bug of a group in the text and html reports it serves, not only the first "+fmt.Sprint(report.FirstShown))
	maxUpload := fs.Int64("max-upload-mb", 256, "largest accepted trace upload, in MiB")
	bodyIdle := fs.Duration("body-idle-timeout", 30*time.Second, "cut off a request whose body sends nothing for this long (big uploads that keep coming are not limited)")
	var allow multiFlag
	fs.Var(&allow, "allow-path", "accept server-side trace paths under `DIR` (repeatable)")
	var allowReproduce multiFlag
	fs.Var(&allowReproduce, "allow-reproduce", "run, for the jobs that ask for reproduce, the recorded programs under `DIR` (repeatable): the program a trace's header names runs on this server, as this user, under directed schedules; none: no job runs a program")
	reproduceBudget := fs.Duration("reproduce-budget", 2*time.Minute, "the wall time of a job's directed runs (reproduce), and the most a job may ask for (reproduce_budget)")
	var inf inputFlags // trace formats (formats.go): the default of jobs without input_format
	inf.register(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "mcpredict serve: no arguments expected (see mcpredict serve -h)")
		return exitUsage
	}
	if *natsURL != "" && *embedded {
		fmt.Fprintln(stderr, "mcpredict serve: --nats and --embedded-nats exclude each other")
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	token := os.Getenv("MCPREDICT_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fail(stderr, "serve", &predict.UsageError{Msg: "--token-file: " + err.Error()})
		}
		token = strings.TrimSpace(string(b))
	}
	// The job defaults are checked now, so that a bad flag or a missing
	// tool stops the server instead of failing every job.
	base, err := cf.options()
	if err != nil {
		return fail(stderr, "serve", err)
	}
	tools, terr := spinrunner.FindTools()
	if terr != nil {
		tools = spinrunner.Tools{} // only native jobs can run: Resolve refuses the others
	}
	af := defaultAnalysisFlags()
	// jobFlags are the check and analysis flags of a job: the server's,
	// with the job's options on top.
	jobFlags := func(jo service.JobOptions) (checkFlags, analysisFlags) {
		c := cf
		if len(jo.Vars) > 0 {
			c.vars = jo.Vars
		}
		if len(jo.Threads) > 0 {
			c.threads = jo.Threads
		}
		if len(jo.Patterns) > 0 || len(jo.UserPatterns) > 0 {
			c.patterns, c.userPatterns = jo.Patterns, jo.UserPatterns
		}
		if jo.Engine != "" {
			c.engine = jo.Engine
		}
		if jo.Semantics != "" {
			c.semantics = jo.Semantics
		}
		if len(jo.ExcludeVars) > 0 {
			c.excludeVars = jo.ExcludeVars
		}
		if jo.Confirm != "" {
			c.confirm = jo.Confirm
		}
		c.noBoundaries = c.noBoundaries || jo.NoBoundaries
		c.noDataflow = c.noDataflow || jo.NoDataflow
		c.noScope = c.noScope || jo.NoScope
		c.noHandoffs = c.noHandoffs || jo.NoHandoffs
		c.noWaitConds = c.noWaitConds || jo.NoWaitConditions
		c.noObservedReads = c.noObservedReads || jo.NoObservedReads
		if jo.MaxInstances != 0 {
			c.maxInstances = jo.MaxInstances
		}
		switch {
		case jo.PartAccesses < 0:
			c.partAccesses = 0
		case jo.PartAccesses > 0:
			c.partAccesses = jo.PartAccesses
		}
		c.atomicSetsOn = c.atomicSetsOn || jo.AtomicSetsOn
		if len(jo.AtomicSets) > 0 {
			c.atomicSets = jo.AtomicSets
		}
		if jo.SetPartners != nil {
			c.setPartners = countFlag{n: *jo.SetPartners, set: true}
		}
		if jo.SetConfidence != nil {
			c.setConfidence = *jo.SetConfidence
		}
		a := af
		a.apply(jo)
		if jo.Analysis != "" {
			a.list = jo.Analysis
		}
		return c, a
	}
	resolve := func(jo service.JobOptions) (predict.Options, []*analysis.Analyzer, error) {
		c, a := jobFlags(jo)
		as, err := a.selected(jo.Analysis, &c)
		if err != nil {
			return predict.Options{}, nil, err
		}
		opts, err := c.options()
		return opts, as, err
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return fail(stderr, "serve", err)
	}
	removeStaleWorkDirs(stderr, "serve")
	plugins := inf.host(stderr, "serve")
	defer plugins.Close()
	openTrace := func(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error) {
		if format == "" {
			format = inf.format
		}
		return plugins.OpenNamed(ctx, path, name, format, opts)
	}
	cfg := service.Config{
		OpenTrace: openTrace,
		DataDir:   *data, Resolve: resolve, Analysis: all.Default, Formats: rendererMap(formats(report.Options{SrcRoot: *srcRoot, Expand: *expand}, false)), Token: token,
		MaxUpload: *maxUpload << 20, BodyIdleTimeout: *bodyIdle, MaxTraceBytes: cf.maxTraceBytes, MaxEvents: cf.traceOptions().MaxEvents, StrictSync: cf.strictSync, AllowPaths: allow, Workers: base.Jobs, Log: log,
		Checkers: &work.Checkers{Tools: tools, KeepDir: base.Spin.KeepDir, MemoryMB: cf.memoryMB, Cache: base.Cache},
	}
	if len(allowReproduce) > 0 {
		progs, err := newReproducePrograms(allowReproduce)
		if err != nil {
			return fail(stderr, "serve", err)
		}
		cfg.CheckReproduce = progs.check
		cfg.Reproduce = serveReproduce(progs, jobFlags, inf, log)
	}
	if *reproduceBudget <= 0 {
		return fail(stderr, "serve", &predict.UsageError{Msg: "--reproduce-budget: want a positive duration"})
	}
	cfg.ReproduceBudget = *reproduceBudget
	var (
		emb *queue.Embedded
		q   *queue.Queue
	)
	url := *natsURL
	if *embedded {
		emb, err = queue.StartEmbedded(ctx, *natsListen, filepath.Join(*data, "nats"))
		if err != nil {
			return fail(stderr, "serve", err)
		}
		defer emb.Shutdown()
		url = emb.URL()
		fmt.Fprintf(stderr, "mcpredict serve: embedded NATS at %s\n", url)
	}
	nworkers := 0
	if url != "" {
		octx, cancel := context.WithTimeout(ctx, time.Minute)
		q, err = queue.Open(octx, url, queue.Options{AckWait: *ackWait, Log: log})
		cancel()
		if err != nil {
			return fail(stderr, "serve", err)
		}
		defer q.Close()
		cfg.Queue = q
		cfg.Shards = *shards
		nworkers = *workers
		if nworkers < 0 {
			nworkers = 0
			if *embedded {
				nworkers = base.Jobs
				if nworkers <= 0 {
					nworkers = runtime.NumCPU()
				}
			}
		}
	}
	svc, err := service.Start(ctx, cfg)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	defer svc.Close()
	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	if nworkers > 0 {
		sw := &service.ShardWorker{OpenTrace: openTrace, Checkers: cfg.Checkers, MaxEvents: cfg.MaxEvents}
		w := &queue.Worker{URL: url, Name: "serve-embedded", Concurrency: nworkers, Checkers: cfg.Checkers, Shards: sw.Do, Log: log}
		go func() {
			if err := w.Run(wctx); err != nil {
				log.Error("in-process worker stopped", "err", err)
			}
		}()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	hs := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "mcpredict serve: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	stopWorkers()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(stderr, "serve", err)
	}
	return exitOK
}

// rendererMap adapts formats() to the service's renderer type.
func rendererMap(fm map[string]func(io.Writer, *bugs.Report) error) map[string]service.Renderer {
	out := map[string]service.Renderer{}
	for name, f := range fm {
		out[name] = f
	}
	return out
}
