package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/internal/atomicfile"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/reproduce"
	"github.com/mcpredict/mcpredict/service"
)

// reproducePrograms are the directories whose programs the jobs of serve
// may run again (--allow-reproduce): a trace's header names the command to
// run, so a server that ran any would run whatever a client wrote there.
type reproducePrograms struct {
	dirs []string // absolute
}

func newReproducePrograms(dirs []string) (*reproducePrograms, error) {
	p := &reproducePrograms{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--allow-reproduce %s: %v", d, err)}
		}
		info, err := os.Stat(abs)
		if err != nil {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--allow-reproduce: %v", err)}
		}
		if !info.IsDir() {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--allow-reproduce %s: not a directory", d)}
		}
		p.dirs = append(p.dirs, abs)
	}
	return p, nil
}

// recordedProgram is the program that reproduce starts for a recording:
// the first word of its command, relative to the recorded working
// directory, or looked up in PATH when it has no slash.
func recordedProgram(rec reproduce.Recording) string {
	prog := rec.Argv[0]
	switch {
	case !strings.Contains(prog, "/"):
		if p, err := exec.LookPath(prog); err == nil {
			prog = p
		}
	case !filepath.IsAbs(prog) && rec.Dir != "":
		prog = filepath.Join(rec.Dir, prog)
	}
	if abs, err := filepath.Abs(prog); err == nil {
		prog = abs
	}
	return prog
}

// under reports whether path lies under one of the directories (or under
// what a directory's symbolic links lead to).
func (p *reproducePrograms) under(path string) bool {
	for _, d := range p.dirs {
		cands := []string{d}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			cands = append(cands, real)
		}
		for _, c := range cands {
			rel, err := filepath.Rel(c, path)
			if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// recording reads the header of a trace and the program it names.
func (p *reproducePrograms) recording(trace string) (reproduce.Recording, string, error) {
	rec, err := reproduce.ReadRecording(trace)
	if err != nil {
		return rec, "", &predict.UsageError{Msg: err.Error()}
	}
	if len(rec.Argv) == 0 {
		return rec, "", &predict.UsageError{Msg: "the trace's header names no program (no \"# argv:\" line): only a trace written by mcpredict record can be reproduced"}
	}
	prog := recordedProgram(rec)
	if !p.under(prog) {
		return rec, prog, &predict.UsageError{Msg: fmt.Sprintf("the trace's program %s is not under a directory this server runs programs from (mcpredict serve --allow-reproduce)", prog)}
	}
	return rec, prog, nil
}

// check is service.Config.CheckReproduce: at submission, the trace names a
// program under the directories. Whether it is there is said when the
// job's directed runs start.
func (p *reproducePrograms) check(trace string) error {
	_, _, err := p.recording(trace)
	return err
}

// runnable says why the program of a trace cannot be run here, as the
// job's directed runs start: missing, not a regular executable file, led
// out of the directories by a symbolic link, or its recorded working
// directory missing.
func (p *reproducePrograms) runnable(trace string) error {
	rec, prog, err := p.recording(trace)
	if err != nil {
		return err
	}
	info, err := os.Stat(prog)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the recorded program %s is not on this server: it must be at the path it was recorded at (the trace's header: %s)", prog, strings.Join(rec.Argv, " "))
	case err != nil:
		return fmt.Errorf("the recorded program %s: %w", prog, err)
	case !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("the recorded program %s is not an executable file", prog)
	}
	if real, err := filepath.EvalSymlinks(prog); err != nil || !p.under(real) {
		return fmt.Errorf("the recorded program %s leads out of the directories this server runs programs from (mcpredict serve --allow-reproduce)", prog)
	}
	if rec.Dir != "" {
		if info, err := os.Stat(rec.Dir); err != nil || !info.IsDir() {
			return fmt.Errorf("the recorded working directory %s of %s is not on this server", rec.Dir, prog)
		}
	}
	return nil
}

// serveReproduce is service.Config.Reproduce: what `mcpredict reproduce
// --report` does (and batch --reproduce, reproduceTrace), with the job's
// options on the server's check flags, reproduce's defaults but the
// job's budget and directory, and the job's assembled report as the
// candidates. Its warnings go to the server's log.
func serveReproduce(p *reproducePrograms, jobFlags func(service.JobOptions) (checkFlags, analysisFlags), inf inputFlags, log *slog.Logger) func(context.Context, service.ReproduceRequest) (*bugs.Report, error) {
	return func(ctx context.Context, r service.ReproduceRequest) (*bugs.Report, error) {
		if err := p.runnable(r.Trace); err != nil {
			return nil, err
		}
		c, a := jobFlags(r.Options)
		in := inf
		if r.Options.InputFormat != "" {
			in.format = r.Options.InputFormat
		}
		var rf reproduceFlags
		rf.register(flag.NewFlagSet("reproduce", flag.ContinueOnError)) // its defaults
		rf.budget, rf.outDir = r.Budget, r.OutDir
		rf.reportPath = filepath.Join(r.OutDir, "predicted.json")
		if err := atomicfile.Write(rf.reportPath, 0o644, func(w io.Writer) error { return bugs.WriteJSON(w, r.Report) }); err != nil {
			return nil, err
		}
		lw := &logLines{log: log, job: r.Job}
		defer lw.flush()
		return reproduceTrace(ctx, r.Trace, nil, &c, &a, &in, &rf, 1, true, lw)
	}
}

// logLines writes each line written to it to the log, as a warning of a
// job's reproduce.
type logLines struct {
	log *slog.Logger
	job string
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil { // no newline yet: keep it
			l.buf.Reset()
			l.buf.WriteString(line)
			return len(b), nil
		}
		l.emit(line)
	}
}

func (l *logLines) emit(line string) {
	if line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "mcpredict reproduce: ")); line != "" {
		l.log.Warn("reproduce", "job", l.job, "msg", line)
	}
}

func (l *logLines) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(l.buf.String())
	l.buf.Reset()
}
