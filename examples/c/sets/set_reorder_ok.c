/*
 * set_reorder_ok.c — set_reorder.c with a lock: the setter moves the state
 * { a, b } from (0, 0) to (1, -1) in one critical section, and each
 * checker reads a and b in one critical section of the same lock and
 * asserts that it sees the old state or the new one. No checker can run
 * between the setter's two stores or between its own two loads. Correct:
 * nothing should be reported.
 * mcpredict:args 1 2
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int a, b;
static int bad;

static void *set_thread(void *arg)
{
	pthread_mutex_lock(&m);
	a = 1;
	b = -1;
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *check_thread(void *arg)
{
	pthread_mutex_lock(&m);
	int x = a;
	int y = b;
	pthread_mutex_unlock(&m);
	if (!((x == 0 && y == 0) || (x == 1 && y == -1))) {
		fprintf(stderr, "inconsistent state a=%d b=%d\n", x, y);
		bad = 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nset = argc > 1 ? atoi(argv[1]) : 1;
	int ncheck = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[16];
	int n = 0;
	for (int i = 0; i < nset && n < 16; i++)
		pthread_create(&t[n++], NULL, set_thread, NULL);
	for (int i = 0; i < ncheck && n < 16; i++)
		pthread_create(&t[n++], NULL, check_thread, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return bad;
}
