/*
 * A small LTTng-UST application for tracekit's tests (crates/tracekit/tests/lttng_real.rs).
 * `tk_app VALUES TICKS`: VALUES `tk:values` events, which carry every kind of field the
 * provider (tk_tp.h) declares, then TICKS `tk:tick` events as fast as it can go (to overrun
 * small ring buffers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tk_tp.h"

int main(int argc, char **argv)
{
	long values = argc > 1 ? atol(argv[1]) : 10;
	long ticks = argc > 2 ? atol(argv[2]) : 0;
	/* Empty, short, escaped and non-ASCII strings. */
	static const char *words[] = { "", "a", "hello", "tab\there", "quote\"back\\slash",
				       "ünïcödé" };
	uint8_t seq[16];
	int32_t arr[3];

	for (long i = 0; i < values; i++) {
		char buf[64];

		memset(buf, 0, sizeof buf);
		snprintf(buf, sizeof buf, "%s-%ld", words[i % 6], i);
		for (int k = 0; k < 16; k++)
			seq[k] = (uint8_t) (i * 7 + k);
		arr[0] = (int32_t) i;
		arr[1] = -(int32_t) i;
		arr[2] = (int32_t) (i * i);
		/* Something for liblttng-ust-libc-wrapper.so to see (volatile: a compiler may
		 * leave out a malloc whose memory is only freed). */
		void *volatile mem = malloc(32 + i);
		free(mem);
		lttng_ust_tracepoint(tk, values, (int) i, buf, i / 3.0, (float) i * 0.25f - 1.5f,
				     seq, (unsigned int) (i % 17), arr);
	}
	for (long n = 0; n < ticks; n++)
		lttng_ust_tracepoint(tk, tick, (uint64_t) n);
	return 0;
}
