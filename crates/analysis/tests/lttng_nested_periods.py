#!/usr/bin/python3
"""Runs an lttng-analyses 0.6.1 period command with nested period definitions
`NAME(PARENT) : ...`, which its own parser rejects (pyparsing >= 3): the parent part is
taken off before parsing and put back in the result. Usage: la_nested.py freq|stats [--mi] ARGS."""
import re
import sys

from lttnganalyses.cli import period_parsing, periods

_orig = period_parsing.parse_period_def_arg


def _parse(arg):
    m = re.match(r'\s*([A-Za-z_]\w*)\s*\(\s*([A-Za-z_]\w*)\s*\)(.*)$', arg, re.S)
    if not m:
        return _orig(arg)
    res = _orig(m.group(1) + m.group(3))
    return period_parsing.PeriodDefArgParseResults(
        m.group(2), res.period_name, res.begin_expr, res.end_expr)


period_parsing.parse_period_def_arg = _parse
cmd = sys.argv.pop(1)
mi = '--mi' in sys.argv
if mi:
    sys.argv.remove('--mi')
getattr(periods, '_run' + cmd)(mi_mode=mi)
