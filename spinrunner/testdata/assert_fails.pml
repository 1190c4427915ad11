/* The model's own assert fails; the claim itself holds. */
short v = 0;

active proctype t1() {
	v = 1;
	assert(v == 0)
}

ltl never3 { !<> (v==3) }
