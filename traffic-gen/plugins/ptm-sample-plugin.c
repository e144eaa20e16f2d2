/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A sample traffic plugin (ptm-plugin-abi.h): a square wave of frames.
 *
 * Time is cut into periods of burst + idle cycles from cycle 0. In the
 * first `burst` cycles of each period the RQ bus of every endpoint and the
 * UP bus of every DMA port carry a frame of `bytes` bytes per cycle, each in
 * a single word (SOF and EOF in the same word; on UP with its MVB item);
 * the other cycles idle. RC and DOWN stay idle, the link is up and no BRAKE
 * bit is set. So over the first C cycles of a probe the frames number
 *
 *   (C / period) x burst + min(C % period, burst).
 *
 * args (key=value, comma separated, all optional):
 *   burst=N   busy cycles per period (default 64)
 *   idle=N    idle cycles per period (default 64)
 *   bytes=N   bytes per frame, at most one word of RQ and of UP (default 64)
 *   tags=N    free PCIe tags, 0..2047 (default: the card's capacity)
 *   mps=N     report this MPS encoding 0..5 for every endpoint (default:
 *             the host's)
 *   reset=A   hold endpoint 0's PCIe probe in its own reset (PCIE_RESET)
 *   hold=N    over its cycles [A, A + N) (default: never)
 *
 * Its period() tells the card that every probe repeats with burst + idle
 * cycles (outside that reset), so that a card whose accumulator loses
 * deltas counts it from one period of drain windows.
 *
 *   -object telemetry-traffic-plugin,id=t0,path=ptm-sample-plugin.so,\
 *           args=burst=3,,idle=5
 *
 * Plain C without GLib, to show that a plugin needs nothing but the two
 * headers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptm-plugin-abi.h"

typedef struct Square {
    unsigned long burst, idle, bytes;
    long tags, mps;             /* -1: not given */
    unsigned long reset_at, reset_len;
    PtmGeometry geo;
} Square;

/* A message for create()'s *err: malloc()ed, as the ABI asks. */
static char *__attribute__((format(printf, 1, 2))) msg(const char *fmt, ...)
{
    char *s = malloc(256);
    va_list ap;

    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, 256, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* One key=value of args; NULL, or a message for create()'s *err. */
static char *parse_arg(Square *sq, const char *kv)
{
    static const struct {
        const char *key;
        unsigned long max;
    } keys[] = {
        { "burst", 1000000000 }, { "idle", 1000000000 },
        { "bytes", 65536 }, { "tags", 2047 }, { "mps", 5 },
        { "reset", 4000000000ul }, { "hold", 4000000000ul },
    };
    const char *eq = strchr(kv, '=');
    size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
    unsigned long v;
    char *end;

    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (strlen(keys[i].key) != klen || strncmp(kv, keys[i].key, klen)) {
            continue;
        }
        if (!eq || eq[1] < '0' || eq[1] > '9') {
            return msg("%s: expected %s=<number>", kv, keys[i].key);
        }
        errno = 0;
        v = strtoul(eq + 1, &end, 10);
        if (*end || errno || v > keys[i].max) {
            return msg("%s: a number up to %lu", kv, keys[i].max);
        }
        switch (i) {
        case 0:
            sq->burst = v;
            break;
        case 1:
            sq->idle = v;
            break;
        case 2:
            sq->bytes = v;
            break;
        case 3:
            sq->tags = (long)v;
            break;
        case 4:
            sq->mps = (long)v;
            break;
        case 5:
            sq->reset_at = v;
            break;
        default:
            sq->reset_len = v;
            break;
        }
        return NULL;
    }
    return msg("unknown argument '%s' (known: burst, idle, bytes, tags, "
               "mps, reset, hold)", kv);
}

static void *sq_create(const char *args, const PtmGeometry *geo, char **err)
{
    Square *sq = calloc(1, sizeof(*sq));
    char *copy = strdup(args), *save = NULL;
    unsigned long word_rq, word_up;

    if (!sq || !copy) {
        free(sq);
        free(copy);
        *err = NULL;
        return NULL;
    }
    sq->burst = 64;
    sq->idle = 64;
    sq->bytes = 64;
    sq->tags = -1;
    sq->mps = -1;
    sq->geo = *geo;
    for (char *kv = strtok_r(copy, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        *err = parse_arg(sq, kv);
        if (*err) {
            free(copy);
            free(sq);
            return NULL;
        }
    }
    free(copy);
    word_rq = (unsigned long)geo->rq_regions * geo->rq_region_bytes;
    word_up = (unsigned long)geo->up_regions * geo->up_region_bytes;
    if (sq->bytes == 0 || sq->bytes > word_rq || sq->bytes > word_up) {
        *err = msg("bytes=%lu: a frame is one word here, 1 to %lu bytes",
                   sq->bytes, word_rq < word_up ? word_rq : word_up);
        free(sq);
        return NULL;
    }
    if (sq->burst + sq->idle == 0) {
        *err = msg("burst and idle are both 0");
        free(sq);
        return NULL;
    }
    return sq;
}

/* A cycle of the probe, busy or idle. */
static void sq_cycle(const Square *sq, const PtmProbeInfo *probe, bool busy,
                     PtmSegment *s)
{
    unsigned items = (sq->bytes + sq->geo.item_bytes - 1) / sq->geo.item_bytes;

    memset(s, 0, sizeof(*s));
    s->link_up = 1;
    s->tag_free = sq->tags >= 0 ? (uint16_t)sq->tags
                                : (sq->geo.tag_capacity < 0x7FF
                                   ? sq->geo.tag_capacity : 0x7FF);
    s->stfifo_free = sq->geo.stfifo_capacity;
    if (!busy) {
        return;
    }
    /* bus 0 is RQ, and every even bus of the DMA probe an UP bus */
    for (unsigned b = 0; b < probe->buses; b += 2) {
        PtmBusCycle *bc = &s->bus[b];
        unsigned ipr = probe->bus_items[b];
        unsigned last = (items - 1) / ipr;

        bc->src_rdy = 1;
        bc->dst_rdy = 1;
        bc->sof = 1;
        bc->eof = 1u << last;
        bc->eof_pos[last] = (items - 1) % ipr;
        if (probe->domain == PTM_DOMAIN_DMA) {
            bc->mvb_vld = 1;
            bc->mvb_src_rdy = 1;
            bc->mvb_dst_rdy = 1;
        }
        if (probe->domain == PTM_DOMAIN_PCIE) {
            break;              /* bus 1 is RC */
        }
    }
}

static uint64_t sq_fill(void *inst, const PtmProbeInfo *probe,
                        uint64_t start, uint64_t max, PtmChunk *out)
{
    const Square *sq = inst;
    uint64_t period = sq->burst + sq->idle, ph = start % period;
    PtmSegment *s = out->seg;

    out->repeat = 1;
    if (ph == 0 && max >= period) {
        /* whole periods: the two runs of one period, repeated */
        out->nseg = 0;
        if (sq->burst) {
            sq_cycle(sq, probe, true, &s[out->nseg]);
            s[out->nseg++].cycles = sq->burst;
        }
        if (sq->idle) {
            sq_cycle(sq, probe, false, &s[out->nseg]);
            s[out->nseg++].cycles = sq->idle;
        }
        out->repeat = max / period;
        return out->repeat * period;
    }
    /* the rest of the run start is in */
    sq_cycle(sq, probe, ph < sq->burst, &s[0]);
    s[0].cycles = (ph < sq->burst ? sq->burst : period) - ph;
    if (s[0].cycles > max) {
        s[0].cycles = max;
    }
    out->nseg = 1;
    return s[0].cycles;
}

static void sq_settings(void *inst, unsigned endpoint, uint64_t cycle,
                        PtmSettings *set)
{
    const Square *sq = inst;

    if (sq->mps >= 0) {
        set->mps = (uint8_t)sq->mps;
    }
}

#ifndef PTM_SAMPLE_ABI_V1
/* Endpoint 0's PCIe probe is held over [reset, reset + hold). */
static uint64_t sq_reset(void *inst, const PtmProbeInfo *probe,
                         uint64_t start, uint64_t max, bool *held)
{
    const Square *sq = inst;
    uint64_t a = sq->reset_at, b = sq->reset_at + sq->reset_len;

    *held = false;
    if (probe->endpoint != 0 || probe->domain != PTM_DOMAIN_PCIE ||
        a == b || start >= b) {
        return max;
    }
    if (start < a) {
        return a - start < max ? a - start : max;
    }
    *held = true;
    return b - start < max ? b - start : max;
}
#endif

#ifndef PTM_SAMPLE_ABI_V1
/*
 * Every probe repeats its square wave with burst + idle cycles; endpoint
 * 0's PCIe probe does so before its reset and after it, not in it.
 */
static uint64_t sq_period(void *inst, const PtmProbeInfo *probe,
                          uint64_t cycle, uint64_t *from, uint64_t *until,
                          uint64_t *id)
{
    const Square *sq = inst;
    uint64_t a = sq->reset_at, b = sq->reset_at + sq->reset_len;

    *id = 1;
    if (probe->endpoint == 0 && probe->domain == PTM_DOMAIN_PCIE && a < b) {
        if (cycle >= a && cycle < b) {
            *until = b;
            return 0;
        }
        if (cycle < a) {
            *until = a;
        } else {
            *from = b;
        }
    }
    return sq->burst + sq->idle;
}
#endif

static void sq_destroy(void *inst)
{
    free(inst);
}

static const PtmPluginApi sample_api = {
#ifdef PTM_SAMPLE_ABI_V1
    /* built as a plugin of version 1 would be: the same table, no count */
    .abi_version = 1,
#else
    .abi_version = PTM_PLUGIN_ABI_VERSION,
#endif
    .name = "sample",
    .create = sq_create,
    .fill = sq_fill,
    .settings = sq_settings,
    .destroy = sq_destroy,
#ifndef PTM_SAMPLE_ABI_V1
    .reset = sq_reset,
    .period = sq_period,
#endif
};

const PtmPluginApi *ptm_plugin_entry(void)
{
    return &sample_api;
}
