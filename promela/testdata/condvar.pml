/* mcpredict model of ready
 * trace:    condvar-handoff.csv
 * t1:       thread 2 of the trace (handle consumer)
 * t2:       thread 3 of the trace (handle producer)
 *
 * v packs the last access to the variable (bits 0-6: read by tN = N,
 * write by tN = 64+N) and, since each thread's last access, whether it
 * blocked on synchronization (brk: t1 128, t2 256) or released a lock
 * after accessing v (pub: t1 512, t2 1024). An access sets the value and
 * clears its thread's flags in one assignment.
 */
short v = 0;
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */
/* lock 0: mutex m */
byte owner[1]; /* 0 free, else the thread holding it (writer for a rwlock) */

proctype t1() { /* thread 2, handle consumer */
  atomic { owner[0] == 0 -> owner[0] = 1 } /* Lock cv.c:20 (trace line 15) */
  v = (v & 1280) | 1; /* Read cv.c:21 (trace line 16) */
  owner[0] = 0; /* Unlock cv.c:22 (trace line 22, Wait) */
  v = v | 128; /* Boundary cv.c:22 (trace line 22, Wait) */
  atomic { prog2 >= 1 && owner[0] == 0 -> owner[0] = 1 } /* Lock cv.c:22 (trace line 22, Wait) */
  v = (v & 1280) | 1; /* Read cv.c:21 (trace line 23) */
  owner[0] = 0; /* Unlock cv.c:23 (trace line 24) */
}

proctype t2() { /* thread 3, handle producer */
  atomic { owner[0] == 0 -> owner[0] = 2 } /* Lock cv.c:41 (trace line 18) */
  atomic { v = (v & 640) | 66; prog2 = 1 } /* Write cv.c:42 (trace line 19) */
  owner[0] = 0; /* Unlock cv.c:44 (trace line 21) */
}

init { atomic { run t1(); run t2() } }

/* P1 unrepeatable read, local thread t1: R1 A2* W2 A2* R1 */
ltl P1_1 { !<> (((v & 255) == 1) && (((v & 255) == 1) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 66) && (((v & 255) == 66) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 1) && ((v & 2048) == 0)))))))) }

/* P1 unrepeatable read, local thread t2: R1 A2* W2 A2* R1 */
ltl P1_2 { !<> (((v & 383) == 2) && (((v & 383) == 2) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 65) && (((v & 383) == 65) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 2) && ((v & 4096) == 0)))))))) }
