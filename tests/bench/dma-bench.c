/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Benchmark (not a test): host CPU time the DMA engine and the telemetry
 * block spend per frame, without QEMU. A TX queue sends bursts of
 * frames through the loopback into an RX queue, as ndp-tool loopback-hw
 * does, the driver's work (descriptors, refills) done here; the engine's
 * transfers go into the log the block counts, and the block is brought
 * up to time after every burst. Virtual time advances by the frames'
 * time at a rate given in Mpps.
 *
 *   dma-bench [FRAMES] [SIZE] [MPPS] [loop|tx] [BURST]
 *             (defaults 200000 64 1 loop 64)
 *
 * `tx` sends the bursts out of the TX queue only, as ndp-tool generate
 * does (the loopback off), with the settings a Linux guest negotiates
 * (MPS 128, MRRS 4096, 8-bit tags), and the block caught up every 10 ms
 * of virtual time in whole drain periods, as the card's timer does.
 *
 * BURST (1 to 1000) is the frames a doorbell gives: ndp-tool generate in a
 * TCG guest gives about 340 at a time, so that a burst's first completions
 * come back while its requests still go out.
 *
 * Prints ns of CPU per frame for the engine alone, with the log, and
 * with the block counting.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndp-dma.h"
#include "ptm-core.h"
#include "ptm-dma-traffic.h"

#define MEM_BASE    0x100000000ull
#define MEM_SIZE    (16u << 20)
#define RING        1024u

typedef struct Host {
    uint8_t *mem;
    PtmDmaTraffic *log;
    PtmSettings set;
    int64_t now;
} Host;

static int host_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    Host *h = opaque;

    memcpy(buf, h->mem + (addr - MEM_BASE), len);
    return 0;
}

static int host_write(void *opaque, uint64_t addr, const void *buf,
                      size_t len)
{
    Host *h = opaque;

    memcpy(h->mem + (addr - MEM_BASE), buf, len);
    return 0;
}

static void host_xfer(void *opaque, NdpDir dir, unsigned queue,
                      NdpXferKind kind, uint64_t addr, uint32_t bytes)
{
    Host *h = opaque;

    if (h->log) {
        ptm_dma_traffic_add(h->log, h->now, 0, kind >= NDP_XFER_DATA_WRITE,
                            addr, bytes, &h->set);
    }
}

static const NdpMemOps host_ops = { host_read, host_write };
static const NdpHooks host_hooks = { .xfer = host_xfer };

static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wr(NdpDma *d, NdpDir dir, uint32_t off, uint64_t v, unsigned sz,
               int64_t now)
{
    ndp_dma_write(d, dir, 0, off, v, sz, now);
}

static void put_desc(Host *h, uint64_t ring, uint32_t idx, uint64_t v)
{
    memcpy(h->mem + (ring - MEM_BASE) + (idx & (RING - 1)) * 8, &v, 8);
}

/* mode 0: engine only, 1: with the log, 2: with the block counting */
static double run(unsigned mode, uint64_t frames, uint32_t size, double mpps,
                  bool tx_only, unsigned burst)
{
    Host h = { .set = { .mps = 1, .mrrs = 2, .ext_tag = true } };
    int64_t caught_up = 0;
    uint64_t rx_desc = MEM_BASE, tx_desc = MEM_BASE + 0x10000;
    uint64_t rx_hdr = MEM_BASE + 0x20000, upd = MEM_BASE + 0x30000;
    uint64_t rx_buf = MEM_BASE + 0x100000, tx_buf = MEM_BASE + 0x800000;
    uint32_t rx_sdp = 0, tx_sdp = 0;
    PtmConfig cfg;
    PtmCore *core = NULL;
    NdpDma *d;
    double t0;

    h.mem = g_malloc0(MEM_SIZE);
    if (mode >= 1) {
        PtmGeometry geo;

        ptm_config_default(&cfg);
        core = ptm_core_new(&cfg);
        ptm_core_geometry(core, &geo);
        h.log = ptm_dma_traffic_new(&geo);
        ptm_core_set_source(core, ptm_dma_traffic_ops(), h.log);
        ptm_core_power_on(core, 0);
    }
    d = ndp_dma_new(1, 1, 200000000, 64, &host_ops, &host_hooks, &h);
    if (tx_only) {
        h.set = (PtmSettings) { .mps = 0, .mrrs = 5, .ext_tag = true };
    } else {
        ndp_gls_write(d, 0, NDP_GLS_MUX_A, 1, 4, 0);
    }
    for (unsigned dir = 0; dir < 2; dir++) {
        wr(d, dir, NDP_REG_DESC_BASE, dir ? tx_desc : rx_desc, 8, 0);
        wr(d, dir, NDP_REG_HDR_BASE, rx_hdr, 8, 0);
        wr(d, dir, NDP_REG_UPDATE_BASE, upd + dir * 64, 8, 0);
        wr(d, dir, NDP_REG_MDP, RING - 1, 4, 0);
        wr(d, dir, NDP_REG_MHP, RING - 1, 4, 0);
        wr(d, dir, NDP_REG_CONTROL, 1, 4, 0);
    }
    put_desc(&h, rx_desc, rx_sdp++, rx_buf >> 30);
    put_desc(&h, tx_desc, tx_sdp++, tx_buf >> 30);
    memset(h.mem + (tx_buf - MEM_BASE), 0x5A, RING * 4096);
    t0 = cpu_s();
    for (uint64_t done = 0; done < frames; done += burst) {
        /* the driver: RX buffers and TX frames for one burst */
        for (unsigned i = 0; i < burst; i++) {
            uint64_t k = (done + i) % (RING - 2);

            put_desc(&h, rx_desc, rx_sdp++,
                     2ull << 62 | 4096ull << 32 | ((rx_buf + k * 4096) &
                                                   0x3FFFFFFF));
            put_desc(&h, tx_desc, tx_sdp++,
                     2ull << 62 | (uint64_t)size << 32 |
                     ((tx_buf + k * 4096) & 0x3FFFFFFF));
        }
        /* the headers the driver has read: room again */
        wr(d, NDP_RX, NDP_REG_SHP,
           (ndp_dma_read(d, NDP_RX, 0, NDP_REG_HHP, 4, h.now) - 1) &
           (RING - 1), 4, h.now);
        wr(d, NDP_RX, NDP_REG_SDP, rx_sdp % RING, 4, h.now);
        wr(d, NDP_TX, NDP_REG_SDP, tx_sdp % RING, 4, h.now);
        h.now += (int64_t)(burst * 1000 / mpps);
        if (mode == 2 && tx_only) {
            ptm_dma_traffic_set_now(h.log, h.now);
            if (h.now - caught_up >= 10000000) {
                caught_up = h.now;
                ptm_core_advance_coarse(core, h.now);
                ptm_dma_traffic_prune(h.log, ptm_core_done_ns(core) - 2000000);
            }
        } else if (mode == 2) {
            ptm_dma_traffic_set_now(h.log, h.now);
            ptm_core_advance(core, h.now);
            if (h.now > 20000000) {
                ptm_dma_traffic_prune(h.log, h.now - 10000000);
            }
        } else if (mode == 1 && h.now > 20000000) {
            ptm_dma_traffic_prune(h.log, h.now - 10000000);
        }
    }
    t0 = cpu_s() - t0;
    {
        NdpDir dir = tx_only ? NDP_TX : NDP_RX;

        wr(d, dir, NDP_REG_CNT_PKTS, NDP_CNT_CMD_STROBE, 4, h.now);
        if (ndp_dma_read(d, dir, 0, NDP_REG_CNT_PKTS, 8, h.now) <
            frames * 9 / 10) {
            fprintf(stderr, "dma-bench: only %llu of %llu frames arrived\n",
                    (unsigned long long)ndp_dma_read(d, dir, 0,
                                                     NDP_REG_CNT_PKTS, 8,
                                                     h.now),
                    (unsigned long long)frames);
        }
    }
    ndp_dma_free(d);
    ptm_dma_traffic_free(h.log);
    ptm_core_free(core);
    g_free(h.mem);
    return t0 * 1e9 / frames;
}

int main(int argc, char **argv)
{
    uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
    uint32_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 64;
    double mpps = argc > 3 ? strtod(argv[3], NULL) : 1.0;
    bool tx_only = argc > 4 && !strcmp(argv[4], "tx");
    unsigned burst = argc > 5 ? strtoul(argv[5], NULL, 0) : 64;
    static const char *const what[] = {
        "engine alone", "engine and transfer log", "engine, log and block",
    };

    if (size < 1 || size > 4096 || mpps <= 0 || burst < 1 || burst > 1000 ||
        (argc > 4 && !tx_only && strcmp(argv[4], "loop"))) {
        fprintf(stderr, "usage: dma-bench [FRAMES] [SIZE 1..4096] [MPPS] "
                "[loop|tx] [BURST 1..1000]\n");
        return 2;
    }
    printf("%llu frames of %u bytes %s, %.3g Mpps of virtual time, "
           "bursts of %u\n", (unsigned long long)frames, size,
           tx_only ? "out of the TX queue" : "through the loopback", mpps,
           burst);
    for (unsigned m = 0; m < 3; m++) {
        /* DMA_BENCH_ONLY=2: the last figure alone, for a profiler */
        if (getenv("DMA_BENCH_ONLY") &&
            m != strtoul(getenv("DMA_BENCH_ONLY"), NULL, 0)) {
            continue;
        }
        printf("  %-26s %8.1f ns CPU per frame\n", what[m],
               run(m, frames, size, mpps, tx_only, burst));
    }
    return 0;
}
