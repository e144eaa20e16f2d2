/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sleep of watch mode, kept apart from main() so that the unit tests
 * can check that a stop request is never missed.
 */
#ifndef PTT_WAIT_H
#define PTT_WAIT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds */
uint64_t ptt_mono_ns(void);

/*
 * Blocks SIGINT and SIGTERM; *old is the mask before, *during the mask to
 * give ppoll() so that they are unblocked for its wait only. A loop that
 * checks its stop flag with them blocked and waits in ppoll() misses none
 * (restore *old with sigprocmask(SIG_SETMASK) when done).
 */
void ptt_block_stops(sigset_t *old, sigset_t *during);

/*
 * Sleeps until the monotonic deadline (ns). Returns false as soon as
 * *stop is set by a handler of SIGINT or SIGTERM, also when the signal
 * arrives just before the sleep starts or is pending when it is called;
 * true when the deadline passed. The two signals are unblocked only while
 * waiting, so that the check of *stop and the wait are one atomic step.
 */
bool ptt_sleep_until(uint64_t deadline, volatile sig_atomic_t *stop);

#endif
