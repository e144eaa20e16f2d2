/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PG381 performance traffic generator's counters (docs/pg381.md):
 * read at one instant through CAPTURE_ALL, the figures worked out of
 * them, and --pg381's report. Finding and mapping the window is in
 * ptl-find.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcie-telemetry.h"
#include "ptl-jw.h"

/* The CAPTURE_ALL copy of status register reg (0x2000 + 4k). */
static uint32_t copy_of(const ptl_regs_ops *ops, void *opaque, uint32_t reg)
{
    return ops->read32(opaque, PTL_PG381_AL_BASE +
                       (reg - PTL_PG381_STATUS_BASE));
}

/*
 * The block has no register of its data width: a channel's beat is
 * 2^axi_size of its instructions (AXI word bits 10:8), which the card's
 * instruction RAM keeps after the run; one size for all of them, else
 * bytes cannot be told from beats.
 */
static void beat_sizes(const ptl_regs_ops *ops, void *opaque,
                       unsigned *rd_bytes, unsigned *wr_bytes)
{
    uint32_t len = ops->read32(opaque, PTL_PG381_CARD_PROG_LEN);
    unsigned size[2] = { 0, 0 };
    bool mixed[2] = { false, false };

    if (len > PTL_PG381_INSTRS) {
        len = 0;
    }
    for (uint32_t k = 0; k < len; k++) {
        uint32_t at = PTL_PG381_RAM + PTL_PG381_INSTR_BYTES * k;
        unsigned cmd = ops->read32(opaque, at) & 3;     /* 0 READ, 1 WRITE */
        unsigned bytes = 1u << ((ops->read32(opaque, at + 0x0C) >> 8) & 7);

        if (cmd > 1) {
            continue;
        }
        if (size[cmd] && size[cmd] != bytes) {
            mixed[cmd] = true;
        }
        size[cmd] = bytes;
    }
    *rd_bytes = mixed[0] ? 0 : size[0];
    *wr_bytes = mixed[1] ? 0 : size[1];
}

ptl_err ptl_pg381_read(const ptl_regs_ops *ops, void *opaque, ptl_pg381 *g,
                       ptl_error *err)
{
    uint32_t id = ops->read32(opaque, PTL_PG381_CARD_ID);

    if (id == 0xFFFFFFFFu) {
        return ptl_set_error(err, PTL_E_GONE, "the PG381 generator is not "
                             "responding (CARD_ID reads all ones)");
    }
    if (id != PTL_PG381_CARD_MAGIC) {
        return ptl_set_error(err, PTL_E_MAGIC, "no PG381 generator there: "
                             "CARD_ID reads 0x%08x, not 0x%08x", id,
                             PTL_PG381_CARD_MAGIC);
    }
    if (g->clock_hz == 0) {
        g->clock_hz = ops->read32(opaque, PTL_PG381_CARD_CLOCK);
    }
    /* a read of CAPTURE_ALL latches every copy at that instant */
    (void)ops->read32(opaque, PTL_PG381_CAPTURE_ALL);
    g->rd.requests = copy_of(ops, opaque, PTL_PG381_ARREQ);
    g->rd.beats = copy_of(ops, opaque, PTL_PG381_RBEAT);
    g->rd.lasts = copy_of(ops, opaque, PTL_PG381_RLAST);
    g->rd.responses = g->rd.lasts;
    g->rd.eff_cycles = copy_of(ops, opaque, PTL_PG381_RBW_EFF_CLK);
    g->rd.best = copy_of(ops, opaque, PTL_PG381_RBEST);
    g->rd.worst = copy_of(ops, opaque, PTL_PG381_RWORST);
    g->rd.sum = copy_of(ops, opaque, PTL_PG381_RAVG);
    g->wr.requests = copy_of(ops, opaque, PTL_PG381_AWREQ);
    g->wr.beats = copy_of(ops, opaque, PTL_PG381_WRBEAT);
    g->wr.lasts = copy_of(ops, opaque, PTL_PG381_WLAST);
    g->wr.responses = copy_of(ops, opaque, PTL_PG381_BRESP);
    g->wr.eff_cycles = copy_of(ops, opaque, PTL_PG381_WBW_EFF_CLK);
    g->wr.best = copy_of(ops, opaque, PTL_PG381_WBEST);
    g->wr.worst = copy_of(ops, opaque, PTL_PG381_WWORST);
    g->wr.sum = copy_of(ops, opaque, PTL_PG381_WAVG);
    g->flow_empty = copy_of(ops, opaque, PTL_PG381_FLOW_EMPTY);
    g->error_reg = ops->read32(opaque, PTL_PG381_CARD_ERROR);
    beat_sizes(ops, opaque, &g->rd.beat_bytes, &g->wr.beat_bytes);
    ptl_pg381_compute(g);
    return PTL_OK;
}

static void channel_compute(ptl_pg381_channel *c, uint32_t clock_hz)
{
    double hz = clock_hz;

    c->bytes_per_s = NAN;
    c->best_ns = c->worst_ns = c->avg_ns = NAN;
    if (clock_hz == 0) {
        return;
    }
    /* beats x bytes in eff_cycles / clock seconds */
    if (c->beat_bytes && c->eff_cycles) {
        c->bytes_per_s = (double)c->beats * c->beat_bytes * hz /
                         c->eff_cycles;
    }
    if (c->requests) {
        c->best_ns = c->best * 1e9 / hz;
        c->worst_ns = c->worst * 1e9 / hz;
        c->avg_ns = (double)c->sum * 1e9 / hz / c->requests;
    }
}

void ptl_pg381_compute(ptl_pg381 *g)
{
    channel_compute(&g->rd, g->clock_hz);
    channel_compute(&g->wr, g->clock_hz);
    g->done = g->flow_empty & PTL_PG381_FE_DONE;
    g->error = g->flow_empty & PTL_PG381_FE_ERROR;
}

/* A figure in a column of width w, "-" for one there is not. */
static void put_figure(FILE *f, int w, int prec, double v)
{
    if (isnan(v)) {
        fprintf(f, " %*s", w, "-");
    } else {
        fprintf(f, " %*.*f", w, prec, v);
    }
}

static void text_channel(FILE *f, const char *name,
                         const ptl_pg381_channel *c)
{
    fprintf(f, "%-6s %10u %10u %10u %10u %12u %5u", name, c->requests,
            c->beats, c->lasts, c->responses, c->eff_cycles, c->beat_bytes);
    put_figure(f, 16, 0, c->bytes_per_s);
    put_figure(f, 10, 1, c->best_ns);
    put_figure(f, 10, 1, c->worst_ns);
    put_figure(f, 10, 1, c->avg_ns);
    fputc('\n', f);
}

int ptl_pg381_format_text(FILE *f, const ptl_pg381 *g)
{
    fprintf(f, "PG381 %s of %s: BAR%u 0x%llx, clock %u Hz\n", g->path,
            g->slot, g->bar, (unsigned long long)g->offset, g->clock_hz);
    fprintf(f, "%-6s %10s %10s %10s %10s %12s %5s %16s %10s %10s %10s\n",
            "", "requests", "beats", "lasts", "responses", "eff.cycles",
            "beat", "bytes/s", "best ns", "worst ns", "avg ns");
    text_channel(f, "read", &g->rd);
    text_channel(f, "write", &g->wr);
    fprintf(f, "FLOW_EMPTY 0x%08x: %s, %s; ERROR 0x%08x\n", g->flow_empty,
            g->done ? "done" : "not done", g->error ? "error" : "no error",
            g->error_reg);
    return ferror(f) ? -1 : 0;
}

static void jw_number(jw *w, const char *key, double v)
{
    jw_key(w, key);
    if (isnan(v)) {
        fputs("null", w->f);
    } else {
        fprintf(w->f, "%.17g", v);
    }
}

static void json_channel(jw *w, const char *key, const ptl_pg381_channel *c,
                         bool reads)
{
    jw_key(w, key);
    jw_open(w, '{');
    jw_u64(w, "requests", c->requests);
    jw_u64(w, "beats", c->beats);
    jw_u64(w, "lasts", c->lasts);
    if (!reads) {
        jw_u64(w, "responses", c->responses);
    }
    jw_u64(w, "effective_cycles", c->eff_cycles);
    jw_u64(w, "beat_bytes", c->beat_bytes);
    jw_number(w, "bytes_per_s", c->bytes_per_s);
    jw_u64(w, "best_cycles", c->best);
    jw_u64(w, "worst_cycles", c->worst);
    jw_u64(w, "sum_cycles", c->sum);
    jw_number(w, "best_ns", c->best_ns);
    jw_number(w, "worst_ns", c->worst_ns);
    jw_number(w, "avg_ns", c->avg_ns);
    jw_close(w, '}');
}

int ptl_pg381_format_json(FILE *f, const ptl_pg381 *g)
{
    jw w = { .f = f };

    jw_open(&w, '{');
    jw_key(&w, "pg381");
    jw_open(&w, '{');
    jw_key(&w, "device");
    jw_string(&w, g->slot);
    jw_key(&w, "node");
    jw_string(&w, g->path);
    jw_u64(&w, "bar", g->bar);
    jw_u64(&w, "offset", g->offset);
    jw_u64(&w, "clock_hz", g->clock_hz);
    json_channel(&w, "read", &g->rd, true);
    json_channel(&w, "write", &g->wr, false);
    jw_u64(&w, "flow_empty", g->flow_empty);
    jw_bool(&w, "done", g->done);
    jw_bool(&w, "error", g->error);
    jw_u64(&w, "error_register", g->error_reg);
    jw_close(&w, '}');
    jw_close(&w, '}');
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}
