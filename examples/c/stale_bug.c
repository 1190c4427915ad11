/*
 * stale_bug.c — a stale-value error (Pessanha, Dias and Lourenço, Fig.
 * 1(b), incX). withdraw() reads the balance through get_balance() and, if
 * it covers the amount, stores balance - amount through set_balance():
 * two critical sections. The balance escapes the first into a local and
 * comes back into the second; a deposit in between is lost.
 * Bug: stale value written back (stale update); McPatom: lost update (P3).
 * mcpredict:args 2 30
 * mcpredict:expect P3 acct.balance local:Read@get remote:Write@set local:Write@set
 * mcpredict:reports stale update
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long balance;
} acct = {1000000};
static int rounds;

__attribute__((noinline)) static long get_balance(void)
{
	pthread_mutex_lock(&m);
	long b = acct.balance; /* @get */
	pthread_mutex_unlock(&m);
	return b;
}

__attribute__((noinline)) static void set_balance(long b)
{
	pthread_mutex_lock(&m);
	acct.balance = b; /* @set */
	pthread_mutex_unlock(&m);
}

/* withdraw: BUG, the balance read is stale when it is written back. */
__attribute__((noinline)) static int withdraw(long amount)
{
	long b = get_balance();
	if (b < amount)
		return 0;
	set_balance(b - amount);
	return 1;
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
