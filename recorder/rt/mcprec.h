/*
 * mcprec.h — the raw log format shared by the recorder runtime (C) and the
 * converter (Go, recorder/raw.go). Change both together and bump
 * MCPREC_VERSION.
 *
 * The runtime writes, into $MCPREDICT_TRACE_DIR:
 *
 *   p<pid>.meta         text: "mcprec 2", "pid N", "exe PATH", "funcs 0|1"
 *                       (whether Enter/Exit are recorded), then for each
 *                       loaded ELF object "module 0xBIAS PATH" followed by
 *                       its PT_LOAD segments "seg 0xSTART 0xEND FLAGS"
 *                       (run-time addresses; FLAGS from r, w, x) and its
 *                       PT_GNU_RELRO range "relro 0xSTART 0xEND". Written
 *                       once at start-up.
 *   p<pid>.t<tok>.bin   one file per thread: a 128-byte header, then 32-byte
 *                       records, in the thread's program order. The file is
 *                       written through a MAP_SHARED mapping, so whatever
 *                       the thread stored survives a crash or kill -9 of the
 *                       process; the first record whose seqkind is 0 ends
 *                       the log.
 */
#ifndef MCPREC_H
#define MCPREC_H

#include <stdint.h>

#define MCPREC_VERSION 2
#define MCPREC_MAGIC "MCPRT002"

struct mcprec_header {
	char magic[8];      /* MCPREC_MAGIC, no NUL */
	uint32_t version;   /* MCPREC_VERSION */
	uint32_t rec_size;  /* sizeof(struct mcprec_rec) */
	uint64_t token;     /* thread token, unique in the process, 1-based */
	uint64_t parent;    /* token of the creating thread, 0 if unknown */
	uint64_t pthread;   /* pthread_self() */
	uint64_t stack_lo;  /* the thread's stack: [stack_lo, stack_hi) */
	uint64_t stack_hi;
	uint64_t tls_lo;    /* its static TLS block: [tls_lo, tls_hi) */
	uint64_t tls_hi;
	uint64_t flags;     /* reserved, 0 */
	uint64_t reserved[6];
};

/*
 * One event. seqkind = kind << 56 | seq; seq is the global event number
 * (1, 2, 3 … in the observed total order) and is stored last, so a record
 * interrupted by a kill reads as 0 (end of log).
 */
struct mcprec_rec {
	uint64_t seqkind;
	uint64_t pc;    /* return address into the program (the call site + 1) */
	uint64_t addr;  /* object address, or a thread token (Create, Join) */
	uint64_t extra; /* see the kinds */
};

#define MCPREC_SEQ_MASK ((1ULL << 56) - 1)

enum mcprec_kind {
	MCPREC_READ = 1,       /* extra = size in bytes */
	MCPREC_WRITE = 2,      /* extra = size in bytes */
	MCPREC_READ8 = 3,      /* 8-byte read; extra = the value read (names heap blocks) */
	MCPREC_LOCK = 4,       /* addr = mutex or spinlock */
	MCPREC_TRYLOCK = 5,    /* a successful trylock */
	MCPREC_UNLOCK = 6,
	MCPREC_RDLOCK = 7,     /* addr = rwlock */
	MCPREC_WRLOCK = 8,
	MCPREC_RWUNLOCK = 9,
	MCPREC_WAIT = 10,      /* addr = cond, extra = mutex or 0; at wake-up */
	MCPREC_SIGNAL = 11,    /* addr = cond */
	MCPREC_BROADCAST = 12, /* addr = cond */
	MCPREC_BARRIER = 13,   /* addr = barrier; at arrival */
	MCPREC_CREATE = 14,    /* addr = child token */
	MCPREC_JOIN = 15,      /* addr = child token, or pthread_t if extra = 1 */
	MCPREC_SEMPOST = 16,   /* addr = sem */
	MCPREC_SEMWAIT = 17,   /* addr = sem */
	MCPREC_ALLOC = 18,     /* addr = block, extra = size | MCPREC_FN_* << 56 */
	MCPREC_FREE = 19,      /* addr = block */
	MCPREC_ENTER = 20,     /* pc = call site, addr = a pc inside the function */
	MCPREC_EXIT = 21,      /* pc = a pc inside the function */
	MCPREC_AACQ = 22,      /* __tsan_acquire annotation on addr */
	MCPREC_AREL = 23,      /* __tsan_release annotation on addr */
	MCPREC_ATOMIC = 24,    /* atomic operation on addr; extra = MCPREC_ATOM_* | size */
	MCPREC_FRAME = 25,     /* the stack frame holding the next stack access:
	                          pc = a pc in its function, addr = its CFA */
	MCPREC_UALLOC = 26,    /* --alloc-func returned addr; extra = size (48 bits,
	                          MCPREC_UNKNOWN_SIZE if unknown) | index << 48 of the
	                          function in the "ufn" lines of the meta file;
	                          pc = call site */
	MCPREC_UFREE = 27,     /* --free-func called on addr; pc = call site */
	MCPREC_THREAD_START = 28, /* addr = the start routine */
	MCPREC_THREAD_END = 29,   /* the thread ended (returned or pthread_exit) */
	MCPREC_PROC_EXIT = 30,    /* exit() ran in this thread (main returned) */
	MCPREC_LOCKWAIT = 31,     /* a lock acquisition must wait: addr = the lock,
	                             extra = the kind of the acquisition
	                             (MCPREC_LOCK, _RDLOCK, _WRLOCK); the
	                             acquisition's own event follows when it
	                             returns, so a LOCKWAIT that is a thread's
	                             last event is a thread blocked for good */
	MCPREC_DREAD = 32,        /* a READ whose value decided nothing the
	                             runtime saw (rewritten from MCPREC_READ
	                             when it left the watch window unused);
	                             extra = size | value << 8 (the converter
	                             looks for the value used as an array
	                             index) */
	MCPREC_DREAD8 = 33,       /* likewise from MCPREC_READ8 */
	MCPREC_CREAD = 34,        /* a DREAD whose value no comparison had
	                             at all, not even one whose operands
	                             differed: the thread only copied it or
	                             computed with it; extra as DREAD's */
	MCPREC_CREAD8 = 35,       /* likewise from MCPREC_READ8 */
};

/* MCPREC_ALLOC: the allocator. */
enum mcprec_fn {
	MCPREC_FN_MALLOC = 0,
	MCPREC_FN_CALLOC = 1,
	MCPREC_FN_REALLOC = 2,
	MCPREC_FN_MEMALIGN = 3, /* memalign, aligned_alloc, posix_memalign */
	MCPREC_FN_NEW = 4,      /* operator new */
	MCPREC_FN_NEW_ARRAY = 5, /* operator new[] */
	MCPREC_FN_MMAP = 6       /* mmap, mmap64 (a mapping; munmap is its Free) */
};

#define MCPREC_UNKNOWN_SIZE ((1ULL << 48) - 1)

/* MCPREC_ATOMIC: the low 8 bits of extra are the size in bytes. */
#define MCPREC_ATOM_READ (1u << 8)  /* the operation reads the location */
#define MCPREC_ATOM_WRITE (1u << 9) /* it writes it */
#define MCPREC_ATOM_ACQ (1u << 10)  /* it has acquire semantics the trace needs */
#define MCPREC_ATOM_REL (1u << 11)  /* it has release semantics */

#endif
