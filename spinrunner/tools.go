package spinrunner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Environment variables that override the PATH lookup of the tools.
const (
	EnvSpin = "MCPREDICT_SPIN"
	EnvCC   = "MCPREDICT_CC"
)

// installHint is appended to every MissingToolError: the tools come from
// Debian packages, not from Go modules, so the fix is outside this program.
const installHint = "install it with `sudo apt-get install spin gcc`, or run `make setup`"

// Tools holds the resolved absolute paths of the external programs.
type Tools struct {
	Spin string // the Spin model checker (spin -a, spin -t)
	CC   string // the C compiler used for pan.c and for Spin's preprocessing
}

// MissingToolError reports that spin or the C compiler could not be found.
type MissingToolError struct {
	Tool string // "spin" or "gcc"
	Env  string // the override variable, e.g. MCPREDICT_SPIN
	Path string // the value of Env when it was set, else ""
	Err  error  // the lookup failure
}

func (e *MissingToolError) Error() string {
	where := "in PATH"
	if e.Path != "" {
		where = fmt.Sprintf("at %s=%s", e.Env, e.Path)
	}
	return fmt.Sprintf("%s not found %s (%v); %s", e.Tool, where, e.Err, installHint)
}

func (e *MissingToolError) Unwrap() error { return e.Err }

// FindTools locates spin and gcc. $MCPREDICT_SPIN and $MCPREDICT_CC, when
// set, name the programs (a path, or a name looked up in PATH); otherwise
// "spin" and the C compiler are looked up in PATH: tcc when it is
// installed (much faster to compile pan.c), else gcc. A tool that cannot be found gives a
// *MissingToolError that says how to install it.
func FindTools() (Tools, error) {
	spin, err := findTool("spin", EnvSpin)
	if err != nil {
		return Tools{}, err
	}
	if os.Getenv(EnvCC) == "" {
		// tcc compiles Spin's verifiers about 20 times faster than gcc,
		// which dominates the time Spin takes on our small models.
		if cc, err := findTool("tcc", ""); err == nil {
			return Tools{Spin: spin, CC: cc}, nil
		}
	}
	cc, err := findTool("gcc", EnvCC)
	if err != nil {
		return Tools{}, err
	}
	return Tools{Spin: spin, CC: cc}, nil
}

func findTool(name, env string) (string, error) {
	want := os.Getenv(env)
	prog := name
	if want != "" {
		prog = want
	}
	p, err := exec.LookPath(prog)
	if err != nil {
		return "", &MissingToolError{Tool: name, Env: env, Path: want, Err: err}
	}
	// Absolute, because every command runs in its own work directory.
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", &MissingToolError{Tool: name, Env: env, Path: want, Err: err}
	}
	return abs, nil
}
