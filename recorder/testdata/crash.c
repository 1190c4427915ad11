/*
 * crash.c — a thread writes a global and then dereferences a null
 * pointer; the trace must keep what happened before the crash.
 */
#include <pthread.h>
#include <stdio.h>

int before_crash;
int *volatile nowhere;

static void *crasher(void *arg)
{
	(void)arg;
	before_crash = 42; /* @write */
	*nowhere = 1;      /* SIGSEGV */
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, crasher, NULL);
	pthread_join(t, NULL);
	printf("not reached\n");
	return 0;
}
