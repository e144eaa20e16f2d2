/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host CPU seconds the core spends per second of virtual time, for a few
 * cards and traffic settings. Not a test: it prints figures.
 *
 * usage: ptm-bench [virtual-seconds]   (default 1.0)
 * PTM_BENCH_ONLY=<text>: only the cases whose name contains it;
 * PTM_BENCH_STEP_MS=<ms>: the step between accesses (default 1 ms)
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptm-core.h"
#include "ptm-pattern.h"
#include "ptm-ptc.h"
#include "ptm-random.h"
#include "ptm-replay.h"
#include "ptm-scenario.h"

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every bus busy with short frames, all BRAKE bits, low resources. */
static void busiest(PtmPatternParams *par)
{
    ptm_pattern_params_default(par);
    par->brake = 0x3F;
    par->tags_free = 7;
    par->stfifo_free = 100;
    par->bus[PTM_BUS_RQ].frame_bytes = 256;
    par->bus[PTM_BUS_RC].frame_bytes = 96;
    par->bus[PTM_BUS_RC].stall = 1;
    par->bus[PTM_BUS_UP].frame_bytes = 100;
    par->bus[PTM_BUS_UP].gap = 1;
    par->bus[PTM_BUS_DOWN].frame_bytes = 64;
    par->bus[PTM_BUS_DOWN].stall = 2;
    par->bus[PTM_BUS_DOWN].gap = 1;
}

/* PTM_BENCH_ONLY=<text>: run only the cases whose name contains it */
static bool skip(const char *name)
{
    const char *only = getenv("PTM_BENCH_ONLY");

    return only && !strstr(name, only);
}

static void run_gen(const char *name, const PtmConfig *cfg,
                    const PtmGenModel *m, const void *params, double vsec)
{
    PtmCore *core;
    PtmGeometry geo;
    PtmGen *g;
    char *err = NULL;
    uint64_t end = (uint64_t)(vsec * 1e9), step = 1000000;
    const char *ms = getenv("PTM_BENCH_STEP_MS");

    if (ms && atof(ms) > 0) {
        step = (uint64_t)(atof(ms) * 1e6);
    }
    /* PTM_BENCH_COARSE=1: whole periods per step, as the device's timer */
    const char *coarse_env = getenv("PTM_BENCH_COARSE");
    bool coarse = coarse_env && *coarse_env && strcmp(coarse_env, "0");
    double t0;

    if (skip(name)) {
        return;
    }
    core = ptm_core_new(cfg);
    ptm_core_geometry(core, &geo);
    g = ptm_gen_new(m, params, &geo, &err);
    if (!g) {
        g_error("%s", err);
    }
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    t0 = cpu_now();
    for (uint64_t t = step; t <= end; t += step) {
        if (coarse) {
            ptm_core_advance_coarse(core, t);
        } else {
            ptm_core_advance(core, t);
        }
    }
    ptm_core_advance(core, end);
    t0 = cpu_now() - t0;
    printf("%-44s %8.3f s CPU per virtual s  (%.1fx real time, "
           "%" G_GUINT64_FORMAT " deltas, %" G_GUINT64_FORMAT " lost)\n",
           name, t0 / vsec, vsec / t0, ptm_core_applied_deltas(core),
           ptm_core_lost_deltas(core));
    if (getenv("PTM_BENCH_STATS") && *getenv("PTM_BENCH_STATS")) {
        PtmEvalStats st;

        ptm_core_eval_stats(core, &st);
        printf("    jumps %" G_GUINT64_FORMAT " (lossy %" G_GUINT64_FORMAT
               "), MI cycles jumped %" G_GUINT64_FORMAT " simulated %"
               G_GUINT64_FORMAT "; lossy windows from tables %"
               G_GUINT64_FORMAT ", in bulk %" G_GUINT64_FORMAT
               ", one by one %" G_GUINT64_FORMAT "\n",
               st.jumps, st.lossy_jumps, st.jumped_mi, st.simulated_mi,
               st.table_windows, st.bulk_windows, st.single_windows);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

/*
 * A text trace of `cycles` cycles per probe of endpoint 0: frames of 1 to
 * 4 words with random gaps and stalls on RQ, RC, UP (with MVB) and DOWN,
 * as a simulation of busy firmware would record them.
 */
static char *write_trace(unsigned cycles)
{
    GString *s = g_string_new("# ptm-bench replay trace\n");
    GRand *r = g_rand_new_with_seed(7);
    char *path = NULL;
    int fd = g_file_open_tmp("ptm-bench-XXXXXX.trace", &path, NULL);

    for (int dma = 0; dma < 2; dma++) {
        const char *probe = dma ? "dma0" : "pcie0";
        const char *bus = dma ? "up" : "rq";

        for (unsigned t = 0; t < cycles; ) {
            unsigned words = g_rand_int_range(r, 1, 5);
            unsigned gap = g_rand_int_range(r, 0, 4);

            for (unsigned w = 0; w < words; w++, t++) {
                GString *l = g_string_new(probe);

                g_string_append_printf(l, " %s.src=1 %s.dst=%d", bus, bus,
                                       g_rand_int_range(r, 0, 10) != 0);
                if (w == 0) {
                    g_string_append_printf(l, " %s.sof=1", bus);
                    if (dma) {
                        g_string_append(l, " up.vld=1 up.msrc=1 up.mdst=1");
                    }
                }
                if (w == words - 1) {
                    g_string_append_printf(l, " %s.eof=2 %s.pos1=%d", bus,
                                           bus, g_rand_int_range(r, 0, 8));
                }
                g_string_append_printf(s, "%s\n", l->str);
                g_string_free(l, TRUE);
            }
            if (gap) {
                g_string_append_printf(s, "%s cycles=%u\n", probe, gap);
                t += gap;
            }
        }
    }
    if (fd < 0 || write(fd, s->str, s->len) != (ssize_t)s->len) {
        g_error("cannot write the trace");
    }
    close(fd);
    g_string_free(s, TRUE);
    g_rand_free(r);
    return path;
}

/* A scenario file of the given text, in a temporary file (g_free it). */
static char *write_scenario(const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp("ptm-bench-XXXXXX.ini", &path, NULL);

    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        g_error("cannot write the scenario");
    }
    close(fd);
    return path;
}

/*
 * Cards that lose deltas all the time (DRAIN_PERIOD 64 and 256) with the
 * sources that decide per block or play phases and traces: random,
 * scenarios (the example, and one pattern phase then idle), a looped
 * dense replay.
 */
static void run_overloaded(double vsec)
{
    /* (0: the 16 x 4 card at its default drain period) */
    static const unsigned dps[] = { 64, 256, 0 };
    static const char one_phase[] =
        "[phase first]\nmodel=pattern\nduration=1ms\nrq-frame-bytes=256\n"
        "rc-frame-bytes=64\nup-frame-bytes=128\nup-gap=1\n"
        "down-frame-bytes=512\nbrake=0x15\nbrake-duty=25\ntags-free=20\n"
        "stfifo-free=300\nup-mvb-items=2\n[phase rest]\nmodel=idle\n"
        "duration=1ms\n";
    char *one = write_scenario(one_phase), *trace = NULL;
    PtmRandomParams rnd;
    PtmScenarioParams sc = { .loop = true };
    PtmReplayParams rp;
    PtmConfig cfg;

    ptm_random_params_default(&rnd);
    ptm_replay_params_default(&rp);
    g_strlcpy(rp.end, "loop", sizeof(rp.end));
    for (unsigned i = 0; i < G_N_ELEMENTS(dps); i++) {
        char name[80];

        char card[40];

        ptm_config_default(&cfg);
        if (dps[i]) {
            cfg.drain_period = dps[i];
            snprintf(card, sizeof(card), "default card, DRAIN_PERIOD %u",
                     dps[i]);
        } else {
            cfg.pcie_endpoints = 16;
            cfg.dma_ports = 4;
            snprintf(card, sizeof(card), "16 x 4 card");
        }
        snprintf(name, sizeof(name), "%s, random", card);
        run_gen(name, &cfg, &ptm_model_random, &rnd, vsec);
        snprintf(name, sizeof(name), "%s, scenario example", card);
        g_strlcpy(sc.file, SCENARIO_EXAMPLE, sizeof(sc.file));
        run_gen(name, &cfg, &ptm_model_scenario, &sc, vsec);
        snprintf(name, sizeof(name), "%s, scenario one phase", card);
        g_strlcpy(sc.file, one, sizeof(sc.file));
        run_gen(name, &cfg, &ptm_model_scenario, &sc, vsec);
        snprintf(name, sizeof(name), "%s, replay looped", card);
        if (!skip(name)) {
            if (!trace) {
                trace = write_trace(200000);
                g_strlcpy(rp.file, trace, sizeof(rp.file));
            }
            run_gen(name, &cfg, &ptm_model_replay, &rp, vsec);
        }
    }
    unlink(one);
    if (trace) {
        unlink(trace);
    }
    g_free(one);
    g_free(trace);
}

static void run(const char *name, const PtmConfig *cfg,
                const PtmPatternParams *par, double vsec)
{
    PtmPatternParams idle;

    if (!par) {
        ptm_pattern_params_default(&idle);
        par = &idle;
    }
    run_gen(name, cfg, &ptm_model_pattern, par, vsec);
}

int main(int argc, char **argv)
{
    double vsec = argc > 1 ? atof(argv[1]) : 1.0;
    PtmConfig cfg;
    PtmPatternParams par;
    PtmRandomParams rnd;
    PtmPtcParams ptc;

    busiest(&par);
    ptm_random_params_default(&rnd);
    ptm_ptc_params_default(&ptc);
    ptm_config_default(&cfg);
    printf("virtual time per run: %.2f s, advanced in 1 ms steps\n", vsec);
    run("default card, idle", &cfg, NULL, vsec);
    run("default card, pattern, all buses busy", &cfg, &par, vsec);
    {
        /* periods 257 and 514 on the PCIe side, 2 and 3 on the DMA side:
         * no joint period fits a chunk, the slowest pattern */
        PtmPatternParams worst;

        ptm_pattern_params_default(&worst);
        worst.bus[PTM_BUS_RQ].frame_bytes = 64;
        worst.bus[PTM_BUS_RQ].stall = 1;
        worst.bus[PTM_BUS_UP].frame_bytes = 64;
        worst.bus[PTM_BUS_UP].stall = 1;
        worst.bus[PTM_BUS_RC].frame_bytes = 64;
        worst.bus[PTM_BUS_RC].stall = 1;
        worst.bus[PTM_BUS_RC].gap = 255;
        worst.bus[PTM_BUS_DOWN].frame_bytes = 64;
        worst.bus[PTM_BUS_DOWN].stall = 1;
        worst.bus[PTM_BUS_DOWN].gap = 255;
        run("default card, pattern, worst case periods", &cfg, &worst,
            vsec / 10);
    }
    cfg.drain_period = 64;
    run("default card, pattern, DRAIN_PERIOD 64", &cfg, &par, vsec / 10);
    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    cfg.dma_ports = 2;
    run("2 endpoints x 2 DMA ports, pattern", &cfg, &par, vsec);
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    run("16 endpoints x 4 DMA ports, pattern", &cfg, &par, vsec / 10);
    ptm_config_default(&cfg);
    run_gen("default card, ptc at its defaults", &cfg, &ptm_model_ptc, &ptc,
            vsec);
    run_gen("default card, random at its defaults", &cfg, &ptm_model_random,
            &rnd, vsec);
    rnd.bus[PTM_BUS_RQ].max_bytes = 4096;
    rnd.bus[PTM_BUS_RC].max_bytes = 4096;
    run_gen("default card, random, frames up to 4096 B", &cfg,
            &ptm_model_random, &rnd, vsec);
    if (!skip("default card, replay of a dense 200k-cycle trace")) {
        /* a held word keeps its signals: the trace repeats them */
        PtmReplayParams rp;
        char *trace = write_trace(200000);

        ptm_replay_params_default(&rp);
        g_strlcpy(rp.file, trace, sizeof(rp.file));
        g_strlcpy(rp.end, "loop", sizeof(rp.end));
        run_gen("default card, replay of a dense 200k-cycle trace", &cfg,
                &ptm_model_replay, &rp, vsec);
        unlink(trace);
        g_free(trace);
    }
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    run_gen("16 endpoints x 4 DMA ports, ptc", &cfg, &ptm_model_ptc, &ptc,
            vsec / 10);
    /* overloaded: the accumulator loses deltas all the time */
    ptm_config_default(&cfg);
    cfg.drain_period = 256;
    run_gen("default card, ptc, DRAIN_PERIOD 256", &cfg, &ptm_model_ptc,
            &ptc, vsec / 10);
    cfg.pcie_endpoints = 2;
    cfg.dma_ports = 2;
    cfg.pcie_rq_mfb_regions = 4;
    cfg.drain_period = 512;
    run_gen("2 x 2, 4 RQ regions, ptc, DRAIN_PERIOD 512", &cfg,
            &ptm_model_ptc, &ptc, vsec / 10);
    run_overloaded(vsec / 10);
    return 0;
}
