/*
 * argv_top.c — main reads every argv[] slot. With many arguments the
 * array crosses the page that pthread_getattr_np gives as the top of the
 * main thread's stack; every slot is still main's own stack, never a
 * variable of the trace. A worker makes the program multithreaded.
 */
#include <pthread.h>
#include <stdio.h>

static long total;

static void *worker(void *arg)
{
	total += (long)arg;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = 0;
	for (int i = 0; i < argc; i++)
		if (argv[i] != NULL)
			n++;
	pthread_t t;
	pthread_create(&t, NULL, worker, (void *)n);
	pthread_join(t, NULL);
	printf("%ld\n", total);
	return 0;
}
