package service

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service/store"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// APIError is the body of every error response.
type APIError struct {
	Error string `json:"error"`
}

// JobView is a job as the API shows it.
type JobView struct {
	store.Job
	// Report is the path of the report, once the job is done.
	Report string `json:"report,omitempty"`
	// Reproduce is set for a job that asked for reproduce.
	Reproduce *ReproduceStatus `json:"reproduce,omitempty"`
}

// Reproduce states (ReproduceStatus.State).
const (
	ReproduceWaiting = "waiting" // the job's models are being checked
	ReproduceRunning = "running" // its directed runs are being made (or wait for another job's)
	ReproduceDone    = "done"    // the report has their outcome
	ReproduceStopped = "stopped" // the job failed or was cancelled first
)

// ReproduceStatus is where the directed runs of a job that asked for
// reproduce are, and, once it is done, what they found.
type ReproduceStatus struct {
	State string `json:"state"`
	// Failed counts the bugs whose directed run failed, Reproduced those
	// reproduced without failing, FailingRuns the failing runs that are
	// no bug's (the report's failures).
	Failed      int `json:"failed"`
	Reproduced  int `json:"reproduced"`
	FailingRuns int `json:"failing_runs"`
}

// JobList is the body of GET /v1/jobs.
type JobList struct {
	Jobs []JobView `json:"jobs"`
}

// SubmitRequest is the JSON body of POST /v1/jobs naming a server-side trace.
type SubmitRequest struct {
	Path    string     `json:"path"`
	Name    string     `json:"name,omitempty"` // default: Path
	Options JobOptions `json:"options"`
}

// Health is the body of GET /healthz: 200 with Status "ok" while work can
// progress, else 503 with Status "unavailable" and the Problems.
type Health struct {
	Status     string `json:"status"` // "ok" or "unavailable"
	ActiveJobs int    `json:"active_jobs"`
	Executor   string `json:"executor"`       // "local" or "nats"
	NATS       string `json:"nats,omitempty"` // "connected" or "disconnected"
	// Store is "ok", or "failing" while writes to the job store fail.
	Store string `json:"store"`
	// StalledJobs wait to be run again after a transient failure.
	StalledJobs int `json:"stalled_jobs"`
	// Problems say why work cannot progress (only when unavailable).
	Problems []string `json:"problems,omitempty"`
}

// Handler returns the HTTP API:
//
//	POST /v1/jobs                submit a trace (body, multipart "trace", or JSON {"path": ...})
//	GET  /v1/jobs                list jobs (?state=running,done&limit=N)
//	GET  /v1/jobs/{id}           job status and progress
//	GET  /v1/jobs/{id}/report    the report (?format=json|text|...)
//	POST /v1/jobs/{id}/cancel    cancel a job
//	GET  /healthz                liveness (no auth)
//	GET  /metrics                Prometheus metrics (no auth)
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", s.auth(s.handleSubmit))
	mux.HandleFunc("GET /v1/jobs", s.auth(s.handleList))
	mux.HandleFunc("GET /v1/jobs/{id}", s.auth(s.handleJob))
	mux.HandleFunc("GET /v1/jobs/{id}/report", s.auth(s.handleReport))
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.auth(s.handleCancel))
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s (see docs/service.md)", r.Method, r.URL.Path))
	})
	return s.instrument(mux)
}

// statusWriter remembers the status code for the request counter.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the connection's writer (read
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument counts requests by route and status, and turns a panic in a
// handler into a 500 instead of a dropped connection.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				if sw.code == 0 {
					writeError(sw, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "other"
			}
			s.metrics.requests.WithLabelValues(route, strconv.Itoa(max(sw.code, 200))).Inc()
		}()
		next.ServeHTTP(sw, r)
	})
}

// auth requires the bearer token, when one is configured.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.Token == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpredict"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away: nothing to do
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, APIError{Error: msg})
}

func (s *Server) view(j store.Job) JobView {
	v := JobView{Job: j}
	if j.State == store.Done {
		v.Report = "/v1/jobs/" + j.ID + "/report"
	}
	if jo, err := decodeOptions(j.Options); err == nil && jo.Reproduce {
		r := &ReproduceStatus{State: ReproduceWaiting}
		switch {
		case j.State == store.Done:
			r.State, r.Failed, r.Reproduced, r.FailingRuns = ReproduceDone, j.Failed, j.Reproduced, j.FailingRuns
		case j.State.Final():
			r.State = ReproduceStopped
		case j.State == store.Running:
			if aj := s.activeJob(j.ID); aj != nil {
				aj.mu.Lock()
				if aj.reproducing || aj.reproduced != nil {
					r.State = ReproduceRunning
				}
				aj.mu.Unlock()
			}
		}
		v.Reproduce = r
	}
	return v
}

// submitError is a refused submission: its status code and message.
type submitError struct {
	code   int
	reason string // metric label
	msg    string
}

func (e *submitError) Error() string { return e.msg }

func badRequest(reason, format string, args ...any) *submitError {
	return &submitError{code: http.StatusBadRequest, reason: reason, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	j, err := s.submit(r.Context(), w, r)
	if err != nil {
		var se *submitError
		if !errors.As(err, &se) {
			se = &submitError{code: http.StatusInternalServerError, reason: "internal", msg: err.Error()}
			s.log.Error("submission failed", "err", err)
		}
		s.metrics.rejected.WithLabelValues(se.reason).Inc()
		// The rest of the body may never come (a stalled client): do not
		// let the server wait for it to keep the connection.
		w.Header().Set("Connection", "close")
		writeError(w, se.code, se.msg)
		return
	}
	s.metrics.submitted.Inc()
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusAccepted, s.view(j))
}

// submit stores the trace, checks that it parses and plans, and creates the
// job. Everything about the input is checked here, so that a bad trace is
// answered with the parser's message rather than becoming a failed job.
func (s *Server) submit(ctx context.Context, w http.ResponseWriter, r *http.Request) (store.Job, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload)
	if s.cfg.BodyIdleTimeout > 0 {
		rc := http.NewResponseController(w)
		r.Body = &idleBody{ReadCloser: r.Body, rc: rc, idle: s.cfg.BodyIdleTimeout}
		defer rc.SetReadDeadline(time.Time{}) //nolint:errcheck // the connection may be gone
	}
	id := newID()
	dst := filepath.Join(s.cfg.DataDir, "traces", id+".trace")
	keep := false
	defer func() {
		if !keep {
			os.Remove(dst)
		}
	}()
	var (
		name string
		jo   JobOptions
		err  error
	)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		name, jo, err = s.receivePath(r, dst)
	case "multipart/form-data":
		name, jo, err = s.receiveMultipart(r, dst)
	default:
		if jo, err = optionsFromQuery(r.URL.Query()); err != nil {
			return store.Job{}, badRequest("options", "%v", err)
		}
		name = r.URL.Query().Get("name")
		err = saveTrace(r.Body, dst)
	}
	if err != nil {
		return store.Job{}, inputError(err)
	}
	if name == "" {
		name = "upload-" + id
	}
	m, format, err := s.parseSafely(ctx, dst, name, jo.InputFormat, s.traceOptions(jo))
	if err != nil {
		return store.Job{}, inputError(err)
	}
	jo.InputFormat = format // a restart reads the trace in the same format
	opts, analyzers, err := s.resolve(jo)
	if err != nil {
		m.Close()
		return store.Job{}, inputError(err)
	}
	tasks, err := predict.Plan(ctx, m, opts)
	if err == nil {
		err = s.checkReproduce(jo, dst)
	}
	if err != nil {
		m.Close()
		return store.Job{}, inputError(err)
	}
	j := store.Job{ID: id, Name: name, TracePath: dst, Options: jo.encode(), State: store.Queued, Created: time.Now().UTC(),
		Total: len(tasks), Events: m.EventCount()}
	// Active before it is in the store, so that the supervisor does not
	// adopt it too; with its plan, which load would otherwise make again
	// (seconds for a trace of millions of events).
	aj := s.register(id, m)
	aj.mu.Lock()
	aj.jopts, aj.opts, aj.analyzers, aj.tasks = jo, opts, analyzers, tasks
	aj.mu.Unlock()
	if err := s.st.CreateJob(ctx, &j); err != nil {
		s.forget(aj)
		return store.Job{}, err
	}
	keep = true
	s.launch(aj)
	return j, nil
}

// checkReproduce refuses a job that asks for reproduce where it cannot
// have it: a server that runs no programs, a budget over the server's, a
// trace whose header does not name a program this server may run
// (Config.CheckReproduce).
func (s *Server) checkReproduce(jo JobOptions, trace string) error {
	if !jo.Reproduce {
		if jo.ReproduceBudget != "" {
			return badRequest("options", "reproduce_budget without reproduce")
		}
		return nil
	}
	if s.cfg.Reproduce == nil {
		return badRequest("options", "reproduce: this server runs no programs (start it with mcpredict serve --allow-reproduce DIR)")
	}
	if _, err := s.reproduceBudget(jo); err != nil {
		return err
	}
	if s.cfg.CheckReproduce != nil {
		if err := s.cfg.CheckReproduce(trace); err != nil {
			var ue *predict.UsageError
			if errors.As(err, &ue) {
				return badRequest("options", "reproduce: %v", ue)
			}
			return fmt.Errorf("reproduce: %w", err)
		}
	}
	return nil
}

// idleBody is a request body whose every read must make progress within
// idle: a client that stops sending (a slow-loris attack, a dead link) is
// cut off, while a big upload that keeps coming in may take as long as it
// needs.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
}

// stalledError is a body read cut off by idleBody.
type stalledError struct{ idle time.Duration }

func (e *stalledError) Error() string {
	return fmt.Sprintf("the request body stalled: no data for %s", e.idle)
}

func (b *idleBody) Read(p []byte) (int, error) {
	// An error means the connection cannot have deadlines (HTTP/2 through
	// some proxies): read without one.
	_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &stalledError{idle: b.idle}
	}
	return n, err
}

// inputError classifies an error about the submitted input.
func inputError(err error) error {
	var (
		se  *submitError
		mbe *http.MaxBytesError
		pe  *tracemodel.ParseError
		ue  *predict.UsageError
		mte *spinrunner.MissingToolError
		ste *stalledError
		tme *predict.TooManyModelsError
	)
	switch {
	case errors.As(err, &tme):
		return badRequest("too_many_models", "%v", tme)
	case errors.As(err, &ste):
		return &submitError{code: http.StatusRequestTimeout, reason: "timeout", msg: ste.Error()}
	case errors.As(err, &se):
		return se
	case errors.As(err, &mbe):
		return &submitError{code: http.StatusRequestEntityTooLarge, reason: "too_large",
			msg: fmt.Sprintf("trace larger than the server's limit of %d bytes", mbe.Limit)}
	case errors.As(err, &pe):
		return badRequest("bad_trace", "%v", pe)
	case errors.As(err, &ue):
		return badRequest("options", "%v", ue)
	case errors.As(err, &mte):
		// The engine asked for needs tools this server lacks: the client
		// can still ask for engine=native.
		return badRequest("options", "this server cannot run the requested engine: %v", mte)
	}
	return err
}

// parseSafely parses a stored trace. A panic in the parser on some input is
// a parser bug, but for the client it is still a trace that could not be
// read: it must not take the server down.
func (s *Server) parseSafely(ctx context.Context, path, name, format string, opts tracemodel.Options) (m *tracemodel.Model, used string, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, badRequest("bad_trace", "%s: the trace could not be parsed (internal parser error: %v)", name, p)
		}
	}()
	m, used, err = s.parseStored(ctx, path, name, format, opts)
	if err != nil {
		var (
			pe *tracemodel.ParseError
			ue *predict.UsageError
		)
		switch {
		case errors.As(err, &ue):
			return nil, "", err
		case errors.As(err, &pe) || (ctx.Err() == nil && !brokenPlugin(err)):
			// Any failure to read the stored copy is the input's: the file
			// was just written.
			return nil, "", badRequest("bad_trace", "%v", err)
		}
	}
	return m, used, err
}

// brokenPlugin reports whether err is a trace-format plugin's failure
// (the server's problem, not the client's).
func brokenPlugin(err error) bool {
	var pe interface{ BrokenPlugin() bool }
	return errors.As(err, &pe) && pe.BrokenPlugin()
}

// saveTrace copies an upload to dst.
func saveTrace(r io.Reader, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("storing trace: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		var (
			mbe *http.MaxBytesError
			ste *stalledError
		)
		if errors.As(err, &mbe) || errors.As(err, &ste) {
			return err
		}
		return badRequest("upload", "reading the upload: %v", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storing trace: %w", err)
	}
	return nil
}

func (s *Server) receivePath(r *http.Request, dst string) (string, JobOptions, error) {
	var req SubmitRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := decodeOne(dec, &req); err != nil {
		var (
			mbe *http.MaxBytesError
			ste *stalledError
		)
		if errors.As(err, &mbe) || errors.As(err, &ste) {
			return "", req.Options, err
		}
		return "", req.Options, badRequest("request", "bad JSON request: %v", err)
	}
	if req.Path == "" {
		return "", req.Options, badRequest("request", `JSON request without "path" (to upload a trace, send it as the body)`)
	}
	f, err := s.openAllowed(req.Path)
	if err != nil {
		return "", req.Options, err
	}
	defer f.Close()
	if err := saveTrace(f, dst); err != nil {
		return "", req.Options, err
	}
	name := req.Name
	if name == "" {
		name = req.Path
	}
	return name, req.Options, nil
}

// decodeOne decodes exactly one JSON value from dec: data after it, other
// than white space, is an error.
func decodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("data after the JSON value")
	default:
		var (
			mbe *http.MaxBytesError
			ste *stalledError
		)
		if errors.As(err, &mbe) || errors.As(err, &ste) {
			return err
		}
		return fmt.Errorf("data after the JSON value: %w", err)
	}
}

// notAllowed is the one answer for a server-side path that is outside the
// allowed directories, escapes them through a symbolic link, or cannot be
// opened for another reason than not existing inside them: it must not tell
// a client whether a file outside exists.
func notAllowed(p string) error {
	return &submitError{code: http.StatusForbidden, reason: "path",
		msg: fmt.Sprintf("%s: not found or not under a directory this server allows (--allow-path)", p)}
}

// openAllowed opens a server-side trace that lies under one of the allowed
// directories. Containment is decided on the cleaned path before the file
// system is touched, then the file is opened through an os.Root, which
// refuses symbolic links that lead out of the directory. Only regular
// files are accepted: a FIFO would block the request, a device could be
// endless.
func (s *Server) openAllowed(p string) (*os.File, error) {
	if len(s.cfg.AllowPaths) == 0 {
		return nil, &submitError{code: http.StatusForbidden, reason: "path",
			msg: "this server accepts uploads only (start it with --allow-path DIR to accept server-side paths)"}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, notAllowed(p)
	}
	for _, dir := range s.cfg.AllowPaths {
		rel, ok := within(dir, abs)
		if !ok {
			continue
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, notAllowed(p)
		}
		defer root.Close()
		return openRegular(root, rel, p)
	}
	return nil, notAllowed(p)
}

// within returns the path of abs relative to dir (itself or, with symbolic
// links resolved, the directory it names), if abs lies lexically under it.
func within(dir, abs string) (string, bool) {
	cands := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		cands = append(cands, real)
	}
	for _, c := range cands {
		c, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(c, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, true
		}
	}
	return "", false
}

// openRegular opens name under root if it is a regular file; p is the
// client's path, for messages.
func openRegular(root *os.Root, name, p string) (*os.File, error) {
	info, err := root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badRequest("path", "%s: no such file", p)
	case err != nil:
		return nil, notAllowed(p)
	}
	if err := regular(info, p); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the file have been replaced by a FIFO since the
	// Stat, opening it must not wait for a writer.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badRequest("path", "%s: no such file", p)
	case errors.Is(err, fs.ErrPermission):
		return nil, badRequest("path", "%s: permission denied", p)
	case err != nil:
		return nil, notAllowed(p)
	}
	if info, err = f.Stat(); err != nil || regular(info, p) != nil {
		f.Close()
		if err == nil {
			err = regular(info, p)
		} else {
			err = notAllowed(p)
		}
		return nil, err
	}
	return f, nil
}

// regular refuses everything but a regular file, saying what it is.
func regular(info fs.FileInfo, p string) error {
	m := info.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	}
	return badRequest("path", "%s: %s, not a regular file: only trace files are accepted", p, kind)
}

func (s *Server) receiveMultipart(r *http.Request, dst string) (string, JobOptions, error) {
	var (
		jo       JobOptions
		name     string
		gotTrace bool
	)
	mr, err := r.MultipartReader()
	if err != nil {
		return "", jo, badRequest("request", "bad multipart request: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var (
				mbe *http.MaxBytesError
				ste *stalledError
			)
			if errors.As(err, &mbe) || errors.As(err, &ste) {
				return "", jo, err
			}
			return "", jo, badRequest("request", "bad multipart request: %v", err)
		}
		switch part.FormName() {
		case "trace":
			if name == "" {
				name = part.FileName()
			}
			if err := saveTrace(part, dst); err != nil {
				return "", jo, err
			}
			gotTrace = true
		case "name":
			b, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				return "", jo, badRequest("request", "reading name: %v", err)
			}
			name = strings.TrimSpace(string(b))
		case "options":
			if err := decodeOne(json.NewDecoder(io.LimitReader(part, 1<<20)), &jo); err != nil {
				return "", jo, badRequest("options", "bad options JSON: %v", err)
			}
		}
		part.Close()
	}
	if !gotTrace {
		return "", jo, badRequest("request", `multipart request without a "trace" file part`)
	}
	return name, jo, nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit: want a positive number, got %q", v))
			return
		}
		limit = min(n, 10000)
	}
	var states []store.State
	for _, v := range strings.Split(q.Get("state"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		st := store.State(v)
		if !st.Final() && st != store.Queued && st != store.Running {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("state: unknown state %q", v))
			return
		}
		states = append(states, st)
	}
	jobs, err := s.st.Jobs(r.Context(), limit, states...)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := JobList{Jobs: make([]JobView, 0, len(jobs))}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, s.view(j))
	}
	writeJSON(w, http.StatusOK, out)
}

// job reads the job of the request, answering 404 itself.
func (s *Server) job(w http.ResponseWriter, r *http.Request) (store.Job, bool) {
	j, err := s.st.Job(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no job %q", r.PathValue("id")))
		return j, false
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return j, false
	}
	return j, true
}

func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, s.view(j))
	}
}

// contentType is the media type of a report format that cmd/mcpredict
// knows; others are served as text.
func contentType(format string) string {
	switch format {
	case "json":
		return "application/json"
	case "sarif":
		return "application/sarif+json"
	case "html":
		return "text/html; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

func (s *Server) renderer(format string) (Renderer, bool) {
	if f, ok := s.cfg.Formats[format]; ok {
		return f, true
	}
	if format == "json" {
		return bugs.WriteJSON, true
	}
	return nil, false
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	render, ok := s.renderer(format)
	if !ok {
		names := []string{"json"}
		for n := range s.cfg.Formats {
			if n != "json" {
				names = append(names, n)
			}
		}
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown format %q (have %s)", format, strings.Join(names, ", ")))
		return
	}
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if j.State != store.Done {
		msg := fmt.Sprintf("job %s is %s: no report", j.ID, j.State)
		if j.Error != "" {
			msg += ": " + j.Error
		}
		writeError(w, http.StatusConflict, msg)
		return
	}
	data, err := s.st.Report(r.Context(), j.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var rep bugs.Report
	if err := work.Decode(data, &rep); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", contentType(format))
	if err := render(w, &rep); err != nil {
		s.log.Warn("rendering report", "job", j.ID, "format", format, "err", err)
	}
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ok, err := s.Cancel(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no job %q", id))
		return
	case errors.As(err, new(*transientError)):
		writeError(w, http.StatusServiceUnavailable,
			fmt.Sprintf("job %s stopped, but its cancellation is not recorded yet (it will be once the job store recovers): %v", id, err))
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	j, ok2 := s.job(w, r)
	if !ok2 {
		return
	}
	if !ok {
		writeError(w, http.StatusConflict, fmt.Sprintf("job %s is already %s", id, j.State))
		return
	}
	writeJSON(w, http.StatusOK, s.view(j))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := Health{Status: "ok", Executor: "local", Store: "ok"}
	storeOK, problems := s.health.problems(s.cfg.NoWorkersAfter)
	if s.cfg.Queue != nil {
		h.Executor, h.NATS = "nats", "connected"
		if !s.cfg.Queue.Connected() {
			h.NATS = "disconnected"
			if !s.health.natsFailing() { // not yet seen by the supervisor
				problems = append(problems, "NATS disconnected")
			}
		}
	}
	s.mu.Lock()
	h.ActiveJobs = len(s.active)
	for _, aj := range s.active {
		aj.mu.Lock()
		if aj.stalled {
			h.StalledJobs++
		}
		aj.mu.Unlock()
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.st.Counts(ctx); err != nil {
		storeOK = false
		problems = append(problems, "job store unavailable: "+err.Error())
	}
	if !storeOK {
		h.Store = "failing"
	}
	if len(problems) > 0 {
		h.Status, h.Problems = "unavailable", problems
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}
