/*
 * mozilla_mutant.c — the mutant of the four-access Mozilla bug of the
 * McPatom paper's Fig. 5 ("incorrect interleaving 2"), which neither PSet
 * nor AVIO detects; examples/fig5-mutant.csv is its hand-written trace.
 *
 * The event loop marks the queue as being processed, dispatches what is
 * pending, logs (reading the flag again) and clears the flag: from the
 * first write to the last, processing must not be seen by another
 * thread. post_event() queues an event and reads the flag twice, once to
 * log and once to decide: if the loop is processing it does not wake it,
 * assuming the loop will see the event. Reading the intermediate value
 * (between the loop's set and clear, after the loop has drained the
 * queue) loses the wake-up (pattern P4, dirty read: W1 R1* R2+ R1* W1 —
 * here W1 R1 R2 R2 W1, the mutant, where thread 2 contributes a set of
 * reads rather than one). The poster's two reads of the flag can also
 * straddle one of the loop's writes, so the log contradicts the decision
 * (pattern P1, unrepeatable read: R1 W2 R1).
 *
 * With a stagger (second argument, microseconds) the poster runs after
 * the loop: the recorded run shows neither violation.
 *
 * The lost wake-up is also a two-variable violation of the set
 * { pending.count, processing }: the poster reads the drained queue and
 * then the flag before the loop clears it (M5, half-done update read),
 * which the atomic-set analysis reports beside P4.
 *
 *   mcpredict cc -O1 -o mozilla_mutant mozilla_mutant.c
 *   mcpredict record -o mutant.csv -- ./mozilla_mutant 1 20000
 *   mcpredict run mutant.csv
 *
 * mcpredict:args 1 20000
 * mcpredict:expect P4 processing local:Write@set remote:Read local:Write@clear
 * mcpredict:expect P1 processing local:Read@log-busy local:Read@decide
 * mcpredict:allow M5|M6 pending.count+processing local:Write@drain local:Write@clear
 * mcpredict:notexhibited processing
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define QSIZE 16

/* Not static: other files could touch them, as in the browser. */
int processing; /* nsEventQueue::mProcessing */
struct {
	pthread_mutex_t lock;
	int events[QSIZE];
	int count;
} pending = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int wakeups, dispatched;
static FILE *log_file; /* stderr if EVENTS_LOG is set */

__attribute__((noinline)) static void debug_log(const char *fmt, const char *arg)
{
	if (log_file != NULL)
		fprintf(log_file, fmt, arg);
}

__attribute__((noinline)) static void wake_event_loop(void)
{
	wakeups++;
}

/* The event loop's side (ProcessPendingEvents). */
__attribute__((noinline)) static void process_pending_events(void)
{
	processing = 1;                 /* @set: W */
	pthread_mutex_lock(&pending.lock);
	int n = pending.count;
	for (int i = 0; i < n; i++)
		dispatched += pending.events[i] != 0;
	pending.count = 0;              /* @drain: W */
	pthread_mutex_unlock(&pending.lock);
	debug_log("events processed, %s\n", processing ? "busy" : "idle"); /* @log-done: R */
	processing = 0;                 /* @clear: W */
}

/* Any thread's side (PostEvent). */
__attribute__((noinline)) static void post_event(int ev)
{
	pthread_mutex_lock(&pending.lock);
	if (pending.count < QSIZE)
		pending.events[pending.count++] = ev;
	pthread_mutex_unlock(&pending.lock);
	debug_log("event posted, loop %s\n", processing ? "busy" : "idle"); /* @log-busy: R */
	if (!processing) /* @decide: R, stale if the loop is between set and clear */
		wake_event_loop();
}

static long stagger;

static void *event_loop(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		process_pending_events();
	return NULL;
}

static void *poster(void *arg)
{
	long n = (long)arg;
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	for (long i = 0; i < n; i++)
		post_event((int)i + 1);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	stagger = argc > 2 ? atol(argv[2]) : 0;
	if (getenv("EVENTS_LOG") != NULL)
		log_file = stderr;
	pthread_t l, p;
	pthread_create(&l, NULL, event_loop, (void *)n);
	pthread_create(&p, NULL, poster, (void *)n);
	pthread_join(l, NULL);
	pthread_join(p, NULL);
	printf("dispatched %d, wakeups %d\n", dispatched, wakeups);
	return 0;
}
