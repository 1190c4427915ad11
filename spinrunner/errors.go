package spinrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Stages of a check, as they appear in ToolError.Stage and TimeoutError.Stage.
const (
	StageLTL    = "spin -f" // an ltl block's never claim (claims.go)
	StageSpin   = "spin -a"
	StageCC     = "gcc"
	StagePan    = "pan"
	StageReplay = "replay"
)

// Conditions under which pan's answer cannot be trusted. They are returned
// wrapped in a *ToolError (stage "pan"); test them with errors.Is. A search
// that stopped early proves nothing, so it is never reported as "no violation".
var (
	ErrDepthTooSmall = errors.New("search truncated: max search depth too small")
	ErrMemoryLimit   = errors.New("search incomplete: memory limit reached")
	ErrIncomplete    = errors.New("search not completed")
	ErrUnknownClaim  = errors.New("claim not defined in the model")
	// ErrModelAssertion: the counterexample pan found violates an assert()
	// of the model itself, not the claim being checked.
	ErrModelAssertion = errors.New("an assertion of the model failed")
)

// maxOutputLines bounds the tool output kept in a ToolError so that a
// compiler error storm stays readable in a report.
const maxOutputLines = 40

// ToolError reports a failure of spin, gcc or pan on one model, with the
// tool's output.
type ToolError struct {
	Model  string // Model.Name
	Stage  string // StageSpin, StageCC, StagePan or StageReplay
	Claim  string // the claim being checked (stages pan and replay)
	Cmd    string // the command line
	Output string // the tool's combined stdout and stderr, trimmed to about 40 lines
	Err    error  // the exit status or one of the Err* conditions above
}

func (e *ToolError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %q: %s", e.Model, e.Stage)
	if e.Claim != "" {
		fmt.Fprintf(&b, " (claim %s)", e.Claim)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Cmd != "" {
		fmt.Fprintf(&b, "\n  command: %s", e.Cmd)
	}
	if e.Output != "" {
		b.WriteString("\n  output:")
		for _, l := range strings.Split(e.Output, "\n") {
			b.WriteString("\n    ")
			b.WriteString(l)
		}
	}
	return b.String()
}

func (e *ToolError) Unwrap() error { return e.Err }

// TimeoutError reports that a model exceeded Options.Timeout. errors.Is(err,
// context.DeadlineExceeded) holds for it.
type TimeoutError struct {
	Model   string
	Stage   string // the stage that was running when time ran out
	Claim   string // the claim being checked, if any
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	claim := ""
	if e.Claim != "" {
		claim = " claim " + e.Claim
	}
	return fmt.Sprintf("model %q: timed out after %v (during %s%s)", e.Model, e.Timeout, e.Stage, claim)
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// trimOutput keeps the head and the tail of long tool output: the first
// lines hold the first error (spin, gcc), the last ones pan's verdict.
func trimOutput(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= maxOutputLines {
		return s
	}
	half := maxOutputLines / 2
	kept := make([]string, 0, maxOutputLines+1)
	kept = append(kept, lines[:half]...)
	kept = append(kept, fmt.Sprintf("… (%d lines omitted) …", len(lines)-2*half))
	kept = append(kept, lines[len(lines)-half:]...)
	return strings.Join(kept, "\n")
}
