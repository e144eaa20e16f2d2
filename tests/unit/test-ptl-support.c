/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <glib.h>
#include <string.h>

#include "test-ptl-support.h"

static bool gone(PtlBench *b)
{
    return b->gone_after >= 0 && b->accesses > (uint64_t)b->gone_after;
}

static uint32_t bench_read32(void *opaque, uint32_t off)
{
    PtlBench *b = opaque;
    uint32_t v;

    b->accesses++;
    b->reads32++;
    if (off >= PTM_CNT_BASE) {
        unsigned e = (off - PTM_CNT_BASE) / 8;

        /* the high word must follow its low word */
        if (off & 4) {
            if (b->window_reads[e] == 0) {
                b->low_before_high = false;
            }
        } else {
            b->window_reads[e]++;
        }
    }
    if (off == PTM_REG_STATUS) {
        b->status_reads++;
    }
    if (gone(b)) {
        b->t += b->access_ns;
        return 0xFFFFFFFFu;
    }
    if (off == PTM_REG_STATUS && b->stuck_busy) {
        b->t += b->busy_step_ns;
        return PTM_STATUS_BUSY;
    }
    v = (uint32_t)ptm_core_read(b->core, b->t, off, 4);
    for (unsigned i = 0; i < b->noverride; i++) {
        if (b->override[i].off == off) {
            v = b->override[i].val;
        }
    }
    b->t += b->access_ns;
    return v;
}

static uint64_t bench_read64(void *opaque, uint32_t off)
{
    PtlBench *b = opaque;
    uint64_t v;

    b->accesses++;
    b->reads64++;
    g_assert_cmpuint(off, >=, PTM_CNT_BASE);
    g_assert_cmpuint(off % 8, ==, 0);
    b->window_reads[(off - PTM_CNT_BASE) / 8]++;
    v = gone(b) ? UINT64_MAX : ptm_core_read(b->core, b->t, off, 8);
    b->t += b->access_ns;
    return v;
}

static void bench_write32(void *opaque, uint32_t off, uint32_t val)
{
    PtlBench *b = opaque;

    b->accesses++;
    b->writes++;
    if (b->nlog < PTL_BENCH_LOG) {
        b->log[b->nlog].off = off;
        b->log[b->nlog].val = val;
        b->nlog++;
    }
    if (!gone(b)) {
        ptm_core_write(b->core, b->t, off, val, 4);
    }
    b->t += b->access_ns;
}

static uint64_t bench_now(void *opaque)
{
    return ((PtlBench *)opaque)->t;
}

const ptl_regs_ops ptl_bench_ops = {
    .read32 = bench_read32,
    .write32 = bench_write32,
    .read64 = bench_read64,
    .now_ns = bench_now,
};

const ptl_regs_ops ptl_bench_ops32 = {
    .read32 = bench_read32,
    .write32 = bench_write32,
    .now_ns = bench_now,
};

PtlBench *ptl_bench_new(const PtmConfig *cfg, const PtmPatternParams *par)
{
    PtlBench *b = g_new0(PtlBench, 1);
    PtmGeometry geo;

    b->cfg = *cfg;
    g_assert_null(ptm_config_check(cfg));
    b->core = ptm_core_new(cfg);
    if (par) {
        ptm_core_geometry(b->core, &geo);
        g_assert_null(ptm_pattern_check(par, &geo));
        ptm_pattern_init(&b->pat, par, &geo);
        ptm_core_set_source(b->core, &ptm_pattern_ops, &b->pat);
    }
    ptm_core_power_on(b->core, 0);
    b->access_ns = 100;
    b->gone_after = -1;
    ptl_bench_reset_counts(b);
    return b;
}

void ptl_bench_free(PtlBench *b)
{
    ptm_core_free(b->core);
    g_free(b);
}

void ptl_bench_at(PtlBench *b, uint64_t t)
{
    g_assert_cmpuint(t, >=, b->t);
    b->t = t;
}

void ptl_bench_reset_counts(PtlBench *b)
{
    b->accesses = b->reads32 = b->reads64 = b->writes = b->status_reads = 0;
    memset(b->window_reads, 0, sizeof(b->window_reads));
    b->low_before_high = true;
    b->nlog = 0;
}

void ptl_bench_override(PtlBench *b, uint32_t off, uint32_t val)
{
    g_assert_cmpuint(b->noverride, <, PTL_BENCH_MAX_OVERRIDES);
    b->override[b->noverride].off = off;
    b->override[b->noverride].val = val;
    b->noverride++;
}

ptl_block *ptl_bench_open(PtlBench *b)
{
    ptl_block *blk = NULL;
    ptl_error err = { 0 };
    ptl_err rc = ptl_block_open(&ptl_bench_ops, b, &blk, &err);

    if (rc) {
        g_error("ptl_block_open: %s", err.msg);
    }
    return blk;
}

void ptl_test_pattern(PtmPatternParams *par)
{
    ptm_pattern_params_default(par);
    par->bus[PTM_BUS_RQ] = (PtmPatternBus) { 200, 2, 2, 1 };
    par->bus[PTM_BUS_RC] = (PtmPatternBus) { 64, 7, 0, 1 };
    par->bus[PTM_BUS_UP] = (PtmPatternBus) { 128, 5, 1, 2 };
    par->bus[PTM_BUS_DOWN] = (PtmPatternBus) { 32, 7, 0, 1 };
    par->brake = 0x05;
    par->brake_duty = 25;
    par->brake_period = 64;
    par->tags_free = 20;
    par->stfifo_free = 700;
}
