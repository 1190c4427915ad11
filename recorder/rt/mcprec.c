/*
 * mcprec.c — the mcpredict trace recorder runtime.
 *
 * A program compiled with gcc -fsanitize=thread calls __tsan_* hooks before
 * every memory access, atomic operation and function entry/exit. Instead of
 * the ThreadSanitizer runtime it is linked against this file, which records
 * each event into a per-thread log (see mcprec.h) that `mcpredict record`
 * turns into a trace in the format of DESIGN §2.
 *
 * What it records, and how:
 *  - reads and writes of global and heap memory; accesses inside the calling
 *    thread's own stack are dropped (they are most of the traffic), except
 *    in the part of the stack that has escaped to other threads (see
 *    "stacks" below); accesses to the thread's own static TLS block (errno,
 *    __thread variables) are dropped too;
 *  - pthread mutexes, spinlocks, rwlocks, condition variables, barriers,
 *    create/join and POSIX semaphores, by defining the pthread functions in
 *    the executable: the dynamic linker then binds every caller, the program
 *    and the shared libraries it uses (libstdc++'s std::thread), to these
 *    definitions, which call the real ones found with dlsym(RTLD_NEXT);
 *  - malloc/calloc/realloc/free/aligned allocation, the same way, calling
 *    glibc's __libc_* entry points, so that address reuse is visible;
 *  - C11/GCC atomics: one record per operation, with its kind (read,
 *    write, both) and the release/acquire semantics the trace needs (see
 *    atomic_post); the converter makes them synchronisation, and data
 *    accesses too where the program also accesses the location plainly;
 *  - thread start and end, and process exit, so that threads that never
 *    ran or still ran when the program exited can be named;
 *  - the allocation functions the user names (mcpredict cc --alloc-func),
 *    through the wrappers that mcpredict cc adds to their definitions.
 *
 * Every event takes one global sequence number (a single relaxed fetch_add,
 * never a lock) and is stored into its thread's own log: there is no shared
 * buffer. Relaxed is enough: the modification order of the counter is
 * consistent with happens-before, so an Unlock that a later Lock
 * synchronises with always has the smaller number, as long as the number is
 * taken before releasing and after acquiring — which is what the
 * interceptors below do.
 *
 * Each log is a file written through a 1 MiB MAP_SHARED window that moves
 * along the file, so the memory used is bounded per thread and the data is
 * in the kernel's page cache as soon as it is stored: a crash, abort() or
 * kill -9 loses nothing already recorded, with no signal handler or flush.
 *
 * Recording is on only when MCPREDICT_TRACE_DIR names a directory; otherwise
 * every hook returns at once and the program runs normally.
 *
 * Not recorded: accesses made by uninstrumented code (libc, other
 * libraries), events of forked children that do not exec, programs linked
 * with -static (dlsym(RTLD_NEXT) needs dynamic linking).
 */
#define _GNU_SOURCE
#include "mcprec.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The runtime maps its logs with these: the program's mmap and munmap
 * (below) are the runtime's, and record. */
static void *sys_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}

static int sys_munmap(void *a, size_t n) { return (int)syscall(SYS_munmap, a, n); }

#define CHUNK (1u << 20) /* bytes per mapped window of a thread log */
#define NWATCH 16        /* loads watched per thread for steering (see watch_load) */
#define RA() ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- process state ---- */

enum { G_UNINIT, G_INITIALIZING, G_READY, G_OFF };

static int g_state;
static int g_funcs = 1; /* record Enter/Exit (MCPREDICT_FUNCS=0 turns off) */
static char g_prefix[PATH_MAX]; /* "<dir>/p<pid>" */
static uint64_t g_next_tok;
static pthread_key_t g_key;

/* The global event counter sits alone on its cache line: it is the only
 * location every thread writes. */
static struct {
	uint64_t v;
	char pad[56];
} g_seq __attribute__((aligned(64)));

/* ---- thread state ---- */

enum { T_NONE, T_INIT, T_READY, T_DONE };

struct thr {
	int state;
	int busy; /* inside the runtime: nested events are dropped */
	uint64_t tok;
	char *win;     /* current window of the log file */
	uint64_t woff; /* file offset of win */
	uint32_t pos;  /* next free byte in win */
	uintptr_t stk_lo, stk_size;
	uintptr_t tls_lo, tls_size; /* the static TLS block: never shared */
	struct stk *stk;            /* the thread's entry in the stack registry */
	/* The frame last described by a FRAME record (its CFA and return
	 * address identify one activation). */
	uintptr_t fr_cfa, fr_ret;
	/* Pages last found to be / not to be in another thread's stack, valid
	 * while the registry's generation is ns_gen (see foreign). */
	uintptr_t ns_page, st_page;
	struct stk *st_stk;
	uint32_t ns_gen, st_gen;
	/* The last atomic load recorded, to fold spin loops (atomic_post). */
	uintptr_t acq_addr;
	uint64_t acq_end;   /* log offset just after it */
	uint32_t acq_wr;    /* atomic writes on its stripe at that time */
	uint32_t acq_flags; /* its flags */
	/* Loads whose value is watched (see "values that steer" below). */
	struct watch {
		uintptr_t addr; /* 0: free slot */
		uint64_t val;   /* the value loaded */
		uint64_t sval;  /* the value the thread then stored there */
		uint64_t woff;  /* the window holding its record ... */
		uint32_t off;   /* ... and the record's offset in it */
		uint8_t size;
		uint8_t stored; /* 1: a store followed, 2: sval read back */
		uint8_t compared; /* a comparison whose operands differed had its value */
	} w[NWATCH];
	/* The last two range accesses gcc's instrumentation recorded before a
	 * call of memcpy/memset/memmove (__tsan_read_range/write_range): the
	 * --wrap'ed call that follows records the same ranges, and is left
	 * out (see __mcprec_range). */
	uintptr_t rng_a[2];
	uint64_t rng_n[2];
	uint8_t rng_w[2];
	uint32_t wnext;     /* the slot the next load takes */
	uint32_t nwatch;    /* slots in use */
	struct watch *pend; /* stored, value not read back yet */
};

static __thread struct thr T __attribute__((tls_model("initial-exec")));

/* Directed schedules (mcprec_sched.c): off unless MCPREDICT_SCHEDULE is set. */
extern int __mcprec_sched_on;
void __mcprec_sched_init(const char *prefix);
void __mcprec_sched_resolve(void);
void __mcprec_sched_access(uint64_t pc, uintptr_t a, uint64_t size, int write);
void __mcprec_sched_atomic(uint64_t pc, uintptr_t a, uint64_t size, int write);
void __mcprec_sched_lock_pre(const volatile void *m, uint64_t pc);
void __mcprec_sched_lock_busy(const volatile void *m);
void __mcprec_sched_lock_post(const volatile void *m, uint64_t pc);
void __mcprec_sched_unlock_post(const volatile void *m);
void __mcprec_sched_block(int delta);
void __mcprec_sched_threads(int delta);
void __mcprec_sched_exit(int status);
void __mcprec_sched_created(uint64_t pc);
void __mcprec_sched_started(uint64_t create_pc);
#define SCHED(call) do { if (UNLIKELY(__mcprec_sched_on)) call; } while (0)

static inline uint64_t next_seq(void);
static inline void put(struct thr *t, uint64_t seq, unsigned kind, uint64_t pc, uint64_t addr,
		       uint64_t extra);

/* ---- small helpers that call nothing that could re-enter us ---- */

static size_t slen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static char *scat(char *p, char *end, const char *s)
{
	while (*s && p < end - 1)
		*p++ = *s++;
	*p = 0;
	return p;
}

static char *ucat(char *p, char *end, uint64_t v, int hex)
{
	char buf[24];
	int n = 0;
	unsigned base = hex ? 16 : 10;
	do {
		buf[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (hex)
		p = scat(p, end, "0x");
	while (n > 0 && p < end - 1)
		*p++ = buf[--n];
	*p = 0;
	return p;
}

static void warn(const char *msg, const char *arg)
{
	char buf[512];
	char *p = scat(buf, buf + sizeof buf, "mcprec: ");
	p = scat(p, buf + sizeof buf, msg);
	if (arg) {
		p = scat(p, buf + sizeof buf, ": ");
		p = scat(p, buf + sizeof buf, arg);
	}
	p = scat(p, buf + sizeof buf, "\n");
	ssize_t r = write(2, buf, (size_t)(p - buf));
	(void)r;
}

static void writeall(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* ---- spinlocks (a few instructions held, never while blocking) ---- */

static inline void spin_lock(uint32_t *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
	}
}

static inline void spin_unlock(uint32_t *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* ---- stacks ----
 *
 * A thread's own stack accesses are not recorded, except at or above its
 * escape mark esc_lo: the part of its stack (the frames of the functions
 * that called the current one, from that address up) that other threads
 * may touch. The mark goes down when the thread passes a pointer into its
 * stack to pthread_create (struct ctx ctx; pthread_create(&t, 0, worker,
 * &ctx)), and when another thread accesses its stack (the first such
 * access finds the owner in the registry below). Only the frames above the
 * mark pay for recording: the deeper calls, where most stack traffic is,
 * stay free. The owner's accesses before the mark went down are lost (a
 * stack address published through a global before any other thread used
 * it); the converter keeps only the stack locations that several threads
 * access.
 *
 * The registry is an array of stack ranges sorted by address, changed
 * under a lock at thread start and end and read under a sequence lock.
 * Every thread's accesses outside its own stack that fall inside the hull
 * of all stacks are looked up (worker threads' heaps are in that hull), so
 * each thread caches the last page it found in no stack and the last page
 * it found in one.
 */

struct stk {
	uint64_t lo, hi;
	uint64_t esc_lo; /* hi: nothing escaped */
};

#define MAXSTK 4096
static struct stk g_stk[MAXSTK];
static struct stk g_nostk = {0, 0, UINT64_MAX}; /* threads without an entry */
static uint32_t g_stk_used;     /* slots handed out so far */
static uint32_t g_order[MAXSTK]; /* live slots, sorted by lo */
static uint32_t g_norder;
static uint32_t g_stk_lock;
static uint32_t g_stk_seq; /* odd while g_order changes */
static uint32_t g_stk_gen; /* changes with every registration */
static uintptr_t g_stk_min = UINTPTR_MAX, g_stk_span;

static struct stk *stack_register(uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return &g_nostk;
	spin_lock(&g_stk_lock);
	__atomic_fetch_add(&g_stk_seq, 1, __ATOMIC_ACQ_REL); /* odd: readers retry */
	/* A dead thread's stack may be reused (glibc caches them): entries
	 * overlapping the new one go. */
	uint32_t n = 0;
	for (uint32_t i = 0; i < g_norder; i++) {
		struct stk *s = &g_stk[g_order[i]];
		if (s->lo < hi && lo < s->hi)
			__atomic_store_n(&s->hi, s->lo, __ATOMIC_RELAXED); /* free */
		else
			__atomic_store_n(&g_order[n++], g_order[i], __ATOMIC_RELAXED);
	}
	uint32_t slot = MAXSTK;
	for (uint32_t i = 0; i < g_stk_used; i++) {
		if (g_stk[i].hi == g_stk[i].lo) {
			slot = i;
			break;
		}
	}
	if (slot == MAXSTK && g_stk_used < MAXSTK)
		slot = g_stk_used++;
	struct stk *s = &g_nostk;
	if (slot < MAXSTK) {
		s = &g_stk[slot];
		__atomic_store_n(&s->lo, lo, __ATOMIC_RELAXED);
		__atomic_store_n(&s->hi, hi, __ATOMIC_RELAXED);
		__atomic_store_n(&s->esc_lo, hi, __ATOMIC_RELAXED);
		uint32_t j = n;
		while (j > 0 && g_stk[g_order[j - 1]].lo > lo) {
			__atomic_store_n(&g_order[j], g_order[j - 1], __ATOMIC_RELAXED);
			j--;
		}
		__atomic_store_n(&g_order[j], slot, __ATOMIC_RELAXED);
		n++;
	}
	__atomic_store_n(&g_norder, n, __ATOMIC_RELAXED);
	uintptr_t mn = g_stk_min < lo ? g_stk_min : lo;
	uintptr_t mx = g_stk_min + g_stk_span;
	if (g_stk_min == UINTPTR_MAX || mx < hi)
		mx = hi;
	__atomic_store_n(&g_stk_min, mn, __ATOMIC_RELAXED);
	__atomic_store_n(&g_stk_span, mx - mn, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stk_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stk_seq, 1, __ATOMIC_RELEASE);
	spin_unlock(&g_stk_lock);
	return s;
}

static void stack_unregister(struct stk *s)
{
	if (s == &g_nostk)
		return;
	spin_lock(&g_stk_lock);
	__atomic_fetch_add(&g_stk_seq, 1, __ATOMIC_ACQ_REL);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g_norder; i++) {
		if (&g_stk[g_order[i]] != s)
			__atomic_store_n(&g_order[n++], g_order[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&g_norder, n, __ATOMIC_RELAXED);
	__atomic_store_n(&s->hi, s->lo, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stk_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stk_seq, 1, __ATOMIC_RELEASE);
	spin_unlock(&g_stk_lock);
}

/* stack_lookup returns the registered stack containing a, or NULL. */
static struct stk *stack_lookup(uintptr_t a)
{
	for (;;) {
		uint32_t s1 = __atomic_load_n(&g_stk_seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		uint32_t lo = 0, hi = __atomic_load_n(&g_norder, __ATOMIC_RELAXED);
		if (hi > MAXSTK)
			hi = MAXSTK;
		while (lo < hi) { /* first entry with lo > a */
			uint32_t mid = (lo + hi) / 2;
			uint32_t slot = __atomic_load_n(&g_order[mid], __ATOMIC_RELAXED) % MAXSTK;
			if (__atomic_load_n(&g_stk[slot].lo, __ATOMIC_RELAXED) > a)
				hi = mid;
			else
				lo = mid + 1;
		}
		struct stk *s = NULL;
		if (lo > 0) {
			s = &g_stk[__atomic_load_n(&g_order[lo - 1], __ATOMIC_RELAXED) % MAXSTK];
			if (a >= __atomic_load_n(&s->hi, __ATOMIC_RELAXED))
				s = NULL;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&g_stk_seq, __ATOMIC_RELAXED) == s1)
			return s;
	}
}

static inline void esc_lower(struct stk *s, uintptr_t a)
{
	if (s == &g_nostk)
		return; /* shared by the threads the registry had no room for */
	uint64_t v = a & ~(uint64_t)63;
	uint64_t cur = __atomic_load_n(&s->esc_lo, __ATOMIC_RELAXED);
	while (v < cur && !__atomic_compare_exchange_n(&s->esc_lo, &cur, v, 1, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED)) {
	}
}

/* ---- the real functions ---- */

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn real_pthread_create;
static int (*real_pthread_join)(pthread_t, void **);
static int (*real_pthread_tryjoin_np)(pthread_t, void **);
static int (*real_pthread_timedjoin_np)(pthread_t, void **, const struct timespec *);
static int (*real_pthread_mutex_lock)(pthread_mutex_t *);
static int (*real_pthread_mutex_trylock)(pthread_mutex_t *);
static int (*real_pthread_mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
static int (*real_pthread_mutex_unlock)(pthread_mutex_t *);
static int (*real_pthread_spin_lock)(pthread_spinlock_t *);
static int (*real_pthread_spin_trylock)(pthread_spinlock_t *);
static int (*real_pthread_spin_unlock)(pthread_spinlock_t *);
static int (*real_pthread_rwlock_rdlock)(pthread_rwlock_t *);
static int (*real_pthread_rwlock_tryrdlock)(pthread_rwlock_t *);
static int (*real_pthread_rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_pthread_rwlock_wrlock)(pthread_rwlock_t *);
static int (*real_pthread_rwlock_trywrlock)(pthread_rwlock_t *);
static int (*real_pthread_rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_pthread_rwlock_unlock)(pthread_rwlock_t *);
static int (*real_pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int (*real_pthread_cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
static int (*real_pthread_cond_signal)(pthread_cond_t *);
static int (*real_pthread_cond_broadcast)(pthread_cond_t *);
static int (*real_pthread_barrier_wait)(pthread_barrier_t *);
static int (*real_sem_post)(sem_t *);
static int (*real_sem_wait)(sem_t *);
static int (*real_sem_trywait)(sem_t *);
static int (*real_sem_timedwait)(sem_t *, const struct timespec *);

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void *must_sym(const char *name, const char *version)
{
	void *p = NULL;
	/* The condition variable functions exist in two versions; the old
	 * (GLIBC_2.2.5) ones use another object layout, so ask for the new
	 * one explicitly where it exists. */
	if (version)
		p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		warn("cannot find the real function", name);
		abort();
	}
	return p;
}

static int g_resolved;

static void resolve(void)
{
	if (__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))
		return;
#define R(f) __atomic_store_n((void **)&real_##f, must_sym(#f, NULL), __ATOMIC_RELAXED)
#define RV(f, v) __atomic_store_n((void **)&real_##f, must_sym(#f, v), __ATOMIC_RELAXED)
	R(pthread_create);
	R(pthread_join);
	R(pthread_tryjoin_np);
	R(pthread_timedjoin_np);
	R(pthread_mutex_lock);
	R(pthread_mutex_trylock);
	R(pthread_mutex_timedlock);
	R(pthread_mutex_unlock);
	R(pthread_spin_lock);
	R(pthread_spin_trylock);
	R(pthread_spin_unlock);
	R(pthread_rwlock_rdlock);
	R(pthread_rwlock_tryrdlock);
	R(pthread_rwlock_timedrdlock);
	R(pthread_rwlock_wrlock);
	R(pthread_rwlock_trywrlock);
	R(pthread_rwlock_timedwrlock);
	R(pthread_rwlock_unlock);
	RV(pthread_cond_wait, "GLIBC_2.3.2");
	RV(pthread_cond_timedwait, "GLIBC_2.3.2");
	R(pthread_cond_clockwait);
	RV(pthread_cond_signal, "GLIBC_2.3.2");
	RV(pthread_cond_broadcast, "GLIBC_2.3.2");
	R(pthread_barrier_wait);
	R(sem_post);
	R(sem_wait);
	R(sem_trywait);
	R(sem_timedwait);
#undef R
#undef RV
	__atomic_store_n(&g_resolved, 1, __ATOMIC_RELEASE);
}

#define ENSURE(f)                   \
	do {                        \
		if (UNLIKELY(!real_##f)) \
			resolve();  \
	} while (0)

/* ---- start-up ---- */

/* The meta file stays open for the process's life: the "lost" lines of
 * thread logs that could not be written (log_lost) go through it, also
 * after the program switched to a user that may not open it (httpd's
 * "User nobody"). meta_dev and meta_ino identify it, so that after a
 * program closed its descriptors in bulk we never write into whatever
 * file took the number. */
static int meta_fd = -1;
static dev_t meta_dev;
static ino_t meta_ino;

/* keep_fd moves a descriptor the runtime keeps for the process's life out
 * of the low numbers, which programs expect to be free, reuse and close in
 * bulk (daemons). */
static int keep_fd(int fd)
{
	if (fd < 0)
		return fd;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	if (hi < 0)
		return fd; /* a low descriptor limit: keep the number we have */
	close(fd);
	return hi;
}

/* same_file reports whether fd is still the file identified by dev, ino. */
static int same_file(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	char line[PATH_MAX + 64];
	char *end = line + sizeof line;
	char *p = scat(line, end, "module ");
	p = ucat(p, end, (uint64_t)info->dlpi_addr, 1);
	p = scat(p, end, " ");
	p = scat(p, end, info->dlpi_name ? info->dlpi_name : "");
	p = scat(p, end, "\n");
	writeall(meta_fd, line, (size_t)(p - line));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD && ph->p_type != PT_GNU_RELRO)
			continue;
		uint64_t lo = (uint64_t)info->dlpi_addr + ph->p_vaddr;
		p = scat(line, end, ph->p_type == PT_LOAD ? "seg " : "relro ");
		p = ucat(p, end, lo, 1);
		p = scat(p, end, " ");
		p = ucat(p, end, lo + ph->p_memsz, 1);
		if (ph->p_type == PT_LOAD) {
			p = scat(p, end, " ");
			p = scat(p, end, ph->p_flags & PF_R ? "r" : "-");
			p = scat(p, end, ph->p_flags & PF_W ? "w" : "-");
			p = scat(p, end, ph->p_flags & PF_X ? "x" : "-");
		}
		p = scat(p, end, "\n");
		writeall(meta_fd, line, (size_t)(p - line));
	}
	return 0;
}

static void thr_exit(void *p);
static void watch_access(struct thr *t, uintptr_t a, uint64_t size, unsigned kind, uint64_t val);
static void watch_flush(struct thr *t);
static void watch_settle(struct thr *t);

static void at_fork_child(void)
{
	/* The child shares the parent's log windows; writing would corrupt
	 * them. A child that execs starts recording afresh under its pid. */
	__atomic_store_n(&g_state, G_OFF, __ATOMIC_RELEASE);
	T.state = T_DONE;
}

static int write_meta(void)
{
	char path[PATH_MAX];
	char *end = path + sizeof path;
	scat(scat(path, end, g_prefix), end, ".meta");
	/* O_APPEND: the "lost" lines of threads that fail at once never
	 * overwrite each other. */
	meta_fd = keep_fd(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644));
	if (meta_fd < 0) {
		warn("cannot create the trace log, recording off", path);
		return -1;
	}
	struct stat st;
	if (fstat(meta_fd, &st) == 0) {
		meta_dev = st.st_dev;
		meta_ino = st.st_ino;
	}
	char line[PATH_MAX + 64];
	char *le = line + sizeof line;
	char *p = scat(line, le, "mcprec ");
	p = ucat(p, le, MCPREC_VERSION, 0);
	p = scat(p, le, "\npid ");
	p = ucat(p, le, (uint64_t)getpid(), 0);
	p = scat(p, le, "\nexe ");
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	p = scat(p, le, exe);
	p = scat(p, le, g_funcs ? "\nfuncs 1\n" : "\nfuncs 0\n");
	writeall(meta_fd, line, (size_t)(p - line));
	dl_iterate_phdr(module_cb, NULL);
	return 0; /* meta_fd stays open: see log_lost */
}

static __thread int in_init __attribute__((tls_model("initial-exec")));

static void proc_exit(int status, void *arg);

/* The trace directory, opened at start-up (-1 if it could not be): the
 * logs are opened relative to it, because a program that switched user
 * may no longer reach the directory by its path (one under /root), and
 * openat checks only the directory itself. g_dir_len is the length of its
 * path, the start of g_prefix. */
static int g_dirfd = -1;
static dev_t g_dir_dev;
static ino_t g_dir_ino;
static size_t g_dir_len;

static void open_dir(const char *path, size_t len)
{
	g_dir_len = len;
	g_dirfd = keep_fd(open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
	struct stat st;
	if (g_dirfd >= 0 && fstat(g_dirfd, &st) == 0) {
		g_dir_dev = st.st_dev;
		g_dir_ino = st.st_ino;
	}
}

static void rt_init(void)
{
	int s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (s == G_READY || s == G_OFF)
		return;
	int expect = G_UNINIT;
	if (!__atomic_compare_exchange_n(&g_state, &expect, G_INITIALIZING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (in_init)
			return; /* re-entered from our own start-up */
		while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == G_INITIALIZING)
			sched_yield();
		return;
	}
	in_init = 1;
	resolve();
	int next = G_OFF;
	const char *dir = getenv("MCPREDICT_TRACE_DIR");
	if (dir && *dir) {
		const char *f = getenv("MCPREDICT_FUNCS");
		if (f && f[0] == '0')
			g_funcs = 0;
		char *end = g_prefix + sizeof g_prefix;
		char *p = g_prefix;
		/* Absolute, so that a chdir() in the program does not move
		 * the logs of threads started later. */
		if (dir[0] != '/') {
			if (!getcwd(g_prefix, sizeof g_prefix - 1))
				g_prefix[0] = 0;
			p = scat(g_prefix + slen(g_prefix), end, "/");
		}
		p = scat(p, end, dir);
		open_dir(g_prefix, (size_t)(p - g_prefix));
		p = scat(p, end, "/p");
		ucat(p, end, (uint64_t)getpid(), 0);
		if (write_meta() == 0 && pthread_key_create(&g_key, thr_exit) == 0) {
			pthread_atfork(NULL, NULL, at_fork_child);
			/* on_exit, not atexit: the directed runs' log says with
			 * what status the process ended, which tells a failure it
			 * saw itself from one a parent judged after it ended. */
			on_exit(proc_exit, NULL);
			next = G_READY;
			__mcprec_sched_init(g_prefix);
		}
	}
	in_init = 0;
	__atomic_store_n(&g_state, next, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void mcprec_ctor(void)
{
	rt_init();
}

/* ---- per-thread logs ---- */

static char *log_path(char *buf, size_t n, uint64_t tok)
{
	char *end = buf + n;
	char *p = scat(buf, end, g_prefix);
	p = scat(p, end, ".t");
	p = ucat(p, end, tok, 0);
	scat(p, end, ".bin");
	return buf;
}

/* open_log opens the thread log at path (create: creates it), relative to
 * the trace directory while g_dirfd is still that directory, else by the
 * path. O_NOFOLLOW: the directory may be writable by every user (below).
 * A process running as root creates its logs 0666 whatever its umask:
 * when it switches user later (httpd's "User nobody"), its threads that
 * started before must still reopen their logs to grow them; mcpredict
 * record makes the directory 01777 for the threads started after the
 * switch (recorder/README.md, "Programs that switch user, and lost
 * thread logs"). */
static int open_log(const char *path, int create)
{
	int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_TRUNC : 0);
	int fd;
	if (same_file(g_dirfd, g_dir_dev, g_dir_ino))
		fd = openat(g_dirfd, path + g_dir_len + 1, flags, 0644);
	else
		fd = open(path, flags, 0644);
	if (fd >= 0 && create && geteuid() == 0)
		(void)fchmod(fd, 0666);
	return fd;
}

/* Thread logs lost so far: a thread whose log could not be created loses
 * all its events, one whose log could not grow those after its end. */
static uint32_t g_lost;

/* log_lost counts a lost thread log and says why in the meta file, as
 * "lost TOKEN OFFSET ERRNO STEP PATH" (the log was written up to OFFSET;
 * STEP is open, grow or map), so that mcpredict record warns with the
 * count instead of losing the thread's events in silence; and on
 * standard error, which may be all there is if the program closed the
 * meta file and the user it runs as may not reopen it. */
static void log_lost(uint64_t tok, uint64_t off, int err, const char *step, const char *path)
{
	uint32_t n = __atomic_add_fetch(&g_lost, 1, __ATOMIC_RELAXED);
	char line[PATH_MAX + 128];
	char *end = line + sizeof line;
	char *p = scat(line, end, "lost ");
	p = ucat(p, end, tok, 0);
	p = scat(p, end, " ");
	p = ucat(p, end, off, 0);
	p = scat(p, end, " ");
	p = ucat(p, end, (uint64_t)err, 0);
	p = scat(p, end, " ");
	p = scat(p, end, step);
	p = scat(p, end, " ");
	p = scat(p, end, path);
	p = scat(p, end, "\n");
	int fd = meta_fd, own = 0;
	if (!same_file(meta_fd, meta_dev, meta_ino)) {
		char mp[PATH_MAX];
		scat(scat(mp, mp + sizeof mp, g_prefix), mp + sizeof mp, ".meta");
		fd = open(mp, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
		own = 1;
	}
	if (fd >= 0)
		writeall(fd, line, (size_t)(p - line));
	if (own && fd >= 0)
		close(fd);
	char msg[128];
	char *me = msg + sizeof msg;
	char *q = scat(msg, me, off ? "cannot grow thread log, its later events are lost" : "cannot create thread log, thread not recorded");
	q = scat(q, me, " (");
	q = scat(q, me, step);
	q = scat(q, me, ", errno ");
	q = ucat(q, me, (uint64_t)err, 0);
	q = scat(q, me, "; thread logs lost: ");
	q = ucat(q, me, n, 0);
	scat(q, me, ")");
	warn(msg, path);
}

/* map_window maps [off, off+CHUNK) of the thread's log, growing the file.
 * A failure is a lost log (log_lost). */
static char *map_window(uint64_t tok, uint64_t off, int create)
{
	char path[PATH_MAX];
	log_path(path, sizeof path, tok);
	int fd = open_log(path, create);
	if (fd < 0) {
		log_lost(tok, off, errno, "open", path);
		return NULL;
	}
	/* A sparse extension: only the pages written take disk space. */
	void *w = MAP_FAILED;
	const char *step = "grow";
	if (ftruncate(fd, (off_t)(off + CHUNK)) == 0) {
		step = "map";
		w = sys_mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	}
	int err = errno;
	close(fd); /* the mapping keeps the file; no descriptor per thread */
	if (w == MAP_FAILED) {
		log_lost(tok, off, err, step, path);
		return NULL;
	}
	return w;
}

/* tls_cb widens range[0..1] to the calling thread's TLS block of each
 * module that has one allocated: errno and the __thread variables of the
 * program and its libraries (static TLS, next to the thread pointer). */
static int tls_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t *range = data;
	if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof info->dlpi_tls_data ||
	    !info->dlpi_tls_data)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_TLS)
			continue;
		uintptr_t lo = (uintptr_t)info->dlpi_tls_data;
		if (lo < range[0])
			range[0] = lo;
		if (lo + ph->p_memsz > range[1])
			range[1] = lo + ph->p_memsz;
	}
	return 0;
}

/* main_stack_top returns the end of the [stack] mapping that contains a, 0
 * if none. For the main thread pthread_getattr_np ends the stack at the page
 * above __libc_stack_end, below argv, the environment and the auxiliary
 * vector, which main reads too (argv[1]): without the rest of the mapping an
 * argv[] slot past that page would be recorded, named by its address, in
 * the runs where the array crosses it. Raw reads into a stack buffer: no
 * allocation, at start-up only. */
static uintptr_t main_stack_top(uintptr_t a)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t have = 0;
	uintptr_t top = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', (size_t)(buf + have - line))) != NULL) {
			*nl = 0;
			char *p;
			uintptr_t lo = strtoul(line, &p, 16), hi = 0;
			if (*p == '-')
				hi = strtoul(p + 1, &p, 16);
			if (lo <= a && a < hi && strstr(p, "[stack]"))
				top = hi;
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the buffer: not ours */
	}
	close(fd);
	return top;
}

static struct thr *thr_init(uint64_t tok, uint64_t parent)
{
	struct thr *t = &T;
	int unknown = tok == 0; /* the main thread, or one we did not see created */
	t->state = T_INIT;
	if (tok == 0)
		tok = __atomic_add_fetch(&g_next_tok, 1, __ATOMIC_RELAXED);
	t->tok = tok;
	pthread_attr_t attr;
	void *sa = NULL;
	size_t ss = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &sa, &ss) != 0) {
			sa = NULL;
			ss = 0;
		}
		pthread_attr_destroy(&attr);
	}
	if (unknown && ss > 0) {
		uintptr_t top = main_stack_top((uintptr_t)sa + ss - 1);
		if (top > (uintptr_t)sa + ss)
			ss = top - (uintptr_t)sa;
	}
	t->stk_lo = (uintptr_t)sa;
	t->stk_size = ss;
	uintptr_t tls[2] = {UINTPTR_MAX, 0};
	dl_iterate_phdr(tls_cb, tls);
	t->tls_lo = t->tls_size = 0;
	if (tls[1] > tls[0]) {
		t->tls_lo = tls[0];
		t->tls_size = tls[1] - tls[0];
	}
	t->stk = stack_register(t->stk_lo, t->stk_lo + ss);
	t->fr_cfa = t->fr_ret = 0;
	t->ns_page = t->st_page = 0;
	t->acq_addr = 0;
	t->win = map_window(tok, 0, 1);
	if (!t->win) {
		stack_unregister(t->stk);
		t->stk = &g_nostk;
		t->state = T_DONE;
		return NULL;
	}
	struct mcprec_header *h = (struct mcprec_header *)t->win;
	for (int i = 0; i < 8; i++)
		h->magic[i] = MCPREC_MAGIC[i];
	h->version = MCPREC_VERSION;
	h->rec_size = sizeof(struct mcprec_rec);
	h->token = tok;
	h->parent = parent;
	h->pthread = (uint64_t)pthread_self();
	h->stack_lo = (uint64_t)t->stk_lo;
	h->stack_hi = (uint64_t)(t->stk_lo + ss);
	h->tls_lo = (uint64_t)t->tls_lo;
	h->tls_hi = (uint64_t)(t->tls_lo + t->tls_size);
	t->woff = 0;
	t->pos = sizeof *h;
	pthread_setspecific(g_key, t);
	t->state = T_READY;
	return t;
}

/* thr_exit runs as the thread ends (a pthread key destructor). */
static void thr_exit(void *p)
{
	struct thr *t = p;
	if (t != &T || t->state != T_READY)
		return;
	watch_flush(t);
	if (!t->busy)
		put(t, next_seq(), MCPREC_THREAD_END, 0, 0, 0);
	t->state = T_DONE;
	SCHED(__mcprec_sched_threads(-1));
	stack_unregister(t->stk);
	t->stk = &g_nostk;
	sys_munmap(t->win, CHUNK);
	t->win = NULL;
}

/* proc_exit runs in the thread that calls exit() (an on_exit handler): the
 * threads still running then are cut short. */
static void proc_exit(int status, void *arg)
{
	(void)arg;
	struct thr *t = &T;
	if (t->state == T_READY && !t->busy) {
		watch_flush(t);
		put(t, next_seq(), MCPREC_PROC_EXIT, 0, 0, 0);
	}
	SCHED(__mcprec_sched_exit(status));
}

static __attribute__((noinline)) int next_window(struct thr *t)
{
	uint64_t off = t->woff + CHUNK;
	char *w = map_window(t->tok, off, 0);
	if (!w) {
		t->state = T_DONE;
		return 0;
	}
	sys_munmap(t->win, CHUNK);
	t->win = w;
	t->woff = off;
	t->pos = 0;
	return 1;
}

static inline uint64_t next_seq(void)
{
	return __atomic_add_fetch(&g_seq.v, 1, __ATOMIC_RELAXED);
}

/* __mcprec_seq_now is the number of the last event taken, and
 * __mcprec_token the calling thread's token (0 if it is not recorded):
 * the schedule's log says where in the trace a hold began and ended. */
uint64_t __mcprec_seq_now(void) { return __atomic_load_n(&g_seq.v, __ATOMIC_RELAXED); }
uint64_t __mcprec_token(void) { return T.state == T_READY ? T.tok : 0; }

/* put stores one record. The slot is reserved with a single load and store
 * of pos, and seqkind is stored last, so a signal handler that records in
 * between, or a kill, never leaves a hole or a half-written record. */
static inline void put(struct thr *t, uint64_t seq, unsigned kind, uint64_t pc, uint64_t addr,
		       uint64_t extra)
{
	if (UNLIKELY(t->pos >= CHUNK) && !next_window(t))
		return;
	uint32_t pos = t->pos;
	t->pos = pos + sizeof(struct mcprec_rec);
	struct mcprec_rec *r = (struct mcprec_rec *)(t->win + pos);
	r->pc = pc;
	r->addr = addr;
	r->extra = extra;
	__atomic_store_n(&r->seqkind, (uint64_t)kind << 56 | seq, __ATOMIC_RELEASE);
}

static void tidmap_put(uint64_t pt, uint64_t tok);

static __attribute__((noinline)) struct thr *cur_slow(int may_init)
{
	struct thr *t = &T;
	if (t->state != T_NONE)
		return NULL; /* starting up, finished, or failed */
	int s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (s == G_UNINIT && may_init) {
		rt_init();
		s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	}
	if (s != G_READY)
		return NULL;
	/* The main thread, or a thread created by code we do not see: its
	 * pthread_t is mapped too, so that a pthread_join of it (a signal
	 * thread joining main after cancelling it) names the thread. */
	struct thr *n = thr_init(0, 0);
	if (n)
		tidmap_put((uint64_t)pthread_self(), n->tok);
	return n;
}

/* cur returns the recording state of the calling thread, or NULL when the
 * event must not be recorded. */
static inline struct thr *cur(void)
{
	struct thr *t = &T;
	if (LIKELY(t->state == T_READY))
		return t->busy ? NULL : t;
	return cur_slow(1);
}

static inline void ev(unsigned kind, const volatile void *addr, uint64_t extra, uint64_t pc)
{
	struct thr *t = cur();
	if (t)
		put(t, next_seq(), kind, pc, (uint64_t)(uintptr_t)addr, extra);
}

/* ---- memory accesses ---- */

/* describe_frame records, when it changed, the stack frame that holds
 * address a of the thread's own stack: the CFA of that frame and a pc in
 * its function, found by walking the frame-pointer chain (mcpredict cc
 * compiles with -fno-omit-frame-pointer; on x86-64 a frame's CFA is its
 * frame pointer + 16) from fp, the frame pointer of the function that made
 * the access at pc. The converter names the location from the function's
 * DWARF locals (main::ctx.count). A chain that breaks (a frame of code
 * compiled without frame pointers) gives no record; the location then
 * keeps a name relative to the stack. */
static __attribute__((noinline)) void describe_frame(struct thr *t, uintptr_t a, uint64_t pc,
						     uintptr_t fp)
{
#if defined(__x86_64__)
	uintptr_t hi = t->stk_lo + t->stk_size, prev = 0, fnpc = pc;
	for (int d = 0; d < 64; d++) {
		if (fp <= prev || fp < t->stk_lo || fp + 16 > hi || (fp & 7))
			return;
		uintptr_t cfa = fp + 16;
		uintptr_t ret = ((const uintptr_t *)fp)[1];
		if (a < cfa) {
			if (cfa != t->fr_cfa || ret != t->fr_ret) {
				t->fr_cfa = cfa;
				t->fr_ret = ret;
				put(t, next_seq(), MCPREC_FRAME, fnpc, cfa, 0);
			}
			return;
		}
		fnpc = ret;
		prev = fp;
		fp = ((const uintptr_t *)fp)[0];
	}
#else
	(void)t;
	(void)a;
	(void)pc;
	(void)fp;
#endif
}

/* stack_own records an access to the escaped part of the thread's own
 * stack. fp is the frame pointer of the accessing function. */
static __attribute__((noinline)) void stack_own(struct thr *t, uintptr_t a, uint64_t size,
						unsigned kind, uint64_t pc, uintptr_t fp)
{
	if (a - t->tls_lo < t->tls_size)
		return; /* a thread's TLS sits at the top of its stack block */
	describe_frame(t, a, pc, fp);
	uint64_t extra = size;
	if (kind == MCPREC_READ8)
		extra = *(const volatile uint64_t *)a;
	put(t, next_seq(), kind, pc, a, extra);
	watch_access(t, a, size, kind, extra);
}

/* foreign handles an access outside the thread's own stack that may be in
 * another thread's: it lowers that thread's escape mark, so that the
 * owner's own accesses there are recorded from now on. */
static __attribute__((noinline)) void foreign(struct thr *t, uintptr_t a)
{
	uintptr_t page = a >> 12;
	uint32_t gen = __atomic_load_n(&g_stk_gen, __ATOMIC_RELAXED);
	if (page == t->ns_page && gen == t->ns_gen)
		return;
	struct stk *s;
	if (page == t->st_page && gen == t->st_gen) {
		s = t->st_stk;
	} else {
		s = stack_lookup(a);
		if (!s || s == t->stk) {
			t->ns_page = page;
			t->ns_gen = gen;
			return;
		}
		t->st_page = page;
		t->st_gen = gen;
		t->st_stk = s;
	}
	esc_lower(s, a);
}

/* ---- values that steer ----
 *
 * A read whose value decides nothing — no comparison, switch or address of
 * the thread uses it — is a DREAD: the predictor may let such reads see
 * other values (counters and reference counts updated under a lock commute).
 * mcpredict cc compiles with -fsanitize-coverage=trace-cmp, so the program
 * calls __sanitizer_cov_trace_*cmp* with the operands of every integer
 * comparison and __sanitizer_cov_trace_switch with every switch value.
 *
 * The thread watches its last NWATCH recorded loads (of 1 to 8 bytes): the
 * value loaded and, when the thread then stores to the same address (x++),
 * the value it stored. A watched load is *used* when
 *   - a comparison whose operands are equal has one of these values (the
 *     test `--ref == 0` that frees, `++count == n` of the last arriver: the
 *     value itself decided), or a switch is on one of them;
 *   - an access address lies within 16 MiB above a loaded value of 4096 or
 *     more (the value is a pointer: a list head, a free list).
 * A used load stays a READ. A load that leaves the window unused (NWATCH
 * newer loads, or the thread ends) is rewritten in place as a DREAD, if its
 * record is still in the mapped window (else it stays a READ). A comparison
 * whose operands differ (`--ref == 0` with ref still 2, a limit not
 * reached) leaves the read unused: the predictor assumes that such a test
 * keeps its outcome when the updates between two used reads are reordered.
 * But it marks the load compared: an unused load that no comparison had
 * at all becomes a CREAD (a copy: `lo` read to compute `hi - lo`), which
 * the predictor may let see an older value even where a test's outcome
 * would matter.
 * Values that steer through arithmetic before the comparison (`n % 4 ==
 * 0`), through code that is not instrumented, or beyond the window are not
 * seen (README: "Commutative updates"). */

static inline uint64_t size_mask(unsigned size)
{
	return size >= 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
}

/* watch_settle reads back the value of the thread's latest watched store:
 * at the thread's next hook, before anything can free the memory. */
static __attribute__((noinline)) void watch_settle(struct thr *t)
{
	struct watch *w = t->pend;
	t->pend = NULL;
	if (w->addr && w->stored == 1) {
		switch (w->size) {
		case 1: w->sval = *(const volatile uint8_t *)w->addr; break;
		case 2: w->sval = *(const volatile uint16_t *)w->addr; break;
		case 4: w->sval = *(const volatile uint32_t *)w->addr; break;
		default: w->sval = *(const volatile uint64_t *)w->addr; break;
		}
		w->stored = 2;
	}
}

#define SETTLE(t) do { if (UNLIKELY((t)->pend != NULL)) watch_settle(t); } while (0)

/* watch_drop frees slot w; unused, its record becomes a DREAD. */
static void watch_drop(struct thr *t, struct watch *w, int used)
{
	if (!used && t->win && w->woff == t->woff) {
		struct mcprec_rec *r = (struct mcprec_rec *)(t->win + w->off);
		uint64_t sk = __atomic_load_n(&r->seqkind, __ATOMIC_RELAXED);
		unsigned k = sk >> 56;
		unsigned nk = k == MCPREC_READ ? MCPREC_DREAD : k == MCPREC_READ8 ? MCPREC_DREAD8 : 0;
		if (nk && !w->compared)
			nk += MCPREC_CREAD - MCPREC_DREAD;
		if ((nk == MCPREC_DREAD || nk == MCPREC_CREAD) && w->size <= 4)
			r->extra = w->size | (w->val & size_mask(w->size)) << 8;
		if (nk)
			__atomic_store_n(&r->seqkind, (uint64_t)nk << 56 | (sk & MCPREC_SEQ_MASK), __ATOMIC_RELEASE);
	}
	if (t->pend == w)
		t->pend = NULL;
	w->addr = 0;
	t->nwatch--;
}

/* watch_flush ends every watch of the thread unused (it is ending). */
static void watch_flush(struct thr *t)
{
	for (int i = 0; i < NWATCH; i++)
		if (t->w[i].addr)
			watch_drop(t, &t->w[i], 0);
}

/* watch_compared marks the loads whose value or stored value is a or b
 * (compared at size bytes, unequal) compared: such a load stays unused
 * (a limit not reached does not steer), but it is no copy (CREAD). */
static __attribute__((noinline)) void watch_compared(struct thr *t, uint64_t a, uint64_t b, unsigned size)
{
	SETTLE(t);
	for (int i = 0; i < NWATCH; i++) {
		struct watch *w = &t->w[i];
		if (!w->addr || w->compared)
			continue;
		uint64_t m = size_mask(size < w->size ? size : w->size);
		if ((w->val & m) == (a & m) || (w->val & m) == (b & m) ||
		    (w->stored == 2 && ((w->sval & m) == (a & m) || (w->sval & m) == (b & m))))
			w->compared = 1;
	}
}

/* watch_value marks the loads whose value or stored value is v (compared
 * at size bytes) used. */
static __attribute__((noinline)) void watch_value(struct thr *t, uint64_t v, unsigned size)
{
	SETTLE(t);
	for (int i = 0; i < NWATCH; i++) {
		struct watch *w = &t->w[i];
		if (!w->addr)
			continue;
		uint64_t m = size_mask(size < w->size ? size : w->size);
		if ((w->val & m) == (v & m) || (w->stored == 2 && (w->sval & m) == (v & m)))
			watch_drop(t, w, 1);
	}
}

/* watch_access notes a recorded access of size bytes at a: its address
 * may use a watched pointer, a store may follow a watched load, and a load
 * is watched itself. The record of the access is the thread's last. */
static __attribute__((noinline)) void watch_access(struct thr *t, uintptr_t a, uint64_t size, unsigned kind,
						  uint64_t val)
{
	SETTLE(t);
	if (t->nwatch) {
		for (int i = 0; i < NWATCH; i++) {
			struct watch *w = &t->w[i];
			if (!w->addr)
				continue;
			/* 16 MiB: the base of a large table indexed far in
			 * (memcached's hash table: bucket 62636 is 489 KiB in). */
			if (w->val >= 4096 && a - w->val < (16u << 20))
				watch_drop(t, w, 1);
			else if (kind == MCPREC_WRITE && w->addr == a && w->stored == 0) {
				w->stored = 1;
				t->pend = w;
			}
		}
	}
	if (kind == MCPREC_WRITE || size > 8 || size & (size - 1) || !t->win || t->pos < sizeof(struct mcprec_rec))
		return;
	struct watch *w = &t->w[t->wnext];
	t->wnext = (t->wnext + 1) % NWATCH;
	if (w->addr)
		watch_drop(t, w, 0);
	if (kind != MCPREC_READ8) {
		switch (size) {
		case 1: val = *(const volatile uint8_t *)a; break;
		case 2: val = *(const volatile uint16_t *)a; break;
		case 4: val = *(const volatile uint32_t *)a; break;
		}
	}
	w->addr = a;
	w->val = val;
	w->size = size;
	w->stored = 0;
	w->compared = 0;
	w->woff = t->woff;
	w->off = t->pos - sizeof(struct mcprec_rec);
	t->nwatch++;
}

static inline void cmp_hook(uint64_t a, uint64_t b, unsigned size)
{
	struct thr *t = &T;
	if (t->state != T_READY || t->busy || (!t->nwatch && !t->pend))
		return;
	if (a != b)
		watch_compared(t, a, b, size);
	else
		watch_value(t, a, size);
}

void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b) { cmp_hook(a, b, 1); }
void __sanitizer_cov_trace_cmp2(uint16_t a, uint16_t b) { cmp_hook(a, b, 2); }
void __sanitizer_cov_trace_cmp4(uint32_t a, uint32_t b) { cmp_hook(a, b, 4); }
void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b) { cmp_hook(a, b, 8); }
void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b) { cmp_hook(a, b, 1); }
void __sanitizer_cov_trace_const_cmp2(uint16_t a, uint16_t b) { cmp_hook(a, b, 2); }
void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b) { cmp_hook(a, b, 4); }
void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b) { cmp_hook(a, b, 8); }
void __sanitizer_cov_trace_cmpf(float a, float b) { (void)a; (void)b; }
void __sanitizer_cov_trace_cmpd(double a, double b) { (void)a; (void)b; }
/* clang's trace-cmp needs a coverage kind: mcpredict cc gives it func with
 * trace-pc-guard, one call per function entry, which records nothing. */
void __sanitizer_cov_trace_pc_guard(uint32_t *g) { (void)g; }
void __sanitizer_cov_trace_pc_guard_init(uint32_t *lo, uint32_t *hi) { (void)lo; (void)hi; }

/* cases[0] is the number of case values, cases[1] their size in bits. */
void __sanitizer_cov_trace_switch(uint64_t v, uint64_t *cases)
{
	struct thr *t = &T;
	if (t->state != T_READY || t->busy || (!t->nwatch && !t->pend))
		return;
	watch_value(t, v, cases[1] / 8 ? cases[1] / 8 : 8);
}

/* acc records a load or store of size bytes at a, made at pc by the
 * function whose frame pointer is fp. */
static __attribute__((always_inline)) inline void acc(const void *p, uint64_t size, unsigned kind,
						      uint64_t pc, void *hookfp)
{
	struct thr *t = cur();
	if (!t)
		return;
	uintptr_t a = (uintptr_t)p;
	if (a - t->stk_lo < t->stk_size) {
		if (LIKELY(a < __atomic_load_n(&t->stk->esc_lo, __ATOMIC_RELAXED)))
			return;
		/* hookfp is the hook's frame; the caller's is saved in it. */
		stack_own(t, a, size, kind, pc, *(const uintptr_t *)hookfp);
		return;
	}
	if (UNLIKELY(a - t->tls_lo < t->tls_size))
		return;
	if (UNLIKELY(a - __atomic_load_n(&g_stk_min, __ATOMIC_RELAXED) <
		     __atomic_load_n(&g_stk_span, __ATOMIC_RELAXED)))
		foreign(t, a);
	/* Before the event takes its number: a thread held here makes its
	 * access, and takes its place in the trace, after the others'. */
	SCHED(__mcprec_sched_access(pc, a, size, kind == MCPREC_WRITE));
	uint64_t extra = size;
	if (kind == MCPREC_READ8)
		/* The program is about to read these 8 bytes; their value
		 * lets the converter name a heap block after the pointer it
		 * was reached through (buf->outcnt). */
		extra = *(const volatile uint64_t *)a;
	put(t, next_seq(), kind, pc, a, extra);
	watch_access(t, a, size, kind, extra);
}

#define FP() __builtin_frame_address(0)

/* __mcprec_range is called by the --wrap'ed memcpy/memmove/memset, whose
 * frame sits between this one and the program's. */
void __mcprec_range(const void *a, uint64_t size, int write, void *pc)
{
	struct thr *t = &T;
	for (int i = 0; i < 2; i++) {
		if (t->rng_a[i] == (uintptr_t)a && t->rng_n[i] == size && t->rng_w[i] == (write != 0)) {
			t->rng_a[i] = 0; /* recorded already, by the compiler's instrumentation */
			return;
		}
	}
	if (size > 0)
		acc(a, size, write ? MCPREC_WRITE : MCPREC_READ, (uint64_t)(uintptr_t)pc,
		    *(void **)FP());
}

/* note_range remembers a range access of the compiler's instrumentation. */
static inline void note_range(const void *a, size_t n, int write)
{
	struct thr *t = &T;
	t->rng_a[1] = t->rng_a[0];
	t->rng_n[1] = t->rng_n[0];
	t->rng_w[1] = t->rng_w[0];
	t->rng_a[0] = (uintptr_t)a;
	t->rng_n[0] = n;
	t->rng_w[0] = (uint8_t)write;
}

#define DEF_ACCESS(n)                                                                        \
	void __tsan_read##n(void *a) { acc(a, n, MCPREC_READ, RA(), FP()); }                 \
	void __tsan_write##n(void *a) { acc(a, n, MCPREC_WRITE, RA(), FP()); }               \
	void __tsan_unaligned_read##n(void *a) { acc(a, n, MCPREC_READ, RA(), FP()); }       \
	void __tsan_unaligned_write##n(void *a) { acc(a, n, MCPREC_WRITE, RA(), FP()); }     \
	void __tsan_volatile_read##n(void *a) { acc(a, n, MCPREC_READ, RA(), FP()); }        \
	void __tsan_volatile_write##n(void *a) { acc(a, n, MCPREC_WRITE, RA(), FP()); }

void __tsan_read1(void *a) { acc(a, 1, MCPREC_READ, RA(), FP()); }
void __tsan_write1(void *a) { acc(a, 1, MCPREC_WRITE, RA(), FP()); }
void __tsan_volatile_read1(void *a) { acc(a, 1, MCPREC_READ, RA(), FP()); }
void __tsan_volatile_write1(void *a) { acc(a, 1, MCPREC_WRITE, RA(), FP()); }
DEF_ACCESS(2)
DEF_ACCESS(4)
DEF_ACCESS(16)
void __tsan_read8(void *a) { acc(a, 8, MCPREC_READ8, RA(), FP()); }
void __tsan_unaligned_read8(void *a) { acc(a, 8, MCPREC_READ8, RA(), FP()); }
void __tsan_volatile_read8(void *a) { acc(a, 8, MCPREC_READ8, RA(), FP()); }
void __tsan_write8(void *a) { acc(a, 8, MCPREC_WRITE, RA(), FP()); }
void __tsan_unaligned_write8(void *a) { acc(a, 8, MCPREC_WRITE, RA(), FP()); }
void __tsan_volatile_write8(void *a) { acc(a, 8, MCPREC_WRITE, RA(), FP()); }
void __tsan_read_range(void *a, size_t n)
{
	note_range(a, n, 0);
	if (n)
		acc(a, n, MCPREC_READ, RA(), FP());
}
void __tsan_write_range(void *a, size_t n)
{
	note_range(a, n, 1);
	if (n)
		acc(a, n, MCPREC_WRITE, RA(), FP());
}

void __tsan_vptr_update(void **p, void *v)
{
	/* Constructors store the same vtable pointer again and again; only a
	 * change is a write that matters. */
	if (*p != v)
		acc(p, 8, MCPREC_WRITE, RA(), FP());
}

void __tsan_vptr_read(void **p) { acc(p, 8, MCPREC_READ, RA(), FP()); }

void __tsan_init(void) { rt_init(); }

void __tsan_func_entry(void *caller)
{
	if (!g_funcs)
		return;
	struct thr *t = cur();
	if (t)
		put(t, next_seq(), MCPREC_ENTER, (uint64_t)(uintptr_t)caller, RA(), 0);
}

void __tsan_func_exit(void)
{
	if (!g_funcs)
		return;
	struct thr *t = cur();
	if (t)
		put(t, next_seq(), MCPREC_EXIT, RA(), 0, 0);
}

/* Annotations some libraries use (LLVM's interface); cheap to honour. */
void __tsan_acquire(void *a) { ev(MCPREC_AACQ, a, 0, RA()); }
void __tsan_release(void *a) { ev(MCPREC_AREL, a, 0, RA()); }

/* ---- atomics ----
 *
 * Every atomic operation is one MCPREC_ATOMIC record: its size, whether it
 * reads and/or writes, and whether the trace needs its release and acquire
 * semantics. The converter writes a release as a Signal and an acquire as
 * a Wait on the object "atomic:<name>", so that the predictor orders an
 * acquire after the latest release before it in the trace — the
 * reads-from edge when that release is the store the load read — and data
 * published through a flag or protected by a hand-written spinlock is not
 * reported (which acquires the converter keeps: learned.atomicOrder in
 * names.go). Where the program also reads or writes the location plainly
 * (a reference count read without the atomic), the converter adds the
 * operation as a data access of <name> too (see convert.go). Relaxed
 * operations are recorded for that reason, though they order nothing.
 *
 * For the trace order to be the order of the operations on one address,
 * the operation and its sequence number are taken together under a
 * striped spinlock (hashed by address; held for a few instructions only,
 * never while blocking). An acquire whose latest release on the address
 * was this thread's own adds no order and is not flagged. Fences record
 * nothing.
 */

#define STRIPES 1024
static uint32_t g_stripes[STRIPES];
static uint32_t g_writes[STRIPES];     /* atomic writes recorded per stripe */
static uintptr_t g_rel_addr[STRIPES];  /* the latest release per stripe: address */
static uint64_t g_rel_tok[STRIPES];    /* and thread */

static inline uint32_t *stripe(const volatile void *a)
{
	uintptr_t x = (uintptr_t)a >> 3;
	return &g_stripes[(x ^ (x >> 10)) & (STRIPES - 1)];
}

/* gcc passes its memory model, possibly with flag bits above the low 3. */
static inline int mo_acq(int mo)
{
	mo &= 7;
	return mo == __ATOMIC_CONSUME || mo == __ATOMIC_ACQUIRE || mo == __ATOMIC_ACQ_REL ||
	       mo == __ATOMIC_SEQ_CST;
}

static inline int mo_rel(int mo)
{
	mo &= 7;
	return mo == __ATOMIC_RELEASE || mo == __ATOMIC_ACQ_REL || mo == __ATOMIC_SEQ_CST;
}

/* atomic_pre returns the thread, with the address's stripe locked, when the
 * operation is recorded. busy is set meanwhile, so that a signal handler
 * interrupting us does its atomics without the lock (no self-deadlock) and
 * unrecorded. */
static inline struct thr *atomic_pre(const volatile void *a, uint32_t **lk)
{
	struct thr *t = cur();
	if (!t)
		return NULL;
	t->busy = 1;
	*lk = stripe(a);
	spin_lock(*lk);
	return t;
}

/* atomic_post records the operation, with the stripe still locked. A spin
 * loop (while (!atomic_load(&ready));) would record one load per turn; a
 * load that directly follows the thread's previous one on the same
 * address, with the same flags and no atomic write on the stripe in
 * between, is left out. */
static inline void atomic_post(struct thr *t, uint32_t *lk, const volatile void *p, unsigned size,
			       int rd, int wr, int acq, int rel, uint64_t pc)
{
	uint32_t i = (uint32_t)(lk - g_stripes);
	uintptr_t a = (uintptr_t)p;
	uint32_t flags = size;
	if (rd)
		flags |= MCPREC_ATOM_READ;
	if (wr)
		flags |= MCPREC_ATOM_WRITE;
	if (acq && !(g_rel_addr[i] == a && g_rel_tok[i] == t->tok))
		flags |= MCPREC_ATOM_ACQ;
	if (rel)
		flags |= MCPREC_ATOM_REL;
	if (!wr && t->acq_addr == a && t->acq_flags == flags && t->acq_end == t->woff + t->pos &&
	    t->acq_wr == g_writes[i]) {
		spin_unlock(lk);
		t->busy = 0;
		return;
	}
	put(t, next_seq(), MCPREC_ATOMIC, pc, a, flags);
	if (wr) {
		g_writes[i]++;
		t->acq_addr = 0;
	} else {
		t->acq_addr = a;
		t->acq_flags = flags;
		t->acq_end = t->woff + t->pos;
		t->acq_wr = g_writes[i];
	}
	if (rel) {
		g_rel_addr[i] = a;
		g_rel_tok[i] = t->tok;
	}
	spin_unlock(lk);
	t->busy = 0;
	/* After the stripe is unlocked: a schedule never holds a thread here
	 * (the operation is done), it only arms or counts a remote step. */
	SCHED(__mcprec_sched_atomic(pc, a, size, wr));
}

#define SC __ATOMIC_SEQ_CST

#define DEF_RMW(N, T, OP)                                                           \
	T __tsan_atomic##N##_##OP(volatile T *a, T v, int mo)                      \
	{                                                                           \
		uint64_t pc = RA();                                                 \
		uint32_t *lk = NULL;                                                \
		struct thr *t = atomic_pre(a, &lk);                                 \
		T old = __atomic_##OP(a, v, SC);                                    \
		if (t)                                                              \
			atomic_post(t, lk, a, N / 8, 1, 1, mo_acq(mo), mo_rel(mo), pc); \
		return old;                                                         \
	}

#define DEF_ATOMICS(N, T)                                                                  \
	T __tsan_atomic##N##_load(const volatile T *a, int mo)                             \
	{                                                                                  \
		uint64_t pc = RA();                                                        \
		uint32_t *lk = NULL;                                                       \
		struct thr *t = atomic_pre(a, &lk);                                        \
		T v = __atomic_load_n(a, SC);                                              \
		if (t)                                                                     \
			atomic_post(t, lk, a, N / 8, 1, 0, mo_acq(mo), 0, pc);             \
		return v;                                                                  \
	}                                                                                  \
	void __tsan_atomic##N##_store(volatile T *a, T v, int mo)                          \
	{                                                                                  \
		uint64_t pc = RA();                                                        \
		uint32_t *lk = NULL;                                                       \
		struct thr *t = atomic_pre(a, &lk);                                        \
		__atomic_store_n(a, v, SC);                                                \
		if (t)                                                                     \
			atomic_post(t, lk, a, N / 8, 0, 1, 0, mo_rel(mo), pc);             \
	}                                                                                  \
	DEF_RMW(N, T, fetch_add)                                                           \
	DEF_RMW(N, T, fetch_sub)                                                           \
	DEF_RMW(N, T, fetch_and)                                                           \
	DEF_RMW(N, T, fetch_or)                                                            \
	DEF_RMW(N, T, fetch_xor)                                                           \
	DEF_RMW(N, T, fetch_nand)                                                          \
	T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo)                          \
	{                                                                                  \
		uint64_t pc = RA();                                                        \
		uint32_t *lk = NULL;                                                       \
		struct thr *t = atomic_pre(a, &lk);                                        \
		T old = __atomic_exchange_n(a, v, SC);                                     \
		if (t)                                                                     \
			atomic_post(t, lk, a, N / 8, 1, 1, mo_acq(mo), mo_rel(mo), pc);    \
		return old;                                                                \
	}                                                                                  \
	static inline int cas##N(volatile T *a, T *c, T v, int mo, int fmo, uint64_t pc)   \
	{                                                                                  \
		uint32_t *lk = NULL;                                                       \
		struct thr *t = atomic_pre(a, &lk);                                        \
		int ok = __atomic_compare_exchange_n(a, c, v, 0, SC, SC);                  \
		if (t)                                                                     \
			atomic_post(t, lk, a, N / 8, 1, ok, ok ? mo_acq(mo) : mo_acq(fmo),  \
				    ok && mo_rel(mo), pc);                                 \
		return ok;                                                                 \
	}                                                                                  \
	int __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *c, T v, int mo,  \
						       int fmo)                            \
	{                                                                                  \
		return cas##N(a, c, v, mo, fmo, RA());                                     \
	}                                                                                  \
	int __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *c, T v, int mo,    \
						     int fmo)                              \
	{                                                                                  \
		return cas##N(a, c, v, mo, fmo, RA());                                     \
	}                                                                                  \
	T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo) \
	{                                                                                  \
		cas##N(a, &c, v, mo, fmo, RA());                                           \
		return c;                                                                  \
	}

DEF_ATOMICS(8, uint8_t)
DEF_ATOMICS(16, uint16_t)
DEF_ATOMICS(32, uint32_t)
DEF_ATOMICS(64, uint64_t)

#ifdef __SIZEOF_INT128__
/* 16-byte atomics would need libatomic; the program only reaches such a
 * location through these hooks, so doing them under the stripe lock
 * (always taken here) keeps them atomic with respect to each other. */
typedef unsigned __int128 u128;

static inline struct thr *lock128(const volatile void *a, uint32_t **lk)
{
	struct thr *t = cur();
	if (t)
		t->busy = 1;
	*lk = stripe(a);
	spin_lock(*lk);
	return t;
}

static inline void unlock128(struct thr *t, uint32_t *lk, const volatile void *a, int rd, int wr,
			     int acq, int rel, uint64_t pc)
{
	if (t) {
		atomic_post(t, lk, a, 16, rd, wr, acq, rel, pc);
		return;
	}
	spin_unlock(lk);
}

#define DEF_RMW128(OP, EXPR)                                                  \
	u128 __tsan_atomic128_##OP(volatile u128 *a, u128 v, int mo)         \
	{                                                                     \
		uint64_t pc = RA();                                           \
		uint32_t *lk;                                                 \
		struct thr *t = lock128(a, &lk);                              \
		u128 old = *a;                                                \
		*a = (EXPR);                                                  \
		unlock128(t, lk, a, 1, 1, mo_acq(mo), mo_rel(mo), pc);        \
		return old;                                                   \
	}

u128 __tsan_atomic128_load(const volatile u128 *a, int mo)
{
	uint64_t pc = RA();
	uint32_t *lk;
	struct thr *t = lock128(a, &lk);
	u128 v = *a;
	unlock128(t, lk, a, 1, 0, mo_acq(mo), 0, pc);
	return v;
}

void __tsan_atomic128_store(volatile u128 *a, u128 v, int mo)
{
	uint64_t pc = RA();
	uint32_t *lk;
	struct thr *t = lock128(a, &lk);
	*a = v;
	unlock128(t, lk, a, 0, 1, 0, mo_rel(mo), pc);
}

DEF_RMW128(exchange, v)
DEF_RMW128(fetch_add, old + v)
DEF_RMW128(fetch_sub, old - v)
DEF_RMW128(fetch_and, old &v)
DEF_RMW128(fetch_or, old | v)
DEF_RMW128(fetch_xor, old ^ v)
DEF_RMW128(fetch_nand, ~(old & v))

static int cas128(volatile u128 *a, u128 *c, u128 v, int mo, int fmo, uint64_t pc)
{
	uint32_t *lk;
	struct thr *t = lock128(a, &lk);
	int ok = *a == *c;
	if (ok)
		*a = v;
	else
		*c = *a;
	unlock128(t, lk, a, 1, ok, ok ? mo_acq(mo) : mo_acq(fmo), ok && mo_rel(mo), pc);
	return ok;
}

int __tsan_atomic128_compare_exchange_strong(volatile u128 *a, u128 *c, u128 v, int mo, int fmo)
{
	return cas128(a, c, v, mo, fmo, RA());
}

int __tsan_atomic128_compare_exchange_weak(volatile u128 *a, u128 *c, u128 v, int mo, int fmo)
{
	return cas128(a, c, v, mo, fmo, RA());
}

u128 __tsan_atomic128_compare_exchange_val(volatile u128 *a, u128 c, u128 v, int mo, int fmo)
{
	cas128(a, &c, v, mo, fmo, RA());
	return c;
}
#endif

void __tsan_atomic_thread_fence(int mo)
{
	(void)mo;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* ---- threads ---- */

/* tidmap maps pthread_t to tokens, for Join. Joins are rare: one spinlock. */
struct tident {
	uint64_t pt, tok;
	struct tident *next;
};

#define TIDBUCKETS 1024
static struct tident *g_tid[TIDBUCKETS];
static uint32_t g_tid_lock;

static void tidmap_put(uint64_t pt, uint64_t tok)
{
	struct tident **b = &g_tid[(pt >> 12 ^ pt) % TIDBUCKETS];
	spin_lock(&g_tid_lock);
	for (struct tident *e = *b; e; e = e->next) {
		if (e->pt == pt) {
			e->tok = tok; /* a pthread_t reused after its thread ended */
			spin_unlock(&g_tid_lock);
			return;
		}
	}
	struct tident *e = __libc_malloc(sizeof *e);
	if (e) {
		e->pt = pt;
		e->tok = tok;
		e->next = *b;
		*b = e;
	}
	spin_unlock(&g_tid_lock);
}

/* tidmap_get returns the token of pthread_t pt, 0 if unknown. A join looks
 * it up before it waits: once the join returns, the pthread_t may be reused
 * by a thread created meanwhile, whose token would be taken instead. */
static uint64_t tidmap_get(uint64_t pt)
{
	struct tident *e = g_tid[(pt >> 12 ^ pt) % TIDBUCKETS];
	uint64_t tok = 0;
	spin_lock(&g_tid_lock);
	for (; e; e = e->next) {
		if (e->pt == pt) {
			tok = e->tok;
			break;
		}
	}
	spin_unlock(&g_tid_lock);
	return tok;
}

/* tidmap_drop forgets pt unless it maps to another token by now (a new
 * thread reused the pthread_t). */
static void tidmap_drop(uint64_t pt, uint64_t tok)
{
	struct tident **b = &g_tid[(pt >> 12 ^ pt) % TIDBUCKETS];
	struct tident *gone = NULL;
	spin_lock(&g_tid_lock);
	for (struct tident **p = b; *p; p = &(*p)->next) {
		if ((*p)->pt == pt) {
			if ((*p)->tok == tok) {
				gone = *p;
				*p = gone->next;
			}
			break;
		}
	}
	spin_unlock(&g_tid_lock);
	__libc_free(gone);
}

struct start {
	void *(*fn)(void *);
	void *arg;
	uint64_t tok, parent;
	uint64_t pc; /* where it was created */
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;
	__libc_free(p);
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == G_READY && T.state == T_NONE) {
		struct thr *t = thr_init(s.tok, s.parent);
		tidmap_put((uint64_t)pthread_self(), s.tok);
		if (t)
			put(t, next_seq(), MCPREC_THREAD_START, 0, (uint64_t)(uintptr_t)s.fn, 0);
	}
	SCHED(__mcprec_sched_started(s.pc));
	return s.fn(s.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	uint64_t pc = RA();
	ENSURE(pthread_create);
	SCHED(__mcprec_sched_resolve());
	struct thr *t = cur();
	if (!t)
		return real_pthread_create(th, attr, fn, arg);
	struct start *s = __libc_malloc(sizeof *s);
	if (!s)
		return EAGAIN;
	uint64_t tok = __atomic_add_fetch(&g_next_tok, 1, __ATOMIC_RELAXED);
	s->fn = fn;
	s->arg = arg;
	s->tok = tok;
	s->parent = t->tok;
	s->pc = pc;
	/* A pointer into our own stack given to the new thread: that part of
	 * the stack is shared from now on (see "stacks"). */
	if ((uintptr_t)arg - t->stk_lo < t->stk_size) {
		esc_lower(t->stk, (uintptr_t)arg);
		describe_frame(t, (uintptr_t)arg, pc, *(const uintptr_t *)FP());
	}
	/* The Create's number is taken before the child exists, so it is below
	 * every event of the child; it is stored only if the create works. */
	uint64_t seq = next_seq();
	SCHED(__mcprec_sched_threads(1));
	t->busy = 1;
	int rc = real_pthread_create(th, attr, trampoline, s);
	t->busy = 0;
	if (rc != 0) {
		SCHED(__mcprec_sched_threads(-1));
		__libc_free(s);
		return rc;
	}
	put(t, seq, MCPREC_CREATE, pc, tok, 0);
	tidmap_put((uint64_t)*th, tok);
	SCHED(__mcprec_sched_created(pc));
	return 0;
}

static void joined(pthread_t th, uint64_t tok, uint64_t pc)
{
	if (tok)
		tidmap_drop((uint64_t)th, tok);
	if (tok)
		ev(MCPREC_JOIN, (void *)(uintptr_t)tok, 0, pc);
	else
		ev(MCPREC_JOIN, (void *)(uintptr_t)th, 1, pc);
}

int pthread_join(pthread_t th, void **ret)
{
	uint64_t pc = RA();
	ENSURE(pthread_join);
	uint64_t tok = tidmap_get((uint64_t)th);
	SCHED(__mcprec_sched_block(1));
	int rc = real_pthread_join(th, ret);
	SCHED(__mcprec_sched_block(-1));
	if (rc == 0)
		joined(th, tok, pc);
	return rc;
}

int pthread_tryjoin_np(pthread_t th, void **ret)
{
	uint64_t pc = RA();
	ENSURE(pthread_tryjoin_np);
	uint64_t tok = tidmap_get((uint64_t)th);
	int rc = real_pthread_tryjoin_np(th, ret);
	if (rc == 0)
		joined(th, tok, pc);
	return rc;
}

int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *ts)
{
	uint64_t pc = RA();
	ENSURE(pthread_timedjoin_np);
	uint64_t tok = tidmap_get((uint64_t)th);
	int rc = real_pthread_timedjoin_np(th, ret, ts);
	if (rc == 0)
		joined(th, tok, pc);
	return rc;
}

/* ---- locks: the event after acquiring, before releasing ---- */

#define ACQUIRE(name, type, kind)                       \
	int name(type *m)                               \
	{                                               \
		uint64_t pc = RA();                     \
		ENSURE(name);                           \
		int rc = real_##name(m);                \
		if (rc == 0) {                          \
			ev(kind, m, 0, pc);             \
			SCHED(__mcprec_sched_lock_post(m, pc)); \
		}                                       \
		return rc;                              \
	}

/* A blocking acquisition tries first: only when the lock is busy is the
 * wait recorded (MCPREC_LOCKWAIT) before blocking, so that a run that ends
 * in a deadlock shows which acquisitions never returned, at the cost of
 * one event per contended acquisition only. */
#define ACQUIRE_BLOCKING(name, tryname, type, kind)        \
	int name(type *m)                                  \
	{                                                  \
		uint64_t pc = RA();                        \
		ENSURE(name);                              \
		SCHED(__mcprec_sched_lock_pre(m, pc));     \
		int rc = real_##tryname(m);                \
		if (rc == EBUSY) {                         \
			SCHED(__mcprec_sched_lock_busy(m)); \
			ev(MCPREC_LOCKWAIT, m, kind, pc);  \
			SCHED(__mcprec_sched_block(1));    \
			rc = real_##name(m);               \
			SCHED(__mcprec_sched_block(-1));   \
		}                                          \
		if (rc == 0) {                             \
			ev(kind, m, 0, pc);                \
			SCHED(__mcprec_sched_lock_post(m, pc)); \
		}                                          \
		return rc;                                 \
	}

#define ACQUIRE_TIMED(name, type, kind)                            \
	int name(type *m, const struct timespec *ts)               \
	{                                                          \
		uint64_t pc = RA();                                \
		ENSURE(name);                                      \
		SCHED(__mcprec_sched_lock_pre(m, pc));             \
		int rc = real_##name(m, ts);                       \
		if (rc == 0) {                                     \
			ev(kind, m, 0, pc);                        \
			SCHED(__mcprec_sched_lock_post(m, pc));        \
		}                                                  \
		return rc;                                         \
	}

#define RELEASE(name, type, kind)              \
	int name(type *m)                      \
	{                                      \
		uint64_t pc = RA();            \
		ENSURE(name);                  \
		ev(kind, m, 0, pc);            \
		int rc = real_##name(m);       \
		SCHED(__mcprec_sched_unlock_post(m)); \
		return rc;                     \
	}

ACQUIRE_BLOCKING(pthread_mutex_lock, pthread_mutex_trylock, pthread_mutex_t, MCPREC_LOCK)
ACQUIRE(pthread_mutex_trylock, pthread_mutex_t, MCPREC_TRYLOCK)
ACQUIRE_TIMED(pthread_mutex_timedlock, pthread_mutex_t, MCPREC_LOCK)
RELEASE(pthread_mutex_unlock, pthread_mutex_t, MCPREC_UNLOCK)
ACQUIRE_BLOCKING(pthread_spin_lock, pthread_spin_trylock, pthread_spinlock_t, MCPREC_LOCK)
ACQUIRE(pthread_spin_trylock, pthread_spinlock_t, MCPREC_TRYLOCK)
RELEASE(pthread_spin_unlock, pthread_spinlock_t, MCPREC_UNLOCK)
ACQUIRE_BLOCKING(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, pthread_rwlock_t, MCPREC_RDLOCK)
ACQUIRE(pthread_rwlock_tryrdlock, pthread_rwlock_t, MCPREC_RDLOCK)
ACQUIRE_TIMED(pthread_rwlock_timedrdlock, pthread_rwlock_t, MCPREC_RDLOCK)
ACQUIRE_BLOCKING(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, pthread_rwlock_t, MCPREC_WRLOCK)
ACQUIRE(pthread_rwlock_trywrlock, pthread_rwlock_t, MCPREC_WRLOCK)
ACQUIRE_TIMED(pthread_rwlock_timedwrlock, pthread_rwlock_t, MCPREC_WRLOCK)
RELEASE(pthread_rwlock_unlock, pthread_rwlock_t, MCPREC_RWUNLOCK)

/* ---- condition variables ----
 *
 * A wait is recorded as three events: Unlock of the mutex, numbered and
 * stored before blocking; at wake-up, with the mutex held again, Wait on
 * the cond (only if woken, not on a time-out) and Lock of the mutex. The
 * trace's "Wait, cond, mutex" form would put the release of the mutex at
 * the wake-up, after the other threads that took the mutex meanwhile —
 * in a bounded buffer, where both sides wait on one mutex, the trace
 * would then show two threads holding it at once.
 */

static inline void wait_begin(struct thr *t, pthread_mutex_t *m, uint64_t pc)
{
	if (t)
		put(t, next_seq(), MCPREC_UNLOCK, pc, (uint64_t)(uintptr_t)m, 0);
}

static void wait_end(struct thr *t, int woken, pthread_cond_t *c, pthread_mutex_t *m, uint64_t pc)
{
	if (!t || t->state != T_READY)
		return;
	if (woken)
		put(t, next_seq(), MCPREC_WAIT, pc, (uint64_t)(uintptr_t)c, 0);
	put(t, next_seq(), MCPREC_LOCK, pc, (uint64_t)(uintptr_t)m, 0);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	uint64_t pc = RA();
	ENSURE(pthread_cond_wait);
	struct thr *t = cur();
	wait_begin(t, m, pc);
	SCHED(__mcprec_sched_block(1));
	int rc = real_pthread_cond_wait(c, m);
	SCHED(__mcprec_sched_block(-1));
	if (rc == 0)
		wait_end(t, 1, c, m, pc);
	return rc;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	uint64_t pc = RA();
	ENSURE(pthread_cond_timedwait);
	struct thr *t = cur();
	wait_begin(t, m, pc);
	int rc = real_pthread_cond_timedwait(c, m, ts);
	/* A wait that timed out was woken by no Signal; it still holds the
	 * mutex again. */
	if (rc == 0 || rc == ETIMEDOUT)
		wait_end(t, rc == 0, c, m, pc);
	return rc;
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
			   const struct timespec *ts)
{
	uint64_t pc = RA();
	ENSURE(pthread_cond_clockwait);
	struct thr *t = cur();
	wait_begin(t, m, pc);
	int rc = real_pthread_cond_clockwait(c, m, clk, ts);
	if (rc == 0 || rc == ETIMEDOUT)
		wait_end(t, rc == 0, c, m, pc);
	return rc;
}

RELEASE(pthread_cond_signal, pthread_cond_t, MCPREC_SIGNAL)
RELEASE(pthread_cond_broadcast, pthread_cond_t, MCPREC_BROADCAST)

/* At arrival: every arrival of an episode then precedes every event after
 * the barrier, which is how the predictor orders barrier phases. */
int pthread_barrier_wait(pthread_barrier_t *b)
{
	uint64_t pc = RA();
	ENSURE(pthread_barrier_wait);
	ev(MCPREC_BARRIER, b, 0, pc);
	SCHED(__mcprec_sched_block(1));
	int rc = real_pthread_barrier_wait(b);
	SCHED(__mcprec_sched_block(-1));
	return rc;
}

/* ---- semaphores ---- */

RELEASE(sem_post, sem_t, MCPREC_SEMPOST)
int sem_wait(sem_t *m)
{
	uint64_t pc = RA();
	ENSURE(sem_wait);
	SCHED(__mcprec_sched_block(1));
	int rc = real_sem_wait(m);
	SCHED(__mcprec_sched_block(-1));
	if (rc == 0) {
		ev(MCPREC_SEMWAIT, m, 0, pc);
		SCHED(__mcprec_sched_lock_post(m, pc));
	}
	return rc;
}
ACQUIRE(sem_trywait, sem_t, MCPREC_SEMWAIT)
ACQUIRE_TIMED(sem_timedwait, sem_t, MCPREC_SEMWAIT)

/* ---- heap ----
 *
 * Alloc after the allocation, Free before the release, so that a block
 * reused by another thread is numbered after the Free of its last owner.
 * malloc may be called by the dynamic linker before anything is set up:
 * these never start the recorder themselves.
 */

static inline struct thr *cur_heap(void)
{
	struct thr *t = &T;
	if (LIKELY(t->state == T_READY))
		return t->busy ? NULL : t;
	return cur_slow(0);
}

static inline void heap_ev(unsigned kind, void *p, uint64_t n, uint64_t pc)
{
	struct thr *t = cur_heap();
	if (t)
		put(t, next_seq(), kind, pc, (uint64_t)(uintptr_t)p, n);
}

/* The size of an Alloc, with its allocator in the top byte. */
#define FN(fn, n) (((uint64_t)(n) & ((1ULL << 56) - 1)) | (uint64_t)(fn) << 56)

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	if (p)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MALLOC, n), RA());
	return p;
}

void *calloc(size_t a, size_t b)
{
	void *p = __libc_calloc(a, b);
	if (p)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_CALLOC, (uint64_t)a * b), RA());
	return p;
}

void free(void *p)
{
	if (T.pend && T.state == T_READY)
		watch_settle(&T); /* it may read back a store into p */
	if (p)
		heap_ev(MCPREC_FREE, p, 0, RA());
	__libc_free(p);
}

void *realloc(void *p, size_t n)
{
	uint64_t pc = RA();
	if (!p) {
		void *q = __libc_malloc(n);
		if (q)
			heap_ev(MCPREC_ALLOC, q, FN(MCPREC_FN_REALLOC, n), pc);
		return q;
	}
	struct thr *t = cur_heap();
	uint64_t before = t ? next_seq() : 0;
	void *q = __libc_realloc(p, n);
	if (!t)
		return q;
	if (q == p) {
		/* resized in place */
		put(t, before, MCPREC_ALLOC, pc, (uint64_t)(uintptr_t)q, FN(MCPREC_FN_REALLOC, n));
	} else if (q || n == 0) {
		put(t, before, MCPREC_FREE, pc, (uint64_t)(uintptr_t)p, 0);
		if (q)
			put(t, next_seq(), MCPREC_ALLOC, pc, (uint64_t)(uintptr_t)q, FN(MCPREC_FN_REALLOC, n));
	}
	return q;
}

/* Mapped memory (a shared scoreboard, a mapped file) is a block like a
 * malloc one, named by its mapping's call site and offset
 * (mmap@score.c:40+16), so that its names are the same in every run.
 * The mappings that libc makes for itself (malloc's large chunks, thread
 * stacks) call the kernel directly and are not seen. munmap of a whole
 * mapping is its Free; a partial one is not recorded. */
void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p = sys_mmap(a, n, prot, flags, fd, off);
	if (p != MAP_FAILED)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MMAP, n), RA());
	return p;
}

void *mmap64(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p = sys_mmap(a, n, prot, flags, fd, off);
	if (p != MAP_FAILED)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MMAP, n), RA());
	return p;
}

int munmap(void *a, size_t n)
{
	if (T.pend && T.state == T_READY)
		watch_settle(&T); /* as free */
	heap_ev(MCPREC_FREE, a, 0, RA());
	return sys_munmap(a, n);
}

static int pow2(size_t a) { return a && !(a & (a - 1)); }

void *memalign(size_t al, size_t n)
{
	void *p = __libc_memalign(al, n);
	if (p)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MEMALIGN, n), RA());
	return p;
}

void *aligned_alloc(size_t al, size_t n)
{
	if (!pow2(al)) {
		errno = EINVAL;
		return NULL;
	}
	void *p = __libc_memalign(al, n);
	if (p)
		heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MEMALIGN, n), RA());
	return p;
}

int posix_memalign(void **out, size_t al, size_t n)
{
	if (!pow2(al) || al % sizeof(void *) != 0)
		return EINVAL;
	void *p = __libc_memalign(al, n);
	if (!p)
		return ENOMEM;
	heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_MEMALIGN, n), RA());
	*out = p;
	return 0;
}

/* C++ operator new and delete, so that an object's allocation site is the
 * program's new expression rather than a line inside libstdc++. A failing
 * allocation goes to the real operator, which calls the new-handler or
 * throws. Weak: a program that replaces the operators keeps its own (its
 * calls to malloc are then the sites). */

static void *real_new(const char *name, size_t n)
{
	void *(*fn)(size_t) = (void *(*)(size_t))dlsym(RTLD_NEXT, name);
	if (!fn)
		abort();
	return fn(n);
}

__attribute__((weak)) void *_Znwm(size_t n)
{
	void *p = __libc_malloc(n ? n : 1);
	if (!p)
		return real_new("_Znwm", n);
	heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_NEW, n), RA());
	return p;
}

__attribute__((weak)) void *_Znam(size_t n)
{
	void *p = __libc_malloc(n ? n : 1);
	if (!p)
		return real_new("_Znam", n);
	heap_ev(MCPREC_ALLOC, p, FN(MCPREC_FN_NEW_ARRAY, n), RA());
	return p;
}

static inline void delete_ev(void *p, uint64_t pc)
{
	if (p)
		heap_ev(MCPREC_FREE, p, 0, pc);
	__libc_free(p);
}

__attribute__((weak)) void _ZdlPv(void *p) { delete_ev(p, RA()); }
__attribute__((weak)) void _ZdaPv(void *p) { delete_ev(p, RA()); }
__attribute__((weak)) void _ZdlPvm(void *p, size_t n)
{
	(void)n;
	delete_ev(p, RA());
}
__attribute__((weak)) void _ZdaPvm(void *p, size_t n)
{
	(void)n;
	delete_ev(p, RA());
}

/* ---- allocation functions named by the user ----
 *
 * mcpredict cc --alloc-func NAME renames the definition of NAME in the
 * assembly it compiles to __mcprec_real_NAME and adds a wrapper named NAME
 * (recorder/cc.go) that calls __mcprec_ufn_enter, the real function, then
 * __mcprec_ufn_alloc with the result; --free-func wrappers call
 * __mcprec_ufn_free before the real function and __mcprec_ufn_leave
 * after. Only the outermost of nested calls (apr_pcalloc calling
 * apr_palloc, both named) is recorded. The wrappers reach these functions
 * through weak references: a program linked without the runtime just
 * calls the real functions.
 */

static __thread int g_udepth __attribute__((tls_model("initial-exec")));

/* The wrappers seen so far, by index; each is announced in the meta file
 * ("ufn INDEX 0xADDR") so that the converter can name it. */
#define MAXUFN 256
static uintptr_t g_ufn[MAXUFN];
static uint32_t g_nufn, g_ufn_lock;

static uint64_t ufn_index(uintptr_t fn)
{
	uint32_t n = __atomic_load_n(&g_nufn, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (g_ufn[i] == fn)
			return i;
	spin_lock(&g_ufn_lock);
	n = g_nufn;
	uint32_t i = 0;
	while (i < n && g_ufn[i] != fn)
		i++;
	if (i == n && n < MAXUFN) {
		g_ufn[n] = fn;
		char path[PATH_MAX], line[64];
		char *end = path + sizeof path;
		scat(scat(path, end, g_prefix), end, ".meta");
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			char *le = line + sizeof line;
			char *p = scat(line, le, "ufn ");
			p = ucat(p, le, n, 0);
			p = scat(p, le, " ");
			p = ucat(p, le, fn, 1);
			p = scat(p, le, "\n");
			writeall(fd, line, (size_t)(p - line));
			close(fd);
		}
		__atomic_store_n(&g_nufn, n + 1, __ATOMIC_RELEASE);
	}
	spin_unlock(&g_ufn_lock);
	return i < MAXUFN ? i : MAXUFN - 1;
}

void __mcprec_ufn_enter(void) { g_udepth++; }

void __mcprec_ufn_leave(void) { g_udepth--; }

/* size is ~0 when the function does not take it; fn is the wrapper. */
void __mcprec_ufn_alloc(void *p, uint64_t size, void *pc, void *fn)
{
	if (--g_udepth != 0 || !p)
		return;
	struct thr *t = cur_heap();
	if (!t)
		return;
	uint64_t s = size >= MCPREC_UNKNOWN_SIZE ? MCPREC_UNKNOWN_SIZE : size;
	put(t, next_seq(), MCPREC_UALLOC, (uint64_t)(uintptr_t)pc, (uint64_t)(uintptr_t)p,
	    s | ufn_index((uintptr_t)fn) << 48);
}

void __mcprec_ufn_free(void *p, void *pc)
{
	if (g_udepth++ == 0 && p)
		heap_ev(MCPREC_UFREE, p, 0, (uint64_t)(uintptr_t)pc);
}
