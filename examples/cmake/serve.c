/* serve.c — the clients' work, in C: each serves 10 requests. */
#include <unistd.h>

long serve(int client)
{
	(void)client;
	usleep(1000);
	return 10;
}
