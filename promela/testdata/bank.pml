/* mcpredict model of balance
 * trace:    bank.csv
 * t1:       thread 2 of the trace (handle 201)
 * t2:       thread 3 of the trace (handle 202)
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
/* lock 0: mutex acct_lock */
byte owner[1]; /* 0 free, else the thread holding it (writer for a rwlock) */

proctype t1() { /* thread 2, handle 201 */
  atomic { owner[0] == 0 -> owner[0] = 1 } /* Lock bank.c:10 (trace line 19) */
  v = (v & 1280) | 1; /* Read bank.c:11 (trace line 20) */
  owner[0] = 0; /* Unlock bank.c:12 (trace line 21) */
  v = v | 512; /* Publish bank.c:12 (trace line 21, Unlock) */
  atomic { owner[0] == 0 -> owner[0] = 1 } /* Lock bank.c:14 (trace line 22) */
  v = (v & 1280) | 65; /* Write bank.c:15 (trace line 23) */
  owner[0] = 0; /* Unlock bank.c:16 (trace line 24) */
}

proctype t2() { /* thread 3, handle 202 */
  atomic { owner[0] == 0 -> owner[0] = 2 } /* Lock bank.c:10 (trace line 27) */
  v = (v & 640) | 2; /* Read bank.c:11 (trace line 28) */
  owner[0] = 0; /* Unlock bank.c:12 (trace line 29) */
  v = v | 1024; /* Publish bank.c:12 (trace line 29, Unlock) */
  atomic { owner[0] == 0 -> owner[0] = 2 } /* Lock bank.c:14 (trace line 30) */
  v = (v & 640) | 66; /* Write bank.c:15 (trace line 31) */
  owner[0] = 0; /* Unlock bank.c:16 (trace line 32) */
}

init { atomic { run t1(); run t2() } }

/* P1 unrepeatable read, local thread t1: R1 A2* W2 A2* R1 */
ltl P1_1 { !<> (((v & 255) == 1) && (((v & 255) == 1) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 66) && (((v & 255) == 66) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 1) && ((v & 2048) == 0)))))))) }

/* P1 unrepeatable read, local thread t2: R1 A2* W2 A2* R1 */
ltl P1_2 { !<> (((v & 383) == 2) && (((v & 383) == 2) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 65) && (((v & 383) == 65) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 2) && ((v & 4096) == 0)))))))) }

/* P2 stale read after local write, local thread t1: W1 R1* A2* W2 A2* R1 */
ltl P2_1 { !<> (((v & 767) == 65) && (((v & 767) == 65) U (((v & 767) == 1) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 66) && (((v & 767) == 66) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 1) && ((v & 2048) == 0))))))))) }

/* P2 stale read after local write, local thread t2: W1 R1* A2* W2 A2* R1 */
ltl P2_2 { !<> (((v & 1407) == 66) && (((v & 1407) == 66) U (((v & 1407) == 2) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 65) && (((v & 1407) == 65) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 2) && ((v & 4096) == 0))))))))) }

/* P3 lost update, local thread t1: R1 A2* W2 A2* R1* W1 */
ltl P3_1 { !<> (((v & 255) == 1) && (((v & 255) == 1) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 66) && (((v & 255) == 66) U ((((v & 255) == 2) || ((v & 255) == 66)) U (((v & 255) == 1) U (((v & 255) == 65) && ((v & 2048) == 0))))))))) }

/* P3 lost update, local thread t2: R1 A2* W2 A2* R1* W1 */
ltl P3_2 { !<> (((v & 383) == 2) && (((v & 383) == 2) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 65) && (((v & 383) == 65) U ((((v & 383) == 1) || ((v & 383) == 65)) U (((v & 383) == 2) U (((v & 383) == 66) && ((v & 4096) == 0))))))))) }

/* P4 dirty (intermediate) read, local thread t1: W1 R1* R2+ R1* W1 */
ltl P4_1 { !<> (((v & 767) == 65) && (((v & 767) == 65) U (((v & 767) == 1) U (((v & 767) == 2) && (((v & 767) == 2) U (((v & 767) == 1) U (((v & 767) == 65) && ((v & 2048) == 0)))))))) }

/* P4 dirty (intermediate) read, local thread t2: W1 R1* R2+ R1* W1 */
ltl P4_2 { !<> (((v & 1407) == 66) && (((v & 1407) == 66) U (((v & 1407) == 2) U (((v & 1407) == 1) && (((v & 1407) == 1) U (((v & 1407) == 2) U (((v & 1407) == 66) && ((v & 4096) == 0)))))))) }

/* P5 overwritten write, local thread t1: W1 R1* A2* W2 A2* R1* W1 */
ltl P5_1 { !<> (((v & 767) == 65) && (((v & 767) == 65) U (((v & 767) == 1) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 66) && (((v & 767) == 66) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 1) U (((v & 767) == 65) && ((v & 2048) == 0)))))))))) }

/* P5 overwritten write, local thread t2: W1 R1* A2* W2 A2* R1* W1 */
ltl P5_2 { !<> (((v & 1407) == 66) && (((v & 1407) == 66) U (((v & 1407) == 2) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 65) && (((v & 1407) == 65) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 2) U (((v & 1407) == 66) && ((v & 4096) == 0)))))))))) }
