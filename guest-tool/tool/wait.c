/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sleep of watch mode. Checking a flag and then calling
 * clock_nanosleep() loses a signal that arrives between the two: the tool
 * would sleep out a whole interval (up to a day) after SIGINT. Here the
 * signals stay blocked while the flag is checked, and ppoll() unblocks
 * them atomically for the wait itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "wait.h"

uint64_t ptt_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ptt_block_stops(sigset_t *old, sigset_t *during)
{
    sigset_t stops;

    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigprocmask(SIG_BLOCK, &stops, old);
    *during = *old;
    sigdelset(during, SIGINT);
    sigdelset(during, SIGTERM);
}

bool ptt_sleep_until(uint64_t deadline, volatile sig_atomic_t *stop)
{
    sigset_t old, during;
    bool reached = false;

    ptt_block_stops(&old, &during);
    while (!*stop) {
        uint64_t now = ptt_mono_ns();
        struct timespec rel;

        if (now >= deadline) {
            reached = true;
            break;
        }
        rel.tv_sec = (deadline - now) / 1000000000ull;
        rel.tv_nsec = (deadline - now) % 1000000000ull;
        /* returns 0 at the timeout, -1 with EINTR after a handler ran */
        if (ppoll(NULL, 0, &rel, &during) < 0 && errno != EINTR) {
            reached = true;     /* cannot wait: carry on, never spin */
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return reached && !*stop;
}
