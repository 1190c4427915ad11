/*
 * freelist_index_ok.c — request slots handed out from a stack of free slot
 * numbers under the pool's mutex, inline: a request pops a number when it
 * starts (i = free_idx[--nfree]) and pushes it back when it is done
 * (free_idx[nfree++] = i), so the next request gets the same slot; the
 * character total is updated under a spinlock in one critical section.
 * The twin of limits/freelist_index.c (the second request starts 20 ms
 * later). Correct: nothing should be reported. The stack's count nfree is
 * only ever used as an index, which the recorder's runtime does not see
 * (a small value added to an address is no pointer); the converter finds
 * it (the next access is free_idx[nfree - 1]) and keeps those reads as
 * Reads, so a pop is not moved before the push whose slot it took.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NSLOTS 4

static struct slot { int len; char text[60]; } slots[NSLOTS];
static int free_idx[NSLOTS] = { 0, 1, 2, 3 };
static int nfree = NSLOTS;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static struct { pthread_spinlock_t lock; long chars; } totals;

static void *request(void *arg)
{
	const char *text = arg;
	if (text[0] == 'b')
		usleep(20000);
	pthread_mutex_lock(&pool_lock);
	int i = free_idx[--nfree];
	pthread_mutex_unlock(&pool_lock);
	struct slot *s = &slots[i];
	strncpy(s->text, text, sizeof s->text - 1);
	s->len = strlen(s->text);

	/* Add to the total. */
	pthread_spin_lock(&totals.lock);
	totals.chars += s->len;
	pthread_spin_unlock(&totals.lock);

	pthread_mutex_lock(&pool_lock);
	free_idx[nfree++] = i;
	pthread_mutex_unlock(&pool_lock);
	return NULL;
}

int main(void)
{
	pthread_spin_init(&totals.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_t a, b;
	pthread_create(&a, NULL, request, "a first request");
	pthread_create(&b, NULL, request, "b second request");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld chars\n", totals.chars);
	return 0;
}
