/* The program behind examples/bank.csv; line numbers match the trace. */
#include <pthread.h>
#include <stdio.h>

static long balance;
static pthread_mutex_t acct_lock = PTHREAD_MUTEX_INITIALIZER;

static void deposit(long amount)
{
	pthread_mutex_lock(&acct_lock);
	long b = balance;
	pthread_mutex_unlock(&acct_lock);
	b += amount;
	pthread_mutex_lock(&acct_lock);
	balance = b;
	pthread_mutex_unlock(&acct_lock);
}

static void *teller(void *arg)
{
	deposit((long)arg);
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	/* Every access to balance holds acct_lock, yet deposit() is not atomic. */
	balance = 100;

	pthread_create(&a, NULL, teller, (void *)10);
	pthread_create(&b, NULL, teller, (void *)20);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance = %ld\n", balance);
	return 0;
}
