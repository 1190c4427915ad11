/* A block whose guessed type does not fit its accesses (issue 38): a pool
 * chunk reached only through void pointers is first used for two struct
 * entry (8-byte pointer field notes at +8 of each), then reused for a
 * struct obj whose two ints complete and refcount lie where the second
 * entry's notes was. The code that uses the entries makes more accesses,
 * so the accesses vote for struct entry; complete and refcount must stay
 * two variables all the same. Two workers race on refcount (a real lost
 * update); only one thread writes complete. */
#include <pthread.h>
#include <stdlib.h>

struct entry {
	long key;
	const char *notes;
};

struct obj {
	long key;
	int complete;
	int refcount;
};

static void *pool;     /* the chunk: void *, so that no pointer types it */
static unsigned long used;
static void *volatile slot;

__attribute__((noinline)) static void *pool_get(unsigned long n)
{
	void *p = (char *)pool + used;
	used += n;
	return p;
}

__attribute__((noinline)) static void pool_reset(void) { used = 0; }

__attribute__((noinline)) static void use_entries(void)
{
	struct entry *e = pool_get(2 * sizeof *e);
	for (int i = 0; i < 40; i++) {
		e[i & 1].key = i;               /* @key */
		e[i & 1].notes = "note";
		if (e[i & 1].notes[0] != 'n')
			abort();
	}
	pool_reset();
}

static void *worker(void *arg)
{
	struct obj *o = slot;
	for (int i = 0; i < 3; i++)
		o->refcount++;                  /* racy: @race */
	if (arg)
		o->complete = 1;                /* @complete */
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	pool = malloc(256);                     /* @pool */
	use_entries();
	pool_get(sizeof(struct entry));         /* the obj is the second item */
	struct obj *o = pool_get(sizeof *o);
	o->key = 7;
	o->complete = 0;
	o->refcount = 1;                        /* @refcount */
	slot = o;
	pthread_create(&t1, NULL, worker, NULL);
	pthread_create(&t2, NULL, worker, &t1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return o->refcount == 7 ? 0 : 1;
}
