package reproduce

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Recording is what a recorded trace's header says about the run: the
// command and where it ran, how it ended, and the objects its code is in.
type Recording struct {
	Trace   string   // the trace file
	Argv    []string // the command line (argv: header, else program:)
	Dir     string   // its working directory ("" if the header has none)
	Exe     string   // the recorded executable
	Modules []string // the shared objects it loaded
	Ended   string   // "exit status 0", "killed by signal 6 (aborted)", ...
	Build   string   // the executable's build id when it was recorded (recorder.BuildID)
	Stdin   string   // the copy of the standard input the run read ("" none)
	// Elapsed is how long the recorded run took (0: the header does not
	// say).
	Elapsed time.Duration
}

// ExitCode is the recorded exit status, -1 for a signal or an unknown end.
func (r Recording) ExitCode() int { return exitCodeOf(r.Ended) }

var exitStatusRE = regexp.MustCompile(`^exit status (\d+)`)

func exitCodeOf(ended string) int {
	if m := exitStatusRE.FindStringSubmatch(ended); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}

// Objects are the ELF objects to look up source lines in: the executable
// first.
func (r Recording) Objects() []string {
	var out []string
	if r.Exe != "" {
		out = append(out, r.Exe)
	}
	return append(out, r.Modules...)
}

// openTrace opens a trace file, gzip-compressed or not.
func openTrace(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return struct {
			io.Reader
			io.Closer
		}{zr, f}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil
}

// ReadRecording reads the header comments of a trace written by mcpredict
// record. A trace without a command (a Pin trace, a trace recorded before
// the header had argv) is an error that says to give the command.
func ReadRecording(path string) (Recording, error) {
	rec := Recording{Trace: path}
	rc, err := openTrace(path)
	if err != nil {
		return rec, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	program := ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break // the events start: the header is over
		}
		key, val, _ := strings.Cut(strings.TrimSpace(line[1:]), ": ")
		switch key {
		case "argv":
			if err := json.Unmarshal([]byte(val), &rec.Argv); err != nil {
				return rec, fmt.Errorf("trace %s:%d: bad argv header: %v", path, n, err)
			}
		case "program":
			program = val
		case "cwd":
			rec.Dir = val
		case "exe":
			rec.Exe = val
		case "module":
			rec.Modules = append(rec.Modules, val)
		case "ended":
			rec.Ended = val
		case "build":
			rec.Build = val
		case "stdin":
			rec.Stdin = val
		case "elapsed":
			rec.Elapsed, _ = time.ParseDuration(val)
		}
	}
	if err := sc.Err(); err != nil {
		return rec, fmt.Errorf("trace %s: %w", path, err)
	}
	if len(rec.Argv) == 0 && program != "" {
		rec.Argv = strings.Fields(program)
	}
	return rec, nil
}

// RunTimeout is the default time limit of a directed run of this
// recording: 20 times the recorded run, at least 10 s and at most a minute
// (a minute when the header does not say). A schedule that makes the
// program hang (a deadlock it holds a thread into) then costs seconds, not
// a minute per run.
func (r Recording) RunTimeout() time.Duration {
	if r.Elapsed <= 0 {
		return time.Minute
	}
	return min(max(20*r.Elapsed, 10*time.Second), time.Minute)
}
