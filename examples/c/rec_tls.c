/*
 * rec_tls.c — thread-local storage and read-only data are never shared
 * variables. Correct: nothing should be reported.
 *
 * Each worker counts its calls in a __thread variable, sets and tests
 * errno, and scans a string literal and a constant table; only the total,
 * added under a mutex, is shared. Every thread's calls and errno are at
 * a different address, and the literal and the table are never written:
 * none of them is a variable of the trace (the recorder drops the
 * thread's own TLS accesses as it records them, and the converter drops
 * accesses to read-only segments).
 *
 *   mcpredict cc -O1 -o rec_tls rec_tls.c
 *   mcpredict record -o tls.csv -- ./rec_tls 3
 *   mcpredict run tls.csv
 *
 * mcpredict:args 3
 * mcpredict:expect none
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static __thread long calls;
static const char greeting[] = "hello, shared world";
static const int weights[4] = {3, 1, 4, 1};
static long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static long score(const char *s)
{
	calls++;
	errno = 0;
	long n = 0;
	for (const char *p = s; *p; p++)
		n += weights[(unsigned char)*p % 4];
	if (n < 0)
		errno = ERANGE;
	return errno ? 0 : n;
}

static void *worker(void *arg)
{
	long rounds = (long)arg, sum = 0;
	for (long i = 0; i < rounds; i++)
		sum += score(greeting);
	pthread_mutex_lock(&lock);
	total += sum + calls;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)rounds);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	return 0;
}
