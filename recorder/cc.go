package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CCOptions configure CompileCommands.
type CCOptions struct {
	// Compiler is the gcc driver to run; "" picks g++ when a source file
	// is C++, gcc otherwise.
	Compiler string
	// Runtime is the path of the recorder runtime library (RuntimeLib).
	Runtime string
	// TempDir receives the objects of a command that compiles and links
	// in one step.
	TempDir string
}

// instrumentFlags are added to every compilation. ThreadSanitizer's
// instrumentation gives the hooks; -g gives the line tables and variable
// types the converter reads (added only if the user chose no -g level).
func instrumentFlags(args []string) []string {
	flags := []string{"-fsanitize=thread"}
	for _, a := range args {
		if strings.HasPrefix(a, "-g") && a != "-g0" {
			return flags
		}
	}
	return append(flags, "-g")
}

// linkFlags are added to the link of an executable: the runtime instead
// of libtsan, the program's own string-function calls sent to the
// runtime's wrappers, and the libraries the runtime uses.
func linkFlags(runtime string) []string {
	return []string{runtime, "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset", "-lpthread", "-ldl"}
}

// separateArg reports whether a gcc option takes its value as the next
// argument.
func separateArg(a string) bool {
	switch a {
	case "-o", "-I", "-L", "-l", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
		"-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-x",
		"-MF", "-MT", "-MQ", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-e",
		"-z", "--param", "-aux-info", "-B", "-A", "-dumpbase", "-dumpdir":
		return true
	}
	return false
}

// linkOnly reports whether an option only matters to the link (so it is
// left out when a one-step build is split into compile commands).
func linkOnly(a string) bool {
	switch a {
	case "-o", "-shared", "-static", "-pie", "-no-pie", "-rdynamic", "-s", "-nostdlib",
		"-nodefaultlibs", "-nostartfiles", "-Xlinker", "-T", "-u", "-e", "-z", "-l", "-L":
		return true
	}
	return strings.HasPrefix(a, "-Wl,") || strings.HasPrefix(a, "-l") || strings.HasPrefix(a, "-L") ||
		strings.HasPrefix(a, "-static-")
}

func isCxxSource(name string) bool {
	switch filepath.Ext(name) {
	case ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C", ".ii":
		return true
	}
	return false
}

func isSource(name string) bool {
	switch filepath.Ext(name) {
	case ".c", ".i":
		return true
	}
	return isCxxSource(name)
}

// ccArg is one argument of a gcc command line, classified.
type ccArg struct {
	args   []string // the option and its separate value, or one input
	source bool     // a C or C++ source file to instrument
	lang   string   // the -x language in force for an input
}

// CompileCommands turns the arguments of a gcc command line into the
// commands that build the same thing with recording:
//
//   - compiling only (-c, -S, -E, -M, -MM): the same command with
//     -fsanitize=thread (and -g when no -g level is given);
//   - linking an executable: the same command without -fsanitize=thread
//     (which would link libtsan), with the recorder runtime and its
//     flags; sources on the command line are first compiled one by one
//     into TempDir, since gcc cannot instrument a compile without also
//     linking libtsan;
//   - linking a shared library (-shared): instrumented, without the
//     runtime, which the executable that loads it brings.
func CompileCommands(args []string, opts CCOptions) ([][]string, error) {
	var (
		parsed                   []ccArg
		compileOnly, shared, cxx bool
		lang                     string
		inputs                   int
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case separateArg(a):
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s: missing value", a)
			}
			if a == "-x" {
				lang = args[i+1]
				if strings.HasPrefix(lang, "c++") {
					cxx = true
				}
			}
			parsed = append(parsed, ccArg{args: args[i : i+2]})
			i++
			continue
		case a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM":
			compileOnly = true
		case a == "-shared":
			shared = true
		case a == "-fsanitize=thread":
			continue // added back where it belongs
		case strings.HasPrefix(a, "-x") && len(a) > 2:
			lang = a[2:]
			if strings.HasPrefix(lang, "c++") {
				cxx = true
			}
		case a == "-" || !strings.HasPrefix(a, "-"):
			inputs++
			src := isSource(a)
			if lang != "" && lang != "none" {
				src = lang == "c" || strings.HasPrefix(lang, "c++") || lang == "cpp-output" || lang == "c++-cpp-output"
			}
			if isCxxSource(a) {
				cxx = true
			}
			parsed = append(parsed, ccArg{args: []string{a}, source: src, lang: lang})
			continue
		}
		parsed = append(parsed, ccArg{args: []string{a}})
	}
	compiler := opts.Compiler
	if compiler == "" {
		compiler = "gcc"
		if cxx {
			compiler = "g++"
		}
	}
	if inputs == 0 {
		// gcc --version, -dumpmachine …: nothing to instrument.
		return [][]string{append([]string{compiler}, args...)}, nil
	}
	flat := func(skip func(ccArg) bool) []string {
		var out []string
		for _, p := range parsed {
			if skip == nil || !skip(p) {
				out = append(out, p.args...)
			}
		}
		return out
	}
	if compileOnly {
		cmd := append([]string{compiler}, instrumentFlags(args)...)
		return [][]string{append(cmd, flat(nil)...)}, nil
	}
	if opts.Runtime == "" && !shared {
		return nil, errors.New("no recorder runtime library given")
	}
	// Compile each source on its own, with every option that is not
	// link-only, then link the objects in the sources' places.
	var cmds [][]string
	var compileFlags []string
	for _, p := range parsed {
		if len(p.args) > 0 && strings.HasPrefix(p.args[0], "-") && p.args[0] != "-" && !linkOnly(p.args[0]) && p.args[0] != "-x" {
			compileFlags = append(compileFlags, p.args...)
		}
	}
	link := []string{compiler}
	nsrc := 0
	for _, p := range parsed {
		if !p.source {
			link = append(link, p.args...)
			continue
		}
		src := p.args[0]
		nsrc++
		obj := filepath.Join(opts.TempDir, fmt.Sprintf("%d-%s.o", nsrc, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))))
		cmd := append([]string{compiler}, instrumentFlags(args)...)
		cmd = append(cmd, compileFlags...)
		if p.lang != "" {
			cmd = append(cmd, "-x", p.lang)
		}
		cmd = append(cmd, "-c", src, "-o", obj)
		cmds = append(cmds, cmd)
		if p.lang != "" {
			link = append(link, "-x", "none")
		}
		link = append(link, obj)
	}
	if nsrc > 0 && opts.TempDir == "" {
		return nil, errors.New("no directory for the objects of a one-step build")
	}
	if shared {
		link = append(link, instrumentFlags(args)[1:]...)
	} else {
		link = append(link, linkFlags(opts.Runtime)...)
	}
	return append(cmds, link), nil
}

// CC runs a gcc command line with recording (see CompileCommands),
// building the runtime into cacheDir first if needed. The commands'
// output goes to stdout and stderr; with verbose, each command is printed
// to stderr before it runs.
func CC(ctx context.Context, args []string, compiler, cacheDir string, verbose bool, stdout, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "mcpredict-cc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	runtimeCompiler := "gcc"
	if compiler != "" {
		runtimeCompiler = compiler
	}
	lib, err := RuntimeLib(ctx, runtimeCompiler, cacheDir)
	if err != nil {
		return err
	}
	cmds, err := CompileCommands(args, CCOptions{Compiler: compiler, Runtime: lib, TempDir: tmp})
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if verbose {
			fmt.Fprintln(stderr, "+ "+strings.Join(c, " "))
		}
		cmd := exec.CommandContext(ctx, c[0], c[1:]...)
		cmd.Stdin = os.Stdin
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			return &CompileError{Cmd: c, Err: err}
		}
	}
	return nil
}

// CompileError is a compiler or linker command that failed; its own
// diagnostics have already gone to the caller's stderr.
type CompileError struct {
	Cmd []string
	Err error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s: %v", strings.Join(e.Cmd, " "), e.Err)
}

func (e *CompileError) Unwrap() error { return e.Err }
