package recorder

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Compiler drivers. mcpredict cc runs the driver the user names (gcc by
// default), but the recorder runtime is C and is always built by the
// driver's C counterpart, and a link of C++ objects needs the C++ one
// (which adds libstdc++): cDriver and cxxDriver map one name to the other,
// keeping a directory, a target prefix and a version suffix
// (x86_64-linux-gnu-g++-12 and x86_64-linux-gnu-gcc-12).

// driverPairs are the C and C++ names of each kind of driver, the longer
// C++ names first (clang++ contains c++).
var driverPairs = []struct{ c, cxx string }{
	{"clang", "clang++"},
	{"gcc", "g++"},
	{"cc", "c++"},
}

// isCxxDriver reports whether name is a C++ driver (g++, clang++, c++,
// with any prefix or suffix).
func isCxxDriver(name string) bool {
	return strings.Contains(filepath.Base(name), "++")
}

// cDriver returns the C driver of a C++ driver (gcc for g++, clang for
// clang++, cc for c++), name itself for a C driver, or "" when name is a
// C++ driver of no known kind.
func cDriver(name string) string {
	dir, base := filepath.Split(name)
	if !isCxxDriver(base) {
		return name
	}
	for _, p := range driverPairs {
		if i := strings.LastIndex(base, p.cxx); i >= 0 && driverWord(base, i, len(p.cxx)) {
			return dir + base[:i] + p.c + base[i+len(p.cxx):]
		}
	}
	return ""
}

// cxxDriver returns the C++ driver of a C driver (g++ for gcc, clang++ for
// clang, c++ for cc), name itself for a C++ driver, or "" when name is a C
// driver of no known kind.
func cxxDriver(name string) string {
	dir, base := filepath.Split(name)
	if isCxxDriver(base) {
		return name
	}
	for _, p := range driverPairs {
		if i := strings.LastIndex(base, p.c); i >= 0 && driverWord(base, i, len(p.c)) {
			return dir + base[:i] + p.cxx + base[i+len(p.c):]
		}
	}
	return ""
}

// driverWord reports whether base[i:i+n] is a whole word of the name: at
// its start or after a '-', and at its end or before a '-' (or, for a
// version, a digit): the cc of x86_64-linux-gnu-cc but not of tcc.
func driverWord(base string, i, n int) bool {
	if i > 0 && base[i-1] != '-' {
		return false
	}
	end := i + n
	return end == len(base) || base[end] == '-' || base[end] >= '0' && base[end] <= '9'
}

// isClang reports whether the driver is clang's, whose instrumentation
// flags differ from gcc's: from its name when it says (clang, clang++-14,
// gcc, g++), else from its --version (cc and c++ may be either).
func isClang(ctx context.Context, driver string) bool {
	base := filepath.Base(driver)
	switch {
	case strings.Contains(base, "clang"):
		return true
	case strings.Contains(base, "gcc") || strings.Contains(base, "g++"):
		return false
	}
	out, err := exec.CommandContext(ctx, driver, "--version").Output()
	return err == nil && bytes.Contains(out, []byte("clang version"))
}

// cxxRuntimeSymbol reports whether an undefined symbol is one that the C++
// runtime library defines: a mangled name, the ABI's __cxa_ functions,
// the exception personality.
func cxxRuntimeSymbol(name string) bool {
	return strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "__cxa_") ||
		strings.HasPrefix(name, "__gxx_") || name == "__dynamic_cast"
}

// elfNeedsCxx reports whether an ELF relocatable object refers to the C++
// runtime (an undefined cxxRuntimeSymbol).
func elfNeedsCxx(r io.ReaderAt) bool {
	f, err := elf.NewFile(r)
	if err != nil {
		return false
	}
	defer f.Close()
	if f.Type != elf.ET_REL {
		return false
	}
	syms, err := f.Symbols()
	if err != nil {
		return false
	}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF && cxxRuntimeSymbol(s.Name) {
			return true
		}
	}
	return false
}

// archiveNeedsCxx reports whether a member of an ar archive (a static
// library) refers to the C++ runtime. Thin archives are not read.
func archiveNeedsCxx(f *os.File, size int64) bool {
	const magic = "!<arch>\n"
	off := int64(len(magic))
	var hdr [60]byte
	for off+60 <= size {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			return false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || n < 0 {
			return false
		}
		off += 60
		name := string(hdr[:16])
		// The symbol index (/, /SYM64/) and the long-name table (//)
		// are not objects.
		if !strings.HasPrefix(name, "/ ") && !strings.HasPrefix(name, "// ") && !strings.HasPrefix(name, "/SYM64/") {
			if elfNeedsCxx(io.NewSectionReader(f, off, n)) {
				return true
			}
		}
		off += n + n%2
	}
	return false
}

// fileNeedsCxx reports whether a link input is an object, or a static
// library with an object, that refers to the C++ runtime.
func fileNeedsCxx(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	var magic [8]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return false
	}
	switch {
	case string(magic[:4]) == elf.ELFMAG:
		return elfNeedsCxx(f)
	case string(magic[:]) == "!<arch>\n":
		return archiveNeedsCxx(f, st.Size())
	}
	return false
}

// inputsNeedCxx reports whether any of the link inputs (objects, static
// libraries, and those listed in @response files) refers to the C++
// runtime: the link must then be made by a C++ driver.
func inputsNeedCxx(inputs []string) bool {
	for _, in := range inputs {
		if rsp, ok := strings.CutPrefix(in, "@"); ok {
			words, err := readResponseFile(rsp)
			if err == nil && inputsNeedCxx(nonOptions(words)) {
				return true
			}
			continue
		}
		if fileNeedsCxx(in) {
			return true
		}
	}
	return false
}

// nonOptions returns the words that are not options nor option values.
func nonOptions(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case separateArg(w):
			i++
		case strings.HasPrefix(w, "-"):
		default:
			out = append(out, w)
		}
	}
	return out
}

// readResponseFile splits a gcc @file into its words: separated by white
// space, with single and double quotes and backslash escapes.
func readResponseFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
	)
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		c, _, err := r.ReadRune()
		if errors.Is(err, io.EOF) {
			break
		}
		switch {
		case c == '\\':
			if n, _, err := r.ReadRune(); err == nil {
				cur.WriteRune(n)
			}
			in = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
