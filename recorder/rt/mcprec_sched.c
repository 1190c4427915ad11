/*
 * mcprec_sched.c — directed schedules for `mcpredict reproduce`.
 *
 * When MCPREDICT_SCHEDULE names a schedule file (and recording is on), the
 * runtime forces one interleaving of a predicted atomicity violation:
 *
 *   - the N-th execution (any thread) of the local thread's first access
 *     of the pattern (site L1) arms the schedule and takes the address it
 *     accessed;
 *   - that thread is then held at its first point after L1 where another
 *     thread can come in: before it acquires a lock, after it released a
 *     lock it held at L1, or before its second access of the pattern (site
 *     L2), whichever comes first;
 *   - it is let go once other threads have made the remote accesses of the
 *     pattern (sites R1, R2, ..., in order; "same" ones on the address L1
 *     took) and the last of them has completed (its thread's next hook,
 *     or 2 ms), or when the pause (pause_ms) ends, or at once when another
 *     thread is about to block on a lock the held thread holds;
 *   - while it is held, another thread about to write the address L1 took
 *     at L1's own code, or to take a lock at the PEER site (where the
 *     local thread took the lock it held at L1), is a bystander (a second
 *     setter of the same pair): it is held too, until the remote steps are
 *     made or the schedule ends, so that they see the state the local
 *     thread left;
 *   - optionally (prehold 1, for a remote thread that ran first in the
 *     recorded run), the first thread to reach a PRE site before L1 is
 *     held until L1 happens, bounded by the pause as well.
 *
 * A lock-order deadlock of N threads (2..MAXREMOTE+1) has lock sites (kind
 * L): L1 is the first thread's acquisition of the lock it holds in the
 * cycle, R1..R(N-1) the other threads' acquisitions of theirs, L2 the first
 * thread's acquisition that then blocks. Its remote steps are matched in
 * any order, each by a thread of its own, and each thread that made one is
 * held before its next acquisition as the local thread is: a barrier of the
 * N threads, each holding its lock, that opens when the last of them has
 * its lock (each then tries the next thread's lock: the run hangs). A hold
 * that ends otherwise (the pause, a thread blocking on a lock a held thread
 * holds) ends the schedule, and every held thread goes on.
 *
 * An exploring schedule (point lines, no L1) holds threads at change
 * points instead, as PCT lowers a thread's priority: the OCC-th execution
 * (any thread) of a point's site holds its thread before the access or
 * the acquisition, until every other thread is blocked or gone, the pause
 * ends, or another thread is about to block on a lock the held thread
 * holds. Every hold, of either kind, also ends when no other thread can
 * run (all of them blocked in a lock, a wait, a join, a barrier or a
 * semaphore, or ended; a timed wait is not blocked, it wakes on its own):
 * holding longer would only stall the program.
 *
 * Each step is written to "<trace prefix>.sched", which reproduce reads as
 * evidence, with the number of the last event taken (seq, the trace's
 * second column) and the milliseconds since start-up (ms): the trace lines
 * of a hold's window. A fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
 * SIGILL) and exit() are logged the same way, so that a failure can be
 * placed after the window it came from. The directed run is recorded as any other; whether the pattern
 * really happened is decided from its trace, not from this file.
 *
 * A serial schedule (serial 1, or 2 for the reverse order) holds each
 * thread at its start until no other thread can run, the first created
 * going first (serial 2: the last): the threads run one after the other.
 * It records the run in which they did not overlap, which the precision
 * tests check every idiom on.
 *
 * The file format, one directive per line:
 *   mcpredict-schedule 1
 *   pause_ms N
 *   occurrence N
 *   prehold 0|1
 *   serial 1|2
 *   site ROLE KIND SAME MODULE LO HI
 *   point IDX KIND MODULE LO HI OCC
 * ROLE is L1, L2, R1..R8 (R1..R4 for an access pattern), PRE or PEER; KIND R
 * (read), W (write), A (any access) or L (a lock acquisition: PRE, or
 * every site of a deadlock, which an L1 of kind L makes the schedule);
 * SAME 1 when the access must touch the address L1 took; MODULE the base name of the ELF object, "-" for the
 * executable; LO, HI a link-time code range (hex) of the site's line:
 * a hook's return address minus one in it matches. A point's IDX (0 to
 * MAXPOINTS-1) groups the ranges of one change point; its KIND is R, W, A
 * or L, C (a thread creation: the creator is held once the thread exists)
 * or S (the start of a thread created at the site: it is held before its
 * first step), and OCC the execution of its site that holds. A point of
 * KIND N has no site (MODULE "-", LO and HI 0): the OCC-th lock
 * acquisition of the run, by any thread anywhere, holds, as PCT's change
 * points are steps of the run (code that never ran in the recording has
 * no site to draw; locks are counted, not accesses, as the recording
 * counts them all).
 */
#define _GNU_SOURCE
#include "mcprec.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXRANGES 256
#define MAXREMOTE 8 /* remote steps: R1..R8 (a deadlock cycle of 9 threads) */
#define MAXHELD 16
#define MAXPOINTS 16               /* change points of an exploring schedule */
#define MAXHOLDING 64 /* threads held at once (a serial run holds every thread not yet run) */

enum { R_L1, R_L2, R_R1, R_PRE = R_R1 + MAXREMOTE, R_PEER, NROLES };
enum { PH_OFF, PH_IDLE, PH_ARMED, PH_MATCHED, PH_DONE };

struct range {
	uint64_t lo, hi; /* run-time addresses once resolved */
	uint64_t llo, lhi;
	char mod[64];
	int resolved;
};

struct site {
	char kind; /* R, W, A, L */
	int same;
	int n;
	struct range *r[MAXRANGES];
};

/* A change point of an exploring schedule. */
struct point {
	struct site s;
	uint64_t occ;  /* the execution that holds */
	uint64_t hits; /* executions so far */
};

struct sthr {
	int armed;          /* to be held: it triggered L1 (or, in a deadlock cycle, made a remote step) */
	int nheld, h0;      /* locks held now, and at L1 (at its remote step) */
	const volatile void *held[MAXHELD];
	int just_matched;   /* made the last remote access: let go at its next hook */
	int member;         /* a deadlock cycle's thread: 1 for L1, 1+k for Rk */
	int abandon;        /* another thread is about to block on a lock this held thread holds */
	uint64_t hold_no;   /* the number of its hold, in the order holds began */
};

int __mcprec_sched_on;

static struct range g_ranges[MAXRANGES];
static int g_nranges;
static struct site g_sites[NROLES];
static int g_nremote;
static int g_cycle; /* a deadlock schedule (L1 is a lock site): remote steps in any order, each thread held */
static unsigned g_rdone; /* the remote steps made, a bit each (g_cycle) */
static int g_unresolved;
static uint64_t g_pause_ms = 300, g_occ = 1;
static int g_prehold, g_prehold_used;

static int g_phase = PH_OFF;
static uint64_t g_hits;
static uint64_t g_local;
static uintptr_t g_addr, g_asz;
static int g_step;
static uint64_t g_match_ms;
static int g_released;
static struct sthr *g_holding[MAXHOLDING]; /* the threads held now (under g_lock) */
static int g_nholding;
static uint32_t g_lock;
static int g_log = -1;
static uint64_t g_start_ms;

static struct point g_points[MAXPOINTS];
static int g_npoints; /* 1 + the highest point index */
static int g_nblind;  /* points of kind N */
static uint64_t g_nlocks; /* lock acquisitions so far (for the points of kind N) */
/* Threads alive (the main one, and those created since) and blocked now:
 * a hold ends when every other thread is blocked or gone. */
static int g_live = 1, g_blocked;
static uint64_t g_holds; /* holds begun so far */
static int g_bystanders; /* bystander holds so far (their log names) */
/* A serial schedule (serial 1: in the order the threads were created;
 * serial 2: the last created first) holds every thread at its start until no other
 * thread can run: the threads run one after the other, the recording of a
 * run in which they did not overlap. */
static int g_serial;

uint64_t __mcprec_seq_now(void);
uint64_t __mcprec_token(void);

static __thread struct sthr S __attribute__((tls_model("initial-exec")));

static void slock(void)
{
	while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}
static void sunlock(void) { __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE); }

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t self_id(void) { return (uint64_t)pthread_self(); }

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	if (g_log < 0)
		return;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(g_log, buf, (size_t)n);
	(void)w;
}

/* at_ prints where the program is: the last event's number and the
 * milliseconds since start-up. */
static void at_(char *buf, size_t n)
{
	snprintf(buf, n, "seq=%llu ms=%llu", (unsigned long long)__mcprec_seq_now(),
		 (unsigned long long)(now_ms() - g_start_ms));
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int resolve_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	int *first = data;
	const char *name = info->dlpi_name && *info->dlpi_name ? base_name(info->dlpi_name) : NULL;
	int exe = *first && name == NULL;
	*first = 0;
	for (int i = 0; i < g_nranges; i++) {
		struct range *r = &g_ranges[i];
		if (r->resolved)
			continue;
		int match = strcmp(r->mod, "-") == 0 ? exe : (name && strcmp(r->mod, name) == 0);
		if (!match)
			continue;
		r->lo = info->dlpi_addr + r->llo;
		r->hi = info->dlpi_addr + r->lhi;
		__atomic_store_n(&r->resolved, 1, __ATOMIC_RELEASE);
		g_unresolved--;
	}
	return 0;
}

/* __mcprec_sched_resolve maps the sites' ranges to run-time addresses;
 * called at start-up and at each thread creation while some module is
 * not loaded yet (a server's modules are loaded before its threads). */
void __mcprec_sched_resolve(void)
{
	if (!__mcprec_sched_on || g_unresolved <= 0)
		return;
	slock();
	int first = 1;
	dl_iterate_phdr(resolve_cb, &first);
	sunlock();
}

static int role_of(const char *s)
{
	if (strcmp(s, "L1") == 0)
		return R_L1;
	if (strcmp(s, "L2") == 0)
		return R_L2;
	if (strcmp(s, "PRE") == 0)
		return R_PRE;
	if (strcmp(s, "PEER") == 0)
		return R_PEER;
	if (s[0] == 'R' && s[1] >= '1' && s[1] < '1' + MAXREMOTE && s[2] == 0)
		return R_R1 + (s[1] - '1');
	return -1;
}

/* on_fatal logs a fatal signal, then lets it do what it would have done:
 * the log then says where in the trace the program died. */
static void on_fatal(int sig)
{
	char at[64];
	at_(at, sizeof at);
	logf_("fatal signal=%d %s thread=%llu", sig, at, (unsigned long long)__mcprec_token());
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fatal_handlers(void)
{
	static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_fatal;
			sa.sa_flags = SA_RESETHAND | SA_NODEFER;
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

static void explore(uint64_t pc, char kind);
static void hold(const char *where, int want_phase);

/* __mcprec_sched_created: the caller created a thread at pc. */
void __mcprec_sched_created(uint64_t pc)
{
	if (g_npoints)
		explore(pc, 'C');
}

/* __mcprec_sched_started: a thread created at create_pc starts. */
void __mcprec_sched_started(uint64_t create_pc)
{
	if (g_serial)
		hold("serial", PH_OFF); /* ordered by creation (hold) */
	if (g_npoints)
		explore(create_pc, 'S');
}

/* __mcprec_sched_exit: the process calls exit(status). */
void __mcprec_sched_exit(int status)
{
	char at[64];
	at_(at, sizeof at);
	logf_("exit status=%d %s thread=%llu", status, at, (unsigned long long)__mcprec_token());
}

void __mcprec_sched_block(int delta) { __atomic_add_fetch(&g_blocked, delta, __ATOMIC_ACQ_REL); }
void __mcprec_sched_threads(int delta) { __atomic_add_fetch(&g_live, delta, __ATOMIC_ACQ_REL); }

/* others_stuck reports whether no thread but the held ones can run: every
 * other thread is blocked or gone (threads in a sleep or in uninstrumented
 * waits, such as a read from a socket, count as running). */
static int others_stuck(void)
{
	int live = __atomic_load_n(&g_live, __ATOMIC_ACQUIRE);
	int blocked = __atomic_load_n(&g_blocked, __ATOMIC_ACQUIRE);
	int held = __atomic_load_n(&g_nholding, __ATOMIC_ACQUIRE);
	return live - blocked - held <= 0;
}

/* first_held reports whether the calling thread's hold began before every
 * other hold now: when no thread can run, it is the one let go, the
 * others held still (a later change point is a lower priority, as in
 * PCT). */
static int first_held(void)
{
	int first = 1;
	slock();
	for (int i = 0; i < g_nholding; i++)
		if (g_holding[i] != &S && (g_serial == 2 ? g_holding[i]->hold_no > S.hold_no : g_holding[i]->hold_no < S.hold_no))
			first = 0;
	sunlock();
	return first;
}

/* __mcprec_sched_init reads the schedule named by MCPREDICT_SCHEDULE; the
 * log goes next to the trace logs (prefix "<dir>/p<pid>"). A schedule
 * that cannot be read turns scheduling off with a message on stderr: the
 * run then says nothing about the bug, and reproduce reports it as not
 * reproduced with that message. */
void __mcprec_sched_init(const char *prefix)
{
	const char *path = getenv("MCPREDICT_SCHEDULE");
	if (!path || !*path)
		return;
	char lp[4200];
	snprintf(lp, sizeof lp, "%s.sched", prefix);
	g_log = open(lp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (g_log >= 0) {
		int hi = fcntl(g_log, F_DUPFD_CLOEXEC, 900);
		if (hi >= 0) {
			close(g_log);
			g_log = hi;
		}
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		logf_("error cannot open schedule %s: %s", path, strerror(errno));
		return;
	}
	static char buf[1 << 16];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		logf_("error cannot read schedule %s", path);
		return;
	}
	buf[n] = 0;
	int lineno = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		if (line[0] == '#' || line[0] == 0)
			continue;
		char key[32], role[8], kind[4], mod[64];
		unsigned long long v, lo, hi;
		int same;
		if (sscanf(line, "%31s", key) != 1)
			continue;
		if (strcmp(key, "site") == 0) {
			if (sscanf(line, "site %7s %3s %d %63s %llx %llx", role, kind, &same, mod, &lo, &hi) != 6) {
				logf_("error schedule line %d: bad site", lineno);
				return;
			}
			int ro = role_of(role);
			if (ro < 0 || g_nranges >= MAXRANGES) {
				logf_("error schedule line %d: bad role or too many ranges", lineno);
				return;
			}
			struct range *r = &g_ranges[g_nranges++];
			r->llo = lo;
			r->lhi = hi;
			snprintf(r->mod, sizeof r->mod, "%s", mod);
			struct site *s = &g_sites[ro];
			s->kind = kind[0];
			s->same = same;
			if (s->n < MAXRANGES)
				s->r[s->n++] = r;
			if (ro >= R_R1 && ro < R_R1 + MAXREMOTE && ro - R_R1 + 1 > g_nremote)
				g_nremote = ro - R_R1 + 1;
		} else if (strcmp(key, "point") == 0) {
			int idx;
			unsigned long long occ;
			if (sscanf(line, "point %d %3s %63s %llx %llx %llu", &idx, kind, mod, &lo, &hi, &occ) != 6 ||
			    idx < 0 || idx >= MAXPOINTS || g_nranges >= MAXRANGES) {
				logf_("error schedule line %d: bad point", lineno);
				return;
			}
			struct point *pt = &g_points[idx];
			pt->s.kind = kind[0];
			pt->occ = occ ? occ : 1;
			if (kind[0] != 'N') {
				struct range *r = &g_ranges[g_nranges++];
				r->llo = lo;
				r->lhi = hi;
				snprintf(r->mod, sizeof r->mod, "%s", mod);
				if (pt->s.n < MAXRANGES)
					pt->s.r[pt->s.n++] = r;
			} else
				g_nblind++;
			if (idx + 1 > g_npoints)
				g_npoints = idx + 1;
		} else if (sscanf(line, "pause_ms %llu", &v) == 1) {
			g_pause_ms = v;
		} else if (sscanf(line, "occurrence %llu", &v) == 1) {
			g_occ = v ? v : 1;
		} else if (sscanf(line, "prehold %llu", &v) == 1) {
			g_prehold = v != 0;
		} else if (sscanf(line, "serial %llu", &v) == 1) {
			g_serial = v == 2 ? 2 : v != 0;
		}
	}
	int directed = g_sites[R_L1].n > 0 && g_nremote > 0;
	if (!directed && g_npoints == 0 && !g_serial) {
		logf_("error schedule %s: no L1 or no remote site, no change point and not serial", path);
		return;
	}
	g_cycle = directed && g_sites[R_L1].kind == 'L';
	g_unresolved = g_nranges;
	g_start_ms = now_ms();
	__mcprec_sched_on = 1;
	g_phase = directed ? PH_IDLE : PH_OFF;
	fatal_handlers();
	__mcprec_sched_resolve();
	logf_("start pause_ms=%llu occurrence=%llu prehold=%d unresolved=%d remote=%d points=%d%s%s",
	      (unsigned long long)g_pause_ms, (unsigned long long)g_occ, g_prehold, g_unresolved, g_nremote, g_npoints,
	      g_cycle ? " cycle" : "", g_serial == 2 ? " serial=last" : g_serial ? " serial=first" : "");
}

/* site_has reports whether pc (a hook's return address) is in one of a
 * site's resolved code ranges, for an access or acquisition of kind. */
static int site_has(const struct site *s, uint64_t pc, char kind)
{
	if (s->n == 0)
		return 0;
	if (s->kind != 'A' && s->kind != kind)
		return 0;
	uint64_t p = pc - 1;
	for (int i = 0; i < s->n; i++) {
		struct range *r = s->r[i];
		if (__atomic_load_n(&r->resolved, __ATOMIC_ACQUIRE) && p >= r->lo && p < r->hi)
			return 1;
	}
	return 0;
}

static int in_site(int role, uint64_t pc, char kind) { return site_has(&g_sites[role], pc, kind); }

static int on_addr(uintptr_t a, uint64_t size)
{
	return a < g_addr + g_asz && g_addr < a + size;
}

static int holds(struct sthr *t, const volatile void *m)
{
	for (int i = 0; i < t->nheld && i < MAXHELD; i++)
		if (t->held[i] == m)
			return 1;
	return 0;
}

/* step_name names the thread's part in the schedule, for the log. */
static void step_name(char *buf, size_t n)
{
	if (S.member > 1)
		snprintf(buf, n, " step=R%d", S.member - 1);
	else if (S.member == 1 || S.armed)
		snprintf(buf, n, " step=L1");
	else
		buf[0] = 0;
}

/* hold waits while the schedule is armed (a thread held after L1, or after
 * its remote step of a deadlock cycle) or idle (pre-hold). The threads
 * held now are in g_holding, for __mcprec_sched_lock_busy. */
static void hold(const char *where, int want_phase)
{
	uint64_t start = now_ms(), deadline = start + g_pause_ms;
	char name[16];
	/* A hold is no cancellation point, whatever it sleeps and logs with:
	 * a thread with deferred cancellation that another thread cancels
	 * while it is held goes on to the program's own next one, as it
	 * would unscheduled (aget's workers, cancelled by the SIGINT thread
	 * while held in their update, died in the hold). */
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	slock();
	if (g_nholding < MAXHOLDING)
		g_holding[g_nholding++] = &S;
	/* A serial hold is ordered by the thread's creation, not by when it
	 * reached its start (two new threads race to it). */
	S.hold_no = g_serial && strcmp(where, "serial") == 0 ? __mcprec_token() : ++g_holds;
	sunlock();
	step_name(name, sizeof name);
	char at[64];
	at_(at, sizeof at);
	logf_("hold %s phase=%d%s %s", where, want_phase, name, at);
	const char *why = "timeout";
	int stuck = 0;
	for (;;) {
		int ph = __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE);
		uint64_t now = now_ms();
		(void)ph;
		if (want_phase == PH_IDLE && ph != PH_IDLE) {
			why = "armed";
			break;
		}
		if (want_phase == PH_MATCHED && ph != PH_ARMED) {
			why = "window"; /* a bystander: the remote steps are made, or the schedule ended */
			break;
		}
		if (want_phase == PH_ARMED) {
			if (ph == PH_DONE) {
				why = "done";
				break;
			}
			if (ph == PH_MATCHED &&
			    (__atomic_load_n(&g_released, __ATOMIC_ACQUIRE) || now - g_match_ms >= 2)) {
				why = "matched";
				break;
			}
		}
		if (__atomic_load_n(&S.abandon, __ATOMIC_ACQUIRE)) {
			why = "lock";
			break;
		}
		/* Twice in a row, 100 us apart: a thread between its wake-up and
		 * its hook is not taken for blocked. */
		stuck = others_stuck() && first_held() ? stuck + 1 : 0;
		if (stuck >= 3) {
			why = "stuck";
			break;
		}
		if (now >= deadline)
			break;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	slock();
	for (int i = 0; i < g_nholding; i++) {
		if (g_holding[i] == &S) {
			g_holding[i] = g_holding[--g_nholding];
			break;
		}
	}
	/* The first held thread to go ends the schedule: the others, held
	 * for it (a deadlock cycle's barrier), go on too. */
	if (want_phase == PH_ARMED)
		g_phase = PH_DONE;
	sunlock();
	__atomic_store_n(&S.abandon, 0, __ATOMIC_RELEASE);
	if (want_phase == PH_ARMED)
		S.armed = 0;
	at_(at, sizeof at);
	logf_("release %s after_ms=%llu why=%s%s %s", where, (unsigned long long)(now_ms() - start), why, name, at);
	pthread_setcancelstate(cancel_state, NULL);
}

/* tick lets the local thread go once the thread that made the last remote
 * access has gone on (its access completed). */
static inline void tick(void)
{
	if (S.just_matched) {
		S.just_matched = 0;
		__atomic_store_n(&g_released, 1, __ATOMIC_RELEASE);
	}
}

static void maybe_pause(const char *where)
{
	if (S.armed && __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) == PH_ARMED)
		hold(where, PH_ARMED);
	else if (S.armed && __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) != PH_ARMED)
		S.armed = 0;
}

static void access_step(uint64_t pc, uintptr_t a, uint64_t size, int write, int may_hold);

/* bystander holds the calling thread, neither the local thread nor a
 * remote step's, until the remote steps are made or the schedule ends. */
static void bystander(void)
{
	char where[32];
	snprintf(where, sizeof where, "bystander-%d", __atomic_add_fetch(&g_bystanders, 1, __ATOMIC_RELAXED));
	hold(where, PH_MATCHED);
}

/* remote_site_ahead reports whether an access at pc of kind is at the site
 * of a remote step not made yet: never a bystander. */
static int remote_site_ahead(uint64_t pc, char kind)
{
	for (int k = g_step; k < g_nremote; k++)
		if (in_site(R_R1 + k, pc, kind))
			return 1;
	return 0;
}

/* in_point reports whether pc is in change point i's site, for kind. */
static int in_point(int i, uint64_t pc, char kind) { return site_has(&g_points[i].s, pc, kind); }

/* explore holds the thread at the change points its access or
 * acquisition at pc is the OCC-th execution of. */
static void explore(uint64_t pc, char kind)
{
	uint64_t nth = 0;
	if (g_nblind && kind == 'L')
		nth = __atomic_add_fetch(&g_nlocks, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < g_npoints; i++) {
		if (g_points[i].s.kind == 'N') {
			if (nth && nth == g_points[i].occ) {
				char where[32];
				snprintf(where, sizeof where, "point=%d", i);
				hold(where, PH_OFF);
			}
			continue;
		}
		if (!in_point(i, pc, kind))
			continue;
		uint64_t n = __atomic_add_fetch(&g_points[i].hits, 1, __ATOMIC_RELAXED);
		if (n == g_points[i].occ) {
			char where[32];
			snprintf(where, sizeof where, "point=%d", i);
			hold(where, PH_OFF);
		}
	}
}

void __mcprec_sched_access(uint64_t pc, uintptr_t a, uint64_t size, int write)
{
	access_step(pc, a, size, write, 1);
}

/* __mcprec_sched_atomic: an atomic operation, already done: it may arm the
 * schedule or be a remote step, never hold its thread. */
void __mcprec_sched_atomic(uint64_t pc, uintptr_t a, uint64_t size, int write)
{
	access_step(pc, a, size, write, 0);
}

static void access_step(uint64_t pc, uintptr_t a, uint64_t size, int write, int may_hold)
{
	tick();
	char kind = write ? 'W' : 'R';
	if (g_npoints && may_hold)
		explore(pc, kind);
	int ph = __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE);
	if (ph == PH_IDLE) {
		if (in_site(R_L1, pc, kind)) {
			uint64_t n = __atomic_add_fetch(&g_hits, 1, __ATOMIC_RELAXED);
			if (n == g_occ) {
				slock();
				if (g_phase == PH_IDLE) {
					g_phase = PH_ARMED;
					g_local = self_id();
					g_addr = a;
					g_asz = size;
					S.armed = 1;
					S.h0 = S.nheld;
				}
				sunlock();
				char at[64];
				at_(at, sizeof at);
				logf_("trigger occurrence=%llu addr=%#lx size=%llu locks=%d %s", (unsigned long long)n,
				      (unsigned long)a, (unsigned long long)size, S.nheld, at);
				return;
			}
		}
		if (may_hold && g_prehold && !g_prehold_used && g_sites[R_PRE].kind != 'L' && in_site(R_PRE, pc, kind) &&
		    !__atomic_exchange_n(&g_prehold_used, 1, __ATOMIC_ACQ_REL))
			hold("prehold", PH_IDLE);
		return;
	}
	if (ph == PH_ARMED && self_id() != g_local && g_step < g_nremote) {
		int role = R_R1 + g_step;
		if (in_site(role, pc, kind) && (!g_sites[role].same || on_addr(a, size))) {
			slock();
			if (g_phase == PH_ARMED && R_R1 + g_step == role) {
				g_step++;
				if (g_step == g_nremote) {
					g_match_ms = now_ms();
					g_phase = PH_MATCHED;
					S.just_matched = 1;
				}
			}
			sunlock();
			char at[64];
			at_(at, sizeof at);
			logf_("remote step=%d addr=%#lx kind=%c %s", role - R_R1 + 1, (unsigned long)a, kind, at);
			return;
		}
		/* A bystander: another thread about to write what the local
		 * thread wrote at L1, at the same code and address (a second
		 * setter of the same pair), would hide the window's state from
		 * the remote steps (reorder_3's checker then reads both writes
		 * of the other setter). It waits until they are made, the
		 * schedule ends, or no other thread can run. */
		if (may_hold && write && !g_cycle && in_site(R_L1, pc, 'W') && on_addr(a, size) && !remote_site_ahead(pc, kind))
			bystander();
		return;
	}
	if (may_hold && S.armed && in_site(R_L2, pc, kind) && (!g_sites[R_L2].same || on_addr(a, size)))
		maybe_pause("before-L2");
}

void __mcprec_sched_lock_pre(const volatile void *m, uint64_t pc)
{
	(void)m;
	tick();
	if (g_npoints)
		explore(pc, 'L');
	if (S.armed) {
		maybe_pause("before-lock");
		return;
	}
	if (g_sites[R_PEER].n && !g_cycle && __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) == PH_ARMED &&
	    self_id() != g_local && g_step < g_nremote && in_site(R_PEER, pc, 'L')) {
		bystander();
		return;
	}
	if (g_prehold && !g_prehold_used && g_sites[R_PRE].kind == 'L' &&
	    __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) == PH_IDLE && in_site(R_PRE, pc, 'L') &&
	    !__atomic_exchange_n(&g_prehold_used, 1, __ATOMIC_ACQ_REL))
		hold("prehold-lock", PH_IDLE);
}

/* __mcprec_sched_lock_busy: the caller is about to block on m. If a
 * thread held now holds m, holding it longer only stalls both: let it go. */
void __mcprec_sched_lock_busy(const volatile void *m)
{
	if (__atomic_load_n(&g_nholding, __ATOMIC_ACQUIRE) == 0)
		return;
	int found = 0;
	slock();
	for (int i = 0; i < g_nholding; i++) {
		struct sthr *p = g_holding[i];
		if (p != &S && holds(p, m)) {
			__atomic_store_n(&p->abandon, 1, __ATOMIC_RELEASE);
			found = 1;
		}
	}
	sunlock();
	if (found)
		logf_("blocked on a lock the held thread holds");
}

/* remote_lock_step returns the remote step (0-based) of a deadlock cycle
 * that an acquisition at pc makes, or -1: any step not made yet, in any
 * order, by a thread that made none (under g_lock). */
static int remote_lock_step(uint64_t pc)
{
	if (S.member)
		return -1;
	for (int k = 0; k < g_nremote; k++)
		if (!(g_rdone & (1u << k)) && in_site(R_R1 + k, pc, 'L'))
			return k;
	return -1;
}

/* __mcprec_sched_lock_post: the caller acquired m at pc. A schedule of a
 * lock-order deadlock has lock sites (kind L): the local thread's first
 * acquisition arms it, the other threads' acquisitions of the locks they
 * hold in the cycle are the remote steps; the local thread, and each
 * thread that made a remote step but the last, is then held before its
 * next acquisition, as for an access, until the last remote step. */
void __mcprec_sched_lock_post(const volatile void *m, uint64_t pc)
{
	tick();
	if (S.nheld < MAXHELD)
		S.held[S.nheld] = m;
	S.nheld++;
	if (g_sites[R_L1].kind != 'L')
		return;
	int ph = __atomic_load_n(&g_phase, __ATOMIC_ACQUIRE);
	if (ph == PH_IDLE && in_site(R_L1, pc, 'L')) {
		uint64_t n = __atomic_add_fetch(&g_hits, 1, __ATOMIC_RELAXED);
		if (n != g_occ)
			return;
		slock();
		if (g_phase == PH_IDLE) {
			g_phase = PH_ARMED;
			g_local = self_id();
			g_addr = (uintptr_t)m;
			g_asz = 1;
			S.armed = 1;
			S.member = 1;
			S.h0 = S.nheld;
		}
		sunlock();
		char at[64];
		at_(at, sizeof at);
		logf_("trigger occurrence=%llu lock=%#lx %s", (unsigned long long)n, (unsigned long)(uintptr_t)m, at);
		return;
	}
	if (ph != PH_ARMED || !g_cycle || S.member || self_id() == g_local)
		return;
	int k = -1, step = 0, last = 0, site = 0;
	for (int i = 0; i < g_nremote && !site; i++)
		site = in_site(R_R1 + i, pc, 'L');
	if (!site)
		return;
	slock();
	if (g_phase == PH_ARMED && (k = remote_lock_step(pc)) >= 0) {
		g_step++;
		g_rdone |= 1u << k;
		step = g_step;
		if (g_step == g_nremote) {
			g_match_ms = now_ms();
			g_phase = PH_MATCHED;
			S.just_matched = 1;
			last = 1;
		}
		S.member = 2 + k;
		if (!last) {
			S.armed = 1; /* held before its next acquisition, until the last step */
			S.h0 = S.nheld;
		}
	}
	sunlock();
	if (k >= 0)
		logf_("remote step=%d of %d role=R%d lock=%#lx", step, g_nremote, k + 1, (unsigned long)(uintptr_t)m);
}

void __mcprec_sched_unlock_post(const volatile void *m)
{
	for (int i = S.nheld - 1; i >= 0; i--) {
		if (i < MAXHELD && S.held[i] == m) {
			for (int j = i; j + 1 < S.nheld && j + 1 < MAXHELD; j++)
				S.held[j] = S.held[j + 1];
			S.nheld--;
			break;
		}
	}
	if (S.armed && S.nheld < S.h0)
		maybe_pause("after-unlock");
}
