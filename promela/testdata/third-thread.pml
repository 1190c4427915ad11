/* mcpredict model of cfg
 * trace:    third-thread.csv
 * t1:       thread 1 of the trace (handle t1)
 * t2:       thread 3 of the trace (handle t2)
 * v is the last access to the variable: read by tN = N, write by tN = 64+N.
 */
short v = 0;
bit brk1 = 0; /* t1 blocked on synchronization since its last access */
bit brk2 = 0; /* t2 blocked on synchronization since its last access */
bit pub1 = 0; /* t1 released a lock after accessing v, since its last access */
bit pub2 = 0; /* t2 released a lock after accessing v, since its last access */
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */

proctype t1() { /* thread 1, handle t1 */
  d_step { v = 65; brk1 = 0; pub1 = 0 } /* Write tt.c:10 (trace line 12) */
  d_step { v = 1; brk1 = 0; pub1 = 0; prog1 = 1 } /* Read tt.c:11 (trace line 13) */
}

proctype t2() { /* thread 3, handle t2 */
  d_step { prog1 >= 1 -> v = 66; brk2 = 0; pub2 = 0 } /* Write tt.c:30 (trace line 17) */
}

init { atomic { run t1(); run t2() } }

/* P2 stale read after local write, local thread t1: W1 R1* A2* W2 A2* R1 */
ltl P2_1 { !<> (((v==65) && !brk1 && !pub1) && (((v==65) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U (((v==66) && !brk1 && !pub1) && (((v==66) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U ((v==1) && !brk1 && !pub1)))))))) }

/* P2 stale read after local write, local thread t2: W1 R1* A2* W2 A2* R1 */
ltl P2_2 { !<> (((v==66) && !brk2 && !pub2) && (((v==66) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U (((v==65) && !brk2 && !pub2) && (((v==65) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U ((v==2) && !brk2 && !pub2)))))))) }
