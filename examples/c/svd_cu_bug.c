/*
 * svd_cu_bug.c — a shared log buffer appended to without a lock, the bug
 * SVD found in Apache's buffered log writer (Xu, Bodík and Hill, PLDI
 * 2005, Fig. 2). append() reads the buffer's fill count, formats the
 * record into the slot it names and stores the new count: one
 * computation, which SVD infers as a computational unit from the value
 * that flows from the read of logb.count into its write. Without the lock
 * the other writer's append comes in between: both write the same slot
 * and one record is lost. The formatting (a sleep stands in for it)
 * widens the window, so that the recorded run does interleave the two
 * appends: SVD judges the execution it is given, and reports the
 * computational unit whose input another thread overwrote.
 * Bug: lost update (P3) of the count, predicted; SVD: remote-write,
 * occurred.
 * mcpredict:args 2 4
 * mcpredict:expect P3 logb.count local:Read@read remote:Write@write local:Write@write
 * mcpredict:reports svd remote-write
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 64

static struct {
	int count;
	long recs[SLOTS];
} logb;
static int rounds;

__attribute__((noinline)) static void append(long rec)
{
	int n = logb.count; /* @read: BUG, the count is read ... */
	usleep(300);        /* formatting the record */
	logb.recs[n % SLOTS] = rec; /* @slot */
	logb.count = n + 1; /* @write: ... and written back, unlocked */
}

static void *writer(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < rounds; i++)
		append(id * 1000 + i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t t[8];
	if (n > 8)
		n = 8;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, writer, (void *)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d records (expected %d)\n", logb.count, n * rounds);
	return 0;
}
