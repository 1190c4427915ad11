package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/service/store"
)

const submitDescription = `
Submits one trace to a running "mcpredict serve" as a job, and prints the
job: its id, its state and the number of events the server parsed (a
malformed trace is refused at once with the parser's message). The trace is
uploaded, or, with --on-server, read by the server from its own file system
(under the directories of mcpredict serve --allow-path).

The check flags are sent as the job's options, as "mcpredict batch --server"
sends them; the flags of limits, cache and tools are the server's (ignored,
with a warning).

--reproduce asks the server to run "mcpredict reproduce" on the trace once
its report is assembled: the program the trace's header names (mcpredict
record writes it) runs again on the server, at its recorded path, under
directed schedules, for at most --reproduce-budget. The server must allow
it (mcpredict serve --allow-reproduce DIR). The report then says which bugs
failed and which were reproduced.

--wait waits for the job to end and prints its summary and its bugs, each
with its reproduction state ([failed], [reproduced], ...); "mcpredict
status ID" prints the same later, and "mcpredict status --report text ID"
the report.

The server is --server, else $MCPREDICT_SERVER, else
http://127.0.0.1:8080; the token is read from --token-file FILE, else
$MCPREDICT_TOKEN.

Exit status: 0 the job was accepted (with --wait: done, no bug and no
failing run), 1 with --wait: bugs or failing runs, 2 bad usage or a trace or
options the server refused, 3 the server unreachable or the job failed,
4 interrupted while waiting (the job goes on: mcpredict status ID).`

// serverClientFlags are the flags that name the server and its token.
type serverClientFlags struct {
	server, tokenFile string
}

func (f *serverClientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "the mcpredict server's `URL` (default $MCPREDICT_SERVER, else http://127.0.0.1:8080)")
	fs.StringVar(&f.tokenFile, "token-file", "", "read the API bearer token from `FILE` (default $MCPREDICT_TOKEN)")
}

func (f *serverClientFlags) client() (*client.Client, error) {
	token := os.Getenv("MCPREDICT_TOKEN")
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, &predict.UsageError{Msg: "--token-file: " + err.Error()}
		}
		token = strings.TrimSpace(string(b))
	}
	base := f.server
	if base == "" {
		base = os.Getenv("MCPREDICT_SERVER")
	}
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	return &client.Client{Base: base, Token: token}, nil
}

func cmdSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("submit", "[flags] TRACE", submitDescription, stderr)
	var cf checkFlags
	cf.register(fs)
	var af analysisFlags
	af.register(fs)
	var scf serverClientFlags
	scf.register(fs)
	inputFormat := fs.String("input-format", "", "trace format `NAME`: csv or a format the server has a plugin for; default: detected by the server")
	name := fs.String("name", "", "the trace's name in the report (default: TRACE)")
	onServer := fs.Bool("on-server", false, "TRACE is a path on the server, under a directory of its mcpredict serve --allow-path: the server reads it there")
	reproduceJob := fs.Bool("reproduce", false, "have the server run mcpredict reproduce on the trace once the report is assembled (the recorded program, at its recorded path on the server)")
	reproduceBudget := fs.Duration("reproduce-budget", 0, "with --reproduce, the wall time of the directed runs (default: the server's, mcpredict serve --reproduce-budget, which is also the most)")
	wait := fs.Bool("wait", false, "wait for the job to end; print its summary and its bugs")
	poll := fs.Duration("poll", 500*time.Millisecond, "with --wait, how often to ask the server for the job's state")
	asJSON := fs.Bool("json", false, "print the job as the API's JSON")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "mcpredict submit: want exactly one TRACE argument (see mcpredict submit -h)")
		return exitUsage
	}
	if flagSet(fs, "reproduce-budget") && !*reproduceJob {
		return fail(stderr, "submit", &predict.UsageError{Msg: "--reproduce-budget goes with --reproduce"})
	}
	var ignored []string
	for _, f := range serverFlags {
		if flagSet(fs, f) {
			ignored = append(ignored, "--"+f)
		}
	}
	if len(ignored) > 0 {
		fmt.Fprintf(stderr, "mcpredict submit: warning: %s: the server's own limits, cache and tools apply; ignored\n", strings.Join(ignored, ", "))
	}
	if _, err := af.selected(af.list, &cf); err != nil { // the server says it too, but later
		return fail(stderr, "submit", err)
	}
	jo := cf.jobOptions()
	af.jobOptions(&jo)
	jo.InputFormat = *inputFormat
	if flagSet(fs, "analysis") {
		jo.Analysis = af.list
	}
	if !flagSet(fs, "engine") {
		jo.Engine = "" // the server's default, not this command's
	}
	jo.Reproduce = *reproduceJob
	if *reproduceBudget > 0 {
		jo.ReproduceBudget = reproduceBudget.String()
	}
	c, err := scf.client()
	if err != nil {
		return fail(stderr, "submit", err)
	}
	var j service.JobView
	if *onServer {
		j, err = c.SubmitPath(ctx, pos[0], *name, jo)
	} else {
		n := *name
		if n == "" {
			n = pos[0]
		}
		var f *os.File
		if f, err = os.Open(pos[0]); err == nil {
			j, err = c.Upload(ctx, f, n, jo)
			f.Close()
		}
	}
	if err != nil {
		return serverFail(stderr, "submit", err)
	}
	if !*wait {
		return printJob(stdout, stderr, "submit", j, nil, *asJSON)
	}
	if !*asJSON {
		printJob(stdout, stderr, "submit", j, nil, false)
	}
	id := j.ID
	j, err = c.Wait(ctx, id, *poll)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "mcpredict submit: interrupted; job %s goes on (mcpredict status %s)\n", id, id)
		return exitInterrupted
	case err != nil && !errors.Is(err, client.ErrJobFailed):
		return serverFail(stderr, "submit", err)
	}
	var rep *bugs.Report
	if j.State == store.Done {
		if rep, err = c.Report(ctx, j.ID); err != nil {
			return serverFail(stderr, "submit", err)
		}
	}
	return printJob(stdout, stderr, "submit", j, rep, *asJSON)
}

const statusDescription = `
Prints jobs of a running "mcpredict serve": with job ids, each job's state,
progress and summary (events, shared variables, models, bugs, and, for a job
that asked for reproduce, how many bugs failed and were reproduced), and
for a done job its bugs, each with its reproduction state; without ids, the
newest jobs, one a line (--state, --limit). --report FORMAT prints the
report of a done job instead (text, json, sarif or html).

The server is --server, else $MCPREDICT_SERVER, else
http://127.0.0.1:8080; the token is read from --token-file FILE, else
$MCPREDICT_TOKEN.

Exit status: 0, 1 when a job shown done has bugs or failing runs, 2 bad
usage or an unknown job, 3 the server unreachable or a job failed.`

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", "[flags] [JOB...]", statusDescription, stderr)
	var scf serverClientFlags
	scf.register(fs)
	var states listFlag
	fs.Var(&states, "state", "without JOB: only jobs in these states, a comma-separated `LIST` of queued, running, done, failed, canceled")
	limit := fs.Int("limit", 20, "without JOB: at most this many jobs, newest first")
	reportFormat := fs.String("report", "", "print the report of each done JOB in this `FORMAT` (text, json, sarif, html) instead")
	asJSON := fs.Bool("json", false, "print the jobs as the API's JSON")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	c, err := scf.client()
	if err != nil {
		return fail(stderr, "status", err)
	}
	if len(pos) == 0 {
		if *reportFormat != "" {
			return fail(stderr, "status", &predict.UsageError{Msg: "--report wants the JOB ids"})
		}
		var ss []store.State
		for _, s := range states {
			ss = append(ss, store.State(s))
		}
		jobs, err := c.Jobs(ctx, *limit, ss...)
		if err != nil {
			return serverFail(stderr, "status", err)
		}
		if *asJSON {
			return writeJSONOut(stdout, stderr, service.JobList{Jobs: jobs})
		}
		writeJobTable(stdout, jobs)
		return exitOK
	}
	status := exitOK
	for _, id := range pos {
		j, err := c.Job(ctx, id)
		if err != nil {
			if st := serverFail(stderr, "status", err); st > status {
				status = st
			}
			continue
		}
		if *reportFormat != "" {
			if j.State != store.Done {
				fmt.Fprintf(stderr, "mcpredict status: job %s is %s: no report%s\n", j.ID, j.State, errSuffix(j.Error))
				status = max(status, exitInternal)
				continue
			}
			if err := c.ReportTo(ctx, id, *reportFormat, stdout); err != nil {
				status = max(status, serverFail(stderr, "status", err))
			}
			continue
		}
		var rep *bugs.Report
		if j.State == store.Done {
			if rep, err = c.Report(ctx, j.ID); err != nil {
				status = max(status, serverFail(stderr, "status", err))
				continue
			}
		}
		status = max(status, printJob(stdout, stderr, "status", j, rep, *asJSON))
	}
	return status
}

// serverFail reports an error of the server or of reaching it: 2 for a
// refusal of the request (a 4xx: bad trace, bad options, unknown job), 3
// otherwise.
func serverFail(stderr io.Writer, cmd string, err error) int {
	var ce *client.Error
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "mcpredict %s: %s\n", cmd, ce.Msg)
		if ce.Status >= 400 && ce.Status < 500 && ce.Status != http.StatusRequestTimeout {
			return exitUsage
		}
		return exitInternal
	}
	return fail(stderr, cmd, err)
}

func writeJSONOut(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(stderr, "status", err)
	}
	return exitOK
}

// printJob prints a job, and the bugs of its report when it is done, and
// returns the exit status it stands for: 1 bugs or failing runs, 3 a
// failed or cancelled job, else 0.
func printJob(stdout, stderr io.Writer, cmd string, j service.JobView, rep *bugs.Report, asJSON bool) int {
	status := exitOK
	switch {
	case j.State == store.Done && (j.Bugs > 0 || (j.Reproduce != nil && j.Reproduce.FailingRuns > 0)):
		status = exitViolation
	case j.State == store.Failed || j.State == store.Canceled:
		status = exitInternal
	}
	if asJSON {
		if st := writeJSONOut(stdout, stderr, j); st != exitOK {
			return st
		}
		return status
	}
	fmt.Fprintln(stdout, jobLine(j))
	if r := j.Reproduce; r != nil {
		fmt.Fprintf(stdout, "  reproduce: %s\n", reproduceLine(*r))
	}
	if rep != nil {
		for _, b := range rep.Active() {
			fmt.Fprintf(stdout, "  %s\n", bugLine(b))
		}
		if len(rep.Failures) > 0 {
			fmt.Fprintf(stdout, "  failing runs:\n")
			for _, f := range rep.Failures {
				fmt.Fprintf(stdout, "    %s  %s (%d runs, from %s)\n", f.ID, f.Ended, f.Runs, f.Source)
			}
		}
	}
	return status
}

// jobLine is a job in one line: id, name, state, and what is known of it.
func jobLine(j service.JobView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s (%s): %s", j.ID, j.Name, j.State)
	switch j.State {
	case store.Queued:
		fmt.Fprintf(&b, ": %s, %s planned", count(j.Events, "event"), count(j.Total, "model"))
	case store.Running:
		fmt.Fprintf(&b, ": %d of %s checked; %s", j.Done, count(j.Total, "model"), count(j.Events, "event"))
	case store.Done:
		fmt.Fprintf(&b, ": %s, %s, %s, %s, %s", count(j.Events, "event"), count(j.SharedVars, "shared variable"),
			count(j.Total, "model"), count(j.Bugs, "bug"), count(j.Violations, "violation instance"))
	default:
		if j.Error != "" {
			fmt.Fprintf(&b, ": %s", j.Error)
		}
		if j.Events > 0 {
			fmt.Fprintf(&b, "; %s", count(j.Events, "event"))
		}
	}
	return b.String()
}

// reproduceLine is where a job's reproduce is, and what it found.
func reproduceLine(r service.ReproduceStatus) string {
	switch r.State {
	case service.ReproduceWaiting:
		return "waiting for the models to be checked"
	case service.ReproduceRunning:
		return "directed runs of the recorded program"
	case service.ReproduceDone:
		return fmt.Sprintf("%d failed, %d reproduced; %s", r.Failed, r.Reproduced, count(r.FailingRuns, "other failing run"))
	}
	return "not done (the job failed or was cancelled)"
}

// bugLine is a bug in one line, with its reproduction state.
func bugLine(b bugs.Bug) string {
	s := b.ID + "  " + b.Pattern
	if b.PatternName != "" {
		s += " " + b.PatternName
	}
	if len(b.Vars) > 0 {
		s += " on " + strings.Join(b.Vars, ", ")
	}
	if len(b.Locations) > 0 {
		s += " at " + b.Locations[0].String()
	}
	if st := b.ReproductionState(); st != "" {
		s += " [" + strings.ReplaceAll(st, "_", " ") + "]"
	}
	return s
}

// writeJobTable lists jobs, one a line.
func writeJobTable(w io.Writer, jobs []service.JobView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tNAME\tEVENTS\tMODELS\tBUGS\tREPRODUCE")
	for _, j := range jobs {
		models := fmt.Sprint(j.Total)
		if j.State == store.Running {
			models = fmt.Sprintf("%d/%d", j.Done, j.Total)
		}
		bugsCol, repro := "-", "-"
		if j.State == store.Done {
			bugsCol = fmt.Sprint(j.Bugs)
		}
		if r := j.Reproduce; r != nil {
			repro = r.State
			if r.State == service.ReproduceDone {
				repro = fmt.Sprintf("%d failed, %d reproduced", r.Failed+r.FailingRuns, r.Reproduced)
			}
		}
		state := string(j.State)
		if j.Error != "" {
			state += ": " + firstLine(j.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", j.ID, state, j.Name, j.Events, models, bugsCol, repro)
	}
	tw.Flush()
}

// count is "1 model" or "n models".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func errSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
