package recorder

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
)

// BuildID identifies the build of an executable: its GNU build id (the
// linker's note) in hex, or, without one, "sha256:" and the first bytes of
// the file's hash; "" if the file cannot be read. mcpredict record writes
// it into the trace header, so that reproduce can say when the program it
// runs is not the one recorded (sites then miss).
func BuildID(path string) string {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if id := gnuBuildID(f); id != "" {
			return id
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:12])
}

// gnuBuildID reads the NT_GNU_BUILD_ID note of an ELF file.
func gnuBuildID(f *elf.File) string {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		bo := f.ByteOrder
		for len(data) >= 12 {
			nameSz, descSz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
			off := 12 + align4(nameSz)
			end := off + align4(descSz)
			if uint64(end) > uint64(len(data)) {
				break
			}
			if typ == 3 && nameSz == 4 && string(data[12:15]) == "GNU" { // NT_GNU_BUILD_ID
				return hex.EncodeToString(data[off : off+descSz])
			}
			data = data[end:]
		}
	}
	return ""
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }
