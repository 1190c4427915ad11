/* mcpredict model of a[0]
 * trace:    splash-barrier.csv
 * t1:       thread 2 of the trace (handle 2)
 * t2:       thread 3 of the trace (handle 3)
 * v is the last access to the variable: read by tN = N, write by tN = 64+N.
 */
short v = 0;
bit brk1 = 0; /* t1 blocked on synchronization since its last access */
bit brk2 = 0; /* t2 blocked on synchronization since its last access */
bit pub1 = 0; /* t1 released a lock after accessing v, since its last access */
bit pub2 = 0; /* t2 released a lock after accessing v, since its last access */
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */
/* lock 0: mutex sum_lock */
byte owner[1]; /* 0 free, else the thread holding it (writer for a rwlock) */

proctype t1() { /* thread 2, handle 2 */
  d_step { v = 65; brk1 = 0; pub1 = 0 } /* Write fft.c:20 (trace line 17) */
  d_step { brk1 = 1; prog1 = 1 } /* Boundary fft.c:22 (trace line 19, BarrierWait) */
  d_step { owner[0] == 0 -> owner[0] = 1 } /* Lock fft.c:26 (trace line 23) */
  d_step { owner[0] = 0 } /* Unlock fft.c:28 (trace line 26) */
  d_step { prog2 >= 1 -> v = 1; brk1 = 0; pub1 = 0 } /* Read fft.c:32 (trace line 33) */
  d_step { v = 65; brk1 = 0; pub1 = 0 } /* Write fft.c:32 (trace line 34) */
}

proctype t2() { /* thread 3, handle 3 */
  d_step { prog1 >= 1 -> v = 2; brk2 = 0; pub2 = 0 } /* Read fft.c:24 (trace line 21) */
  d_step { owner[0] == 0 -> owner[0] = 2 } /* Lock fft.c:26 (trace line 27) */
  d_step { owner[0] = 0; prog2 = 1 } /* Unlock fft.c:28 (trace line 30) */
}

init { atomic { run t1(); run t2() } }

/* P2 stale read after local write, local thread t1: W1 R1* A2* W2 A2* R1 */
ltl P2_1 { !<> (((v==65) && !brk1 && !pub1) && (((v==65) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U (((v==66) && !brk1 && !pub1) && (((v==66) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U ((v==1) && !brk1 && !pub1)))))))) }

/* P2 stale read after local write, local thread t2: W1 R1* A2* W2 A2* R1 */
ltl P2_2 { !<> (((v==66) && !brk2 && !pub2) && (((v==66) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U (((v==65) && !brk2 && !pub2) && (((v==65) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U ((v==2) && !brk2 && !pub2)))))))) }
