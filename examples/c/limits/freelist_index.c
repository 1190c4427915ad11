/*
 * freelist_index.c — request slots handed out from a stack of free slot
 * numbers under the pool's mutex, inline: a request pops a number when it
 * starts (i = free_idx[--nfree]) and pushes it back when it is done
 * (free_idx[nfree++] = i), so the next request gets the same slot. The
 * pool is right; the bug is elsewhere, in the character total, read under
 * a spinlock in one critical section and written back in the next. The
 * second request starts 20 ms later: the recorded run loses nothing.
 * Bug: lost update (P3) of totals.chars.
 *
 * The second request pops the slot number the first one pushed: that read
 * decides which slot it gets, so the data flow orders the two requests,
 * and the lost update may not be predicted.
 *
 * mcpredict:expect P3 totals.chars local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited totals.chars
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

	/* Add to the total: read, then written back. */
	pthread_spin_lock(&totals.lock);
	long c = totals.chars; /* @read */
	pthread_spin_unlock(&totals.lock);
	pthread_spin_lock(&totals.lock);
	totals.chars = c + s->len; /* @write */
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
