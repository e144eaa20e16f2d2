/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay generator on random traces (registered by test-replay.c):
 * written as VCD (x and z wherever they must not matter) and as text, they
 * replay exactly the signals they were written from, in every end mode,
 * with the fast counter equal to the per-cycle reference.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "replay-support.h"

/* ------------------------------------------------------ random traces */

/* Any signals at all: the counters, not the MFB rules, are the point. */
static void random_cycle(Rng *r, const PtmProbeShape *sh, unsigned W,
                         PtmSegment *s)
{
    static const uint16_t tags[] = { 0, 5, 30, 100, 256 };
    static const uint16_t words[] = { 0, 100, 300, 900, 1024 };
    unsigned R = sh->info.regions, all = 1u << R;

    memset(s, 0, sizeof(*s));
    s->cycles = 1;
    for (unsigned b = 0; b < sh->info.buses; b++) {
        PtmBusCycle *bc = &s->bus[b];

        bc->src_rdy = rnd(r, 3) != 0;
        bc->dst_rdy = rnd(r, 4) != 0;
        bc->sof = rnd(r, all);
        bc->eof = rnd(r, all);
        for (unsigned k = 0; k < R; k++) {
            bc->eof_pos[k] = rnd(r, 1u << W);
        }
        if (sh->info.domain == PTM_DOMAIN_DMA) {
            bc->mvb_src_rdy = rnd(r, 2);
            bc->mvb_dst_rdy = rnd(r, 3) != 0;
            bc->mvb_vld = rnd(r, all);
        }
    }
    if (sh->info.domain == PTM_DOMAIN_PCIE) {
        s->brake = rnd(r, 4) ? 0 : rnd(r, 64);
        s->tag_free = tags[rnd(r, 5)];
        s->stfifo_free = words[rnd(r, 5)];
        s->link_up = rnd(r, 8) != 0;
    }
}

/* A card with 2 endpoints of different geometry on each side. */
static void random_card(PtmConfig *cfg)
{
    ptm_config_default(cfg);
    cfg->pcie_endpoints = 2;
    cfg->dma_ports = 2;
    cfg->pcie_rq_mfb_regions = 4;
    cfg->pcie_rc_mfb_regions = 2;
    cfg->dma_up_mfb_regions = 2;
    cfg->dma_down_mfb_regions = 1;
    cfg->dma_up_mfb_region_bytes = 64;
    cfg->dma_eof_pos_width = 4;
    g_assert_null(ptm_config_check(cfg));
}

#define NPROBES 4       /* (endpoint, domain) = 2e + d */

typedef struct Trace {
    PtmConfig cfg;
    PtmProbeShape sh[NPROBES];
    unsigned width[2];              /* EOF_POS bits */
    GArray *cyc[NPROBES];           /* PtmSegment per sampled cycle */
} Trace;

/* The value of one port element, most significant bit first. */
typedef struct Port {
    const char *name;
    unsigned width;
} Port;

enum {
    P_SOF, P_EOF, P_POS, P_SRC, P_DST, P_BRAKE, P_TAG, P_FIFO, P_LINK,
    P_DSOF, P_DEOF, P_DPOS, P_DSRC, P_DDST, P_VLD, P_MSRC, P_MDST, NP
};

static const char *const port_names[NP] = {
    "pcie_mfb_sof", "pcie_mfb_eof", "pcie_mfb_eof_pos", "pcie_mfb_src_rdy",
    "pcie_mfb_dst_rdy", "pcie_ptc_brake", "pcie_tag_free",
    "pcie_stfifo_free", "pcie_link_up",
    "dma_mfb_sof", "dma_mfb_eof", "dma_mfb_eof_pos", "dma_mfb_src_rdy",
    "dma_mfb_dst_rdy", "dma_mvb_vld", "dma_mvb_src_rdy", "dma_mvb_dst_rdy",
};

static unsigned port_width(const Trace *t, unsigned p)
{
    PtmDomain d = p >= P_DSOF;
    unsigned B = t->sh[d].info.buses, R = t->sh[d].info.regions;

    switch (p) {
    case P_SOF: case P_EOF: case P_DSOF: case P_DEOF: case P_VLD:
        return B * R;
    case P_POS: case P_DPOS:
        return B * R * t->width[d];
    case P_BRAKE:
        return 6;
    case P_TAG:
        return 11;
    case P_FIFO:
        return 16;
    case P_LINK:
        return 1;
    default:
        return B;
    }
}

/* Bit i of a port of a cycle; 'x' or 'z' where SRC_RDY says it is unread. */
static char port_bit(const Trace *t, unsigned p, const PtmSegment *s,
                     unsigned i)
{
    PtmDomain d = p >= P_DSOF;
    unsigned R = t->sh[d].info.regions, W = t->width[d];
    unsigned b = i / R, r = i % R;
    const PtmBusCycle *bc;

    switch (p) {
    case P_SOF: case P_EOF: case P_DSOF: case P_DEOF:
        bc = &s->bus[b];
        if (!bc->src_rdy) {
            return (i & 1) ? 'x' : 'z';
        }
        return '0' + ((p == P_SOF || p == P_DSOF ? bc->sof : bc->eof) >> r
                      & 1);
    case P_POS: case P_DPOS:
        bc = &s->bus[i / W / R];
        if (!bc->src_rdy) {
            return 'x';
        }
        return '0' + (bc->eof_pos[i / W % R] >> (i % W) & 1);
    case P_SRC: case P_DSRC:
        return '0' + s->bus[i].src_rdy;
    case P_DST: case P_DDST:
        return s->bus[i].src_rdy ? '0' + s->bus[i].dst_rdy : 'x';
    case P_VLD:
        bc = &s->bus[b];
        return bc->mvb_src_rdy ? '0' + (bc->mvb_vld >> r & 1) : 'z';
    case P_MSRC:
        return '0' + s->bus[i].mvb_src_rdy;
    case P_MDST:
        return s->bus[i].mvb_src_rdy ? '0' + s->bus[i].mvb_dst_rdy : 'x';
    case P_BRAKE:
        return '0' + (s->brake >> i & 1);
    case P_TAG:
        return '0' + (s->tag_free >> i & 1);
    case P_FIFO:
        return '0' + (s->stfifo_free >> i & 1);
    default:
        return '0' + s->link_up;
    }
}

static void vcd_value(GString *out, const Trace *t, unsigned p, unsigned e,
                      const PtmSegment *s)
{
    unsigned w = port_width(t, p);

    g_string_append_c(out, 'b');
    for (unsigned i = w; i-- > 0;) {
        g_string_append_c(out, port_bit(t, p, s, i));
    }
    g_string_append_printf(out, " v%u_%u\n", p, e);
}

static void probe_values(GString *out, const Trace *t, unsigned e,
                         PtmDomain d, const PtmSegment *s)
{
    for (unsigned p = d ? P_DSOF : 0; p < (d ? NP : P_DSOF); p++) {
        vcd_value(out, t, p, e, s);
    }
}

/*
 * Random signals for every probe, as a VCD with PCIE_CLK(0) rising every
 * 4 time units, PCIE_CLK(1) every 6 and DMA_CLK every 10, each rising edge
 * setting the next cycle's values; and the cycles each edge samples.
 * Runs of equal cycles come from repeating a cycle now and then.
 */
static char *random_vcd(Trace *t, uint64_t seed, unsigned T)
{
    static const unsigned period[3] = { 4, 6, 10 };    /* pcie0, pcie1, dma */
    GString *out = g_string_new("$timescale 1ps $end\n$scope module top $end\n");
    Rng r = { seed };
    PtmSegment next[NPROBES];
    bool clk[3] = { false };

    random_card(&t->cfg);
    t->width[0] = t->cfg.pcie_eof_pos_width;
    t->width[1] = t->cfg.dma_eof_pos_width;
    for (unsigned i = 0; i < NPROBES; i++) {
        probe_shape(&t->cfg, i / 2, i % 2, &t->sh[i]);
        t->cyc[i] = g_array_new(FALSE, FALSE, sizeof(PtmSegment));
    }
    /* name(e) vectors; the link as name(e) bits; clocks: a vector, a bit */
    g_string_append(out, "$var wire 2 ck PCIE_CLK [1:0] $end\n"
                         "$var wire 1 dk DMA_CLK $end\n");
    for (unsigned e = 0; e < 2; e++) {
        for (unsigned p = 0; p < NP; p++) {
            g_string_append_printf(out, "$var wire %u v%u_%u %s(%u) $end\n",
                                   port_width(t, p), p, e, port_names[p], e);
        }
    }
    g_string_append(out, "$upscope $end\n$enddefinitions $end\n#0\n"
                         "$dumpvars\nb00 ck\n0dk\n");
    for (unsigned i = 0; i < NPROBES; i++) {
        random_cycle(&r, &t->sh[i], t->width[i % 2], &next[i]);
        g_array_append_val(t->cyc[i], next[i]);
        probe_values(out, t, i / 2, i % 2, &next[i]);
    }
    g_string_append(out, "$end\n");
    for (unsigned time = 1; time <= T; time++) {
        bool rise[3], any = false;

        for (unsigned c = 0; c < 3; c++) {
            rise[c] = time % period[c] == period[c] / 2;
            if (rise[c] || time % period[c] == 0) {
                clk[c] = rise[c];
                any = true;
            }
        }
        if (!any) {
            continue;
        }
        g_string_append_printf(out, "#%u\nb%d%d ck\n%ddk\n", time, clk[1],
                               clk[0], clk[2]);
        for (unsigned i = 0; i < NPROBES; i++) {
            unsigned c = i % 2 ? 2 : i / 2;

            if (!rise[c]) {
                continue;
            }
            /* the edge samples the cycle set before; set the next one */
            if (rnd(&r, 3)) {
                random_cycle(&r, &t->sh[i], t->width[i % 2], &next[i]);
            }
            g_array_append_val(t->cyc[i], next[i]);
            probe_values(out, t, i / 2, i % 2, &next[i]);
        }
    }
    /* the values set at the last edge are never sampled */
    for (unsigned i = 0; i < NPROBES; i++) {
        g_array_set_size(t->cyc[i], t->cyc[i]->len - 1);
    }
    return g_string_free(out, FALSE);
}

/* The same cycles as a text trace, equal neighbours merged. */
static char *random_text(const Trace *t)
{
    GString *out = g_string_new("# random text trace\n");
    static const char *const pbus[] = { "rq", "rc" };

    for (unsigned i = 0; i < NPROBES; i++) {
        const PtmProbeShape *sh = &t->sh[i];
        unsigned R = sh->info.regions;

        for (unsigned k = 0; k < t->cyc[i]->len;) {
            const PtmSegment *s = &g_array_index(t->cyc[i], PtmSegment, k);
            unsigned n = 1;

            while (k + n < t->cyc[i]->len &&
                   !memcmp(s, &g_array_index(t->cyc[i], PtmSegment, k + n),
                           sizeof(*s))) {
                n++;
            }
            g_string_append_printf(out, "%s%u cycles=%u", i % 2 ? "dma" : "pcie",
                                   i / 2, n);
            for (unsigned b = 0; b < sh->info.buses; b++) {
                const PtmBusCycle *bc = &s->bus[b];
                g_autofree char *bn = i % 2 ? g_strdup_printf("%s%u",
                                                              b & 1 ? "down" : "up",
                                                              b / 2)
                                            : g_strdup(pbus[b]);

                g_string_append_printf(out, " %s.src=%u %s.dst=%u %s.sof=%#x "
                                       "%s.eof=0b", bn, bc->src_rdy, bn,
                                       bc->dst_rdy, bn, bc->sof, bn);
                for (unsigned r = R; r-- > 0;) {
                    g_string_append_c(out, '0' + (bc->eof >> r & 1));
                }
                for (unsigned r = 0; r < R; r++) {
                    g_string_append_printf(out, " %s.pos%u=%u", bn, r,
                                           bc->eof_pos[r]);
                }
                if (i % 2) {
                    g_string_append_printf(out, " %s.vld=%u %s.msrc=%u "
                                           "%s.mdst=%u", bn, bc->mvb_vld, bn,
                                           bc->mvb_src_rdy, bn,
                                           bc->mvb_dst_rdy);
                }
            }
            if (!(i % 2)) {
                g_string_append_printf(out, " brake=%u tags=%u stfifo=%u "
                                       "link=%u", s->brake, s->tag_free,
                                       s->stfifo_free, s->link_up);
            }
            g_string_append_c(out, '\n');
            k += n;
        }
    }
    return g_string_free(out, FALSE);
}

static void trace_clear(Trace *t)
{
    for (unsigned i = 0; i < NPROBES; i++) {
        g_array_free(t->cyc[i], TRUE);
    }
}

/* What the probe must see in cycle k under an end mode. */
static void expected_cycle(const Trace *t, unsigned i, const char *end,
                           uint64_t k, PtmSegment *s)
{
    uint64_t n = t->cyc[i]->len;

    if (k < n || !strcmp(end, "loop")) {
        *s = g_array_index(t->cyc[i], PtmSegment, k % n);
    } else if (!strcmp(end, "hold")) {
        *s = g_array_index(t->cyc[i], PtmSegment, n - 1);
    } else {
        memset(s, 0, sizeof(*s));
        s->link_up = 1;
        s->tag_free = t->cfg.tag_capacity;
        s->stfifo_free = t->cfg.stfifo_capacity;
    }
    s->cycles = 1;
}

/* Replay = the cycles written, in each end mode, 2.5 turns long. */
static void check_random(const Trace *t, const char *path)
{
    static const char *const ends[] = { "idle", "hold", "loop" };
    static const uint64_t steps[] = { 1, 13, 300, 4096, 1u << 20 };
    PtmGeometry geo;

    card_geometry(&t->cfg, &geo);
    for (unsigned m = 0; m < G_N_ELEMENTS(ends); m++) {
        PtmGen *g = replay_ok(&geo, path, "", ends[m]);

        for (unsigned i = 0; i < NPROBES; i++) {
            const PtmProbeShape *sh = &t->sh[i];
            uint64_t n = t->cyc[i]->len * 5 / 2;
            uint64_t exp[256] = { 0 }, got[256];
            PtmCountState st = { 0 };

            ptm_count_state_window_start(&st);
            for (uint64_t k = 0; k < n; k++) {
                PtmSegment s;

                expected_cycle(t, i, ends[m], k, &s);
                ptm_count_cycle(sh, &st, &s, exp);
            }
            for (unsigned j = 0; j < G_N_ELEMENTS(steps); j++) {
                count_span(g, sh, 0, n, steps[j], got);
                assert_counts(got, exp, sh->channels);
            }
        }
        ptm_gen_free(g);
    }
}

void test_random_vcd(void)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        Trace t;
        g_autofree char *vcd = random_vcd(&t, seed, 2400);
        g_autofree char *path = tmp_file(".vcd", vcd);
        PtmGeometry geo;
        PtmReplayTrace *tr;
        char *err;

        card_geometry(&t.cfg, &geo);
        tr = ptm_replay_load(path, "", &geo, &err);
        g_assert_null(err);
        g_assert_cmpuint(ptm_replay_cycles(tr, 0, PTM_DOMAIN_PCIE), ==, 600);
        g_assert_cmpuint(ptm_replay_cycles(tr, 1, PTM_DOMAIN_PCIE), ==, 400);
        g_assert_cmpuint(ptm_replay_cycles(tr, 0, PTM_DOMAIN_DMA), ==, 240);
        g_assert_cmpuint(ptm_replay_cycles(tr, 1, PTM_DOMAIN_DMA), ==, 240);
        /* every x and z was where SRC_RDY was low */
        g_assert_cmpuint(ptm_replay_xz_cycles(tr), ==, 0);
        ptm_replay_unref(tr);
        check_random(&t, path);
        g_unlink(path);
        trace_clear(&t);
    }
}

void test_random_text(void)
{
    for (uint64_t seed = 11; seed <= 14; seed++) {
        Trace t;
        g_autofree char *vcd = random_vcd(&t, seed, 2400);
        g_autofree char *text = random_text(&t);
        g_autofree char *path = tmp_file(".txt", text);

        check_random(&t, path);
        g_unlink(path);
        trace_clear(&t);
    }
}
