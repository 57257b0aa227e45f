/* Callgrind client requests for harness.measure.instructions (loaded via ctypes).
 *
 * npz_instrument(): instrumentation on (once per counting process, after its
 * set-up); npz_begin(): counting on; npz_end(label): counting off and the cost
 * since npz_begin() dumped to a file named after the label, read back in Python.
 * Outside valgrind every request is a no-op (RUNNING_ON_VALGRIND is 0). */
#include <valgrind/callgrind.h>

int npz_on_valgrind(void) { return RUNNING_ON_VALGRIND; }

void npz_instrument(void)
{
    /* Start-up and set-up ran uninstrumented (valgrind's plain speed). Turning
     * instrumentation on flushes every translation, so it is turned on once and
     * left on: on and off around each count cost ~0.1-0.2 s a count. */
    CALLGRIND_START_INSTRUMENTATION;
}

void npz_begin(void)
{
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
}

void npz_end(const char *label)
{
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(label);
}
