/*
 * set_transfer.c — a teller moves money from checking to savings, taking
 * the bank's lock for the debit and again for the credit; an auditor reads
 * each balance under the lock and checks that the sum is still the
 * bank's total. Each balance is locked; the pair is not: the auditor can
 * read checking before a transfer and savings after it (M1), or both
 * between the debit and the credit (M5), and see money appear or vanish.
 * Bug: torn read and half-done update read.
 * mcpredict:args 30
 * mcpredict:expect M1|M2 checking+savings local:Read@getchecking local:Read@getsavings
 * mcpredict:expect M5|M6 checking+savings local:Write@debit local:Write@credit
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TOTAL 10000

static pthread_mutex_t bank = PTHREAD_MUTEX_INITIALIZER;
static long checking = TOTAL / 2, savings = TOTAL / 2;
static int rounds;
static int mismatches;

static void transfer(long amount)
{
	pthread_mutex_lock(&bank);
	checking -= amount; /* @debit */
	pthread_mutex_unlock(&bank);

	pthread_mutex_lock(&bank);
	savings += amount; /* @credit */
	pthread_mutex_unlock(&bank);
}

static long get_checking(void)
{
	pthread_mutex_lock(&bank);
	long v = checking; /* @getchecking */
	pthread_mutex_unlock(&bank);
	return v;
}

static long get_savings(void)
{
	pthread_mutex_lock(&bank);
	long v = savings; /* @getsavings */
	pthread_mutex_unlock(&bank);
	return v;
}

static void *teller(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		transfer(10);
		usleep(20); /* the next customer */
	}
	return NULL;
}

static void *auditor(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		long c = get_checking();
		long s = get_savings();
		if (c + s != TOTAL)
			mismatches++;
		usleep(30); /* the next audit */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 30;
	pthread_t a, t;
	pthread_create(&a, NULL, auditor, NULL);
	pthread_create(&t, NULL, teller, NULL);
	pthread_join(a, NULL);
	pthread_join(t, NULL);
	printf("checking %ld, savings %ld, %d mismatches\n", checking, savings, mismatches);
	return 0;
}
