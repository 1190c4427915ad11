package service

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Health is the body of GET /healthz.
type Health struct {
	Status     string `json:"status"`
	ActiveJobs int    `json:"active_jobs"`
	Executor   string `json:"executor"`       // "local" or "nats"
	NATS       string `json:"nats,omitempty"` // "connected" or "disconnected"
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

func view(j store.Job) JobView {
	v := JobView{Job: j}
	if j.State == store.Done {
		v.Report = "/v1/jobs/" + j.ID + "/report"
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
		writeError(w, se.code, se.msg)
		return
	}
	s.metrics.submitted.Inc()
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusAccepted, view(j))
}

// submit stores the trace, checks that it parses and plans, and creates the
// job. Everything about the input is checked here, so that a bad trace is
// answered with the parser's message rather than becoming a failed job.
func (s *Server) submit(ctx context.Context, w http.ResponseWriter, r *http.Request) (store.Job, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload)
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
	m, err := parseSafely(ctx, dst, name, s.traceOptions(jo.Lenient))
	if err != nil {
		return store.Job{}, inputError(err)
	}
	opts, err := s.cfg.Resolve(jo)
	if err != nil {
		return store.Job{}, inputError(err)
	}
	if _, err := predict.Plan(m, opts); err != nil {
		return store.Job{}, inputError(err)
	}
	if _, err := extraAnalyses(s.jobAnalysis(jo), opts); err != nil {
		return store.Job{}, inputError(err)
	}
	j := store.Job{ID: id, Name: name, TracePath: dst, Options: jo.encode(), State: store.Queued, Created: time.Now().UTC()}
	if err := s.st.CreateJob(ctx, &j); err != nil {
		return store.Job{}, err
	}
	keep = true
	s.launch(s.register(id, m))
	return j, nil
}

// inputError classifies an error about the submitted input.
func inputError(err error) error {
	var (
		se  *submitError
		mbe *http.MaxBytesError
		pe  *tracemodel.ParseError
		ue  *predict.UsageError
		mte *spinrunner.MissingToolError
	)
	switch {
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
func parseSafely(ctx context.Context, path, name string, opts tracemodel.Options) (m *tracemodel.Model, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, badRequest("bad_trace", "%s: the trace could not be parsed (internal parser error: %v)", name, p)
		}
	}()
	m, err = parseStored(ctx, path, name, opts)
	if err != nil {
		var pe *tracemodel.ParseError
		if errors.As(err, &pe) || ctx.Err() == nil {
			// Any failure to read the stored copy is the input's: the file
			// was just written.
			return nil, badRequest("bad_trace", "%v", err)
		}
	}
	return m, err
}

// saveTrace copies an upload to dst.
func saveTrace(r io.Reader, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("storing trace: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
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
	if err := dec.Decode(&req); err != nil {
		return "", req.Options, badRequest("request", "bad JSON request: %v", err)
	}
	if req.Path == "" {
		return "", req.Options, badRequest("request", `JSON request without "path" (to upload a trace, send it as the body)`)
	}
	path, err := s.allowedPath(req.Path)
	if err != nil {
		return "", req.Options, err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", req.Options, badRequest("path", "%v", err)
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

// allowedPath resolves a server-side path and checks that it lies under one
// of the allowed directories, symbolic links followed.
func (s *Server) allowedPath(p string) (string, error) {
	if len(s.cfg.AllowPaths) == 0 {
		return "", &submitError{code: http.StatusForbidden, reason: "path",
			msg: "this server accepts uploads only (start it with --allow-path DIR to accept server-side paths)"}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", badRequest("path", "%v", err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", badRequest("path", "%v", err)
	}
	for _, dir := range s.cfg.AllowPaths {
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		if root, err = filepath.Abs(root); err != nil {
			continue
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", &submitError{code: http.StatusForbidden, reason: "path",
		msg: fmt.Sprintf("%s is not under a directory this server allows (--allow-path)", p)}
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
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
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
			if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&jo); err != nil {
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
		out.Jobs = append(out.Jobs, view(j))
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
		writeJSON(w, http.StatusOK, view(j))
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
	writeJSON(w, http.StatusOK, view(j))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := Health{Status: "ok", Executor: "local"}
	if s.cfg.Queue != nil {
		// A NATS outage delays jobs but loses none: the server stays
		// healthy and says so.
		h.Executor, h.NATS = "nats", "connected"
		if !s.cfg.Queue.Connected() {
			h.NATS = "disconnected"
		}
	}
	s.mu.Lock()
	h.ActiveJobs = len(s.active)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.st.Counts(ctx); err != nil {
		h.Status = "store unavailable: " + err.Error()
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}
