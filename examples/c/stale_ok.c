/*
 * stale_ok.c — the account of stale_bug.c with withdraw() in one critical
 * section: the balance is checked and updated without letting go of the
 * lock, so no value leaves an atomic block to come back into another.
 * mcpredict:args 2 30
 * mcpredict:expect none
 * mcpredict:reports stale none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long balance;
} acct = {1000000};
static int rounds;

__attribute__((noinline)) static int withdraw(long amount)
{
	int ok = 0;
	pthread_mutex_lock(&m);
	if (acct.balance >= amount) {
		acct.balance -= amount;
		ok = 1;
	}
	pthread_mutex_unlock(&m);
	return ok;
}

static void *teller(void *a)
{
	long done = 0;
	for (int i = 0; i < rounds; i++)
		done += withdraw(10);
	return (void *)done;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 30;
	pthread_t t[8];
	if (n > 8)
		n = 8;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, teller, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("balance %ld (expected %ld)\n", acct.balance, 1000000L - 10L * n * rounds);
	return 0;
}
