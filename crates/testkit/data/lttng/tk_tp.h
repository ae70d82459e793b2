/*
 * A tracepoint provider for tracekit's tests: integers (signed, hexadecimal, network byte
 * order), floats, strings, sequences and arrays (of integers and of text), an enumeration
 * with a value, a range, an automatic value and values outside every mapping, and a second
 * event with a log level.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tk

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tk_tp.h"

#if !defined(TK_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TK_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_ENUM(tk, state,
    LTTNG_UST_TP_ENUM_VALUES(
        lttng_ust_field_enum_value("idle", 0)
        lttng_ust_field_enum_range("busy", 1, 9)
        lttng_ust_field_enum_auto("next")
    )
)

LTTNG_UST_TRACEPOINT_EVENT(tk, values,
    LTTNG_UST_TP_ARGS(int, i, const char *, s, double, d, float, f,
                      const uint8_t *, seq, unsigned int, seq_len, const int32_t *, arr),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, i, i)
        lttng_ust_field_integer(int64_t, neg, -(int64_t)i * 1000003)
        lttng_ust_field_integer_hex(uint32_t, hex, (uint32_t)i * 2654435761u)
        lttng_ust_field_integer_network(uint16_t, net, (uint16_t)i)
        lttng_ust_field_float(double, d, d)
        lttng_ust_field_float(float, f, f)
        lttng_ust_field_string(s, s)
        lttng_ust_field_sequence(uint8_t, seq, seq, unsigned int, seq_len)
        /* Never empty: babeltrace2 2.0.4 prints an empty text sequence that follows a
         * non-empty one as that one (a known defect). */
        lttng_ust_field_sequence_text(char, seqtext, s, unsigned int, seq_len % 16 + 1)
        lttng_ust_field_array(int32_t, arr, arr, 3)
        lttng_ust_field_array_text(char, arrtext, s, 4)
        /* 10 is "next", 11 no mapping. */
        lttng_ust_field_enum(tk, state, int, st, i % 12)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(tk, tick,
    LTTNG_UST_TP_ARGS(uint64_t, n),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, n, n)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(tk, tick, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

#endif

#include <lttng/tracepoint-event.h>
