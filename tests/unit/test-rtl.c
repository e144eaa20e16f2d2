/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model against recordings of the real PCIE_TELEMETRY_MI: the ports of
 * a GHDL simulation of the RTL, replayed through the replay generator, and
 * the register and counter values the RTL then returned over MI
 * (tests/rtl/<vector>/). Every word must match, in both evaluations.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <lzma.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-replay.h"

/* The file, unpacked by liblzma into a temporary file; its path. */
static char *unxz(const char *path, char **dir)
{
    gchar *in = NULL, *out_path;
    gsize in_len;
    GError *e = NULL;
    lzma_stream s = LZMA_STREAM_INIT;
    GByteArray *out = g_byte_array_new();
    uint8_t buf[1 << 16];
    lzma_ret r;

    if (!g_file_get_contents(path, &in, &in_len, &e)) {
        g_error("%s", e->message);
    }
    g_assert_cmpint(lzma_stream_decoder(&s, UINT64_MAX, 0), ==, LZMA_OK);
    s.next_in = (const uint8_t *)in;
    s.avail_in = in_len;
    do {
        s.next_out = buf;
        s.avail_out = sizeof(buf);
        r = lzma_code(&s, LZMA_FINISH);
        g_byte_array_append(out, buf, sizeof(buf) - s.avail_out);
    } while (r == LZMA_OK);
    g_assert_cmpint(r, ==, LZMA_STREAM_END);
    lzma_end(&s);
    *dir = g_dir_make_tmp("ptm-rtl-XXXXXX", &e);
    g_assert_nonnull(*dir);
    out_path = g_build_filename(*dir, "ports.vcd", NULL);
    if (!g_file_set_contents(out_path, (const char *)out->data, out->len,
                             &e)) {
        g_error("%s", e->message);
    }
    g_byte_array_free(out, TRUE);
    g_free(in);
    return out_path;
}

typedef struct Word {
    uint32_t addr, val;
} Word;

/* The "AAAAAAAA VVVVVVVV" lines of expected.txt. */
static GArray *expected_words(const char *path)
{
    GArray *w = g_array_new(FALSE, FALSE, sizeof(Word));
    gchar *text = NULL;
    gchar **lines;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (gchar **l = lines; *l; l++) {
        Word x;

        if (**l == '#' || !**l) {
            continue;
        }
        g_assert_cmpint(sscanf(*l, "%x %x", &x.addr, &x.val), ==, 2);
        g_array_append_val(w, x);
    }
    g_strfreev(lines);
    g_free(text);
    return w;
}

/* A powered-on card of cfg replaying the trace `file` (end=idle). */
static PtmCore *replay_card(const PtmConfig *cfg, const char *file,
                            bool reference, PtmGen **gen)
{
    PtmCore *core = ptm_core_new(cfg);
    PtmReplayParams par;
    PtmGeometry geo;
    char *err = NULL;

    ptm_core_set_reference(core, reference);
    ptm_core_geometry(core, &geo);
    ptm_replay_params_default(&par);
    g_strlcpy(par.file, file, sizeof(par.file));
    *gen = ptm_gen_new(&ptm_model_replay, &par, &geo, &err);
    if (err) {
        g_error("%s", err);
    }
    ptm_core_set_source(core, &ptm_gen_source_ops, *gen);
    ptm_core_power_on(core, 0);
    return core;
}

static void run_periodic(bool reference)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    char *dir_vec = g_build_filename(root ? root : ".", "tests", "rtl",
                                     "periodic", NULL);
    char *xz = g_build_filename(dir_vec, "ports.vcd.xz", NULL);
    char *exp = g_build_filename(dir_vec, "expected.txt", NULL);
    char *tmp, *vcd = unxz(xz, &tmp);
    GArray *want = expected_words(exp);
    PtmConfig cfg;
    PtmCore *core;
    PtmGen *g;
    uint64_t t;
    unsigned bad = 0;

    ptm_config_default(&cfg);
    cfg.pcie_clk_hz = 400000000;
    cfg.dma_clk_hz = 200000000;
    cfg.mi_clk_hz = 100000000;
    core = replay_card(&cfg, vcd, reference, &g);

    /* the SNAPSHOT the recording latched (safe from 145.3 to 154.0 us) */
    t = 150425;
    ptm_core_write(core, t, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
    /* BUSY reads 1 from the second MI cycle after the write */
    t += 20;
    g_assert_true(ptm_core_read(core, t, PTM_REG_STATUS, 4) &
                  PTM_STATUS_BUSY);
    do {
        t += 10;
    } while (ptm_core_read(core, t, PTM_REG_STATUS, 4) & PTM_STATUS_BUSY);
    for (guint i = 0; i < want->len; i++) {
        const Word *w = &g_array_index(want, Word, i);
        uint32_t got = ptm_core_read(core, t, w->addr, 4);

        if (got != w->val) {
            g_test_message("0x%04X: model 0x%08X, RTL 0x%08X", w->addr, got,
                           w->val);
            bad++;
        }
    }
    g_assert_cmpuint(want->len, ==, 64 + 128);
    g_assert_cmpuint(bad, ==, 0);

    ptm_core_free(core);
    ptm_gen_free(g);
    g_array_free(want, TRUE);
    g_unlink(vcd);
    g_rmdir(tmp);
    g_free(vcd);
    g_free(tmp);
    g_free(xz);
    g_free(exp);
    g_free(dir_vec);
}

/* card.txt: the generics and clocks as the device's property names. */
static void card_config(const char *path, PtmConfig *cfg)
{
    static const struct {
        const char *name;
        size_t off;
    } u32[] = {
#define F(n, f) { n, offsetof(PtmConfig, f) }
        F("pcie-endpoints", pcie_endpoints), F("dma-ports", dma_ports),
        F("pcie-rq-mfb-regions", pcie_rq_mfb_regions),
        F("pcie-rc-mfb-regions", pcie_rc_mfb_regions),
        F("dma-up-mfb-regions", dma_up_mfb_regions),
        F("dma-down-mfb-regions", dma_down_mfb_regions),
        F("pcie-rq-mfb-region-bytes", pcie_rq_mfb_region_bytes),
        F("pcie-rc-mfb-region-bytes", pcie_rc_mfb_region_bytes),
        F("dma-up-mfb-region-bytes", dma_up_mfb_region_bytes),
        F("dma-down-mfb-region-bytes", dma_down_mfb_region_bytes),
        F("mfb-item-bytes", mfb_item_bytes),
        F("pcie-eof-pos-width", pcie_eof_pos_width),
        F("dma-eof-pos-width", dma_eof_pos_width),
        F("cnt-width", cnt_width), F("drain-period", drain_period),
        F("tag-capacity", tag_capacity),
        F("stfifo-capacity", stfifo_capacity),
#undef F
    };
    gchar *text = NULL;
    gchar **lines;

    ptm_config_default(cfg);
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (gchar **l = lines; *l; l++) {
        char *eq = strchr(*l, '=');
        bool known = false;
        uint64_t v;

        if (**l == '#' || !eq) {
            continue;
        }
        *eq = 0;
        v = g_ascii_strtoull(eq + 1, NULL, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(u32); i++) {
            if (!strcmp(*l, u32[i].name)) {
                *(uint32_t *)((char *)cfg + u32[i].off) = v;
                known = true;
            }
        }
        if (!strcmp(*l, "pcie-clk-freq")) {
            cfg->pcie_clk_hz = v;
        } else if (!strcmp(*l, "dma-clk-freq")) {
            cfg->dma_clk_hz = v;
        } else if (!strcmp(*l, "mi-clk-freq")) {
            cfg->mi_clk_hz = v;
        } else if (!known) {
            g_error("%s: unknown property %s", path, *l);
        }
    }
    g_strfreev(lines);
    g_free(text);
    g_assert_null(ptm_config_check(cfg));
}

/*
 * A vector made by tests/rtl/harness: the card, its stimulus replayed as a
 * text trace (resets included), and the MI accesses of mi.txt at their MI
 * edges; every read must return what the RTL returned (expected.txt).
 */
static void run_vector(const char *name, bool reference)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    char *dir = g_build_filename(root ? root : ".", "tests", "rtl", name,
                                 NULL);
    char *card = g_build_filename(dir, "card.txt", NULL);
    char *stim = g_build_filename(dir, "stimulus.trace", NULL);
    char *mi = g_build_filename(dir, "mi.txt", NULL);
    char *exp = g_build_filename(dir, "expected.txt", NULL);
    gchar *mi_text = NULL, *exp_text = NULL;
    gchar **ops, **want;
    PtmConfig cfg;
    PtmCore *core;
    PtmGen *g;
    unsigned wi = 0, bad = 0, reads = 0;

    card_config(card, &cfg);
    core = replay_card(&cfg, stim, reference, &g);
    /*
     * The harness drives settings the trace leaves out as 0 (MPS and MRRS
     * 128 B, no extended or 10-bit tags, RCB 64 B): the host's here.
     */
    for (unsigned e = 0; e < cfg.pcie_endpoints; e++) {
        const PtmSettings zero = { 0 };

        ptm_core_set_settings(core, 0, e, &zero);
    }

    g_assert_true(g_file_get_contents(mi, &mi_text, NULL, NULL));
    g_assert_true(g_file_get_contents(exp, &exp_text, NULL, NULL));
    ops = g_strsplit(mi_text, "\n", -1);
    want = g_strsplit(exp_text, "\n", -1);
    for (gchar **l = ops; *l; l++) {
        uint64_t m, t;
        char op[8];
        unsigned addr, data = 0;

        if (**l == '#' || !**l) {
            continue;
        }
        if (sscanf(*l, "%" G_GUINT64_FORMAT " %7s %x %x", &m, op, &addr,
                   &data) < 2) {
            g_error("%s: bad line %s", mi, *l);
        }
        /* the state keeps the model's invariants between accesses */
        {
            char *why = ptm_core_check(core);

            if (why) {
                g_error("%s: before MI %" G_GUINT64_FORMAT ": %s", name, m,
                        why);
            }
        }
        /* MI edge m at m periods after time 0 */
        t = (uint64_t)((unsigned __int128)m * 1000000000u / cfg.mi_clk_hz);
        if (!strcmp(op, "wr")) {
            ptm_core_write(core, t, addr, data, 4);
        } else if (!strcmp(op, "mireset")) {
            /* MI_RESET sampled by MI edges m .. m + n - 1 (n decimal) */
            unsigned n = 0;

            g_assert_cmpint(sscanf(*l, "%*u %*s %u", &n), ==, 1);
            ptm_core_mi_reset(core, t, n);
        } else if (!strcmp(op, "rd")) {
            uint64_t wm;
            unsigned waddr, wdata;
            uint32_t got = ptm_core_read(core, t, addr, 4);

            while (want[wi] && (*want[wi] == '#' || !*want[wi])) {
                wi++;
            }
            g_assert_nonnull(want[wi]);
            g_assert_cmpint(sscanf(want[wi], "%" G_GUINT64_FORMAT " %x %x",
                                   &wm, &waddr, &wdata), ==, 3);
            g_assert_cmpuint(wm, ==, m);
            g_assert_cmpuint(waddr, ==, addr);
            wi++;
            reads++;
            if (got != wdata) {
                if (bad < 30) {
                    g_test_message("%s: MI %" G_GUINT64_FORMAT " read 0x%04X:"
                                   " model 0x%08X, RTL 0x%08X", name, m, addr,
                                   got, wdata);
                }
                bad++;
            }
        }
    }
    g_test_message("%s: %u reads, %u differ", name, reads, bad);
    g_assert_cmpuint(reads, >, 0);
    g_assert_cmpuint(bad, ==, 0);

    g_strfreev(ops);
    g_strfreev(want);
    g_free(mi_text);
    g_free(exp_text);
    ptm_core_free(core);
    ptm_gen_free(g);
    g_free(card);
    g_free(stim);
    g_free(mi);
    g_free(exp);
    g_free(dir);
}

static void test_vector(gconstpointer data)
{
    run_vector(data, false);
}

static void test_vector_reference(gconstpointer data)
{
    run_vector(data, true);
}

static void test_periodic(void)
{
    run_periodic(false);
}

static void test_periodic_reference(void)
{
    run_periodic(true);
}

static const char *const vectors[] = {
    "edges-A", "edges-B", "edges-C", "reset-A", "reset-B", "reset-C",
    "busy-A", "busy-B", "busy-C", "overload-A", "overload-B", "overload-C",
    "mireset-A",
};

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtl/periodic", test_periodic);
    g_test_add_func("/rtl/periodic-reference", test_periodic_reference);
    for (unsigned i = 0; i < G_N_ELEMENTS(vectors); i++) {
        char *p = g_strdup_printf("/rtl/vector/%s", vectors[i]);
        char *q = g_strdup_printf("/rtl/vector-reference/%s", vectors[i]);

        g_test_add_data_func(p, vectors[i], test_vector);
        g_test_add_data_func(q, vectors[i], test_vector_reference);
        g_free(p);
        g_free(q);
    }
    return g_test_run();
}
