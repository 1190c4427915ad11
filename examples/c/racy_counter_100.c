/*
 * racy_counter_100.c — one counter incremented without a lock at a hundred
 * places by three threads (issue 24: grouped reports).
 *
 * As SCTBench's micro_3_ok, where three threads each do "x++" a hundred
 * times, but from a hundred source lines: bump_all() counts one event at
 * each of its lines 50 to 149 with "counter++" (a read and a write of one
 * global, no lock). Any two overlapping increments lose one of them
 * (pattern P3, lost update: R1 W2 W1), at every line; two consecutive
 * increments of one thread with another thread's access in between are
 * also the other patterns (P2 stale read after local write: W1 W2 R1 —
 * each increment reads what the thread wrote a line before; P4 dirty
 * read: W1 R2 W1; P5 overwritten write: W1 W2 W1). Each of these is one
 * bug per line or pair of lines: hundreds of bugs that are one problem,
 * which the reports show as one group (mcpatom, counter, bump_all).
 *
 * The compiler barrier after each increment keeps the optimizer from
 * merging the hundred increments into one "counter += 100".
 *
 * mcpredict run lists at most 64 instances per claim of a model
 * (--max-instances): by default the bugs of the first 64 lines or so are
 * reported, all hundred lines' with --max-instances 128.
 *
 * With a stagger (second argument, microseconds) each worker starts after
 * the previous one is done: the recorded run loses nothing.
 *
 *   mcpredict cc -O1 -o racy_counter_100 racy_counter_100.c
 *   mcpredict record -o racy100.csv -- ./racy_counter_100 1 20000
 *   mcpredict run racy100.csv
 *
 * mcpredict:args 1 20000
 * mcpredict:expect P3 counter local:Read@first local:Write@first
 * mcpredict:expect P3|P5 counter local:Read local:Write
 * mcpredict:allow P2|P4|P5 counter
 * mcpredict:notexhibited counter
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long counter; /* events counted, for the status page */
static long rounds;  /* set before the threads start */

/* One event counted: no lock (the bug); the barrier keeps each increment. */
#define COUNT() do { counter++; __asm__ __volatile__("" ::: "memory"); } while (0)

__attribute__((noinline)) static void bump_all(void)
{
	COUNT(); /* 1 @first: R W counter, no lock */
	COUNT(); /* 2 */
	COUNT(); /* 3 */
	COUNT(); /* 4 */
	COUNT(); /* 5 */
	COUNT(); /* 6 */
	COUNT(); /* 7 */
	COUNT(); /* 8 */
	COUNT(); /* 9 */
	COUNT(); /* 10 */
	COUNT(); /* 11 */
	COUNT(); /* 12 */
	COUNT(); /* 13 */
	COUNT(); /* 14 */
	COUNT(); /* 15 */
	COUNT(); /* 16 */
	COUNT(); /* 17 */
	COUNT(); /* 18 */
	COUNT(); /* 19 */
	COUNT(); /* 20 */
	COUNT(); /* 21 */
	COUNT(); /* 22 */
	COUNT(); /* 23 */
	COUNT(); /* 24 */
	COUNT(); /* 25 */
	COUNT(); /* 26 */
	COUNT(); /* 27 */
	COUNT(); /* 28 */
	COUNT(); /* 29 */
	COUNT(); /* 30 */
	COUNT(); /* 31 */
	COUNT(); /* 32 */
	COUNT(); /* 33 */
	COUNT(); /* 34 */
	COUNT(); /* 35 */
	COUNT(); /* 36 */
	COUNT(); /* 37 */
	COUNT(); /* 38 */
	COUNT(); /* 39 */
	COUNT(); /* 40 */
	COUNT(); /* 41 */
	COUNT(); /* 42 */
	COUNT(); /* 43 */
	COUNT(); /* 44 */
	COUNT(); /* 45 */
	COUNT(); /* 46 */
	COUNT(); /* 47 */
	COUNT(); /* 48 */
	COUNT(); /* 49 */
	COUNT(); /* 50 */
	COUNT(); /* 51 */
	COUNT(); /* 52 */
	COUNT(); /* 53 */
	COUNT(); /* 54 */
	COUNT(); /* 55 */
	COUNT(); /* 56 */
	COUNT(); /* 57 */
	COUNT(); /* 58 */
	COUNT(); /* 59 */
	COUNT(); /* 60 */
	COUNT(); /* 61 */
	COUNT(); /* 62 */
	COUNT(); /* 63 */
	COUNT(); /* 64 */
	COUNT(); /* 65 */
	COUNT(); /* 66 */
	COUNT(); /* 67 */
	COUNT(); /* 68 */
	COUNT(); /* 69 */
	COUNT(); /* 70 */
	COUNT(); /* 71 */
	COUNT(); /* 72 */
	COUNT(); /* 73 */
	COUNT(); /* 74 */
	COUNT(); /* 75 */
	COUNT(); /* 76 */
	COUNT(); /* 77 */
	COUNT(); /* 78 */
	COUNT(); /* 79 */
	COUNT(); /* 80 */
	COUNT(); /* 81 */
	COUNT(); /* 82 */
	COUNT(); /* 83 */
	COUNT(); /* 84 */
	COUNT(); /* 85 */
	COUNT(); /* 86 */
	COUNT(); /* 87 */
	COUNT(); /* 88 */
	COUNT(); /* 89 */
	COUNT(); /* 90 */
	COUNT(); /* 91 */
	COUNT(); /* 92 */
	COUNT(); /* 93 */
	COUNT(); /* 94 */
	COUNT(); /* 95 */
	COUNT(); /* 96 */
	COUNT(); /* 97 */
	COUNT(); /* 98 */
	COUNT(); /* 99 */
	COUNT(); /* 100 */
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		bump_all();
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 1;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		if (i > 0 && stagger > 0)
			usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
		pthread_create(&t[i], NULL, worker, NULL);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("counted %ld events\n", counter);
	return 0;
}
