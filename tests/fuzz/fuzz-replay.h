/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the trace targets (fuzz-vcd, fuzz-trace) share: an input is written
 * to a file of its own and read by ptm_replay_load(), the loader QEMU
 * uses, for two cards (the default one, and two endpoints with two DMA
 * ports of different regions). A trace that loads is then played by
 * replay generators in every end mode and with a live change: fills
 * checked against the chunk contract, the generator's fast count against
 * the per-cycle count of its fills, resets and settings, over spans that
 * cross the trace's end and its turns. The work per input is bounded.
 *
 * Also used by fuzz-scenario for the files and the span checks.
 */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-replay.h"

#define FZ_CHANNELS 1024        /* more than any probe of these cards has */
#define FZ_STEP     700         /* cycles asked for per fill */

/* A broken invariant: abort, so that libFuzzer keeps the input. */
#define FZ_CHECK(cond)                                                      \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                       \
            abort();                                                        \
        }                                                                   \
    } while (0)

typedef struct FzCard {
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape sh[2 * PTM_MAX_ENDPOINTS];    /* 2 e + domain */
} FzCard;

static const char *fz_dir;
static unsigned long fz_serial;
static PtmChunk *fz_chunk;

/* Messages about x/z or an idle fallback are expected: keep them quiet. */
static inline void fz_log(const gchar *domain, GLogLevelFlags level,
                          const gchar *msg, gpointer data)
{
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
        fprintf(stderr, "%s: %s\n", domain ? domain : "", msg);
        abort();
    }
}

/* Once per process: where inputs go, the log handler, the chunk. */
static inline void fz_init(void)
{
    if (fz_chunk) {
        return;
    }
    g_log_set_default_handler(fz_log, NULL);
    fz_dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : g_get_tmp_dir();
    fz_chunk = ptm_chunk_new();
}

/*
 * The input as a new file, removed by the caller; only a crash leaves it.
 * A new name each time: the loaders keep what they read by path (and
 * size and mtime), which a rewrite in place within one mtime tick would
 * defeat.
 */
static inline char *fz_write(const uint8_t *data, size_t size,
                             const char *suffix)
{
    char *path = g_strdup_printf("%s/ptm-fuzz-%d-%lu%s", fz_dir,
                                 (int)getpid(), ++fz_serial, suffix);
    FILE *f = fopen(path, "wb");

    FZ_CHECK(f);
    FZ_CHECK(fwrite(data, 1, size, f) == size);
    FZ_CHECK(fclose(f) == 0);
    return path;
}

static inline void fz_card(FzCard *c, bool two)
{
    PtmCore *core;

    ptm_config_default(&c->cfg);
    if (two) {
        /* as test-replay's random card */
        c->cfg.pcie_endpoints = 2;
        c->cfg.dma_ports = 2;
        c->cfg.pcie_rq_mfb_regions = 4;
        c->cfg.pcie_rc_mfb_regions = 2;
        c->cfg.dma_up_mfb_regions = 2;
        c->cfg.dma_down_mfb_regions = 1;
        c->cfg.dma_up_mfb_region_bytes = 64;
        c->cfg.dma_eof_pos_width = 4;
    }
    FZ_CHECK(!ptm_config_check(&c->cfg));
    core = ptm_core_new(&c->cfg);
    ptm_core_geometry(core, &c->geo);
    for (unsigned e = 0; e < c->cfg.pcie_endpoints; e++) {
        for (unsigned d = 0; d < 2; d++) {
            ptm_core_probe_shape(core, e, d, &c->sh[2 * e + d]);
        }
    }
    ptm_core_free(core);
}

/* Once per process: fz_init() and the two cards, default and two-endpoint. */
static inline FzCard *fz_cards(void)
{
    static FzCard cards[2];
    static bool ready;

    fz_init();
    if (!ready) {
        fz_card(&cards[0], false);
        fz_card(&cards[1], true);
        ready = true;
    }
    return cards;
}

/*
 * Cycles [start, start + n) of a probe: the fills keep the chunk
 * contract, the generator's own count (where it counts) equals the count
 * of its fills, and the resets cover the span. (The core's counting of a
 * chunk against the per-cycle reference is fuzz-core-diff's.)
 */
static inline void fz_span(PtmGen *g, const PtmProbeShape *sh,
                           uint64_t start, uint64_t n)
{
    static uint64_t fast[FZ_CHANNELS], own[FZ_CHANNELS];
    PtmCountState b = { 0 }, c = { 0 };
    uint64_t end = start + n, at;
    size_t bytes = sh->channels * sizeof(uint64_t);

    FZ_CHECK(sh->channels <= FZ_CHANNELS);
    if (end < start) {
        return;
    }
    memset(fast, 0, bytes);
    memset(own, 0, bytes);
    ptm_count_state_window_start(&b);
    ptm_count_state_window_start(&c);
    for (at = start; at < end;) {
        uint64_t max = MIN(end - at, FZ_STEP), got, sum = 0;
        PtmChunk *ch = fz_chunk;

        ch->seg = ch->scratch;
        ch->nseg = 0;
        ch->repeat = 1;
        ch->id = 0;
        got = ptm_gen_source_ops.fill(g, &sh->info, at, max, ch);
        FZ_CHECK(got >= 1 && got <= max);
        FZ_CHECK(ch->nseg >= 1 && ch->nseg <= PTM_CHUNK_SEGMENTS);
        FZ_CHECK(ch->repeat >= 1);
        for (unsigned i = 0; i < ch->nseg; i++) {
            FZ_CHECK(ch->seg[i].cycles >= 1);
            sum += ch->seg[i].cycles;
        }
        FZ_CHECK(sum * ch->repeat == got);
        ptm_count_chunk(sh, &b, ch, fast);
        at += got;
    }
    if (ptm_gen_source_ops.count(g, sh, start, end, &c, own)) {
        FZ_CHECK(!memcmp(fast, own, bytes));
        FZ_CHECK(b.open == c.open && b.tag_min == c.tag_min &&
                 b.stfifo_min == c.stfifo_min && b.tag_last == c.tag_last &&
                 b.stfifo_last == c.stfifo_last &&
                 b.link_last == c.link_last);
    }
    for (at = start; at < end;) {
        bool held;
        uint64_t m = ptm_gen_source_ops.reset(g, &sh->info, at, end - at,
                                              &held);

        FZ_CHECK(m >= 1 && m <= end - at);
        at += m;
    }
}

/* A replay generator of the file; it loads, as the trace did. */
static inline PtmGen *fz_replay_gen(const FzCard *c, const char *path,
                                    const char *scope, const char *end)
{
    PtmReplayParams p;
    char *err = NULL;
    PtmGen *g;

    ptm_replay_params_default(&p);
    g_strlcpy(p.file, path, sizeof(p.file));
    g_strlcpy(p.scope, scope, sizeof(p.scope));
    g_strlcpy(p.end, end, sizeof(p.end));
    g = ptm_gen_new(&ptm_model_replay, &p, &c->geo, &err);
    FZ_CHECK(g && !err);
    return g;
}

/* Play a loaded trace on the card: in every end mode, or looped only. */
static inline void fz_play(const FzCard *c, const PtmReplayTrace *t,
                           const char *path, const char *scope, bool all)
{
    static const char *const ends[] = { "idle", "hold", "loop" };

    for (unsigned m = all ? 0 : 2; m < G_N_ELEMENTS(ends); m++) {
        PtmGen *g = fz_replay_gen(c, path, scope, ends[m]);

        for (unsigned e = 0; e < c->cfg.pcie_endpoints; e++) {
            for (unsigned d = 0; d < 2; d++) {
                const PtmProbeShape *sh = &c->sh[2 * e + d];
                uint64_t n = ptm_replay_cycles(t, e, d);
                PtmSettings set = { 0 };

                fz_span(g, sh, 0, MIN(n, 800) + 40);
                if (n > 800) {
                    /* the end of the trace */
                    fz_span(g, sh, n - 30, 60);
                }
                /* after the end: idle, the last cycle held, or a turn */
                fz_span(g, sh, n + 5, 20);
                if (m == 2 && n) {
                    /* a later turn, from the middle of a run */
                    fz_span(g, sh, 3 * n + n / 2, MIN(n, 300) + 20);
                }
                if (d == PTM_DOMAIN_PCIE) {
                    ptm_gen_source_ops.settings(g, e, 0, &set);
                    ptm_gen_source_ops.settings(g, e, n ? n - 1 : 0, &set);
                    ptm_gen_source_ops.settings(g, e, 2 * n + 1, &set);
                }
            }
        }
        if (m == 0) {
            /* a live change: the trace starts again, looped, at cycle 500 */
            PtmReplayParams p = *(const PtmReplayParams *)ptm_gen_params(g);

            g_strlcpy(p.end, "loop", sizeof(p.end));
            FZ_CHECK(!ptm_gen_set_params(g, &p, 500, 0));
            for (unsigned d = 0; d < 2; d++) {
                fz_span(g, &c->sh[d], 0, 1000);
            }
        }
        ptm_gen_free(g);
    }
}

/*
 * Load the file for a card; free the message if it does not load, else
 * play it (play: 0 not, 1 looped, 2 in every end mode). Whether it loads.
 */
static inline bool fz_load(const FzCard *c, const char *path,
                           const char *scope, unsigned play)
{
    char *err = NULL;
    PtmReplayTrace *t = ptm_replay_load(path, scope, &c->geo, &err);

    if (!t) {
        FZ_CHECK(err && *err);
        g_free(err);
        return false;
    }
    FZ_CHECK(!err);
    if (play) {
        fz_play(c, t, path, scope, play == 2);
    }
    ptm_replay_unref(t);
    return true;
}

/*
 * A trace that loaded removed before it is first played: the generator
 * plays idle (and says so) rather than fail. Removes the file.
 */
static inline void fz_gone(const FzCard *c, const char *path,
                           const char *scope)
{
    PtmGen *g = fz_replay_gen(c, path, scope, "loop");

    g_unlink(path);
    fz_span(g, &c->sh[0], 0, 50);
    ptm_gen_free(g);
}

/* First non-blank byte is '$': what the loader takes for a VCD. */
static inline bool fz_is_vcd(const uint8_t *data, size_t size)
{
    size_t i = 0;

    while (i < size && g_ascii_isspace(data[i])) {
        i++;
    }
    return i < size && data[i] == '$';
}

#endif
