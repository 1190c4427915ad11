/*
 * mozilla_events.c — a four-access atomicity violation after the Mozilla
 * bug of the McPatom paper's Fig. 5 (found by PSet; AVIO, which looks at
 * three accesses, misses it).
 *
 * post_event() appends an event and, if the queue was empty, wakes the
 * handler. Its accesses to queue.count (read the slot, read and write the
 * new count, read it again to decide on the wake-up) must be one atomic
 * region. If handle_events() drains the queue in between, post_event()
 * sees count 0, does not wake the handler, and the event is handled late
 * or never (pattern P2, stale read after a local write: W1 R2 W2 R1).
 *
 *   mcpredict cc -O1 -o mozilla_events mozilla_events.c
 *   mcpredict record -o mozilla.csv -- ./mozilla_events 3 20000
 *   mcpredict run mozilla.csv
 *
 * The unlocked updates of count are also lost updates (P3: R1 W2 W1): a
 * drain between post_event's read and write of count, or a post between
 * the handler's read and reset of it.
 * mcpredict:args 3 20000
 * mcpredict:expect P2 queue.count local:Write@inc remote:Write@drain-write local:Read@recheck
 * mcpredict:expect P3 queue.count local:Read@slot remote:Write@drain-write local:Write@inc
 * mcpredict:expect P3 queue.count local:Read@drain-read remote:Write@inc local:Write@drain-write
 * mcpredict:notexhibited queue.count
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define QSIZE 64

/* Not static: other files could touch it, so the compiler must read
 * count again after a call, as it would in the browser. */
struct event_queue {
	int events[QSIZE];
	int count;
} queue;

static int wakeups, handled, posted;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static void count_posted(void)
{
	pthread_mutex_lock(&stats_lock);
	posted++;
	pthread_mutex_unlock(&stats_lock);
}

__attribute__((noinline)) static void notify_handler(void)
{
	wakeups++;
}

__attribute__((noinline)) static void post_event(int ev)
{
	int slot = queue.count;   /* @slot: R count */
	queue.events[slot] = ev;
	queue.count = slot + 1;   /* @inc: W count */
	count_posted();
	if (queue.count == 1)     /* @recheck: R count, stale if the handler drained the queue */
		notify_handler();
}

__attribute__((noinline)) static void handle_events(void)
{
	int n = queue.count;      /* @drain-read: R count */
	for (int i = 0; i < n; i++)
		handled += queue.events[i] != 0;
	queue.count = 0;          /* @drain-write: W count */
}

static void *poster(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n && i < QSIZE; i++)
		post_event((int)i + 1);
	return NULL;
}

static void *handler(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		handle_events();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t p, h;
	pthread_create(&p, NULL, poster, (void *)n);
	if (stagger > 0)
		usleep((useconds_t)stagger);
	pthread_create(&h, NULL, handler, (void *)n);
	pthread_join(p, NULL);
	pthread_join(h, NULL);
	printf("posted %d, wakeups %d, handled %d\n", posted, wakeups, handled);
	return 0;
}
