package recorder

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// AllocFunc is a function of the program that hands out or takes back
// memory it manages itself (a memory pool, a free list, a slab
// allocator), named with mcpredict cc --alloc-func or --free-func. The
// recorder records its calls as Alloc and Free, so that memory reused for
// another object becomes another variable.
type AllocFunc struct {
	Name string // the symbol (C name; the mangled name for C++)
	Free bool   // a deallocation function
	// Arg is the 1-based argument holding the size (allocation; 0: the
	// size is not an argument) or the pointer (deallocation).
	Arg int
}

func (f AllocFunc) String() string {
	kind := "alloc"
	if f.Free {
		kind = "free"
	}
	return fmt.Sprintf("%s-func %s:%d", kind, f.Name, f.Arg)
}

// AllocFuncsEnv and FreeFuncsEnv list allocation and deallocation
// functions (comma-separated NAME[:ARG]) for mcpredict cc, in addition to
// its --alloc-func and --free-func options: a build system then needs no
// change but CC="mcpredict cc".
const (
	AllocFuncsEnv = "MCPREDICT_ALLOC_FUNCS"
	FreeFuncsEnv  = "MCPREDICT_FREE_FUNCS"
)

var symbolRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.$]*$`)

// maxWrappedArgs is the number of integer argument registers the wrapper
// forwards (x86-64 System V).
const maxWrappedArgs = 6

// ParseAllocFunc parses NAME[:ARG]: for an allocation function ARG is the
// argument that holds the size (default 0: none; the block then extends
// to the next one), for a deallocation function the argument that holds
// the pointer (default 1).
func ParseAllocFunc(spec string, free bool) (AllocFunc, error) {
	name, argText, hasArg := strings.Cut(strings.TrimSpace(spec), ":")
	f := AllocFunc{Name: name, Free: free}
	if free {
		f.Arg = 1
	}
	what := "--alloc-func"
	if free {
		what = "--free-func"
	}
	if !symbolRE.MatchString(name) {
		return f, fmt.Errorf("%s %q: want a function name, optionally followed by :N", what, spec)
	}
	if hasArg {
		n, err := strconv.Atoi(argText)
		lo := 0
		if free {
			lo = 1
		}
		if err != nil || n < lo || n > maxWrappedArgs {
			return f, fmt.Errorf("%s %q: the argument number must be %d to %d", what, spec, lo, maxWrappedArgs)
		}
		f.Arg = n
	}
	return f, nil
}

// ParseAllocFuncList parses a comma-separated list of NAME[:ARG].
func ParseAllocFuncList(list string, free bool) ([]AllocFunc, error) {
	var out []AllocFunc
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		f, err := ParseAllocFunc(s, free)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// realPrefix is the prefix the definition of a wrapped function gets; the
// converter removes it from function names.
const realPrefix = "__mcprec_real_"

// rewriteAsm renames, in an assembly file that gcc or clang wrote, the definitions
// of the named functions to __mcprec_real_NAME and appends for each a
// wrapper named NAME that calls it and tells the recorder runtime. Every
// call to NAME — from this file, other files, other libraries — then goes
// through the wrapper; only calls the compiler inlined or turned into a
// call of a clone (NAME.constprop.0) do not. The definition keeps its
// binding (.globl, .weak and visibility directives name NAME, so they now
// apply to the wrapper), and the renamed function is local to the object.
// It reports which functions the file defined.
func rewriteAsm(path string, funcs []AllocFunc) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var done []string
	var wrappers bytes.Buffer
	for _, f := range funcs {
		label := f.Name + ":"
		real := realPrefix + f.Name
		found := false
		for i, l := range lines {
			// gcc's lines, and clang's: a comment after the label,
			// no space in .type, the end of the function a label.
			switch {
			case l == label || strings.HasPrefix(l, label+" ") || strings.HasPrefix(l, label+"\t"):
				lines[i] = real + l[len(f.Name):]
				found = true
			case l == "\t.type\t"+f.Name+", @function" || l == "\t.type\t"+f.Name+",@function":
				lines[i] = "\t.type\t" + real + ", @function"
			case l == "\t.size\t"+f.Name+", .-"+f.Name:
				lines[i] = "\t.size\t" + real + ", .-" + real
			case strings.HasPrefix(l, "\t.size\t"+f.Name+", .L") && strings.HasSuffix(l, "-"+f.Name):
				end := strings.TrimSuffix(strings.TrimPrefix(l, "\t.size\t"+f.Name+", "), "-"+f.Name)
				lines[i] = "\t.size\t" + real + ", " + end + "-" + real
			}
		}
		if !found {
			continue
		}
		done = append(done, f.Name)
		wrappers.WriteString(wrapperAsm(f))
	}
	if len(done) == 0 {
		return nil, nil
	}
	out := strings.Join(lines, "\n")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += wrappers.String()
	return done, os.WriteFile(path, []byte(out), 0o644)
}

// wrapperAsm is the x86-64 wrapper of one function. It saves the six
// integer argument registers, %rax (the vector count of a variadic call)
// and %xmm0-7, so that the real function gets its arguments unchanged
// after the call into the runtime; arguments passed on the stack (a
// seventh integer argument) are not supported. The runtime's functions
// are weak references, called only when linked in.
func wrapperAsm(f AllocFunc) string {
	regs := []string{"%rdi", "%rsi", "%rdx", "%rcx", "%r8", "%r9"}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	saveArgs := func() {
		for i, r := range regs {
			p("\tmovq\t%s, %d(%%rbp)", r, -8*(i+1))
		}
		p("\tmovq\t%%rax, -56(%%rbp)")
		for i := 0; i < 8; i++ {
			p("\tmovdqu\t%%xmm%d, %d(%%rbp)", i, -80-16*i)
		}
	}
	restoreArgs := func() {
		for i, r := range regs {
			p("\tmovq\t%d(%%rbp), %s", -8*(i+1), r)
		}
		p("\tmovq\t-56(%%rbp), %%rax")
		for i := 0; i < 8; i++ {
			p("\tmovdqu\t%d(%%rbp), %%xmm%d", -80-16*i, i)
		}
	}
	saveResult := func() {
		p("\tmovq\t%%rax, -200(%%rbp)")
		p("\tmovq\t%%rdx, -208(%%rbp)")
		p("\tmovdqu\t%%xmm0, -224(%%rbp)")
		p("\tmovdqu\t%%xmm1, -240(%%rbp)")
	}
	restoreResult := func() {
		p("\tmovq\t-200(%%rbp), %%rax")
		p("\tmovq\t-208(%%rbp), %%rdx")
		p("\tmovdqu\t-224(%%rbp), %%xmm0")
		p("\tmovdqu\t-240(%%rbp), %%xmm1")
	}
	// callHook calls a weak runtime function if it is linked in; label is
	// a numeric local label that skips the call.
	callHook := func(hook string, label int, setup func()) {
		p("\tmovq\t%s@GOTPCREL(%%rip), %%r11", hook)
		p("\ttestq\t%%r11, %%r11")
		p("\tje\t%df", label)
		if setup != nil {
			setup()
		}
		p("\tcall\t*%%r11")
		p("%d:", label)
	}
	name := f.Name
	p("# mcpredict: the wrapper of %s (%s)", name, f)
	for _, h := range []string{"__mcprec_ufn_enter", "__mcprec_ufn_alloc", "__mcprec_ufn_free", "__mcprec_ufn_leave"} {
		p("\t.weak\t%s", h)
	}
	p("\t.text")
	p("\t.p2align 4")
	p("\t.type\t%s, @function", name)
	p("%s:", name)
	p("0:")
	p("\t.cfi_startproc")
	p("\tpushq\t%%rbp")
	p("\t.cfi_def_cfa_offset 16")
	p("\t.cfi_offset 6, -16")
	p("\tmovq\t%%rsp, %%rbp")
	p("\t.cfi_def_cfa_register 6")
	p("\tsubq\t$240, %%rsp")
	saveArgs()
	if f.Free {
		callHook("__mcprec_ufn_free", 1, func() {
			p("\tmovq\t%d(%%rbp), %%rdi", -8*f.Arg)
			p("\tmovq\t8(%%rbp), %%rsi")
		})
	} else {
		callHook("__mcprec_ufn_enter", 1, nil)
	}
	restoreArgs()
	p("\tcall\t%s%s", realPrefix, name)
	saveResult()
	if f.Free {
		callHook("__mcprec_ufn_leave", 2, nil)
	} else {
		callHook("__mcprec_ufn_alloc", 2, func() {
			p("\tmovq\t%%rax, %%rdi")
			if f.Arg > 0 {
				p("\tmovq\t%d(%%rbp), %%rsi", -8*f.Arg)
			} else {
				p("\tmovq\t$-1, %%rsi")
			}
			p("\tmovq\t8(%%rbp), %%rdx")
			p("\tleaq\t0b(%%rip), %%rcx")
		})
	}
	restoreResult()
	p("\tleave")
	p("\t.cfi_def_cfa 7, 8")
	p("\tret")
	p("\t.cfi_endproc")
	p("\t.size\t%s, .-%s", name, name)
	return b.String()
}
