package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// CCOptions configure CompileCommands.
type CCOptions struct {
	// Compiler is the gcc or clang driver to run; "" picks g++ when a
	// source file is C++, gcc otherwise. A link with C++ inputs (sources,
	// or objects and static libraries that refer to the C++ runtime) is
	// made by its C++ counterpart (g++ for gcc, clang++ for clang).
	Compiler string
	// Clang selects clang's instrumentation flags (isClang of the
	// driver).
	Clang bool
	// Runtime is the path of the recorder runtime library (RuntimeLib).
	Runtime string
	// TempDir receives the objects of a command that compiles and links
	// in one step, and the assembly of the files rewritten for
	// AllocFuncs.
	TempDir string
	// AllocFuncs are the program's own allocation and deallocation
	// functions (--alloc-func, --free-func). A C or C++ file compiled
	// with -c, or in a one-step build, is compiled to assembly, the
	// definitions of these functions in it are renamed and wrapped (see
	// rewriteAsm), and the result is assembled.
	AllocFuncs []AllocFunc
}

// RewriteStep is the first word of the pseudo-command, among those that
// CompileCommands returns, that rewrites an assembly file for AllocFuncs
// (CC runs it in-process): RewriteStep FILE.s SPEC...
const RewriteStep = "mcpredict-rewrite-asm"

// instrumentFlags are added to every compilation. ThreadSanitizer's
// instrumentation gives the hooks; trace-cmp gives the operands of every
// comparison and switch, from which the runtime tells the reads whose value
// steers the thread from those it only uses as data (DataRead); frame
// pointers let the runtime find the frame of a stack access (the converter
// names it from that function's DWARF locals); -g gives the line tables and
// variable types the converter reads (added only if the user chose no -g
// level).
func instrumentFlags(args []string, clang bool) []string {
	return append(sanitizeFlags(clang), frameFlags(args)...)
}

// sanitizeFlags are the instrumentation proper, for compilations only: on
// a link, gcc's and clang's -fsanitize=thread would link their own
// runtime. clang needs two more things. Its trace-cmp needs a coverage
// kind besides: func with trace-pc-guard is one call of an empty runtime
// function per function entry (clang 14's inline-bool-flag and
// inline-8bit-counters would be cheaper, but its ThreadSanitizer pass
// instruments their stores, which would be recorded as accesses). And its
// ThreadSanitizer pass leaves out a load followed by a store to the same
// address in the same basic block (x++ would be one Write, and the
// predictor would never see the read of a lost update), unless told
// -tsan-instrument-read-before-write.
func sanitizeFlags(clang bool) []string {
	if clang {
		return []string{"-fsanitize=thread", "-fsanitize-coverage=func,trace-pc-guard,trace-cmp",
			"-mllvm", "-tsan-instrument-read-before-write"}
	}
	return []string{"-fsanitize=thread", "-fsanitize-coverage=trace-cmp"}
}

// scalarFlags follow the user's options on a compilation, since a later
// -O level turns clang's vectorizers on again. clang vectorizes before its
// ThreadSanitizer pass, at -O2 and -O3 (autotools' default CFLAGS are
// -g -O2): a loop that reads an array with vector loads wider than 16
// bytes is not recorded at all (the pass instruments accesses of 1 to 16
// bytes), and two adjacent fields copied together are one 16-byte access
// of both, which is never a DataRead. gcc instruments before it
// vectorizes; these keep clang's accesses scalar too.
func scalarFlags(clang bool) []string {
	if clang {
		return []string{"-fno-vectorize", "-fno-slp-vectorize"}
	}
	return nil
}

// frameFlags are the frame pointers and the debug information.
func frameFlags(args []string) []string {
	flags := []string{"-fno-omit-frame-pointer"}
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
//
// The runtime's entry points for the --alloc-func wrappers are exported,
// so that wrappers in shared libraries, even those loaded with dlopen,
// find them.
func linkFlags(runtime string) []string {
	return []string{runtime, "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset",
		"-Wl,--export-dynamic-symbol=__mcprec_ufn_*", "-lpthread", "-ldl"}
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
		case a == "-fomit-frame-pointer":
			continue // the runtime needs frame pointers
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
		if len(opts.AllocFuncs) == 0 || !onlyC(args) {
			cmd := append([]string{compiler}, instrumentFlags(args, opts.Clang)...)
			cmd = append(cmd, flat(nil)...)
			return [][]string{append(cmd, scalarFlags(opts.Clang)...)}, nil
		}
		// Each source through assembly, into its object.
		if opts.TempDir == "" {
			return nil, errors.New("no directory for the assembly of --alloc-func")
		}
		var flags []string
		out := ""
		for _, p := range parsed {
			switch {
			case p.source:
			case p.args[0] == "-o":
				out = p.args[1]
			case p.args[0] == "-c":
			default:
				flags = append(flags, p.args...)
			}
		}
		var cmds [][]string
		n := 0
		for _, p := range parsed {
			if !p.source {
				continue
			}
			n++
			obj := out
			if obj == "" || inputs > 1 {
				src := p.args[0]
				obj = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ".o"
			}
			cmds = append(cmds, viaAssembly(compiler, args, flags, p, obj, n, opts)...)
		}
		return cmds, nil
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
	// A link of C++ code needs the C++ driver, which adds libstdc++ (or
	// libc++): that of the sources, or of objects and static libraries
	// compiled by another command (the link step of CMake and make).
	linker := compiler
	var cxxLibs []string
	if !isCxxDriver(compiler) && (cxx || inputsNeedCxx(linkInputs(parsed))) {
		if linker = cxxDriver(compiler); linker == "" {
			linker, cxxLibs = compiler, []string{"-lstdc++"}
		}
	}
	link := []string{linker}
	nsrc := 0
	for _, p := range parsed {
		if !p.source {
			link = append(link, p.args...)
			continue
		}
		src := p.args[0]
		nsrc++
		obj := filepath.Join(opts.TempDir, fmt.Sprintf("%d-%s.o", nsrc, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))))
		if len(opts.AllocFuncs) > 0 {
			cmds = append(cmds, viaAssembly(compiler, args, compileFlags, p, obj, nsrc, opts)...)
		} else {
			cmd := append([]string{compiler}, instrumentFlags(args, opts.Clang)...)
			cmd = append(cmd, compileFlags...)
			cmd = append(cmd, scalarFlags(opts.Clang)...)
			if p.lang != "" {
				cmd = append(cmd, "-x", p.lang)
			}
			cmd = append(cmd, "-c", src, "-o", obj)
			cmds = append(cmds, cmd)
		}
		if p.lang != "" {
			link = append(link, "-x", "none")
		}
		link = append(link, obj)
	}
	if nsrc > 0 && opts.TempDir == "" {
		return nil, errors.New("no directory for the objects of a one-step build")
	}
	if shared {
		// The flags without the instrumentation itself: a shared
		// library's link must not pull in libtsan.
		link = append(link, frameFlags(args)...)
	} else {
		link = append(link, linkFlags(opts.Runtime)...)
	}
	return append(cmds, append(link, cxxLibs...)), nil
}

// linkInputs are the files of a link that are not sources: objects,
// libraries, @response files.
func linkInputs(parsed []ccArg) []string {
	var in []string
	for _, p := range parsed {
		if !p.source && len(p.args) == 1 && p.args[0] != "-" && !strings.HasPrefix(p.args[0], "-") {
			in = append(in, p.args[0])
		}
	}
	return in
}

// onlyC reports whether a compile-only command compiles to objects (-c),
// rather than preprocessing, writing assembly or dependencies only.
func onlyC(args []string) bool {
	c := false
	for _, a := range args {
		switch a {
		case "-S", "-E", "-M", "-MM", "-flto":
			return false
		case "-c":
			c = true
		}
	}
	return c
}

// viaAssembly compiles one source to assembly, rewrites it for
// opts.AllocFuncs and assembles it into obj. flags are the command's
// options (without -c, -o and the inputs).
func viaAssembly(compiler string, args, flags []string, p ccArg, obj string, n int, opts CCOptions) [][]string {
	src := p.args[0]
	asm := filepath.Join(opts.TempDir, fmt.Sprintf("%d-%s.s", n, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))))
	cmd := append([]string{compiler}, instrumentFlags(args, opts.Clang)...)
	cmd = append(cmd, flags...)
	cmd = append(cmd, scalarFlags(opts.Clang)...)
	// Dependency files keep the names and targets they would have had.
	has := func(names ...string) bool {
		for _, f := range flags {
			for _, n := range names {
				if f == n {
					return true
				}
			}
		}
		return false
	}
	if has("-MD", "-MMD") {
		if !has("-MF") {
			cmd = append(cmd, "-MF", strings.TrimSuffix(obj, filepath.Ext(obj))+".d")
		}
		if !has("-MT", "-MQ") {
			cmd = append(cmd, "-MT", obj)
		}
	}
	if p.lang != "" {
		cmd = append(cmd, "-x", p.lang)
	}
	cmd = append(cmd, "-S", src, "-o", asm)
	rewrite := []string{RewriteStep, asm}
	for _, f := range opts.AllocFuncs {
		rewrite = append(rewrite, f.spec())
	}
	as := []string{compiler}
	for _, f := range flags {
		if strings.HasPrefix(f, "-m") || strings.HasPrefix(f, "-Wa,") || strings.HasPrefix(f, "-B") || strings.HasPrefix(f, "--sysroot") {
			as = append(as, f)
		}
	}
	as = append(as, "-x", "assembler", "-c", asm, "-o", obj)
	return [][]string{cmd, rewrite, as}
}

// spec is the form of f that RewriteStep takes: alloc:NAME:ARG or
// free:NAME:ARG.
func (f AllocFunc) spec() string {
	kind := "alloc"
	if f.Free {
		kind = "free"
	}
	return fmt.Sprintf("%s:%s:%d", kind, f.Name, f.Arg)
}

func parseSpec(s string) (AllocFunc, error) {
	kind, rest, _ := strings.Cut(s, ":")
	name, arg, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(arg)
	if err != nil || (kind != "alloc" && kind != "free") {
		return AllocFunc{}, fmt.Errorf("%s: bad function spec %q", RewriteStep, s)
	}
	return AllocFunc{Name: name, Free: kind == "free", Arg: n}, nil
}

// runRewrite runs a RewriteStep pseudo-command.
func runRewrite(c []string, verbose bool, stderr io.Writer) error {
	if len(c) < 2 {
		return fmt.Errorf("%s: no file", RewriteStep)
	}
	var funcs []AllocFunc
	for _, s := range c[2:] {
		f, err := parseSpec(s)
		if err != nil {
			return err
		}
		funcs = append(funcs, f)
	}
	done, err := rewriteAsm(c[1], funcs)
	if err != nil {
		return err
	}
	if verbose && len(done) > 0 {
		fmt.Fprintf(stderr, "mcpredict cc: wrapped %s\n", strings.Join(done, ", "))
	}
	return nil
}

// CC runs a gcc command line with recording (see CompileCommands),
// building the runtime into cacheDir first if needed. The commands'
// output goes to stdout and stderr; with verbose, each command is printed
// to stderr before it runs.
func CC(ctx context.Context, args []string, compiler, cacheDir string, verbose bool, stdout, stderr io.Writer) error {
	return CCWith(ctx, args, CCOptions{Compiler: compiler}, cacheDir, verbose, stdout, stderr)
}

// CCWith is CC with options: opts.Compiler, opts.Clang (also set when
// isClang of the compiler) and opts.AllocFuncs are used (the runtime and
// the temporary directory are CC's).
func CCWith(ctx context.Context, args []string, opts CCOptions, cacheDir string, verbose bool, stdout, stderr io.Writer) error {
	compiler := opts.Compiler
	tmp, err := os.MkdirTemp("", "mcpredict-cc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	lib, err := RuntimeLib(ctx, compiler, cacheDir)
	if err != nil {
		return err
	}
	clang := opts.Clang || compiler != "" && isClang(ctx, compiler)
	cmds, err := CompileCommands(args, CCOptions{Compiler: compiler, Clang: clang, Runtime: lib, TempDir: tmp, AllocFuncs: opts.AllocFuncs})
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if verbose {
			fmt.Fprintln(stderr, "+ "+strings.Join(c, " "))
		}
		if c[0] == RewriteStep {
			if err := runRewrite(c, verbose, stderr); err != nil {
				return err
			}
			continue
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
