package recorder

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClangScalarAccesses: at -O2, the default of autotools' CFLAGS, clang
// vectorizes before its ThreadSanitizer pass; mcpredict cc turns its
// vectorizers off, so that a loop over an array records a read of every
// element (vector loads of more than 16 bytes are not instrumented at
// all) and two adjacent fields copied together are two reads, each of its
// field, each a DataRead when its value decides nothing.
func TestClangScalarAccesses(t *testing.T) {
	src := filepath.Join(t.TempDir(), "scalar.c")
	if err := os.WriteFile(src, []byte(`#include <pthread.h>
#include <stdio.h>

long table[64];
struct stats { long hits, bytes; } stats;

static void *worker(void *arg)
{
	struct stats *out = arg;
	long sum = 0;
	for (int i = 0; i < 64; i++)
		sum += table[i]; /* @sum */
	out->hits = stats.hits; /* @hits */
	out->bytes = stats.bytes + sum; /* @bytes */
	return NULL;
}

int main(void)
{
	struct stats out;
	pthread_t t;
	for (int i = 0; i < 64; i++)
		table[i] = i;
	stats.hits = 1000;
	stats.bytes = 2000;
	pthread_create(&t, NULL, worker, &out);
	pthread_join(t, NULL);
	printf("%ld %ld\n", out.hits, out.bytes);
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := markers(t, src)
	trace, _ := record(t, buildWith(t, "clang", src, "-O2"))
	evs := parseTrace(t, trace)
	elems := map[string]bool{}
	for _, e := range find(evs, "Read", "table[*", mk["sum"]) {
		if e.thread != "1" {
			elems[e.objs[0]] = true
		}
	}
	if len(elems) != 64 {
		t.Errorf("the worker read %d elements of table at line %d, want 64", len(elems), mk["sum"])
	}
	seqs := map[uint64]bool{}
	for _, f := range []struct {
		name string
		line int
	}{{"stats.hits", mk["hits"]}, {"stats.bytes", mk["bytes"]}} {
		reads := find(evs, "Read", f.name, 0)
		if len(reads) != 1 || !reads[0].data {
			t.Errorf("%s: reads %v, want one DataRead", f.name, reads)
			continue
		}
		seqs[reads[0].seq] = true
	}
	if len(seqs) != 2 {
		t.Errorf("stats.hits and stats.bytes read by one access")
	}
}
