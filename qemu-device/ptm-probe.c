/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The probes of the PCIE_TELEMETRY_MI model: the MI cycle of a probe's
 * cycle, drain windows and their edges, counting a span of a probe from its
 * traffic source (closed-form range counts, chunks, kept counts of named
 * segment lists), a drain, and the live registers a PCIe drain updates.
 */
#include <string.h>

#include "ptm-core-int.h"

/* MI cycle in which probe cycle c happens (its edge at or before c). */
uint64_t ptm_mi_floor(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    if (p->mi_ratio) {
        /* the usual case: a whole ratio, mostly a power of two */
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)((u128)c * core->cfg.mi_clk_hz / p->sh.info.hz);
}

uint64_t ptm_mi_ceil(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    uint64_t hz = p->sh.info.hz;

    if (p->mi_ratio) {
        c += p->mi_ratio - 1;
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)(((u128)c * core->cfg.mi_clk_hz + hz - 1) / hz);
}

/* ------------------------------------------------------------------ */
/* Probes                                                               */

/* MI cycle of the probe's next drain. */
uint64_t ptm_probe_next_event(const PtmCore *core, const PtmProbe *p)
{
    uint64_t tick = p->origin + (p->window + 1) * core->cfg.drain_period - 1;

    return ptm_mi_floor(core, p, tick);
}

/* The chunk an absent source describes: idle buses, link up, all free. */
static uint64_t idle_fill(const PtmCore *core, uint64_t max, PtmChunk *ch)
{
    PtmSegment *s;

    ch->id = 0;
    ch->seg = ch->scratch;
    s = &ch->seg[0];

    memset(s, 0, sizeof(*s));
    s->cycles = max;
    s->link_up = 1;
    s->tag_free = MIN(core->cfg.tag_capacity, 0x7FF);
    s->stfifo_free = core->cfg.stfifo_capacity;
    ch->nseg = 1;
    ch->repeat = 1;
    return max;
}

/* Cycles a chunk covers, or 0 if it is malformed. */
static uint64_t chunk_cycles(const PtmChunk *ch)
{
    uint64_t sum = 0;

    if (ch->nseg < 1 || ch->nseg > PTM_CHUNK_SEGMENTS || ch->repeat < 1) {
        return 0;
    }
    for (unsigned i = 0; i < ch->nseg; i++) {
        if (ch->seg[i].cycles == 0) {
            return 0;
        }
        sum += ch->seg[i].cycles;
    }
    return sum * ch->repeat;
}

void ptm_core_set_memo(PtmCore *core, bool on)
{
    core->memo_off = !on;
}

/*
 * Count a chunk the source marked with an id from the counts of one pass
 * kept from before; false if that does not apply (the pass would not end
 * in the state it started from, so passes differ).
 */
static bool count_memo(PtmCore *core, PtmProbe *p, const PtmChunk *ch)
{
    PtmCountState *st = &p->cs;
    /* a set of four slots chosen by the id, the least recent replaced */
    unsigned set = (unsigned)((ch->id ^ (ch->id >> 29) ^ st->open) %
                              (PTM_MEMO_SLOTS / 4)) * 4;
    PtmMemo *m = NULL;

    for (unsigned k = set; k < set + 4; k++) {
        if (p->memo[k].valid && p->memo[k].id == ch->id &&
            p->memo[k].open_in == st->open) {
            m = &p->memo[k];
            break;
        }
    }
    if (!m) {
        m = &p->memo[set];
        for (unsigned k = set + 1; k < set + 4; k++) {
            if (p->memo[k].used < m->used) {
                m = &p->memo[k];
            }
        }
        m->out = (PtmCountState) { .open = st->open };
        ptm_count_state_window_start(&m->out);
        memset(m->d, 0, p->sh.channels * sizeof(m->d[0]));
        ptm_count_pass(&p->sh, &m->out, ch, m->d);
        m->valid = true;
        m->id = ch->id;
        m->open_in = st->open;
    }
    m->used = ++p->memo_clock;
    if (m->out.open != m->open_in && ch->repeat > 1) {
        return false;
    }
    for (unsigned c = 0; c < p->sh.channels; c++) {
        core->wacc[c] += m->d[c] * ch->repeat;
    }
    ptm_count_state_append(st, &m->out);
    return true;
}

/* Count the absolute cycles [start, end) of a probe into core->wacc. */
void ptm_probe_count_span(PtmCore *core, PtmProbe *p, uint64_t start,
                             uint64_t end)
{
    /* what the function negotiated; a source may model traffic by it */
    p->sh.info.settings = core->settings[p->sh.info.endpoint];
    if (!core->reference && core->ops && core->ops->count && start < end &&
        core->ops->count(core->opaque, &p->sh, start, end, &p->cs,
                         core->wacc)) {
        return;
    }
    while (start < end) {
        uint64_t max = end - start, n = 0;

        if (core->ops) {
            core->chunk->seg = core->chunk->scratch;
            core->chunk->nseg = 0;
            core->chunk->repeat = 1;
            core->chunk->id = 0;
            core->ops->fill(core->opaque, &p->sh.info, start, max,
                            core->chunk);
            n = chunk_cycles(core->chunk);
        }
        if (n == 0 || n > max) {
            /* no source, or one that broke its contract: idle */
            n = idle_fill(core, max, core->chunk);
        }
        if (!(core->chunk->id && !core->memo_off &&
              count_memo(core, p, core->chunk))) {
            ptm_count_chunk(&p->sh, &p->cs, core->chunk, core->wacc);
        }
        start += n;
    }
}

/* First cycle of window w of a probe (window 0 is one cycle short). */
uint64_t ptm_window_start(const PtmCore *core, const PtmProbe *p,
                             uint64_t w)
{
    return p->origin + (w ? w * core->cfg.drain_period - 1 : 0);
}

/* The live registers of an endpoint after the drain at PCIe cycle tick. */
void ptm_pcie_regs_update(PtmCore *core, PtmProbe *p, uint64_t tick)
{
    unsigned e = p->sh.info.endpoint;
    PtmSettings set = core->settings[e];
    const PtmSettings *s = &set;
    uint32_t low_tag = MIN(core->pcie_tags[e] >> 16, p->cs.tag_min);
    uint32_t low_fifo = MIN(core->pcie_stfifo[e] >> 16, p->cs.stfifo_min);

    if (core->ops && core->ops->settings) {
        core->ops->settings(core->opaque, e, tick, &set);
    }
    core->pcie_status[e] = (s->mps & 7) | (s->mrrs & 7) << 3 |
                           s->ext_tag << 6 | s->tag_10bit << 7 |
                           s->rcb_128 << 8 | p->cs.link_last << 9;
    core->pcie_tags[e] = p->cs.tag_last | low_tag << 16;
    core->pcie_stfifo[e] = p->cs.stfifo_last | low_fifo << 16;
}

void ptm_probe_drain(PtmCore *core, PtmProbe *p)
{
    uint64_t w = p->window;
    uint64_t tick = ptm_window_start(core, p, w + 1);

    if (core->reference) {
        memset(core->wacc, 0, p->sh.channels * sizeof(core->wacc[0]));
        ptm_count_state_window_start(&p->cs);
        ptm_probe_count_span(core, p, ptm_window_start(core, p, w), tick);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            p->pend[c] = (uint32_t)core->wacc[c];
        }
        if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
            ptm_pcie_regs_update(core, p, tick);
        }
    }
    p->pend_n = p->sh.channels;
    p->pend_next = 0;
    /* group and FIFO input registers: 2 cycles, then a delta per cycle */
    p->pend_cycle0 = tick + 2;
    p->window++;
}
