/* The probes of the tk tracepoint provider (tk_tp.h). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tk_tp.h"
