package recorder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// rtSources are the runtime's C sources, compiled on the user's machine so
// that mcpredict needs no prebuilt binary and no install step.
//
//go:embed rt/mcprec.c rt/mcprec_wrap.c rt/mcprec_sched.c rt/mcprec.h
var rtSources embed.FS

// RuntimeEnv names an environment variable that points `mcpredict cc` at
// a prebuilt runtime library instead of building one into the cache.
const RuntimeEnv = "MCPREDICT_RUNTIME"

// TraceDirEnv is the environment variable that turns recording on in a
// program built with mcpredict cc: the raw log is written into that
// directory.
const TraceDirEnv = "MCPREDICT_TRACE_DIR"

// FuncsEnv set to 0 turns the recording of Enter/Exit off.
const FuncsEnv = "MCPREDICT_FUNCS"

// runtimeCFlags compile the runtime: optimised, never instrumented, and
// position independent for the PIE executables gcc makes by default (-fPIE
// rather than -fPIC so that its thread-local state is a plain %fs access),
// with frame pointers: the access hooks find the program's frame through
// their own (see describe_frame in rt/mcprec.c).
func runtimeCFlags() []string {
	return []string{"-O2", "-g", "-fPIE", "-fno-sanitize=all", "-fno-stack-protector", "-fno-omit-frame-pointer", "-Wall"}
}

// RuntimeLib returns the path of the recorder runtime library
// (libmcprec.a), building it from the embedded sources into cacheDir if
// that has not been done yet for these sources and this compiler. The
// runtime is C: a C++ driver (g++, clang++, c++) builds it through its C
// counterpart (gcc, clang, cc), or itself with -x c when that is not
// installed. The build is atomic: concurrent callers never see a partial
// library.
func RuntimeLib(ctx context.Context, compiler, cacheDir string) (string, error) {
	if p := os.Getenv(RuntimeEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", RuntimeEnv, p, err)
		}
		return p, nil
	}
	compiler, lang := runtimeCompiler(compiler)
	if _, err := exec.LookPath(compiler); err != nil {
		return "", fmt.Errorf("%s not found: install it (Debian: apt-get install gcc g++, or clang): %w", compiler, err)
	}
	ver, err := exec.CommandContext(ctx, compiler, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", compiler, err)
	}
	flags := append(runtimeCFlags(), lang...)
	h := sha256.New()
	h.Write(ver)
	h.Write([]byte(strings.Join(flags, " ")))
	err = fs.WalkDir(rtSources, "rt", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := rtSources.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(cacheDir, "rt-"+key)
	lib := filepath.Join(dir, "libmcprec.a")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"mcprec.c", "mcprec_wrap.c", "mcprec_sched.c", "mcprec.h"} {
		b, err := rtSources.ReadFile("rt/" + name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = tmp
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the recorder runtime: %s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return nil
	}
	for _, src := range []string{"mcprec.c", "mcprec_wrap.c", "mcprec_sched.c"} {
		args := append(flags[:len(flags):len(flags)], "-c", src, "-o", strings.TrimSuffix(src, ".c")+".o")
		if err := run(compiler, args...); err != nil {
			return "", err
		}
	}
	if err := run("ar", "rcs", "libmcprec.a", "mcprec.o", "mcprec_wrap.o", "mcprec_sched.o"); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process built it first: use theirs.
		if _, statErr := os.Stat(lib); statErr == nil {
			return lib, nil
		}
		return "", err
	}
	return lib, nil
}

// runtimeCompiler returns the driver that builds the runtime for the
// program's compiler, and the options that make it compile C: the C
// counterpart of a C++ driver when it is installed, or the C++ driver
// with -x c.
func runtimeCompiler(compiler string) (string, []string) {
	if compiler == "" {
		return "gcc", nil
	}
	if !isCxxDriver(compiler) {
		return compiler, nil
	}
	if c := cDriver(compiler); c != "" {
		if _, err := exec.LookPath(c); err == nil {
			return c, nil
		}
	}
	return compiler, []string{"-x", "c"}
}

// DefaultCacheDir is where RuntimeLib builds the runtime unless told
// otherwise: the user's cache directory.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		// No $HOME (a CI container): the temporary directory is
		// as good a cache as any.
		return filepath.Join(os.TempDir(), "mcpredict-cache")
	}
	return filepath.Join(d, "mcpredict")
}
