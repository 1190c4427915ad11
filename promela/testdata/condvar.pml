/* mcpredict model of ready
 * trace:    condvar-handoff.csv
 * t1:       thread 2 of the trace (handle consumer)
 * t2:       thread 3 of the trace (handle producer)
 * v is the last access to the variable: read by tN = N, write by tN = 64+N.
 */
short v = 0;
bit brk1 = 0; /* t1 blocked on synchronization since its last access */
bit brk2 = 0; /* t2 blocked on synchronization since its last access */
bit pub1 = 0; /* t1 released a lock after accessing v, since its last access */
bit pub2 = 0; /* t2 released a lock after accessing v, since its last access */
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */
/* lock 0: mutex m */
byte owner[1]; /* 0 free, else the thread holding it (writer for a rwlock) */

proctype t1() { /* thread 2, handle consumer */
  d_step { owner[0] == 0 -> owner[0] = 1 } /* Lock cv.c:20 (trace line 15) */
  d_step { v = 1; brk1 = 0; pub1 = 0 } /* Read cv.c:21 (trace line 16) */
  d_step { owner[0] = 0 } /* Unlock cv.c:22 (trace line 22, Wait) */
  d_step { brk1 = 1 } /* Boundary cv.c:22 (trace line 22, Wait) */
  d_step { prog2 >= 1 && owner[0] == 0 -> owner[0] = 1 } /* Lock cv.c:22 (trace line 22, Wait) */
  d_step { v = 1; brk1 = 0; pub1 = 0 } /* Read cv.c:21 (trace line 23) */
  d_step { owner[0] = 0 } /* Unlock cv.c:23 (trace line 24) */
}

proctype t2() { /* thread 3, handle producer */
  d_step { owner[0] == 0 -> owner[0] = 2 } /* Lock cv.c:41 (trace line 18) */
  d_step { v = 66; brk2 = 0; pub2 = 0; prog2 = 1 } /* Write cv.c:42 (trace line 19) */
  d_step { owner[0] = 0 } /* Unlock cv.c:44 (trace line 21) */
}

init { atomic { run t1(); run t2() } }

/* P1 unrepeatable read, local thread t1: R1 A2* W2 A2* R1 */
ltl P1_1 { !<> (((v==1) && !brk1) && (((v==1) && !brk1) U ((((v==2) || (v==66)) && !brk1) U (((v==66) && !brk1) && (((v==66) && !brk1) U ((((v==2) || (v==66)) && !brk1) U ((v==1) && !brk1))))))) }

/* P1 unrepeatable read, local thread t2: R1 A2* W2 A2* R1 */
ltl P1_2 { !<> (((v==2) && !brk2) && (((v==2) && !brk2) U ((((v==1) || (v==65)) && !brk2) U (((v==65) && !brk2) && (((v==65) && !brk2) U ((((v==1) || (v==65)) && !brk2) U ((v==2) && !brk2))))))) }
