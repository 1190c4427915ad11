// Package client is a Go client of the mcpredict service's HTTP API (see
// package service and docs/service.md). `mcpredict batch --server` and the
// tests use it.
//
// It does not retry failed requests, except that Wait polls until the job
// ends.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/store"
)

// Client talks to one server.
type Client struct {
	Base  string       // e.g. http://127.0.0.1:8080
	Token string       // bearer token, if the server wants one
	HTTP  *http.Client // default http.DefaultClient
}

// Error is an error answer of the server.
type Error struct {
	Status int    // HTTP status code
	Msg    string // the server's message
}

func (e *Error) Error() string { return fmt.Sprintf("server answered %d: %s", e.Status, e.Msg) }

func (c *Client) do(ctx context.Context, method, path string, body io.Reader, ctype string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var ae service.APIError
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(b, &ae) != nil || ae.Error == "" {
			ae.Error = strings.TrimSpace(string(b))
		}
		return &Error{Status: resp.StatusCode, Msg: ae.Error}
	}
	if w, ok := out.(io.Writer); ok {
		_, err = io.Copy(w, resp.Body)
		return err
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// query encodes job options as the query of an upload: its name, and the
// options as one JSON parameter, which carries every field.
func query(name string, o service.JobOptions) string {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if b, _ := json.Marshal(o); string(b) != "{}" { // plain data: cannot fail
		q.Set("options", string(b))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Upload submits a trace read from r, named name in the report.
func (c *Client) Upload(ctx context.Context, r io.Reader, name string, o service.JobOptions) (service.JobView, error) {
	var j service.JobView
	err := c.do(ctx, http.MethodPost, "/v1/jobs"+query(name, o), r, "application/octet-stream", &j)
	return j, err
}

// UploadFile submits a local trace file, named path in the report (as
// `mcpredict run path` names it).
func (c *Client) UploadFile(ctx context.Context, path string, o service.JobOptions) (service.JobView, error) {
	f, err := os.Open(path)
	if err != nil {
		return service.JobView{}, err
	}
	defer f.Close()
	return c.Upload(ctx, f, path, o)
}

// SubmitPath submits a trace file that is on the server.
func (c *Client) SubmitPath(ctx context.Context, path, name string, o service.JobOptions) (service.JobView, error) {
	b, err := json.Marshal(service.SubmitRequest{Path: path, Name: name, Options: o})
	if err != nil {
		return service.JobView{}, err
	}
	var j service.JobView
	err = c.do(ctx, http.MethodPost, "/v1/jobs", bytes.NewReader(b), "application/json", &j)
	return j, err
}

// Job returns the status of a job.
func (c *Client) Job(ctx context.Context, id string) (service.JobView, error) {
	var j service.JobView
	err := c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, "", &j)
	return j, err
}

// Jobs lists jobs, newest first.
func (c *Client) Jobs(ctx context.Context, limit int, states ...store.State) ([]service.JobView, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	var ss []string
	for _, s := range states {
		ss = append(ss, string(s))
	}
	if len(ss) > 0 {
		q.Set("state", strings.Join(ss, ","))
	}
	var l service.JobList
	err := c.do(ctx, http.MethodGet, "/v1/jobs?"+q.Encode(), nil, "", &l)
	return l.Jobs, err
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, id string) (service.JobView, error) {
	var j service.JobView
	err := c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, "", &j)
	return j, err
}

// ReportTo writes the report of a done job in a format to w.
func (c *Client) ReportTo(ctx context.Context, id, format string, w io.Writer) error {
	return c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/report?format="+url.QueryEscape(format), nil, "", w)
}

// Report returns the report of a done job.
func (c *Client) Report(ctx context.Context, id string) (*bugs.Report, error) {
	var buf bytes.Buffer
	if err := c.ReportTo(ctx, id, "json", &buf); err != nil {
		return nil, err
	}
	return bugs.ReadJSON(&buf, "job "+id)
}

// ErrJobFailed is wrapped by Wait's error for a job that failed or was
// cancelled.
var ErrJobFailed = errors.New("job did not complete")

// Wait polls a job every interval until it is in a final state, and returns
// it. A failed or cancelled job is returned with an error wrapping
// ErrJobFailed.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (service.JobView, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			return j, err
		}
		switch j.State {
		case store.Done:
			return j, nil
		case store.Failed, store.Canceled:
			return j, fmt.Errorf("job %s %s: %s: %w", id, j.State, j.Error, ErrJobFailed)
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}

// Health returns the server's /healthz answer. An unhealthy server (503)
// gives its answer and an *Error listing its problems.
func (c *Client) Health(ctx context.Context) (service.Health, error) {
	var h service.Health
	err := c.do(ctx, http.MethodGet, "/healthz", nil, "", &h)
	var ce *Error
	if errors.As(err, &ce) && ce.Status == http.StatusServiceUnavailable && json.Unmarshal([]byte(ce.Msg), &h) == nil {
		ce.Msg = h.Status + ": " + strings.Join(h.Problems, "; ")
	}
	return h, err
}
