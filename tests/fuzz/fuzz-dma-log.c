/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DMA engine's transfer log (ptm-dma-*.c), differential: card a
 * counts the log as the device does (runs placed at once, spans counted
 * from runs, histograms a period at a time), card b places every frame
 * one by one and counts every cycle (the core's reference). Both get the
 * same transfers, and every read of PCIE_TAGS and PCIE_STFIFO (the lowest
 * cleared after each) and, at the end, every counter must be equal; a's
 * log also goes through a save and load and is pruned behind the block
 * on the way.
 *
 * The input: a byte for the DMA clock (200, 250, 400 or 800 MHz), then
 * operations: a transfer (the time on by 0 or up to 4 us, direction,
 * address, size, MPS, MRRS, tag field, RCB), a train of up to 64 equal
 * ones at buffers 2 or 4 KiB apart, the block brought up to time, a
 * migration round trip, or the log's own state from the input loaded
 * into a third card (refused, or counted without a fault). The virtual
 * time of one input is capped so that the reference stays fast.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "ptm-core.h"
#include "ptm-dma-traffic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TIME_CAP_NS 120000
#define MAX_OPS 64

typedef struct Card {
    PtmCore *core;
    PtmDmaTraffic *log;
} Card;

static void card_init(Card *c, const PtmConfig *cfg, bool reference)
{
    PtmGeometry geo;

    c->core = ptm_core_new(cfg);
    ptm_core_set_reference(c->core, reference);
    ptm_core_geometry(c->core, &geo);
    c->log = ptm_dma_traffic_new(&geo);
    ptm_dma_traffic_set_frame_by_frame(c->log, reference);
    ptm_core_set_source(c->core, ptm_dma_traffic_ops(), c->log);
    ptm_core_power_on(c->core, 0);
}

static void card_fini(Card *c)
{
    ptm_core_free(c->core);
    ptm_dma_traffic_free(c->log);
}

/* Both cards up to t; their lowest free tags and FIFO words alike */
static void both_at(Card *a, Card *b, uint64_t t)
{
    static const uint32_t regs[] = { PTM_REG_PCIE_TAGS, PTM_REG_PCIE_STFIFO };

    ptm_dma_traffic_set_now(a->log, t);
    ptm_dma_traffic_set_now(b->log, t);
    ptm_core_advance(a->core, t);
    ptm_core_advance(b->core, t);
    for (unsigned i = 0; i < 2; i++) {
        uint64_t va = ptm_core_read(a->core, t, regs[i], 4);
        uint64_t vb = ptm_core_read(b->core, t, regs[i], 4);

        if (va != vb) {
            fprintf(stderr, "fuzz-dma-log: at %llu ns register 0x%x: "
                    "%llx, per cycle %llx\n", (unsigned long long)t, regs[i],
                    (unsigned long long)va, (unsigned long long)vb);
            abort();
        }
    }
    ptm_core_write(a->core, t, PTM_REG_COMMAND, PTM_CMD_CLEAR_LOWEST, 4);
    ptm_core_write(b->core, t, PTM_REG_COMMAND, PTM_CMD_CLEAR_LOWEST, 4);
}

/* A state from the input into a card of its own: refused, or counted */
static void foreign_state(const PtmConfig *cfg, Input *in)
{
    size_t want = take(in, 2) % 512, len = MIN(want, in->left);
    Card c;
    char *err;

    card_init(&c, cfg, false);
    err = ptm_dma_traffic_load(c.log, in->p, len);
    in->p += len;
    in->left -= len;
    if (!err) {
        ptm_core_advance(c.core, 50000);
    }
    g_free(err);
    card_fini(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t dma_hz[] = {
        200000000, 250000000, 400000000, 800000000,
    };
    Input in = { data, size };
    PtmConfig cfg;
    Card a, b;
    uint64_t t = 1000;
    const PtmLayout *lay;

    ptm_config_default(&cfg);
    cfg.dma_clk_hz = dma_hz[take(&in, 1) & 3];
    card_init(&a, &cfg, false);
    card_init(&b, &cfg, true);
    for (unsigned ops = 0; in.left && ops < MAX_OPS && t < TIME_CAP_NS;
         ops++) {
        uint8_t op = take(&in, 1);

        switch (op & 7) {
        case 0: case 1: case 2: case 3: {           /* transfers */
            uint64_t sz = take(&in, 2), addr = take(&in, 4);
            uint8_t st = take(&in, 1);
            PtmSettings set = {
                .mps = st & 7, .mrrs = st >> 3 & 7,
                .ext_tag = st >> 6 & 1, .tag_10bit = st >> 7 & 1,
                .rcb_128 = op >> 3 & 1,
            };
            bool write = op >> 4 & 1;
            unsigned reps = (op & 3) == 3 ? 1 + (op >> 5) * 9 : 1;
            uint64_t stride = op >> 5 & 1 ? 2048 : 4096;

            if (op & 2) {
                t += take(&in, 2) % 4000;
            }
            /* mostly small; up to 16 KiB */
            sz = sz & 0x8000 ? sz & 0x3FFF : sz & 0x7FF;
            for (unsigned r = 0; r < reps; r++) {
                ptm_dma_traffic_add(a.log, t, 0, write, addr + r * stride,
                                    sz, &set);
                ptm_dma_traffic_add(b.log, t, 0, write, addr + r * stride,
                                    sz, &set);
            }
            break;
        }
        case 4:                                     /* the blocks catch up */
            t += take(&in, 2) % 20000;
            both_at(&a, &b, t);
            break;
        case 5: {                                   /* migration, pruning */
            size_t len;
            void *st = ptm_dma_traffic_save(a.log, &len);
            char *err;

            ptm_dma_traffic_reset(a.log, 0);
            err = ptm_dma_traffic_load(a.log, st, len);
            if (err) {
                fprintf(stderr, "fuzz-dma-log: own state refused: %s\n",
                        err);
                abort();
            }
            g_free(st);
            /* behind the block by more than a drain window, as the card */
            if (ptm_core_done_ns(a.core) > 100000) {
                ptm_dma_traffic_prune(a.log,
                                      ptm_core_done_ns(a.core) - 100000);
            }
            break;
        }
        case 6:
            foreign_state(&cfg, &in);
            break;
        default:
            t += take(&in, 1) * 10;
            break;
        }
    }
    /* on, while reads the tag limit held back may still be in flight */
    both_at(&a, &b, t + 50000);
    lay = ptm_core_layout(a.core);
    for (unsigned e = 0; e < lay->entries; e++) {
        uint64_t va = ptm_core_counter(a.core, false, e);
        uint64_t vb = ptm_core_counter(b.core, false, e);

        if (va != vb) {
            fprintf(stderr, "fuzz-dma-log: counter %u: %llu, per cycle "
                    "%llu\n", e, (unsigned long long)va,
                    (unsigned long long)vb);
            abort();
        }
    }
    card_fini(&a);
    card_fini(&b);
    return 0;
}
