/* steer.c — reads whose value steers the thread and reads whose value is
 * only data, for TestSteeringReads. Each marked line's read is checked.
 * The values differ from each other (hits starts at 100, mode is 7), so
 * that no comparison matches another read's value by coincidence. */
#include <pthread.h>
#include <stdlib.h>

struct node { struct node *next; int val; };
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
long hits = 100;          /* a statistic: only data */
int refs = 2;             /* a reference count: tested against 0 */
int arrived;              /* a barrier count: tested against 2 */
struct node *head;        /* a list head: used as an address */
int mode;                 /* switched on */
int top = 5;              /* a stack's count: used as an array index */
long stack[16];
long lo = 300;            /* only computed with: a copy */
int used = 40;            /* tested against a limit it does not reach */
long span;
int out;

static void *work(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	hits++;                      /* @stat */
	if (--refs == 0)             /* @ref */
		out++;
	if (++arrived == 2)          /* @arrive */
		out += 2;
	struct node *n = head;       /* @head */
	if (n)
		out += n->val;
	stack[top++] = 1;            /* @top */
	span = lo * 3;               /* @copy */
	if (used >= 1000)            /* @limit */
		out++;
	switch (mode) {              /* @mode */
	case 7: out += 3; break;
	case 9: out += 5; break;
	case 11: out -= 7; break;
	case 13: out *= 2; break;
	}
	pthread_mutex_unlock(&m);
	return 0;
}

int main(void)
{
	head = calloc(1, sizeof *head);
	head->val = 4;
	mode = 7;
	pthread_t a, b;
	pthread_create(&a, 0, work, 0);
	pthread_join(a, 0);
	pthread_create(&b, 0, work, 0);
	pthread_join(b, 0);
	return out == 0;
}
