"""Runs an lttng-analyses command (`lttng-cputop`, `lttng-irqstats`, ...) on a trace with its kernel
state machine wrapped, so that when the state machine raises, the events it handled last are
printed with the traceback. The recording tests run it only after the plain command failed:
knowing which recorded events lttng-analyses chokes on is what a fix needs."""

import collections
import importlib.metadata
import sys
import traceback

from lttnganalyses.linuxautomaton import automaton

recent = collections.deque(maxlen=12)
handle = automaton.Automaton.process_event


# Packet and header fields repeated on every event: left out.
PACKET = {"magic", "uuid", "stream_id", "packet_size", "content_size", "timestamp_begin",
          "timestamp_end", "events_discarded", "id", "v"}


def describe(ev):
    fields = ", ".join(f"{k} = {ev[k]!r}" for k in ev.keys() if k not in PACKET)
    return f"{ev.timestamp} {ev.name}: {fields}"


def process_event(self, ev):
    recent.append(describe(ev))
    try:
        handle(self, ev)
    except Exception:
        print("lttng-analyses failed on the last of these events:")
        for line in recent:
            print("   ", line)
        traceback.print_exc(file=sys.stdout)
        raise


automaton.Automaton.process_event = process_event
command = sys.argv[1]
(entry,) = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == command]
sys.argv = [command] + sys.argv[2:]
entry.load()()
