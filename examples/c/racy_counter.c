/*
 * racy_counter.c — a statistics counter incremented without a lock at
 * several places, as in a server's request handlers.
 *
 * Two worker threads serve a mix of requests; each handler counts its
 * request with "served++" (a read and a write of one global, at three
 * different lines). Two increments that overlap lose one of them (pattern
 * P3, lost update: R1 W2 W1, or P5, overwritten write): the bug is at
 * every one of the three lines, each of which must be reported as the
 * local read-modify-write of a violation.
 *
 * With a stagger (second argument, microseconds) the second worker starts
 * after the first is done: the recorded run loses nothing.
 *
 *   mcpredict cc -O1 -o racy_counter racy_counter.c
 *   mcpredict record -o racy.csv -- ./racy_counter 3 20000
 *   mcpredict run racy.csv
 *
 * mcpredict:args 3 20000
 * mcpredict:expect P3|P5 served local:Read@static local:Write@static
 * mcpredict:expect P3|P5 served local:Read@dynamic local:Write@dynamic
 * mcpredict:expect P3|P5 served local:Read@error local:Write@error
 * mcpredict:notexhibited served
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long served; /* requests served, for the status page */
static long bytes[2];
static long rounds; /* set before the threads start */

__attribute__((noinline)) static void serve_static(int w, int size)
{
	bytes[w] += size;
	served++; /* @static: R W served, no lock */
}

__attribute__((noinline)) static void serve_dynamic(int w, int size)
{
	bytes[w] += 2 * size;
	served++; /* @dynamic: R W served, no lock */
}

__attribute__((noinline)) static void serve_error(int w)
{
	bytes[w] += 100;
	served++; /* @error: R W served, no lock */
}

static void *worker(void *arg)
{
	int w = (int)(long)arg;
	for (long i = 0; i < rounds; i++) {
		switch ((i + w) % 3) {
		case 0:
			serve_static(w, 512);
			break;
		case 1:
			serve_dynamic(w, 300);
			break;
		default:
			serve_error(w);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 3;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t a, b;
	pthread_create(&a, NULL, worker, (void *)0);
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	pthread_create(&b, NULL, worker, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("served %ld requests, %ld bytes\n", served, bytes[0] + bytes[1]);
	return 0;
}
