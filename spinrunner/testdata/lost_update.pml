/*
 * Lost update (pattern P3, R1 A2* W2 A2* R1* W1): t1 reads v and later
 * writes it back; t2's write can fall in between and is lost.
 * Values: read = 0 + tid, write = 64 + tid (DESIGN §4).
 */
short v = 0;
bit brk1 = 0;
bit brk2 = 0;

proctype t1() {
	d_step { v = 1; brk1 = 0 }	/* @t1-read */
	d_step { v = 65; brk1 = 0 }	/* @t1-write */
}

proctype t2() {
	d_step { v = 66; brk2 = 0 }	/* @t2-write */
}

init {
	atomic { run t1(); run t2() }
}

/* lost update, local t1: violated */
ltl P3_1 { !<> ((v==1 && !brk1) && ((v==1 && !brk1) U ((v==66 && !brk1) && ((v==66 && !brk1) U (v==65 && !brk1))))) }
/* lost update, local t2: t2 has a single access, so it holds */
ltl P3_2 { !<> ((v==2 && !brk2) && ((v==2 && !brk2) U ((v==65 && !brk2) && ((v==65 && !brk2) U (v==66 && !brk2))))) }
/* t2 writes after t1's write: a plain reachability that is violated */
ltl late2 { !<> ((v==65) && ((v==65) U (v==66))) }
/* no process ever stores 3: holds */
ltl never3 { !<> (v==3) }
