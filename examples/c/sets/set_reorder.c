/*
 * set_reorder.c — in the manner of SCTBench's reorder benchmarks: a setter
 * moves the state { a, b } from (0, 0) to (1, -1) with two plain stores,
 * and checkers read a, then b, and assert that they see the old state or
 * the new one, never a mix. Nothing orders the checkers' reads with the
 * setter's stores: a checker can read both between the setter's two stores
 * (M5) and see (1, 0), or read a before and b after the setter ran (M1)
 * and see (0, -1). Bug: half-done update read (the torn read is a true bug
 * too, predicted when the recorded checker read a before the setter ran).
 * mcpredict:args 1 2
 * mcpredict:expect M5|M6 a+b local:Write@seta local:Write@setb
 * mcpredict:allow M1|M2 a+b local:Read@geta local:Read@getb
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int a, b;
static int bad;

static void *set_thread(void *arg)
{
	a = 1;  /* @seta */
	b = -1; /* @setb */
	return NULL;
}

static void *check_thread(void *arg)
{
	int x = a; /* @geta */
	int y = b; /* @getb */
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
