/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scenario key-file reader (traffic-gen/ptm-scenario.c,
 * docs/traffic-generators.md), through the scenario model's check as QEMU
 * reaches it, on two cards (the second has two endpoints, for reset=
 * pcie1). A file that the default card takes is played, looped and not:
 * spans at the start, around 100 us and 10 ms and after 2.5e9 s of
 * virtual time, with the checks of fuzz-replay.h.
 */
#include "fuzz-replay.h"
#include "ptm-scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static PtmGen *scenario_gen(const FzCard *c, const char *path, bool loop)
{
    PtmScenarioParams p;
    char *err = NULL;
    PtmGen *g;

    ptm_model_scenario.defaults(&p);
    g_strlcpy(p.file, path, sizeof(p.file));
    p.loop = loop;
    g = ptm_gen_new(&ptm_model_scenario, &p, &c->geo, &err);
    if (!g) {
        FZ_CHECK(err && *err);
        g_free(err);
    }
    return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* PCIe cycles; the DMA probe starts at half of each */
    static const uint64_t starts[] = { 0, 40000 - 300, 4000000 - 300,
                                       1000000000000000000ull };
    FzCard *cards;
    char *path;
    PtmGen *g;

    cards = fz_cards();
    path = fz_write(data, size, ".ini");
    g = scenario_gen(&cards[1], path, false);
    ptm_gen_free(g);
    for (unsigned loop = 0; loop < 2; loop++) {
        g = scenario_gen(&cards[0], path, loop);
        if (!g) {
            break;
        }
        for (unsigned d = 0; d < 2; d++) {
            PtmSettings set = { 0 };

            for (unsigned i = 0; i < G_N_ELEMENTS(starts); i++) {
                fz_span(g, &cards[0].sh[d], starts[i] >> d, 600);
                if (d == PTM_DOMAIN_PCIE) {
                    ptm_gen_source_ops.settings(g, 0, starts[i] + 1, &set);
                }
            }
        }
        ptm_gen_free(g);
    }
    /* the file removed after the check: an idle link, and a warning */
    g = scenario_gen(&cards[0], path, true);
    g_unlink(path);
    if (g) {
        fz_span(g, &cards[0].sh[0], 0, 50);
        ptm_gen_free(g);
    }
    g_free(path);
    return 0;
}
