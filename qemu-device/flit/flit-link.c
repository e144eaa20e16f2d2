/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flit-mode link in closed form (flit-link.h).
 */
#include "flit-link.h"

bool flit_width_valid(unsigned width)
{
    return width == 1 || width == 2 || width == 4 || width == 8 ||
           width == 16;
}

unsigned flit_skp_interval(unsigned width)
{
    switch (width) {
    case 16:
        return 748;
    case 8:
        return 374;
    case 4:
        return 187;
    case 2:
        return 93;
    default:
        return 46;
    }
}

uint32_t flit_time_ps(unsigned width)
{
    return 32000u / (flit_width_valid(width) ? width : 1);
}

uint64_t flit_slots(unsigned width, uint64_t l0_ns)
{
    unsigned w = flit_width_valid(width) ? width : 1;
    uint64_t per_flit = FLIT_BYTES / w;             /* symbols a lane */
    uint64_t k = flit_skp_interval(w);
    uint64_t block = k * per_flit + FLIT_SKP_SYMBOLS;
    uint64_t sym = l0_ns * FLIT_SYMBOLS_PER_NS;
    uint64_t rest = (sym % block) / per_flit;

    return sym / block * k + (rest < k ? rest : k);
}

uint64_t flit_payload_flits(uint64_t bytes)
{
    return bytes / FLIT_TLP_BYTES + (bytes % FLIT_TLP_BYTES != 0);
}

uint32_t flit_ack_turnaround_ns(unsigned width)
{
    switch (width) {
    case 16:
        return 50;
    case 8:
        return 52;
    case 4:
        return 56;
    case 2:
        return 64;
    default:
        return 80;
    }
}

uint64_t flit_ack_latency_ns(unsigned width, uint32_t flight_ns)
{
    /* the flit's time rounded up to whole ns */
    uint64_t flit = (flit_time_ps(width) + 999) / 1000;

    return flit + 2 * (uint64_t)flight_ns + flit_ack_turnaround_ns(width);
}

uint64_t flit_replay_latency_ns(unsigned width, uint32_t flight_ns)
{
    return flit_ack_latency_ns(width, flight_ns) +
           (flit_time_ps(width) + 999) / 1000;
}

unsigned flit_width_code(unsigned width)
{
    switch (width) {
    case 2:
        return 1;
    case 4:
        return 2;
    case 8:
        return 3;
    case 16:
        return 4;
    default:
        return 0;
    }
}
