# Sourced by the bench scripts: puts a trace in the page cache as a trace read from disk is.
#
# The page cache holds a file in folios whose size depends on how the pages got there: writes
# (the generator's, `cp`'s) leave small folios, a read from disk larger ones (up to 2 MiB with
# tracekit's MADV_HUGEPAGE, up to the read-ahead window with `cat`). Mapping and unmapping
# 144 MiB of small folios costs ~38 ms on the bench VM, ~13 ms for read-ahead folios: a third
# of a one-core count, nothing for babeltrace2 or lttng-analyses. See bench/README.md
# ("Page cache").

# cache_from_disk DIR: drops DIR's files from the page cache, then reads them back with `cat`
# (not tracekit, so that the folios are the kernel's default read-ahead ones).
cache_from_disk() {
    find "$1" -type f -exec sync {} +
    # GNU dd: count=0 with iflag=nocache drops the whole file from the page cache.
    find "$1" -type f -exec sh -c 'for f; do dd if="$f" iflag=nocache count=0 status=none; done' sh {} +
    find "$1" -type f -exec cat {} + >/dev/null
}
