/* dispatch.c — an event loop of a library the recorder does not see: it is
 * compiled with plain gcc, without -g, so calls from it have no location.
 * It calls the program back once per turn. */
void dispatch(void (*cb)(void *), void *arg, int turns)
{
	for (int i = 0; i < turns; i++)
		cb(arg);
}
