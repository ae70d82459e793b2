"""Python logging through LTTng's Python agent, for tracekit's tests (lttng_real.rs)."""
import logging

import lttngust  # noqa: F401  (registers the agent with the session daemon)

log = logging.getLogger("tk.agent")
log.setLevel(logging.DEBUG)
for i in range(5):
    log.debug("debug %d", i)
    log.info('info "quoted" %d', i)
    log.warning("warn %s", "\u00fcn\u00ef")
log.error("error")
logging.getLogger("tk.other").critical("critical")
