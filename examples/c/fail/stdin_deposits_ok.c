/*
 * stdin_deposits_ok.c — the tellers of stdin_deposits.c depositing
 * through deposit(), which reads and writes the balance in one critical
 * section: no deposit is lost, whatever the input. Correct.
 *
 * mcpredict:args 20000
 * mcpredict:stdin stdin_deposits.in
 * mcpredict:expect none
 * mcpredict:reproduce clean
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXN 1024

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
long balance;
static long amounts[MAXN];

struct share {
	long from, to; /* amounts[from:to] */
};

__attribute__((noinline)) static void deposit(long x)
{
	pthread_mutex_lock(&m);
	long b = balance; /* @read */
	balance = b + x;  /* @write */
	pthread_mutex_unlock(&m);
}

static void *teller(void *arg)
{
	struct share *s = arg;
	for (long i = s->from; i < s->to; i++)
		deposit(amounts[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long stagger = argc > 1 ? atol(argv[1]) : 20000;
	long n = 0, sum = 0, x;
	while (n < MAXN && scanf("%ld", &x) == 1) {
		amounts[n++] = x;
		sum += x;
	}
	struct share first = {0, n / 2}, second = {n / 2, n};
	pthread_t a, b;
	pthread_create(&a, NULL, teller, &first);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, teller, &second);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld deposits, balance %ld\n", n, balance);
	assert(balance == sum);
	return 0;
}
