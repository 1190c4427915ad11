/* mcpredict model of balance
 * trace:    bank.csv
 * t1:       thread 2 of the trace (handle 201)
 * t2:       thread 3 of the trace (handle 202)
 * v is the last access to the variable: read by tN = N, write by tN = 64+N.
 */
short v = 0;
bit brk1 = 0; /* t1 blocked on synchronization since its last access */
bit brk2 = 0; /* t2 blocked on synchronization since its last access */
bit pub1 = 0; /* t1 released a lock after accessing v, since its last access */
bit pub2 = 0; /* t2 released a lock after accessing v, since its last access */
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */
/* lock 0: mutex acct_lock */
byte owner[1]; /* 0 free, else the thread holding it (writer for a rwlock) */

proctype t1() { /* thread 2, handle 201 */
  d_step { owner[0] == 0 -> owner[0] = 1 } /* Lock bank.c:10 (trace line 19) */
  d_step { v = 1; brk1 = 0; pub1 = 0 } /* Read bank.c:11 (trace line 20) */
  d_step { owner[0] = 0 } /* Unlock bank.c:12 (trace line 21) */
  d_step { pub1 = 1 } /* Publish bank.c:12 (trace line 21, Unlock) */
  d_step { owner[0] == 0 -> owner[0] = 1 } /* Lock bank.c:14 (trace line 22) */
  d_step { v = 65; brk1 = 0; pub1 = 0 } /* Write bank.c:15 (trace line 23) */
  d_step { owner[0] = 0 } /* Unlock bank.c:16 (trace line 24) */
}

proctype t2() { /* thread 3, handle 202 */
  d_step { owner[0] == 0 -> owner[0] = 2 } /* Lock bank.c:10 (trace line 27) */
  d_step { v = 2; brk2 = 0; pub2 = 0 } /* Read bank.c:11 (trace line 28) */
  d_step { owner[0] = 0 } /* Unlock bank.c:12 (trace line 29) */
  d_step { pub2 = 1 } /* Publish bank.c:12 (trace line 29, Unlock) */
  d_step { owner[0] == 0 -> owner[0] = 2 } /* Lock bank.c:14 (trace line 30) */
  d_step { v = 66; brk2 = 0; pub2 = 0 } /* Write bank.c:15 (trace line 31) */
  d_step { owner[0] = 0 } /* Unlock bank.c:16 (trace line 32) */
}

init { atomic { run t1(); run t2() } }

/* P1 unrepeatable read, local thread t1: R1 A2* W2 A2* R1 */
ltl P1_1 { !<> (((v==1) && !brk1) && (((v==1) && !brk1) U ((((v==2) || (v==66)) && !brk1) U (((v==66) && !brk1) && (((v==66) && !brk1) U ((((v==2) || (v==66)) && !brk1) U ((v==1) && !brk1))))))) }

/* P1 unrepeatable read, local thread t2: R1 A2* W2 A2* R1 */
ltl P1_2 { !<> (((v==2) && !brk2) && (((v==2) && !brk2) U ((((v==1) || (v==65)) && !brk2) U (((v==65) && !brk2) && (((v==65) && !brk2) U ((((v==1) || (v==65)) && !brk2) U ((v==2) && !brk2))))))) }

/* P2 stale read after local write, local thread t1: W1 R1* A2* W2 A2* R1 */
ltl P2_1 { !<> (((v==65) && !brk1 && !pub1) && (((v==65) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U (((v==66) && !brk1 && !pub1) && (((v==66) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U ((v==1) && !brk1 && !pub1)))))))) }

/* P2 stale read after local write, local thread t2: W1 R1* A2* W2 A2* R1 */
ltl P2_2 { !<> (((v==66) && !brk2 && !pub2) && (((v==66) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U (((v==65) && !brk2 && !pub2) && (((v==65) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U ((v==2) && !brk2 && !pub2)))))))) }

/* P3 lost update, local thread t1: R1 A2* W2 A2* R1* W1 */
ltl P3_1 { !<> (((v==1) && !brk1) && (((v==1) && !brk1) U ((((v==2) || (v==66)) && !brk1) U (((v==66) && !brk1) && (((v==66) && !brk1) U ((((v==2) || (v==66)) && !brk1) U (((v==1) && !brk1) U ((v==65) && !brk1)))))))) }

/* P3 lost update, local thread t2: R1 A2* W2 A2* R1* W1 */
ltl P3_2 { !<> (((v==2) && !brk2) && (((v==2) && !brk2) U ((((v==1) || (v==65)) && !brk2) U (((v==65) && !brk2) && (((v==65) && !brk2) U ((((v==1) || (v==65)) && !brk2) U (((v==2) && !brk2) U ((v==66) && !brk2)))))))) }

/* P4 dirty (intermediate) read, local thread t1: W1 R1* R2+ R1* W1 */
ltl P4_1 { !<> (((v==65) && !brk1 && !pub1) && (((v==65) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U (((v==2) && !brk1 && !pub1) && (((v==2) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((v==65) && !brk1 && !pub1))))))) }

/* P4 dirty (intermediate) read, local thread t2: W1 R1* R2+ R1* W1 */
ltl P4_2 { !<> (((v==66) && !brk2 && !pub2) && (((v==66) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U (((v==1) && !brk2 && !pub2) && (((v==1) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((v==66) && !brk2 && !pub2))))))) }

/* P5 overwritten write, local thread t1: W1 R1* A2* W2 A2* R1* W1 */
ltl P5_1 { !<> (((v==65) && !brk1 && !pub1) && (((v==65) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U (((v==66) && !brk1 && !pub1) && (((v==66) && !brk1 && !pub1) U ((((v==2) || (v==66)) && !brk1 && !pub1) U (((v==1) && !brk1 && !pub1) U ((v==65) && !brk1 && !pub1))))))))) }

/* P5 overwritten write, local thread t2: W1 R1* A2* W2 A2* R1* W1 */
ltl P5_2 { !<> (((v==66) && !brk2 && !pub2) && (((v==66) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U (((v==65) && !brk2 && !pub2) && (((v==65) && !brk2 && !pub2) U ((((v==1) || (v==65)) && !brk2 && !pub2) U (((v==2) && !brk2 && !pub2) U ((v==66) && !brk2 && !pub2))))))))) }
