package recorder

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestDriverNames(t *testing.T) {
	tests := []struct {
		name, c, cxx string
	}{
		{"gcc", "gcc", "g++"},
		{"g++", "gcc", "g++"},
		{"clang", "clang", "clang++"},
		{"clang++", "clang", "clang++"},
		{"cc", "cc", "c++"},
		{"c++", "cc", "c++"},
		{"gcc-12", "gcc-12", "g++-12"},
		{"clang++-14", "clang-14", "clang++-14"},
		{"/usr/bin/clang", "/usr/bin/clang", "/usr/bin/clang++"},
		{"x86_64-linux-gnu-g++-12", "x86_64-linux-gnu-gcc-12", "x86_64-linux-gnu-g++-12"},
		{"/opt/cross/bin/aarch64-linux-gnu-cc", "/opt/cross/bin/aarch64-linux-gnu-cc", "/opt/cross/bin/aarch64-linux-gnu-c++"},
		{"tcc", "tcc", ""},       // no C++ driver of that kind
		{"icpx++", "", "icpx++"}, // a C++ driver of no known kind
	}
	for _, tt := range tests {
		if got := cDriver(tt.name); got != tt.c {
			t.Errorf("cDriver(%q) = %q, want %q", tt.name, got, tt.c)
		}
		if got := cxxDriver(tt.name); got != tt.cxx {
			t.Errorf("cxxDriver(%q) = %q, want %q", tt.name, got, tt.cxx)
		}
	}
}

func TestRuntimeCompiler(t *testing.T) {
	requireTool(t, "gcc")
	tests := []struct {
		compiler, want string
		lang           []string
	}{
		{"", "gcc", nil},
		{"gcc", "gcc", nil},
		{"g++", "gcc", nil}, // the C driver builds the C runtime
		{"no-such-driver++", "no-such-driver++", []string{"-x", "c"}}, // or the C++ driver, compiling C
	}
	for _, tt := range tests {
		got, lang := runtimeCompiler(tt.compiler)
		if got != tt.want || !slices.Equal(lang, tt.lang) {
			t.Errorf("runtimeCompiler(%q) = %q %q, want %q %q", tt.compiler, got, lang, tt.want, tt.lang)
		}
	}
}

func TestReadResponseFile(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"a.o b.o\n-o prog\n", []string{"a.o", "b.o", "-o", "prog"}},
		{`"dir with space/a.o" 'b.o'`, []string{"dir with space/a.o", "b.o"}},
		{`x\ y.o  -lm`, []string{"x y.o", "-lm"}},
		{`"" a`, []string{"", "a"}},
		{"", nil},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "objects.rsp")
		if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readResponseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("readResponseFile(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestLinkDriver checks which driver links objects and static libraries
// that other commands compiled (the link step of CMake and make): the C++
// driver when one of them refers to the C++ library.
func TestLinkDriver(t *testing.T) {
	requireTool(t, "gcc")
	requireTool(t, "g++")
	requireTool(t, "ar")
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	src := filepath.Join("testdata", "cxxlink")
	obj := func(name string) string { return filepath.Join(dir, name) }
	run("gcc", "-O1", "-c", filepath.Join(src, "util.c"), "-o", obj("util.o"))
	run("g++", "-O1", "-c", filepath.Join(src, "shape.cpp"), "-o", obj("shape.o"))
	run("g++", "-O1", "-c", filepath.Join(src, "plain.cpp"), "-o", obj("plain.o"))
	run("ar", "rcs", obj("libutil.a"), obj("util.o"), obj("plain.o"))
	run("ar", "rcs", obj("libshape.a"), obj("util.o"), obj("shape.o"))
	if err := os.WriteFile(obj("objects.rsp"), []byte(obj("util.o")+" "+obj("shape.o")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		compiler string
		inputs   []string
		linker   string
		stdcxx   bool // -lstdc++ added
	}{
		{"C objects", "", []string{"util.o"}, "gcc", false},
		{"C linkage only", "", []string{"util.o", "plain.o"}, "gcc", false},
		{"a C++ object", "", []string{"util.o", "shape.o"}, "g++", false},
		{"C static library", "", []string{"libutil.a"}, "gcc", false},
		{"C++ in a static library", "", []string{"util.o", "libshape.a"}, "g++", false},
		{"C++ in a response file", "", []string{"@" + obj("objects.rsp")}, "g++", false},
		{"clang", "clang", []string{"shape.o"}, "clang++", false},
		{"a versioned driver", "gcc-12", []string{"shape.o"}, "g++-12", false},
		{"a C++ driver links everything", "clang++", []string{"util.o"}, "clang++", false},
		{"a driver of no known kind", "tcc", []string{"shape.o"}, "tcc", true},
		{"missing files", "", []string{"none.o", "none.a"}, "gcc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-o", obj("prog")}
			for _, in := range tt.inputs {
				if in[0] != '@' {
					in = obj(in)
				}
				args = append(args, in)
			}
			cmds, err := CompileCommands(args, CCOptions{Compiler: tt.compiler, Runtime: "/rt/libmcprec.a", TempDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			link := cmds[len(cmds)-1]
			if link[0] != tt.linker {
				t.Errorf("linked by %s, want %s: %q", link[0], tt.linker, link)
			}
			if got := link[len(link)-1] == "-lstdc++"; got != tt.stdcxx {
				t.Errorf("-lstdc++ added: %v, want %v: %q", got, tt.stdcxx, link)
			}
		})
	}
}

func TestDemangled(t *testing.T) {
	tests := []struct{ sym, want string }{
		{"_ZN3svc7g_statsE", "svc::g_stats"},
		{"_ZN3svc5Cache6lookupEi", "svc::Cache::lookup"},
		{"_ZN3svc5CacheC2Ev", "svc::Cache::Cache"},
		{"_ZN12_GLOBAL__N_17counterE", "counter"}, // as DWARF names it
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back"},
		{"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},
		{"_GLOBAL__sub_I__ZN3svc7g_cacheE", "_GLOBAL__sub_I_svc::g_cache"},
		{"_GLOBAL__sub_I_main.cpp", "_GLOBAL__sub_I_main.cpp"},
		{"balance", "balance"},
		{"_Zbroken", "_Zbroken"},
	}
	for _, tt := range tests {
		if got := demangled(tt.sym); got != tt.want {
			t.Errorf("demangled(%q) = %q, want %q", tt.sym, got, tt.want)
		}
	}
}

func TestFixedAddr(t *testing.T) {
	// A .debug_addr section: an 8-byte header, then the addresses of a
	// unit whose base is 8.
	addrs := []byte{0x1c, 0, 0, 0, 5, 0, 8, 0,
		0x10, 0x40, 0, 0, 0, 0, 0, 0,
		0x28, 0x40, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name string
		loc  []byte
		base int64
		want uint64
		ok   bool
	}{
		{"DW_OP_addr", []byte{0x03, 0x30, 0x40, 0, 0, 0, 0, 0, 0}, -1, 0x4030, true},
		{"DW_OP_addrx 0", []byte{0xa1, 0}, 8, 0x4010, true},
		{"DW_OP_addrx 1", []byte{0xa1, 1}, 8, 0x4028, true},
		{"DW_OP_addrx past the table", []byte{0xa1, 2}, 8, 0, false},
		{"DW_OP_addrx without a base", []byte{0xa1, 0}, -1, 0, false},
		{"DW_OP_addrx and more", []byte{0xa1, 0, 0x23, 8}, 8, 0, false},
		{"DW_OP_fbreg", []byte{0x91, 0x70}, 8, 0, false},
		{"DW_OP_addr cut short", []byte{0x03, 0x30, 0x40}, -1, 0, false},
	}
	for _, tt := range tests {
		got, ok := fixedAddr(tt.loc, addrs, tt.base)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: fixedAddr = %#x, %v, want %#x, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
