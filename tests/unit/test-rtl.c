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

static void run_periodic(bool reference)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    char *dir_vec = g_build_filename(root ? root : ".", "tests", "rtl",
                                     "periodic", NULL);
    char *xz = g_build_filename(dir_vec, "ports.vcd.xz", NULL);
    char *exp = g_build_filename(dir_vec, "expected.txt", NULL);
    char *tmp, *vcd = unxz(xz, &tmp);
    GArray *want = expected_words(exp);
    PtmReplayParams par;
    PtmGeometry geo;
    PtmConfig cfg;
    PtmCore *core;
    PtmGen *g;
    char *err = NULL;
    uint64_t t;
    unsigned bad = 0;

    ptm_config_default(&cfg);
    cfg.pcie_clk_hz = 400000000;
    cfg.dma_clk_hz = 200000000;
    cfg.mi_clk_hz = 100000000;
    core = ptm_core_new(&cfg);
    ptm_core_set_reference(core, reference);
    ptm_core_geometry(core, &geo);
    ptm_replay_params_default(&par);
    g_strlcpy(par.file, vcd, sizeof(par.file));
    g = ptm_gen_new(&ptm_model_replay, &par, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);

    /* the SNAPSHOT the recording latched (safe from 145.3 to 154.0 us) */
    t = 150425;
    ptm_core_write(core, t, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
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

static void test_periodic(void)
{
    run_periodic(false);
}

static void test_periodic_reference(void)
{
    run_periodic(true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtl/periodic", test_periodic);
    g_test_add_func("/rtl/periodic-reference", test_periodic_reference);
    return g_test_run();
}
