/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest for ndk-pcie-telemetry, the PCI(e) function whose BAR0 is CESNET's
 * PCIE_TELEMETRY_MI block.
 *
 * The expected values come from the facts about the real block (register
 * values, layout rules, drain and snapshot timing) and from arithmetic done
 * here, never from reading the device once and asserting it back. Counts of
 * the pattern traffic source are predicted by a small per-cycle simulator
 * of the pattern written for this test, itself checked against closed forms
 * worked out by hand.
 *
 * Clocks of the defaults: PCIe 400 MHz (2.5 ns), DMA 200 MHz (5 ns), MI
 * 100 MHz (10 ns); DRAIN_PERIOD 4096, so window 0 of a probe's cycle
 * counter covers its cycles [0, 4095) and window k >= 1 the cycles
 * [4096 k - 1, 4096 (k + 1) - 1). The other channels' windows end a few
 * cycles later, by the slot they are read out in (ch_edge), and all but
 * the MVB channels and the histogram bands miss cycle 0, the reset's
 * last (ch_first).
 *
 * Environment (tests/qtest/run-qtest.sh sets both):
 *   QTEST_QEMU_BINARY  the QEMU with the device
 *   PTM_SAMPLE_PLUGIN  path of the sample traffic plugin the project's build
 *                      makes, build/traffic-gen/plugins/ptm-sample-plugin.so;
 *                      the plugin test fails (it does not skip) without it.
 *   NDK_QTEST_SEED     seed of the random-access cases (decimal or 0x hex;
 *                      default fixed); each case prints the seed it used.
 * The scenario and replay tests write their files into a temporary
 * directory of their own.
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "qobject/qdict.h"

#include <libfdt.h>
#include <lzma.h>

#define NDK_VENDOR_ID           0x1234
#define NDK_DEVICE_ID           0x0d7b
#define NDK_DEVFN               QPCI_DEVFN(4, 0)
#define NDK_BAR_SIZE            0x10000

/* Register map */
#define REG_MAGIC               0x00
#define REG_VERSION             0x04
#define REG_CFG_TOPOLOGY        0x08
#define REG_CFG_LAYOUT          0x0C
#define REG_CFG_PCIE            0x10
#define REG_CFG_DMA             0x14
#define REG_CFG_DRAIN           0x18
#define REG_CNT_BASE            0x1C
#define REG_COMMAND             0x20
#define REG_STATUS              0x24
#define REG_READ_SEL            0x28
#define REG_CFG_REGIONS         0x2C
#define REG_CFG_WIDTH           0x30
#define REG_CFG_HIST            0x34
#define REG_CFG_CAPACITY        0x38
#define REG_CFG_WIDTH_DMA       0x3C
#define REG_PCIE_STATUS(e)      (0x40 + 4 * (e))
#define REG_PCIE_TAGS(e)        (0x80 + 4 * (e))
#define REG_PCIE_STFIFO(e)      (0xC0 + 4 * (e))
#define CNT_BASE                0x8000
#define CNT(e)                  (CNT_BASE + 8 * (e))

#define MAGIC                   0x50544C4Du
#define VERSION                 0x00020000u

#define CMD_SNAPSHOT            (1u << 0)
#define CMD_CLEAR               (1u << 1)
#define CMD_CLEAR_FLAGS         (1u << 2)
#define CMD_CLEAR_LOWEST        (1u << 3)

#define STATUS_BUSY             (1u << 0)
#define STATUS_LOST             (1u << 1)
#define STATUS_OVERRUN          (1u << 2)

/* Clocks and generics of the defaults */
#define PCIE_HZ                 400000000ull
#define DMA_HZ                  200000000ull
#define MI_HZ                   100000000ull
#define MI_NS                   10
#define NS_PER_S                1000000000ull
#define DP                      4096
#define ITEM_BYTES              4
#define DEF_ENTRIES             64

/* Channels of a bus inside a probe: 1 + bus * (6 + R) + k */
enum {
    CH_WORDS, CH_STALL, CH_SOF, CH_MVB, CH_MVB_STALL, CH_ITEMS, CH_REGION0,
};

/*
 * PCIe fields that pci_regs.h of QEMU 10.0 does not name: 10-bit tag
 * requester supported (Device Capabilities 2) and enabled (Control 2)
 */
#define EXP_DEVCAP2_10BIT_TAG   0x00020000
#define EXP_DEVCTL2_10BIT_TAG   0x1000

/* The NDK device-tree VSEC (FACTS.md, "How software finds the block") */
#define VSEC                    0x100
#define VSEC_HEADER             0x02010D7Bu
#define VSEC_ENDPOINT           0x08
#define VSEC_LENGTH             0x0C
#define VSEC_INDEX              0x10
#define VSEC_DATA               0x14

/* q35: MCH PCIEXBAR and where this test puts ECAM */
#define Q35_PCIEXBAR            0x60
#define ECAM_BASE               0xb0000000ull

/* ------------------------------------------------------------------ */
/* A QEMU with the device                                               */

typedef struct Ndk {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    int64_t t0;             /* virtual time of the device's reset */
    int64_t now;            /* virtual time now */
} Ndk;

typedef struct FindCtx {
    QPCIDevice *dev;
    int found;
} FindCtx;

static void find_cb(QPCIDevice *dev, int devfn, void *data)
{
    FindCtx *ctx = data;

    ctx->found++;
    if (!ctx->dev) {
        ctx->dev = dev;
    } else {
        g_free(dev);
    }
}

static QPCIDevice *find_device(QPCIBus *bus, int vendor, int device)
{
    FindCtx ctx = { 0 };

    qpci_device_foreach(bus, vendor, device, find_cb, &ctx);
    g_assert(ctx.dev);
    g_assert_cmpint(ctx.found, ==, 1);
    return ctx.dev;
}

/*
 * Start QEMU, find the function by its IDs with libqos, enable it and map
 * BAR0. Virtual time only moves when the test steps it, so the time the
 * first step starts from is the time at which the device was realized and
 * reset: read it with a 1 ns step.
 */
static void ndk_open_bar(Ndk *n, const char *machine, int vendor, int device,
                         uint64_t bar_size, const char *extra)
{
    uint64_t size = 0;
    uint32_t bar0;

    memset(n, 0, sizeof(*n));
    n->qts = qtest_initf("-machine %s -nodefaults %s", machine, extra);
    n->bus = qpci_new_pc(n->qts, NULL);
    n->dev = find_device(n->bus, vendor, device);
    qpci_device_enable(n->dev);
    n->bar = qpci_iomap(n->dev, 0, &size);
    g_assert_false(n->bar.is_io);
    g_assert_cmphex(size, ==, bar_size);
    /* a 32-bit, non-prefetchable memory BAR */
    bar0 = qpci_config_readl(n->dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(bar0 & 0xF, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    n->now = qtest_clock_step(n->qts, 1);
    n->t0 = n->now - 1;
    g_test_message("device reset at %" PRId64 " ns of virtual time", n->t0);
}

static void ndk_open_ids(Ndk *n, const char *machine, int vendor, int device,
                         const char *extra)
{
    ndk_open_bar(n, machine, vendor, device, NDK_BAR_SIZE, extra);
}

static void ndk_open(Ndk *n, const char *machine, const char *extra)
{
    ndk_open_ids(n, machine, NDK_VENDOR_ID, NDK_DEVICE_ID, extra);
}

static void ndk_close(Ndk *n)
{
    g_free(n->dev);
    qpci_free_pc(n->bus);
    qtest_quit(n->qts);
    memset(n, 0, sizeof(*n));
}

static void step_to(Ndk *n, int64_t t)
{
    g_assert(t >= n->now);
    if (t > n->now) {
        n->now = qtest_clock_step(n->qts, t - n->now);
        g_assert(n->now == t);
    }
}

static void step(Ndk *n, int64_t ns)
{
    step_to(n, n->now + ns);
}

/* The next multiple of the MI period at or after t */
static int64_t mi_edge(int64_t t)
{
    return ROUND_UP(t, MI_NS);
}

static uint32_t rd(Ndk *n, uint64_t off)
{
    return qpci_io_readl(n->dev, n->bar, off);
}

static void wr(Ndk *n, uint64_t off, uint32_t val)
{
    qpci_io_writel(n->dev, n->bar, off, val);
}

static uint64_t rdq(Ndk *n, uint64_t off)
{
    return qtest_readq(n->qts, n->bar.addr + off);
}

/* Counter e from its two 32-bit words */
static uint64_t cnt(Ndk *n, unsigned e)
{
    uint64_t lo = rd(n, CNT(e));
    uint64_t hi = rd(n, CNT(e) + 4);

    return hi << 32 | lo;
}

static void read_counters(Ndk *n, unsigned entries, uint64_t *out)
{
    for (unsigned e = 0; e < entries; e++) {
        out[e] = cnt(n, e);
    }
}

/* Wait (in MI cycles) until BUSY drops; returns the cycles waited. */
static unsigned wait_busy(Ndk *n, unsigned max_cycles)
{
    unsigned c = 0;

    while (rd(n, REG_STATUS) & STATUS_BUSY) {
        g_assert(c < max_cycles);
        step(n, MI_NS);
        c++;
    }
    return c;
}

static void snapshot(Ndk *n, unsigned entries)
{
    wr(n, REG_COMMAND, CMD_SNAPSHOT);
    step(n, 2 * MI_NS);
    g_assert_cmphex(rd(n, REG_STATUS) & STATUS_BUSY, ==, STATUS_BUSY);
    wait_busy(n, 1 + 2 * entries + 8);
}

static void check_counters(const char *what, const uint64_t *got,
                           const uint64_t *exp, unsigned entries)
{
    for (unsigned e = 0; e < entries; e++) {
        if (got[e] != exp[e]) {
            g_test_message("%s: entry %u is %" PRIu64 ", expected %" PRIu64,
                           what, e, got[e], exp[e]);
        }
        g_assert_cmpuint(got[e], ==, exp[e]);
    }
}

/* ------------------------------------------------------------------ */
/* Clock arithmetic                                                     */

/* Cycle of a clock of hz running at virtual time t (its last edge) */
/* (in 128 bits: an hour of a 400 MHz clock overflows 64 bits in ns) */
static uint64_t cycle_at(int64_t t, uint64_t hz)
{
    return (unsigned __int128)t * hz / NS_PER_S;
}

/* First cycle at or after virtual time t: a probe's cycle 0 after reset */
static uint64_t first_cycle(int64_t t, uint64_t hz)
{
    return ((unsigned __int128)t * hz + NS_PER_S - 1) / NS_PER_S;
}

/* Virtual time of cycle c, rounded up to a whole ns */
static int64_t cycle_ns(uint64_t c, uint64_t hz)
{
    return ((unsigned __int128)c * NS_PER_S + hz - 1) / hz;
}

/* Absolute cycle of the drain that ends window k of a probe */
static uint64_t drain_cycle(uint64_t origin, uint64_t dp, uint64_t k)
{
    return origin + (k + 1) * dp - 1;
}

/*
 * Whole windows a probe has drained by time t. t must be well inside a
 * window: at least 3 us after the last drain, so that its deltas have
 * reached the counters, and 1 us before the next one.
 */
static uint64_t windows_by(int64_t t, uint64_t origin, uint64_t hz,
                           uint64_t dp)
{
    uint64_t c = cycle_at(t, hz);
    uint64_t w = (c + 1 - origin) / dp;

    g_assert(c + 1 >= origin);
    if (w) {
        g_assert(t - cycle_ns(drain_cycle(origin, dp, w - 1), hz) >= 3000);
    }
    g_assert(cycle_ns(drain_cycle(origin, dp, w), hz) - t >= 1000);
    return w;
}

static unsigned band(unsigned v, unsigned c)
{
    if (v == 0) {
        return 0;
    }
    if (v <= c / 8) {
        return 1;
    }
    return v <= c / 2 ? 2 : 3;
}

/* ------------------------------------------------------------------ */
/* Where each channel's window lies                                     */

/*
 * The layout of a probe's channels: 1 (cycles) + nbus x (6 + regions),
 * and on a PCIe probe 6 BRAKE bits and 8 histogram bands (tag bands 0..3,
 * storage-FIFO bands 0..3), the last 8 channels.
 */
typedef struct Layout {
    unsigned n;
    unsigned nbus;
    unsigned regions;
    bool pcie;
} Layout;

#define SIM_MAX_CH              64

static Layout pcie_layout(unsigned regions)
{
    return (Layout) { 1 + 2 * (6 + regions) + 14, 2, regions, true };
}

static Layout dma_layout(unsigned ports, unsigned regions)
{
    return (Layout) { 1 + 2 * ports * (6 + regions), 2 * ports, regions,
                      false };
}

static bool ch_is_band(const Layout *l, unsigned c)
{
    return l->pcie && c + 8 >= l->n;
}

/*
 * The probe reads its channels out in G = ceil(n / 8) groups of 8:
 * channel c sits in slot c mod 8, and its window edge lies slot x (G + 1)
 * cycles after the cycle counter's (channel 0's); one cycle less for the
 * histogram bands. Default PCIe probe (31 channels): 5 x slot (bands
 * 5 x slot - 1); default DMA probe (17): 4 x slot.
 */
static int64_t ch_edge(const Layout *l, unsigned c)
{
    int64_t g = DIV_ROUND_UP(l->n, 8);
    int64_t d = (int64_t)(c % 8) * (g + 1);

    return ch_is_band(l, c) ? d - 1 : d;
}

/*
 * The first probe cycle a channel counts, relative to the origin: the
 * origin is the reset's last cycle, and the input registers of the bus
 * words, stalls, SOF, items, regions and BRAKE bits are cleared in it;
 * the cycle counter, the MVB channels and (after an MI or device reset)
 * the histogram bands count it.
 */
static unsigned ch_first(const Layout *l, unsigned c)
{
    if (c == 0 || ch_is_band(l, c)) {
        return 0;
    }
    if (c < 1 + l->nbus * (6 + l->regions)) {
        unsigned k = (c - 1) % (6 + l->regions);

        if (k == CH_MVB || k == CH_MVB_STALL) {
            return 0;
        }
    }
    return 1;
}

/*
 * After k whole drained windows of a probe with origin o and drain period
 * dp, channel c holds the probe cycles [lo, hi) = [o + first_c,
 * E_k + edge_c), E_k = o + k dp - 1 the cycle counter's k-th window edge.
 */
static void ch_span(const Layout *l, uint64_t o, uint64_t dp, uint64_t k,
                    unsigned c, uint64_t *lo, uint64_t *hi)
{
    if (!k) {
        *lo = *hi = o;
        return;
    }
    *lo = o + ch_first(l, c);
    *hi = o + k * dp - 1 + ch_edge(l, c);
}

/* Cycles of channel a's span (after whole windows) that b's lacks */
static uint64_t ch_extra(const Layout *l, unsigned a, unsigned b)
{
    int64_t end = ch_edge(l, a) - ch_edge(l, b);
    int64_t start = (int64_t)ch_first(l, b) - (int64_t)ch_first(l, a);

    return MAX(end, 0) + MAX(start, 0);
}

/*
 * The same for the difference of two readings, windows i..j - 1: both
 * spans have j - i windows' worth of cycles, shifted by the edges'
 * difference, so each has that many cycles the other lacks.
 */
static uint64_t ch_shift(const Layout *l, unsigned a, unsigned b)
{
    int64_t d = ch_edge(l, a) - ch_edge(l, b);

    return d < 0 ? -d : d;
}

/*
 * Virtual time from which the live registers show what drain k sent: the
 * drain tick samples cycle E + 1 (E = drain_cycle) and its status word
 * crosses a bus handshake to the MI side, where it arrives in the fourth
 * MI cycle after the first one past PCIe edge E + 2 and shows from the
 * next (tests/rtl, docs/ndk-pcie-telemetry.md).
 */
static int64_t word_ns(uint64_t origin, uint64_t k)
{
    uint64_t e = drain_cycle(origin, DP, k);

    return (int64_t)(((unsigned __int128)(e + 2) * MI_HZ / PCIE_HZ) + 6) *
           MI_NS;
}

/* ------------------------------------------------------------------ */
/* An independent per-cycle model of the pattern source and the channels */

typedef struct SimBus {
    uint32_t frame_bytes;       /* 0: idle */
    uint32_t gap;
    uint32_t stall;
    unsigned regions;           /* regions the bus really has */
    unsigned ipr;               /* items per region */
    bool mvb;                   /* one MVB item per frame, with word 0 */
    uint64_t start;             /* cycle 0 of its pattern; idle before */
} SimBus;

typedef struct SimProbe {
    uint64_t hz;
    unsigned regions;           /* of the probe: the wider of its buses */
    unsigned nbus;
    SimBus bus[2];
    bool pcie;                  /* BRAKE and histogram channels */
    uint32_t brake;
    unsigned tags_free, tag_capacity;
    unsigned stfifo_free, stfifo_capacity;
} SimProbe;

typedef struct SimSignals {
    bool src_rdy, dst_rdy, mvb_src_rdy, mvb_dst_rdy;
    unsigned mvb_vld;
    uint32_t sof, eof;          /* bit r: region r */
    unsigned eof_pos;
} SimSignals;

static Layout sim_layout(const SimProbe *p)
{
    return (Layout) {
        1 + p->nbus * (6 + p->regions) + (p->pcie ? 14 : 0),
        p->nbus, p->regions, p->pcie,
    };
}

/*
 * The bus at absolute cycle t. One period: `stall` cycles in which the
 * first word waits, the frame's words, `gap` idle cycles. A frame of B
 * bytes has ceil(B / 4) items in ceil(items / ipr) regions and fills the
 * bus's regions in order from region 0 of its first word.
 */
static void sim_bus_at(const SimBus *b, uint64_t t, SimSignals *s)
{
    unsigned items, nreg, words;
    uint64_t period, ph;

    memset(s, 0, sizeof(*s));
    if (!b->frame_bytes || t < b->start) {
        return;
    }
    t -= b->start;
    items = DIV_ROUND_UP(b->frame_bytes, ITEM_BYTES);
    nreg = DIV_ROUND_UP(items, b->ipr);
    words = DIV_ROUND_UP(nreg, b->regions);
    period = (uint64_t)b->stall + words + b->gap;
    ph = t % period;
    if (ph >= b->stall + words) {
        return;
    }
    s->src_rdy = true;
    if (ph < b->stall) {
        s->sof = 1;
        s->mvb_src_rdy = b->mvb;
        s->mvb_vld = b->mvb;
        return;
    }
    ph -= b->stall;
    s->dst_rdy = true;
    if (ph == 0) {
        s->sof = 1;
        s->mvb_src_rdy = s->mvb_dst_rdy = b->mvb;
        s->mvb_vld = b->mvb;
    }
    if (ph == words - 1) {
        s->eof = 1u << (nreg - 1 - ph * b->regions);
        s->eof_pos = (items - 1) % b->ipr;
    }
}

/*
 * What absolute cycle t of a probe adds to each channel, into inc (zeroed
 * here). open[b] says whether a frame of bus b is open after its last
 * moving word; it carries over from cycle to cycle. The frame state
 * starts closed after the probe's origin: the origin counts no bus event,
 * not even the SOF that would open a frame (seen false there).
 */
static void sim_cycle(const SimProbe *p, uint64_t t, bool seen, bool *open,
                      uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    for (unsigned b = 0; b < p->nbus; b++) {
        unsigned base = 1 + b * (6 + p->regions);
        SimSignals s;

        sim_bus_at(&p->bus[b], t, &s);
        if (!seen) {
            open[b] = false;
        } else if (s.src_rdy && s.dst_rdy) {
            inc[base + CH_WORDS]++;
            inc[base + CH_SOF] += ctpop32(s.sof);
            for (unsigned r = 0; r < p->regions; r++) {
                bool sof = s.sof >> r & 1;
                bool eof = s.eof >> r & 1;

                if (!open[b] && !sof) {
                    continue;
                }
                inc[base + CH_REGION0 + r]++;
                if (eof) {
                    inc[base + CH_ITEMS] += s.eof_pos + 1;
                    open[b] = false;
                } else {
                    inc[base + CH_ITEMS] += p->bus[b].ipr;
                    open[b] = true;
                }
            }
        } else if (s.src_rdy) {
            inc[base + CH_STALL]++;
        }
        if (s.mvb_src_rdy && s.mvb_dst_rdy) {
            inc[base + CH_MVB] += s.mvb_vld;
        } else if (s.mvb_src_rdy) {
            inc[base + CH_MVB_STALL]++;
        }
    }
    if (p->pcie) {
        unsigned base = 1 + p->nbus * (6 + p->regions);

        for (unsigned k = 0; k < 6; k++) {
            if (p->brake >> k & 1) {
                inc[base + k]++;
            }
        }
        inc[base + 6 + band(p->tags_free, p->tag_capacity)]++;
        inc[base + 10 + band(p->stfifo_free, p->stfifo_capacity)]++;
    }
}

/*
 * Run the absolute cycles [start, end) of a probe and count cycle t into
 * channel c only if lo[c] <= t < hi[c]; the bus events of cycle origin
 * (UINT64_MAX: none) are not seen.
 */
static void sim_count_spans(const SimProbe *p, uint64_t start, uint64_t end,
                            uint64_t origin, const uint64_t *lo,
                            const uint64_t *hi, bool *open, uint64_t *acc)
{
    unsigned n = sim_layout(p).n;
    uint64_t inc[SIM_MAX_CH];

    for (uint64_t t = start; t < end; t++) {
        sim_cycle(p, t, t != origin, open, inc);
        for (unsigned c = 0; c < n; c++) {
            if (t >= lo[c] && t < hi[c]) {
                acc[c] += inc[c];
            }
        }
    }
}

/* Every channel over the absolute cycles [start, end), frames closed */
static void sim_count(const SimProbe *p, uint64_t start, uint64_t end,
                      uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH];
    bool open[2] = { false, false };

    for (unsigned c = 0; c < SIM_MAX_CH; c++) {
        lo[c] = start;
        hi[c] = end;
    }
    sim_count_spans(p, start, end, UINT64_MAX, lo, hi, open, acc);
}

/* The spans of all channels after k windows; returns the largest end */
static uint64_t sim_spans(const SimProbe *p, uint64_t o, uint64_t dp,
                          uint64_t k, uint64_t *lo, uint64_t *hi)
{
    Layout l = sim_layout(p);
    uint64_t end = o;

    g_assert_cmpuint(l.n, <=, SIM_MAX_CH);
    for (unsigned c = 0; c < l.n; c++) {
        ch_span(&l, o, dp, k, c, &lo[c], &hi[c]);
        end = MAX(end, hi[c]);
    }
    return end;
}

/*
 * The counters of a probe with origin o after k drained windows of dp
 * cycles when the traffic changes: version i describes the cycles from
 * from[i] (absolute, ascending, from[0] <= o) to from[i + 1]. The bus
 * state (an open frame) goes on across a change, as on a real bus whose
 * source changes.
 */
static void sim_windows_versions(const SimProbe *ver, const uint64_t *from,
                                 unsigned nver, uint64_t o, uint64_t dp,
                                 uint64_t k, uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH];
    uint64_t end = sim_spans(&ver[0], o, dp, k, lo, hi);
    bool open[2] = { false, false };

    for (unsigned i = 0; i < nver; i++) {
        uint64_t s = MAX(o, from[i]);
        uint64_t e = i + 1 < nver ? MIN(end, from[i + 1]) : end;

        if (s < e) {
            sim_count_spans(&ver[i], s, e, o, lo, hi, open, acc);
        }
    }
}

/* The same with one version of the traffic */
static void sim_windows(const SimProbe *p, uint64_t o, uint64_t dp,
                        uint64_t k, uint64_t *acc)
{
    sim_windows_versions(p, &o, 1, o, dp, k, acc);
}

/*
 * The traffic of the counting tests, on a card with the default generics:
 *   rq-frame-bytes=256: 64 items in 8 regions of 8 items = 4 words of 2
 *     regions, back to back (period 4);
 *   up-frame-bytes=100, up-gap=3, up-stall=2: 25 items in 4 regions = 2
 *     words; period 2 + 2 + 3 = 7;
 *   tags-free=100 (band 2 of 256: 32 < 100 <= 128), storage FIFO at its
 *   capacity 1024 (band 3), BRAKE bits 0 and 2.
 */
#define PATTERN_ARGS \
    "-object telemetry-traffic-pattern,id=tp0,rq-frame-bytes=256," \
    "up-frame-bytes=100,up-gap=3,up-stall=2,tags-free=100,brake=5 "

static void pattern_probes(SimProbe *pcie, SimProbe *dma)
{
    const SimBus rq = { .frame_bytes = 256, .regions = 2, .ipr = 8 };
    const SimBus rc = { .frame_bytes = 0, .regions = 2, .ipr = 8 };
    const SimBus up = { .frame_bytes = 100, .gap = 3, .stall = 2,
                        .regions = 2, .ipr = 8, .mvb = true };
    const SimBus down = { .frame_bytes = 0, .regions = 2, .ipr = 8,
                          .mvb = true };

    *pcie = (SimProbe) {
        .hz = PCIE_HZ, .regions = 2, .nbus = 2, .bus = { rq, rc },
        .pcie = true, .brake = 5, .tags_free = 100, .tag_capacity = 256,
        .stfifo_free = 1024, .stfifo_capacity = 1024,
    };
    *dma = (SimProbe) {
        .hz = DMA_HZ, .regions = 2, .nbus = 2, .bus = { up, down },
    };
}

/*
 * The simulator against closed forms, for spans that start at a frame
 * boundary (cycle 0 of the pattern).
 */
static void check_simulator(void)
{
    SimProbe pp, dp;
    uint64_t a[31] = { 0 }, b[17] = { 0 };
    /* PCIe window of 9 x 4096 - 1 = 36863 cycles */
    const uint64_t np = 36863;
    /* DMA: 4 x 4096 - 1 = 16383 = 7 x 2340 + 3 cycles */
    const uint64_t nd = 16383;

    pattern_probes(&pp, &dp);
    sim_count(&pp, 0, np, a);
    g_assert_cmpuint(a[0], ==, np);
    /* RQ moves a word in every cycle, 16 items per word */
    g_assert_cmpuint(a[1 + CH_WORDS], ==, 36863);
    g_assert_cmpuint(a[1 + CH_STALL], ==, 0);
    g_assert_cmpuint(a[1 + CH_SOF], ==, 9216);         /* ceil(36863 / 4) */
    g_assert_cmpuint(a[1 + CH_MVB], ==, 0);
    g_assert_cmpuint(a[1 + CH_ITEMS], ==, 589808);     /* 16 x 36863 */
    g_assert_cmpuint(a[1 + CH_REGION0], ==, 36863);
    g_assert_cmpuint(a[1 + CH_REGION0 + 1], ==, 36863);
    for (unsigned c = 9; c <= 16; c++) {               /* RC idle */
        g_assert_cmpuint(a[c], ==, 0);
    }
    g_assert_cmpuint(a[17], ==, 36863);                /* BRAKE 0 */
    g_assert_cmpuint(a[18], ==, 0);
    g_assert_cmpuint(a[19], ==, 36863);                /* BRAKE 2 */
    g_assert_cmpuint(a[20] + a[21] + a[22], ==, 0);
    g_assert_cmpuint(a[23 + 2], ==, 36863);            /* tags band 2 */
    g_assert_cmpuint(a[27 + 3], ==, 36863);            /* FIFO band 3 */

    sim_count(&dp, 0, nd, b);
    /*
     * 2340 periods of (stall, stall, word 0, word 1, gap x 3) and the
     * cycles stall, stall, word 0. Word 0: SOF, MVB item, 8 + 8 items;
     * word 1: 8 items and the EOF at item 0 of region 1 (25 = 3 x 8 + 1).
     */
    g_assert_cmpuint(b[0], ==, nd);
    g_assert_cmpuint(b[1 + CH_WORDS], ==, 2 * 2340 + 1);
    g_assert_cmpuint(b[1 + CH_STALL], ==, 2 * 2341);
    g_assert_cmpuint(b[1 + CH_SOF], ==, 2341);
    g_assert_cmpuint(b[1 + CH_MVB], ==, 2341);
    g_assert_cmpuint(b[1 + CH_MVB_STALL], ==, 2 * 2341);
    g_assert_cmpuint(b[1 + CH_ITEMS], ==, 25 * 2340 + 16);
    g_assert_cmpuint(b[1 + CH_REGION0], ==, 2 * 2340 + 1);
    g_assert_cmpuint(b[1 + CH_REGION0 + 1], ==, 2 * 2340 + 1);
    for (unsigned c = 9; c <= 16; c++) {               /* DOWN idle */
        g_assert_cmpuint(b[c], ==, 0);
    }
}

/*
 * The window edges against the examples worked out by hand: the default
 * PCIe probe (31 channels, G = 4) has RQ words (slot 1) 5 cycles after
 * the cycle counter, FIFO band 3 (channel 30, slot 6) 29 and tag band 1
 * (channel 24, slot 0) -1; the default DMA probe (17, G = 3) 4 x slot;
 * the PCIe probe of 4 RQ regions (35, G = 5) 6 x slot.
 */
static void check_edges(void)
{
    Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    Layout lp4 = pcie_layout(4), ld2 = dma_layout(2, 2);
    uint64_t lo, hi;

    g_assert_cmpuint(lp.n, ==, 31);
    g_assert_cmpuint(ld.n, ==, 17);
    g_assert_cmpuint(lp4.n, ==, 35);
    g_assert_cmpuint(ld2.n, ==, 33);
    g_assert_cmpint(ch_edge(&lp, 0), ==, 0);
    g_assert_cmpint(ch_edge(&lp, 1), ==, 5);
    g_assert_cmpint(ch_edge(&lp, 6), ==, 30);
    g_assert_cmpint(ch_edge(&lp, 22), ==, 30);         /* BRAKE 5 */
    g_assert_cmpint(ch_edge(&lp, 23), ==, 34);         /* tag band 0 */
    g_assert_cmpint(ch_edge(&lp, 24), ==, -1);
    g_assert_cmpint(ch_edge(&lp, 30), ==, 29);
    g_assert_cmpint(ch_edge(&ld, 7), ==, 28);
    g_assert_cmpint(ch_edge(&ld, 16), ==, 0);
    g_assert_cmpint(ch_edge(&lp4, 30), ==, 35);
    g_assert_cmpint(ch_edge(&lp4, 34), ==, 11);
    g_assert_cmpint(ch_edge(&ld2, 32), ==, 0);
    /* the MVB channels (bus channels 3, 4) and the bands count cycle o */
    g_assert_cmpuint(ch_first(&lp, 0), ==, 0);
    g_assert_cmpuint(ch_first(&lp, 1), ==, 1);
    g_assert_cmpuint(ch_first(&ld, 4), ==, 0);
    g_assert_cmpuint(ch_first(&ld, 13), ==, 0);
    g_assert_cmpuint(ch_first(&ld, 14), ==, 1);
    g_assert_cmpuint(ch_first(&lp, 22), ==, 1);
    g_assert_cmpuint(ch_first(&lp, 23), ==, 0);
    ch_span(&lp, 100, DP, 2, 1, &lo, &hi);
    g_assert_cmpuint(lo, ==, 101);
    g_assert_cmpuint(hi, ==, 100 + 2 * DP - 1 + 5);
    ch_span(&lp, 100, DP, 0, 1, &lo, &hi);
    g_assert_cmpuint(hi, ==, lo);
    /* region 0 of RQ (d 35) against RQ words (d 5): 30 more cycles */
    g_assert_cmpuint(ch_extra(&lp, 7, 1), ==, 30);
    g_assert_cmpuint(ch_extra(&lp, 1, 7), ==, 0);
    /* RQ words against the cycles: 5 cycles at the end, none at the start */
    g_assert_cmpuint(ch_extra(&lp, 1, 0), ==, 5);
    g_assert_cmpuint(ch_extra(&lp, 0, 1), ==, 1);
    g_assert_cmpuint(ch_shift(&lp, 24, 23), ==, 35);
}

/*
 * Expected counters (64 entries, default layout) of a card with the
 * pattern, reset at t0, read at t (mid-window): the PCIe probe in entries
 * 0..30, the DMA probe in 31..47, nothing in 48..63.
 */
static void pattern_expect(int64_t t0, int64_t t, uint64_t *exp)
{
    SimProbe pp, dp;
    uint64_t op = first_cycle(t0, PCIE_HZ), od = first_cycle(t0, DMA_HZ);
    uint64_t wp = windows_by(t, op, PCIE_HZ, DP);
    uint64_t wd = windows_by(t, od, DMA_HZ, DP);

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    pattern_probes(&pp, &dp);
    sim_windows(&pp, op, DP, wp, exp);
    sim_windows(&dp, od, DP, wd, exp + 31);
}

/* ------------------------------------------------------------------ */
/* Identity and registers                                               */

static void test_identity(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    g_assert_cmpint(n.dev->devfn, ==, NDK_DEVFN);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_VENDOR_ID), ==,
                    NDK_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_DEVICE_ID), ==,
                    NDK_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(n.dev, PCI_HEADER_TYPE) & 0x7F, ==,
                    PCI_HEADER_TYPE_NORMAL);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);

    /* the IDs of a real card through the vendor-id / device-id properties */
    ndk_open_ids(&n, "q35", 0x18ec, 0xc000,
                 "-device ndk-pcie-telemetry,vendor-id=0x18ec,"
                 "device-id=0xc000");
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, REG_VERSION), ==, VERSION);
    ndk_close(&n);
}

typedef struct RegExpect {
    uint32_t off;
    uint32_t val;
} RegExpect;

/* Every word below 0x100: the listed values, all others 0. */
static void check_register_file(Ndk *n, const RegExpect *exp, size_t nexp)
{
    for (uint32_t off = 0; off < 0x100; off += 4) {
        uint32_t want = 0;

        for (size_t i = 0; i < nexp; i++) {
            if (exp[i].off == off) {
                want = exp[i].val;
            }
        }
        if (rd(n, off) != want) {
            g_test_message("register 0x%02x: 0x%08x, expected 0x%08x",
                           off, rd(n, off), want);
        }
        g_assert_cmphex(rd(n, off), ==, want);
    }
}

/* Only the listed words */
static void check_listed_registers(Ndk *n, const RegExpect *exp, size_t nexp)
{
    for (size_t i = 0; i < nexp; i++) {
        g_assert_cmphex(rd(n, exp[i].off), ==, exp[i].val);
    }
}

/*
 * The values FACTS.md lists for the defaults, before the first drain; the
 * first DEFAULT_CFG_REGS of them never change.
 */
#define DEFAULT_CFG_REGS 13
static const RegExpect default_regs[] = {
    { 0x00, 0x50544C4D }, { 0x04, 0x00020000 }, { 0x08, 0x00020101 },
    { 0x0C, 0x30300040 }, { 0x10, 0x0E02021F }, { 0x14, 0x00020211 },
    { 0x18, 0x00041000 }, { 0x1C, 0x00008000 }, { 0x2C, 0x02020202 },
    { 0x30, 0x00200020 }, { 0x34, 0x00000204 }, { 0x38, 0x04000100 },
    { 0x3C, 0x00200020 },
    /*
     * COMMAND, STATUS, READ_SEL, PCIE_STATUS read 0; endpoint 0's
     * lowest values start at their maximum; endpoints 1..15 read 0
     */
    { 0x80, 0x07FF0000 }, { 0xC0, 0xFFFF0000 },
};

static void test_registers_default(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    check_register_file(&n, default_regs, G_N_ELEMENTS(default_regs));
    g_assert_cmpuint(rdq(&n, CNT(0)), ==, 0);

    /*
     * Idle card (no traffic object: buses idle, link up, all tags and
     * FIFO words free). At 25 us PCIe windows 0 and 1 (4095 + 4096
     * cycles) and DMA window 0 (4095) are in the live copy. Entry 0:
     * PCIe cycles; PCIe channels 1 + 2 (6 + 2) + 6 = 23..26 are the tag
     * bands, 27..30 the FIFO bands: band 3 (more than half free) for
     * both, entries 26 and 30; entry 31: DMA cycles. The bands count
     * from cycle 0 like the cycle counter, but their windows close later:
     * channel 26 in slot 2, 5 x 2 - 1 = 9 cycles after channel 0, and
     * channel 30 in slot 6, 5 x 6 - 1 = 29 cycles after it.
     */
    step_to(&n, n.t0 + 25000);
    wr(&n, REG_READ_SEL, 1);
    exp[0] = 4095 + 4096;
    exp[26] = 4095 + 4096 + 9;
    exp[30] = 4095 + 4096 + 29;
    exp[31] = 4095;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, idle, 25 us", got, exp, DEF_ENTRIES);

    /* the configuration registers do not change with time */
    check_listed_registers(&n, default_regs, DEFAULT_CFG_REGS);
    ndk_close(&n);
}

/*
 * pcie-endpoints=2, dma-ports=2, pcie-rq-mfb-regions=4:
 *   PCIe probe R = max(RQ 4, RC 2) = 4: 1 + 2 (6 + 4) + 6 + 8 = 35 (0x23)
 *   DMA probe P = 2, R = 2: 1 + 2 x 2 x (6 + 2) = 33 (0x21)
 *   channels per endpoint 35 + 33 = 68 (0x44); 2 x 68 = 136 -> ENTRIES 256
 *   CFG_TOPOLOGY = 2 | 2 << 8 | (2 x 2 probes = 4) << 16     = 0x00040202
 *   CFG_LAYOUT   = 256 | 48 << 16 | 68 << 24                  = 0x44300100
 *   CFG_PCIE     = 35 | 2 buses << 8 | 4 regions << 16 | 14 << 24
 *                                                             = 0x0E040223
 *   CFG_DMA      = 33 | (2 x 2 = 4 buses) << 8 | 2 << 16      = 0x00020421
 *   CFG_REGIONS  = RQ 4 | RC 2 << 8 | UP 2 << 16 | DOWN 2 << 24 = 0x02020204
 *   the rest as with the defaults; endpoints 0 and 1 have live registers.
 */
static void test_registers_2ep(void)
{
    static const RegExpect exp_regs[] = {
        { 0x00, 0x50544C4D }, { 0x04, 0x00020000 }, { 0x08, 0x00040202 },
        { 0x0C, 0x44300100 }, { 0x10, 0x0E040223 }, { 0x14, 0x00020421 },
        { 0x18, 0x00041000 }, { 0x1C, 0x00008000 }, { 0x2C, 0x02020204 },
        { 0x30, 0x00200020 }, { 0x34, 0x00000204 }, { 0x38, 0x04000100 },
        { 0x3C, 0x00200020 },
        { 0x80, 0x07FF0000 }, { 0x84, 0x07FF0000 },
        { 0xC0, 0xFFFF0000 }, { 0xC4, 0xFFFF0000 },
    };
    enum { ENTRIES = 256, CPE = 68, PCIE_CH = 35 };
    const Layout l35 = pcie_layout(4);
    uint64_t got[ENTRIES], exp[ENTRIES] = { 0 };
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=2,dma-ports=2,pcie-rq-mfb-regions=4");
    check_register_file(&n, exp_regs, G_N_ELEMENTS(exp_regs));

    /*
     * Idle at 27 us: PCIe windows 0 and 1, DMA window 0 of both
     * endpoints (136 deltas x 3 MI cycles = 4.1 us after 20.48 us).
     * Endpoint e's PCIe probe at 68 e: cycles at +0, tag bands at
     * 1 + 2 (6 + 4) + 6 = 27..30 (band 3: +30), FIFO bands 31..34 (+34);
     * its DMA probe at 68 e + 35: cycles. The PCIe probe of 35 channels
     * reads out in G = 5 groups: a band in slot s closes 6 s - 1 cycles
     * after the cycle counter, channel 30 (slot 6) 35 cycles, channel 34
     * (slot 2) 11 cycles.
     */
    step_to(&n, n.t0 + 27000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(l35.n, ==, PCIE_CH);
    g_assert_cmpint(ch_edge(&l35, 30), ==, 35);
    g_assert_cmpint(ch_edge(&l35, 34), ==, 11);
    for (unsigned e = 0; e < 2; e++) {
        exp[CPE * e] = 4095 + 4096;
        exp[CPE * e + 30] = 4095 + 4096 + 35;
        exp[CPE * e + 34] = 4095 + 4096 + 11;
        exp[CPE * e + PCIE_CH] = 4095;
    }
    read_counters(&n, ENTRIES, got);
    check_counters("live, 2 endpoints, 27 us", got, exp, ENTRIES);
    /* the window aliases every ENTRIES x 8 = 0x800 bytes */
    g_assert_cmpuint(rd(&n, CNT(0) + 0x800), ==, 4095 + 4096);
    g_assert_cmpuint(rd(&n, CNT(CPE) + 0x800 * 3), ==, 4095 + 4096);

    /* SNAPSHOT: BUSY from the 2nd MI cycle for 1 + 2 x 256 = 513 cycles */
    tw = mi_edge(n.t0 + 28000);
    step_to(&n, tw);
    wr(&n, REG_COMMAND, CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 512) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 513) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, ENTRIES, got);
    check_counters("snapshot, 2 endpoints", got, exp, ENTRIES);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* SNAPSHOT, BUSY, READ_SEL, CLEAR                                      */

static void test_snapshot_clear(void)
{
    uint64_t got[DEF_ENTRIES], zero[DEF_ENTRIES] = { 0 };
    uint64_t origin, tick3;
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    origin = first_cycle(n.t0, PCIE_HZ);

    /* READ_SEL keeps bit 0 only */
    step_to(&n, n.t0 + 3000);
    wr(&n, REG_READ_SEL, 0xFFFFFFFF);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 1);
    wr(&n, REG_READ_SEL, 0xFFFFFFFE);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 0);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 1);

    /*
     * At 15 us window 0 (4095 cycles) is in the live copy and the
     * accumulator is idle. SNAPSHOT written in MI cycle m: BUSY in
     * cycles m + 2 .. m + 2 + 128.
     */
    tw = mi_edge(n.t0 + 15000);
    step_to(&n, tw);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    wr(&n, REG_COMMAND, CMD_SNAPSHOT);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    /* COMMAND reads 0 */
    g_assert_cmphex(rd(&n, REG_COMMAND), ==, 0);
    step_to(&n, tw + (2 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    wr(&n, REG_READ_SEL, 0);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    /* tag band 3, slot 2: its window closes 5 x 2 - 1 cycles later */
    g_assert_cmpuint(cnt(&n, 26), ==, 4095 + 9);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);

    /*
     * 25 us: live has PCIe windows 0, 1 and DMA window 0; the snapshot
     * still the state of 15 us
     */
    step_to(&n, n.t0 + 25000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 4095);

    /* CLEAR: 1 + 2 x 64 = 129 cycles of BUSY, both copies zero */
    tw = mi_edge(n.t0 + 26000);
    step_to(&n, tw);
    wr(&n, REG_COMMAND, CMD_CLEAR);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live after CLEAR", got, zero, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("snapshot after CLEAR", got, zero, DEF_ENTRIES);

    /*
     * CLEAR leaves the probes alone: window 2 (4096 cycles) arrives whole
     * at 30.72 us; for channel 30 it is the cycles [E_2 + 29, E_3 + 29),
     * 4096 as well
     */
    step_to(&n, n.t0 + 35000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);

    /* CLEAR | SNAPSHOT: 2 + 4 x 64 = 258 cycles; a snapshot of zeros */
    tw = mi_edge(n.t0 + 36000);
    step_to(&n, tw);
    wr(&n, REG_COMMAND, CMD_CLEAR | CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 257) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (2 + 258) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live after CLEAR|SNAPSHOT", got, zero, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("snapshot after CLEAR|SNAPSHOT", got, zero, DEF_ENTRIES);

    /*
     * A snapshot holds exactly the deltas applied before it starts: taken
     * 300 ns after the drain of PCIe window 3, it has the first channel
     * (cycles, the first delta) but not the last one (FIFO band 3, the
     * 31st delta, due about 31 x 30 ns after the drain); the live copy
     * gets it after BUSY.
     */
    tick3 = drain_cycle(origin, DP, 3);
    step_to(&n, cycle_ns(tick3, PCIE_HZ) + 300);
    wr(&n, REG_COMMAND, CMD_SNAPSHOT);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS) & STATUS_BUSY, ==, STATUS_BUSY);
    wait_busy(&n, 129 + 4);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 0);
    step_to(&n, n.t0 + 45000);
    g_assert_cmpuint(cnt(&n, 30), ==, 0);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 4096);     /* DMA window 1, whole */

    /* nothing was lost; CLEAR_FLAGS starts no BUSY */
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    wr(&n, REG_COMMAND, CMD_CLEAR_FLAGS);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * A command that arrives while the accumulator adds a delta waits for it.
 * PCIe window 0 ends at cycle E = origin + 4095; the drain tick samples
 * E + 1, slot 0 is captured at E + 2 and its first delta (cycles) written
 * into the FIFO at E + 4. The read side sees it from the fourth MI edge
 * after the first one past PCIe edge E + 5, the output registers hand it
 * on, and the idle accumulator pops it 3 edges later: in MI cycle
 * m = floor((E + 5) / 4) + 8 (1033 when the card starts at 0). A SNAPSHOT
 * written in m is seen from m + 2 (BUSY reads 1 from then); the delta's
 * sum is written in m + 2 and the sweep starts in m + 3, so BUSY falls at
 * m + 3 + 1 + 2 x 64.
 */
static void test_snapshot_behind_delta(void)
{
    uint64_t origin, m;
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    origin = first_cycle(n.t0, PCIE_HZ);
    m = (origin + 4095 + 5) * MI_HZ / PCIE_HZ + 8;
    tw = m * MI_NS;
    step_to(&n, tw);
    wr(&n, REG_COMMAND, CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (3 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    step_to(&n, tw + (3 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    /* the snapshot has that delta and none of the later ones */
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmpuint(cnt(&n, 1), ==, 0);
    /*
     * after BUSY the waiting deltas arrive: RQ moved a word every cycle;
     * its words (slot 1) count cycles [o + 1, o + 4095 + 5), its region 0
     * (slot 7) [o + 1, o + 4095 + 35) but for words 1..3 of the frame
     * whose SOF in cycle o was not seen
     */
    step_to(&n, n.t0 + 15000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 1), ==, 4095 - 1 + 5);
    g_assert_cmpuint(cnt(&n, 1 + CH_REGION0), ==, 4095 - 1 + 35 - 3);

    /* CLEAR also resets the lowest values */
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    wr(&n, REG_COMMAND, CMD_CLEAR);
    step(&n, 2 * MI_NS);
    wait_busy(&n, 129);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 0x07FF0000 | 100);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 0xFFFF0000 | 1024);
    g_assert_cmpuint(cnt(&n, 0), ==, 0);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Counts of the pattern source                                         */

static void test_pattern_counts(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    uint64_t origin;
    int64_t t;
    Ndk n;

    check_simulator();
    check_edges();

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    origin = first_cycle(n.t0, PCIE_HZ);

    /* live registers before the first drain */
    step_to(&n, n.t0 + 10000);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 0x07FF0000);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 0xFFFF0000);

    /* after it: 100 free tags now and at the lowest, 1024 FIFO words */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)) & (1 << 9), ==, 1 << 9);

    /*
     * CLEAR_LOWEST raises the lowest values two MI cycles after the write
     * (the command register, then the lowest values), no BUSY; the next
     * drain lowers them again
     */
    step_to(&n, n.t0 + 12000);
    wr(&n, REG_COMMAND, CMD_CLEAR_LOWEST);
    step(&n, MI_NS);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    step(&n, MI_NS);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 0x07FF0000 | 100);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 0xFFFF0000 | 1024);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, word_ns(origin, 1));
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /*
     * Half a PCIe window after the drain of window 8: PCIe windows 0..8
     * (9 x 4096 - 1 cycles), DMA windows 0..3 (4 x 4096 - 1 cycles).
     */
    t = n.t0 + 9 * 10240 + 5120;
    pattern_expect(n.t0, t, exp);
    g_assert_cmpuint(exp[0], ==, 9 * 4096 - 1);
    g_assert_cmpuint(exp[31], ==, 4 * 4096 - 1);
    /*
     * RQ moves a word in every cycle: its words channel (slot 1) counts
     * cycles [1, 36863 + 5), its items (slot 6) [1, 36863 + 30), 16 items
     * a word but for words 1..3 of the frame whose SOF in cycle 0 was not
     * seen; FIFO band 3 (slot 6, a band) [0, 36863 + 29)
     */
    g_assert_cmpuint(exp[1 + CH_WORDS], ==, 36863 - 1 + 5);
    g_assert_cmpuint(exp[1 + CH_ITEMS], ==, 16 * (36863 - 1 + 30 - 3));
    g_assert_cmpuint(exp[30], ==, 36863 + 29);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("pattern, snapshot", got, exp, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("pattern, live", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * sim_windows over a long span: the pattern repeats every lcm of its
 * buses' periods (4 on the PCIe side, 7 on the DMA side) from absolute
 * cycle 0, and every frame is closed where a period starts, so the whole
 * periods that lie inside every channel's span are counted once and
 * multiplied; the pieces at either end cycle by cycle, each channel in
 * its own span.
 */
static void sim_windows_long(const SimProbe *p, uint64_t period, uint64_t o,
                             uint64_t dp, uint64_t k, uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH], all_lo[SIM_MAX_CH] = { 0 };
    uint64_t all_hi[SIM_MAX_CH] = { 0 }, one[SIM_MAX_CH] = { 0 };
    uint64_t end = sim_spans(p, o, dp, k, lo, hi), head, whole, lo_max = o;
    uint64_t hi_min = end;
    unsigned n = sim_layout(p).n;
    bool open[2] = { false, false };

    for (unsigned c = 0; c < n; c++) {
        lo_max = MAX(lo_max, lo[c]);
        hi_min = MIN(hi_min, hi[c]);
    }
    head = MIN(hi_min, (lo_max + period - 1) / period * period);
    whole = (hi_min - head) / period;
    sim_count_spans(p, o, head, o, lo, hi, open, acc);
    for (unsigned c = 0; c < n; c++) {
        all_lo[c] = head;
        all_hi[c] = head + period;
    }
    open[0] = open[1] = false;
    sim_count_spans(p, head, head + period, o, all_lo, all_hi, open, one);
    for (unsigned c = 0; c < n; c++) {
        acc[c] += one[c] * whole;
    }
    open[0] = open[1] = false;
    sim_count_spans(p, head + whole * period, end, o, lo, hi, open, acc);
}

/*
 * The card left unread for an hour (and for ten seconds) of virtual time:
 * the first reading after it equals the pattern's closed form.
 */
static void test_pattern_hour_unread(void)
{
    static const int64_t unread[] = { 10000000000LL, 3600000000000LL };
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];

    for (size_t i = 0; i < G_N_ELEMENTS(unread); i++) {
        /* half a PCIe window after a drain */
        int64_t t;
        uint64_t op, od, wp, wd;
        SimProbe pp, dp;
        Ndk n;

        ndk_open(&n, "q35", PATTERN_ARGS
                 "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
        t = n.t0 + unread[i] / 10240 * 10240 + 5120;
        op = first_cycle(n.t0, PCIE_HZ);
        od = first_cycle(n.t0, DMA_HZ);
        wp = windows_by(t, op, PCIE_HZ, DP);
        wd = windows_by(t, od, DMA_HZ, DP);
        memset(exp, 0, sizeof(exp));
        pattern_probes(&pp, &dp);
        sim_windows_long(&pp, 4, op, DP, wp, exp);
        sim_windows_long(&dp, 7, od, DP, wd, exp + 31);
        g_assert_cmpuint(exp[0], >, unread[i] / 3);

        step_to(&n, t);
        wr(&n, REG_READ_SEL, 1);
        read_counters(&n, DEF_ENTRIES, got);
        check_counters("pattern, live, after a long unread stretch", got,
                       exp, DEF_ENTRIES);
        g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
        g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
        snapshot(&n, DEF_ENTRIES);
        wr(&n, REG_READ_SEL, 0);
        read_counters(&n, DEF_ENTRIES, got);
        g_assert_cmpuint(got[0], >=, exp[0]);
        ndk_close(&n);
    }
}

/*
 * The same traffic on a card hot-plugged (conventional PCI, ACPI hotplug)
 * at 991 ns: the probes start at PCIe cycle ceil(991 x 0.4) = 397 = 4 x 99
 * + 1, word 1 of an RQ frame, and at DMA cycle ceil(991 x 0.2) = 199 =
 * 7 x 28 + 3, word 1 of an UP frame. Words of a frame whose SOF came
 * before the reset move without an open frame: they count as words but
 * add no items and use no region. The origin itself counts no bus event.
 */
static void test_pattern_counts_hotplug(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    uint64_t size = 0;
    int64_t t;
    Ndk n;

    memset(&n, 0, sizeof(n));
    n.qts = qtest_init("-machine pc -nodefaults " PATTERN_ARGS);
    n.now = qtest_clock_step(n.qts, 991);
    g_assert_cmpint(n.now, ==, 991);
    qtest_qmp_device_add(n.qts, "ndk-pcie-telemetry", "ndk0",
                         "{ 'addr': '04.0', 'traffic': 'tp0' }");
    n.t0 = n.now;
    n.bus = qpci_new_pc(n.qts, NULL);
    n.dev = find_device(n.bus, NDK_VENDOR_ID, NDK_DEVICE_ID);
    qpci_device_enable(n.dev);
    n.bar = qpci_iomap(n.dev, 0, &size);
    g_assert_cmphex(size, ==, NDK_BAR_SIZE);
    g_assert_cmpuint(first_cycle(n.t0, PCIE_HZ) % 4, ==, 1);
    g_assert_cmpuint(first_cycle(n.t0, DMA_HZ) % 7, ==, 3);

    t = n.t0 + 9 * 10240 + 5120;
    pattern_expect(n.t0, t, exp);
    /*
     * The partial frames. RQ items (slot 6) count the cycles [o + 1,
     * o + 36863 + 30), a word in each, of which words 2 and 3 of the cut
     * frame (o + 1, o + 2) add no items. UP items (DMA slot 6) count
     * [o + 1, o + 16383 + 24): o + 1 = 200 is the first idle cycle of
     * its period, 3 idle cycles to the next period, then 16403 = 7 x 2343
     * + 2 cycles: 2343 whole frames of 25 items and the 2 stalled cycles
     * of the next one.
     */
    g_assert_cmpuint(exp[1 + CH_ITEMS], ==, 16 * (36863 - 1 + 30 - 2));
    g_assert_cmpuint(exp[31 + 1 + CH_ITEMS], ==, 25 * 2343);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("hot-plugged, snapshot", got, exp, DEF_ENTRIES);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* PCIE_STATUS follows the function's PCIe capability                   */

static uint32_t status_from_config(uint16_t devctl, uint16_t devctl2,
                                   uint16_t lnkctl)
{
    return ((devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5) |
           ((devctl & PCI_EXP_DEVCTL_READRQ) >> 12) << 3 |
           !!(devctl & PCI_EXP_DEVCTL_EXT_TAG) << 6 |
           !!(devctl2 & EXP_DEVCTL2_10BIT_TAG) << 7 |
           !!(lnkctl & PCI_EXP_LNKCTL_RCB) << 8 |
           1 << 9;                                  /* link up */
}

static void set_pcie_settings(Ndk *n, uint8_t exp, unsigned mps,
                              unsigned mrrs, bool ext_tag, bool tag10,
                              bool rcb)
{
    uint16_t devctl = qpci_config_readw(n->dev, exp + PCI_EXP_DEVCTL);
    uint16_t devctl2 = qpci_config_readw(n->dev, exp + PCI_EXP_DEVCTL2);
    uint16_t lnkctl = qpci_config_readw(n->dev, exp + PCI_EXP_LNKCTL);

    devctl &= ~(PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ |
                PCI_EXP_DEVCTL_EXT_TAG);
    devctl |= mps << 5 | mrrs << 12 | (ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0);
    devctl2 = (devctl2 & ~EXP_DEVCTL2_10BIT_TAG) |
              (tag10 ? EXP_DEVCTL2_10BIT_TAG : 0);
    lnkctl = (lnkctl & ~PCI_EXP_LNKCTL_RCB) | (rcb ? PCI_EXP_LNKCTL_RCB : 0);
    qpci_config_writew(n->dev, exp + PCI_EXP_DEVCTL, devctl);
    qpci_config_writew(n->dev, exp + PCI_EXP_DEVCTL2, devctl2);
    qpci_config_writew(n->dev, exp + PCI_EXP_LNKCTL, lnkctl);
    /* the fields the host negotiates are writable */
    g_assert_cmphex(qpci_config_readw(n->dev, exp + PCI_EXP_DEVCTL), ==,
                    devctl);
    g_assert_cmphex(qpci_config_readw(n->dev, exp + PCI_EXP_DEVCTL2), ==,
                    devctl2);
    g_assert_cmphex(qpci_config_readw(n->dev, exp + PCI_EXP_LNKCTL), ==,
                    lnkctl);
}

static void test_pcie_status(void)
{
    /* MPS 256 B, MRRS 1024 B, extended and 10-bit tags, RCB 128 B */
    const uint32_t st1 = 1 | 3 << 3 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9;
    /* MPS 512 B, MRRS 4096 B, 8-bit tags only, RCB 64 B */
    const uint32_t st2 = 2 | 5 << 3 | 1 << 9;
    uint16_t devctl;
    uint32_t st0;
    uint64_t origin;
    uint8_t exp;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    origin = first_cycle(n.t0, PCIE_HZ);
    exp = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);

    /*
     * Device Capabilities: 512-byte payloads (the default
     * max-payload-size), extended tags; 10-bit tag requester
     */
    g_assert_cmphex(qpci_config_readl(n.dev, exp + PCI_EXP_DEVCAP) &
                    (PCI_EXP_DEVCAP_PAYLOAD | PCI_EXP_DEVCAP_EXT_TAG), ==,
                    2 | PCI_EXP_DEVCAP_EXT_TAG);
    g_assert_cmphex(qpci_config_readl(n.dev, exp + PCI_EXP_DEVCAP2) &
                    EXP_DEVCAP2_10BIT_TAG, ==,
                    EXP_DEVCAP2_10BIT_TAG);

    /* power-on Device Control: MPS 128 B, MRRS 512 B (PCIe defaults) */
    devctl = qpci_config_readw(n.dev, exp + PCI_EXP_DEVCTL);
    g_assert_cmphex(devctl & PCI_EXP_DEVCTL_PAYLOAD, ==, 0);
    g_assert_cmphex((devctl & PCI_EXP_DEVCTL_READRQ) >> 12, ==, 2);
    st0 = status_from_config(devctl,
                             qpci_config_readw(n.dev, exp + PCI_EXP_DEVCTL2),
                             qpci_config_readw(n.dev, exp + PCI_EXP_LNKCTL));

    step_to(&n, n.t0 + 10000);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, 0);
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);
    /* idle source: all 256 tags and 1024 FIFO words free */
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 256 | 256 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /* new settings show after the next drain (window 1), not before */
    step_to(&n, n.t0 + 15000);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);
    set_pcie_settings(&n, exp, 1, 3, true, true, true);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);
    step_to(&n, cycle_ns(drain_cycle(origin, DP, 1), PCIE_HZ) - 100);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);
    step_to(&n, word_ns(origin, 1));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st1);

    /*
     * The same when nothing touched the BAR since the drain before the
     * write: the drain of window 2 (30.72 us) sampled the settings of
     * st1, so at 35 us the register still shows them.
     */
    step_to(&n, n.t0 + 35000);
    set_pcie_settings(&n, exp, 2, 5, false, false, false);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st1);
    step_to(&n, word_ns(origin, 3));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st2);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Configuration space through ECAM                                     */

static uint64_t ecam(int devfn, uint32_t off)
{
    return ECAM_BASE + ((uint64_t)devfn << 12 | off);
}

/* Enable a 256 MiB ECAM window at 0xb0000000 in the q35 MCH. */
static void ecam_enable(Ndk *n)
{
    QPCIDevice *mch = qpci_device_find(n->bus, 0);

    g_assert(mch);
    g_assert_cmphex(qpci_config_readw(mch, PCI_VENDOR_ID), ==, 0x8086);
    qpci_config_writel(mch, Q35_PCIEXBAR + 4, 0);
    qpci_config_writel(mch, Q35_PCIEXBAR, ECAM_BASE | 1);
    g_free(mch);
}

static void test_ecam(void)
{
    uint32_t hdr, off;
    int devfn;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    devfn = n.dev->devfn;
    ecam_enable(&n);

    g_assert_cmphex(qtest_readl(n.qts, ecam(devfn, PCI_VENDOR_ID)), ==,
                    NDK_DEVICE_ID << 16 | NDK_VENDOR_ID);
    /* no function at 00:05.0 */
    g_assert_cmphex(qtest_readl(n.qts, ecam(QPCI_DEVFN(5, 0), 0)), ==,
                    0xFFFFFFFF);
    /* the first 256 bytes agree with the legacy configuration access */
    for (off = 0; off < 0x100; off += 4) {
        g_assert_cmphex(qtest_readl(n.qts, ecam(devfn, off)), ==,
                        qpci_config_readl(n.dev, off));
    }

    /* the PCIe capability at 0x80: ID 0x10, version 2, an endpoint */
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_STATUS) &
                    PCI_STATUS_CAP_LIST, ==, PCI_STATUS_CAP_LIST);
    hdr = qtest_readl(n.qts, ecam(devfn, 0x80));
    g_assert_cmphex(hdr & 0xFF, ==, PCI_CAP_ID_EXP);
    g_assert_cmphex((hdr >> 16) & PCI_EXP_FLAGS_VERS, ==, 2);
    g_assert_true(((hdr >> 20) & 0xF) == PCI_EXP_TYPE_ENDPOINT ||
                  ((hdr >> 20) & 0xF) == PCI_EXP_TYPE_RC_END);

    /* extended space: empty, or a chain of sane headers */
    off = 0x100;
    for (int i = 0; i < 64 && off; i++) {
        hdr = qtest_readl(n.qts, ecam(devfn, off));
        if (off == 0x100 && hdr == 0) {
            off = 0;
            break;
        }
        g_assert_cmphex(hdr, !=, 0xFFFFFFFF);
        g_assert_cmphex(hdr & 0xFFFF, !=, 0);
        off = hdr >> 20;
        g_assert_true(off == 0 || (off >= 0x100 && !(off & 3)));
    }
    g_assert_cmphex(off, ==, 0);
    /* the last word of the space, and writes into the extended space */
    qtest_readl(n.qts, ecam(devfn, 0xFFC));
    hdr = qtest_readl(n.qts, ecam(devfn, 0x100));
    qtest_writel(n.qts, ecam(devfn, 0x100), 0xFFFFFFFF);
    qtest_writel(n.qts, ecam(devfn, 0xFFC), 0xFFFFFFFF);
    g_assert_cmphex(qtest_readl(n.qts, ecam(devfn, 0x100)), ==, hdr);

    /* the function still works */
    g_assert_cmphex(qtest_readl(n.qts, ecam(devfn, 0)), ==,
                    NDK_DEVICE_ID << 16 | NDK_VENDOR_ID);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Access sizes, aliasing, writes that must change nothing              */

static void test_access(void)
{
    uint64_t before[DEF_ENTRIES], after[DEF_ENTRIES], exp[DEF_ENTRIES];
    Ndk n;

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    /* PCIe window 0 in the live copy, no DMA window yet */
    step_to(&n, n.t0 + 15000);
    pattern_expect(n.t0, n.now, exp);
    g_assert_cmpuint(exp[0], ==, 4095);
    wr(&n, REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, before);
    check_counters("live, 15 us", before, exp, DEF_ENTRIES);

    /* 64-bit loads: low word at +0, high word at +4 */
    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        g_assert_cmphex(rdq(&n, CNT(e)), ==, before[e]);
        g_assert_cmphex(qpci_io_readq(n.dev, n.bar, CNT(e)), ==, before[e]);
    }
    g_assert_cmphex(rdq(&n, REG_MAGIC), ==, (uint64_t)VERSION << 32 | MAGIC);

    /* below 0x8000 only address bits 7..2 decode */
    g_assert_cmphex(rd(&n, 0x100), ==, MAGIC);
    g_assert_cmphex(rd(&n, 0x104), ==, VERSION);
    g_assert_cmphex(rd(&n, 0x7F0C), ==, 0x30300040);
    g_assert_cmphex(rd(&n, 0x4080), ==, 100 | 100 << 16);   /* PCIE_TAGS */
    /*
     * the counter window repeats every 64 x 8 bytes; entries 48..63 are
     * past the last endpoint
     */
    g_assert_cmpuint(cnt(&n, 64), ==, before[0]);
    g_assert_cmpuint(rd(&n, 0xFE00), ==, (uint32_t)before[0]);
    g_assert_cmpuint(rdq(&n, CNT(64 + 6)), ==, before[6]);
    g_assert_cmpuint(rd(&n, 0xFFFC), ==, 0);
    for (unsigned e = 48; e < 64; e++) {
        g_assert_cmpuint(before[e], ==, 0);
    }

    /* 1- and 2-byte reads pick byte lanes; unaligned reads too */
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, 0), ==, 0x4D);
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, 1), ==, 0x4C);
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, 2), ==, 0x54);
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, 3), ==, 0x50);
    g_assert_cmphex(qpci_io_readw(n.dev, n.bar, 0), ==, 0x4C4D);
    g_assert_cmphex(qpci_io_readw(n.dev, n.bar, 2), ==, 0x5054);
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, CNT(0)), ==,
                    before[0] & 0xFF);
    g_assert_cmphex(qtest_readl(n.qts, n.bar.addr + 1), ==, 0x0050544C);
    g_assert_cmphex(qtest_readl(n.qts, n.bar.addr + 2), ==, 0x00005054);
    g_assert_cmphex(qtest_readq(n.qts, n.bar.addr + 4), ==,
                    0x00020101ull << 32 | VERSION);

    /* writes to read-only registers change nothing */
    wr(&n, REG_MAGIC, 0x12345678);
    wr(&n, REG_CFG_LAYOUT, 0);
    wr(&n, REG_CNT_BASE, 0);
    wr(&n, REG_STATUS, 0xFFFFFFFF);
    wr(&n, REG_PCIE_STATUS(0), 0xFFFFFFFF);
    wr(&n, REG_PCIE_TAGS(0), 0);
    wr(&n, REG_PCIE_STFIFO(0), 0);
    qpci_io_writeb(n.dev, n.bar, REG_VERSION + 1, 0xFF);
    qpci_io_writew(n.dev, n.bar, REG_CFG_DRAIN + 2, 0xFFFF);
    qtest_writeq(n.qts, n.bar.addr + REG_CFG_TOPOLOGY, ~0ull);
    /* the counter window is read-only, at any size and alignment */
    wr(&n, CNT(0), 0xFFFFFFFF);
    wr(&n, CNT(0) + 4, 0xFFFFFFFF);
    qtest_writeq(n.qts, n.bar.addr + CNT(6), ~0ull);
    qpci_io_writeb(n.dev, n.bar, CNT(1), 0x55);
    qpci_io_writew(n.dev, n.bar, CNT(2) + 2, 0x5555);
    qtest_writel(n.qts, n.bar.addr + CNT(3) + 1, 0xAAAAAAAA);
    qtest_writeq(n.qts, n.bar.addr + CNT(63) + 4, ~0ull);
    /* undefined: writes past the last register alias harmless ones */
    wr(&n, 0x4000, 0xFFFFFFFF);                 /* MAGIC */
    qpci_io_writeb(n.dev, n.bar, 0x7FFF, 0xFF);  /* PCIE_STFIFO(15) */
    /* a byte in lane 0 of READ_SEL sets it; a 16-bit zero clears it */
    qpci_io_writeb(n.dev, n.bar, REG_READ_SEL, 0x01);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 1);
    qpci_io_writew(n.dev, n.bar, REG_READ_SEL, 0);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 0);
    qpci_io_writeb(n.dev, n.bar, REG_READ_SEL, 0x01);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);

    check_listed_registers(&n, default_regs, DEFAULT_CFG_REGS);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    read_counters(&n, DEF_ENTRIES, after);
    check_counters("after writes", after, before, DEF_ENTRIES);

    /* a byte write of SNAPSHOT to COMMAND works */
    qpci_io_writeb(n.dev, n.bar, REG_COMMAND, CMD_SNAPSHOT);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_BUSY);
    wait_busy(&n, 129);

    /* and the card keeps counting: window 1 adds 4096 cycles */
    step_to(&n, n.t0 + 25000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4096);
    wr(&n, REG_READ_SEL, 0);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    ndk_close(&n);
}

/*
 * Wide counters through 64-bit reads. At pcie-clk-freq=4 GHz and
 * DRAIN_PERIOD 32768 RQ moves 16 items per cycle; the probe starts at
 * cycle 4 t0 (a frame boundary, period 4). Half a window after the drain
 * of window W - 1 the RQ items counter (slot 6 of the 31 PCIe channels:
 * 30 cycles after the cycle counter's edge, from the origin's next cycle,
 * where words 1..3 of the frame whose SOF in the origin was not seen add
 * no items) is 16 (32768 W - 1 - 1 + 30 - 3).
 */
static void check_wide_counter(const char *props, unsigned width, uint64_t w)
{
    const uint64_t hz = 4000000000ull, dp = 32768;
    uint64_t items, origin, v;
    Ndk n;
    g_autofree char *args = g_strdup_printf(
        "-object telemetry-traffic-pattern,id=tp0,rq-frame-bytes=256 "
        "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0,"
        "pcie-clk-freq=4000000000,drain-period=32768,%s", props);

    ndk_open(&n, "q35", args);
    origin = first_cycle(n.t0, hz);
    g_assert_cmpuint(origin % 4, ==, 0);
    step_to(&n, cycle_ns(origin + w * dp + dp / 2, hz));
    g_assert_cmpuint(windows_by(n.now, origin, hz, dp), ==, w);
    items = 16 * (w * dp - 1 - 1 + 30 - 3);
    if (width < 64) {
        items &= (1ull << width) - 1;
    }
    snapshot(&n, DEF_ENTRIES);
    v = rdq(&n, CNT(6));
    g_assert_cmphex(v, ==, items);
    g_assert_cmphex(rd(&n, CNT(6)), ==, (uint32_t)items);
    g_assert_cmphex(rd(&n, CNT(6) + 4), ==, items >> 32);
    g_assert_cmphex(rd(&n, CNT(6) + 4), !=, 0);
    g_assert_cmpuint(rdq(&n, CNT(0)), ==, w * dp - 1);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmphex(rdq(&n, CNT(6)), ==, items);
    ndk_close(&n);
}

static void test_counter_48(void)
{
    /* W = 12207: 16 x (12207 x 32768 + 25) = 6399984016 > 2^32 */
    check_wide_counter("cnt-width=48", 48, 12207);
}

static void test_counter_33(void)
{
    /*
     * W = 24584 = 16384 + 8200: 16 x 32768 W = W x 2^19 wraps modulo
     * 2^33 to 8200 x 2^19, plus 16 x 25: 4299162000, high word 1
     */
    check_wide_counter("cnt-width=33", 33, 24584);
}

/* ------------------------------------------------------------------ */
/* Migration with traffic                                               */

#define MIG_ARGS PATTERN_ARGS "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0"

/* Up to T1: READ_SEL = 1, a SNAPSHOT, another one running at T1. */
static void mig_phase1(Ndk *n, int64_t t1)
{
    step_to(n, n->t0 + 3000);
    wr(n, REG_READ_SEL, 1);
    step_to(n, n->t0 + 15000);
    snapshot(n, DEF_ENTRIES);
    /* just after the drain of PCIe window 2, deltas on their way */
    step_to(n, t1 - 200);
    wr(n, REG_COMMAND, CMD_SNAPSHOT);
    step_to(n, t1);
    g_assert_cmphex(rd(n, REG_STATUS), ==, STATUS_BUSY);
}

typedef struct MigResult {
    uint32_t status, read_sel, tags, stfifo, pcie_status;
    uint64_t snap1[DEF_ENTRIES];    /* snapshot taken before T1 */
    uint64_t live[DEF_ENTRIES];
    uint64_t snap2[DEF_ENTRIES];
} MigResult;

static void mig_phase2(Ndk *n, int64_t t2, MigResult *r)
{
    step_to(n, t2);
    r->status = rd(n, REG_STATUS);
    r->read_sel = rd(n, REG_READ_SEL);
    r->tags = rd(n, REG_PCIE_TAGS(0));
    r->stfifo = rd(n, REG_PCIE_STFIFO(0));
    r->pcie_status = rd(n, REG_PCIE_STATUS(0));
    read_counters(n, DEF_ENTRIES, r->live);
    wr(n, REG_READ_SEL, 0);
    read_counters(n, DEF_ENTRIES, r->snap1);
    snapshot(n, DEF_ENTRIES);
    read_counters(n, DEF_ENTRIES, r->snap2);
}

static void wait_migration(QTestState *qts)
{
    for (int i = 0; i < 10000; i++) {
        QDict *rsp = qtest_qmp_assert_success_ref(qts,
                                                  "{ 'execute': "
                                                  "'query-migrate' }");
        const char *st = qdict_haskey(rsp, "status") ?
                         qdict_get_str(rsp, "status") : "none";
        bool done = !strcmp(st, "completed");

        g_assert_cmpstr(st, !=, "failed");
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_usleep(1000);
    }
    g_assert_not_reached();
}

/* Stop A, migrate it into the file at uri and quit it. */
static void migrate_out(Ndk *a, const char *uri)
{
    qtest_qmp_assert_success(a->qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(a->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(a->qts);
    ndk_close(a);
}

/*
 * Start B with the same command line as A, load the file at uri, continue
 * it at t1 and find the card (its BAR and enable came with the state). The
 * qtest accelerator's virtual clock is not part of the migration stream:
 * bring B's clock to t1 (a no-op if it arrived with the state).
 */
static void migrate_in(Ndk *b, const char *machine, const char *args,
                       const char *uri, int64_t t0, int64_t t1)
{
    uint32_t bar0;

    memset(b, 0, sizeof(*b));
    b->qts = qtest_initf("-machine %s -nodefaults %s -incoming defer",
                         machine, args);
    qtest_qmp_assert_success(b->qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(b->qts);
    qtest_qmp_assert_success(b->qts, "{ 'execute': 'cont' }");
    b->bus = qpci_new_pc(b->qts, NULL);
    b->dev = find_device(b->bus, NDK_VENDOR_ID, NDK_DEVICE_ID);
    bar0 = qpci_config_readl(b->dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(qpci_config_readw(b->dev, PCI_COMMAND) &
                    PCI_COMMAND_MEMORY, ==, PCI_COMMAND_MEMORY);
    b->bar.addr = bar0 & PCI_BASE_ADDRESS_MEM_MASK;
    b->bar.is_io = false;
    b->t0 = t0;
    b->now = qtest_clock_set(b->qts, t1);
    g_assert_cmpint(b->now, ==, t1);
}

static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    MigResult *rb = g_new0(MigResult, 1), *rc = g_new0(MigResult, 1);
    uint64_t exp[DEF_ENTRIES];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    /* A: to T1, then migrate into the file */
    ndk_open(&a, "q35", MIG_ARGS);
    t0 = a.t0;
    t1 = t0 + 30000 + 1000;
    t2 = t0 + 24 * 10240 + 5120;
    mig_phase1(&a, t1);
    migrate_out(&a, uri);

    /* B: load it, continue at T1 and run to T2 */
    migrate_in(&b, "q35", MIG_ARGS, uri, t0, t1);
    g_assert_cmphex(rd(&b, REG_STATUS), ==, STATUS_BUSY);
    mig_phase2(&b, t2, rb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    /* C: the same accesses without the migration */
    ndk_open(&c, "q35", MIG_ARGS);
    g_assert_cmpint(c.t0, ==, t0);
    mig_phase1(&c, t1);
    mig_phase2(&c, t2, rc);
    ndk_close(&c);

    g_assert_cmphex(rb->status, ==, rc->status);
    g_assert_cmphex(rb->read_sel, ==, 1);
    g_assert_cmphex(rc->read_sel, ==, 1);
    g_assert_cmphex(rb->tags, ==, rc->tags);
    g_assert_cmphex(rb->stfifo, ==, rc->stfifo);
    g_assert_cmphex(rb->pcie_status, ==, rc->pcie_status);
    check_counters("B vs C, live", rb->live, rc->live, DEF_ENTRIES);
    check_counters("B vs C, snapshot before T1", rb->snap1, rc->snap1,
                   DEF_ENTRIES);
    check_counters("B vs C, snapshot at T2", rb->snap2, rc->snap2,
                   DEF_ENTRIES);

    /* and both equal the prediction: PCIe windows 0..23, DMA 0..11 */
    pattern_expect(t0, t2, exp);
    g_assert_cmpuint(exp[0], ==, 24 * 4096 - 1);
    g_assert_cmpuint(exp[31], ==, 12 * 4096 - 1);
    check_counters("B, live", rb->live, exp, DEF_ENTRIES);
    check_counters("B, snapshot at T2", rb->snap2, exp, DEF_ENTRIES);
    check_counters("C, live", rc->live, exp, DEF_ENTRIES);
    g_assert_cmpuint(rb->snap1[0], >, 0);
    g_free(rb);
    g_free(rc);
}

/* ------------------------------------------------------------------ */
/* Lost deltas                                                          */

/*
 * Accumulator load = E x 3 x (31 x 400 MHz + 17 x 200 MHz) /
 * (1024 x 100 MHz) = E x 0.463: 1.39 with 3 endpoints, 0.93 with 2.
 */
static void test_lost_deltas_3(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=3,drain-period=1024");
    step_to(&n, n.t0 + 1000000);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_LOST);
    /*
     * CLEAR_FLAGS clears it: the level change reaches each probe two of its
     * edges after the first one past the write's MI edge, and STATUS shows
     * the cleared flags from the third MI edge after that (4 MI cycles on
     * for the DMA probes); it comes back as deltas keep getting lost
     */
    wr(&n, REG_COMMAND, CMD_CLEAR_FLAGS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_LOST);
    step(&n, 4 * MI_NS);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step(&n, 100000);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, STATUS_LOST);
    ndk_close(&n);
}

static void test_lost_deltas_2(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=2,drain-period=1024");
    step_to(&n, n.t0 + 1000000);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    step_to(&n, n.t0 + 2000000);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Properties                                                           */

/*
 * QEMU started with the arguments extra (NULL-terminated) after a q35
 * machine must exit with an error whose text contains needle.
 */
static void expect_start_refused(const char *const *extra,
                                 const char *needle)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *base[] = {
        qemu, "-machine", "q35", "-nodefaults", "-display", "none",
        "-accel", "qtest",
    };
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autoptr(GString) err = g_string_new("");
    g_autoptr(GString) what = g_string_new("");
    g_autoptr(GError) gerr = NULL;
    int status = 0, fd, i;
    GPid pid;
    pid_t r = 0;
    char buf[256];
    ssize_t len;

    g_assert(qemu);
    for (i = 0; i < (int)G_N_ELEMENTS(base); i++) {
        g_ptr_array_add(argv, (char *)base[i]);
    }
    for (i = 0; extra[i]; i++) {
        g_ptr_array_add(argv, (char *)extra[i]);
        g_string_append_printf(what, "%s%s", i ? " " : "", extra[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDOUT_TO_DEV_NULL,
                                      NULL, NULL, &pid, NULL, NULL, &fd,
                                      &gerr));
    g_assert(g_unix_set_fd_nonblocking(fd, true, NULL));
    /* 10 s at most: a QEMU that accepted the value would run forever */
    for (i = 0; i < 1000; i++) {
        while ((len = read(fd, buf, sizeof(buf))) > 0) {
            g_string_append_len(err, buf, len);
        }
        r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        g_usleep(10000);
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    while ((len = read(fd, buf, sizeof(buf))) > 0) {
        g_string_append_len(err, buf, len);
    }
    close(fd);
    g_spawn_close_pid(pid);

    g_test_message("%s: %s", what->str, err->str);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), !=, 0);
    if (!strstr(err->str, needle)) {
        g_test_message("the message lacks \"%s\"", needle);
    }
    g_assert_nonnull(strstr(err->str, needle));
}

/* QEMU with the device must exit with an error that names the property. */
static void expect_refused(const char *props, const char *name)
{
    g_autofree char *dev = g_strdup_printf("ndk-pcie-telemetry,%s", props);
    g_autofree char *quoted = g_strdup_printf("'%s'", name);
    const char *extra[] = { "-device", dev, NULL };

    expect_start_refused(extra, quoted);
}

static void test_bad_properties(void)
{
    /* not a power of two; 32 <= 8 x (ceil(31 / 8) + 1) = 40 */
    expect_refused("drain-period=1000", "drain-period");
    expect_refused("drain-period=32", "drain-period");
    expect_refused("cnt-width=32", "cnt-width");
    expect_refused("cnt-width=65", "cnt-width");
    expect_refused("pcie-endpoints=0", "pcie-endpoints");
    expect_refused("pcie-endpoints=17", "pcie-endpoints");
    /* 32-byte regions of 4-byte items: EOF_POS width log2(8) = 3 */
    expect_refused("pcie-eof-pos-width=2", "pcie-eof-pos-width");
    /* 64-byte RQ regions: 16 items need width 4 */
    expect_refused("pcie-rq-mfb-region-bytes=64", "pcie-eof-pos-width");
    expect_refused("dma-eof-pos-width=4", "dma-eof-pos-width");
    /* not a multiple of 0x1000; past 0x0fff0000 */
    expect_refused("block-offset=0x20800", "block-offset");
    expect_refused("block-offset=0x10000000", "block-offset");
}

/*
 * The standard error of a QEMU with a q35 machine and the arguments extra
 * (NULL-terminated) that starts, is told to quit over QMP on its standard
 * input, and exits with status 0.
 */
static char *started_stderr(const char *const *extra)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *base[] = {
        qemu, "-machine", "q35", "-nodefaults", "-display", "none",
        "-accel", "qtest", "-qmp", "stdio",
    };
    static const char quit[] = "{\"execute\": \"qmp_capabilities\"}\n"
                               "{\"execute\": \"quit\"}\n";
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    GString *err = g_string_new("");
    g_autoptr(GError) gerr = NULL;
    int status = 0, in, fd, i;
    GPid pid;
    pid_t r = 0;
    char buf[256];
    ssize_t len;

    g_assert(qemu);
    for (i = 0; i < (int)G_N_ELEMENTS(base); i++) {
        g_ptr_array_add(argv, (char *)base[i]);
    }
    for (i = 0; extra[i]; i++) {
        g_ptr_array_add(argv, (char *)extra[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDOUT_TO_DEV_NULL,
                                      NULL, NULL, &pid, &in, NULL, &fd,
                                      &gerr));
    g_assert_cmpint(write(in, quit, strlen(quit)), ==, strlen(quit));
    g_assert(g_unix_set_fd_nonblocking(fd, true, NULL));
    for (i = 0; i < 1000; i++) {
        while ((len = read(fd, buf, sizeof(buf))) > 0) {
            g_string_append_len(err, buf, len);
        }
        r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        g_usleep(10000);
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    while ((len = read(fd, buf, sizeof(buf))) > 0) {
        g_string_append_len(err, buf, len);
    }
    close(fd);
    close(in);
    g_spawn_close_pid(pid);
    g_test_message("stderr: %s", err->str);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    return g_string_free(err, false);
}

/* How many times needle occurs in hay. */
static unsigned occurrences(const char *hay, const char *needle)
{
    unsigned n = 0;

    for (const char *p = strstr(hay, needle); p;
         p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/*
 * A card whose accumulator cannot keep up starts, with one warning that
 * names the drain period that avoids the losses; the defaults start
 * without a word.
 */
static void test_sizing_warning(void)
{
    const char *plain[] = { "-device", "ndk-pcie-telemetry", NULL };
    /* load 16 x 3 x (31 x 400 MHz + 65 x 200 MHz) / (4096 x 100 MHz) */
    const char *big[] = {
        "-device", "ndk-pcie-telemetry,pcie-endpoints=16,dma-ports=4", NULL
    };
    /* load 0.93: only a SNAPSHOT's pause overflows the FIFOs */
    const char *close[] = {
        "-device", "ndk-pcie-telemetry,pcie-endpoints=2,drain-period=1024",
        NULL
    };
    g_autofree char *e0 = started_stderr(plain);
    g_autofree char *e1 = started_stderr(big);
    g_autofree char *e2 = started_stderr(close);

    g_assert_null(strstr(e0, "ndk-pcie-telemetry"));
    g_assert_cmpuint(occurrences(e1, "ndk-pcie-telemetry: "), ==, 1);
    g_assert_nonnull(strstr(e1, "accumulator load 2.98 at "
                            "drain-period=4096: the card loses deltas"));
    g_assert_nonnull(strstr(e1, "drain-period=16384 is the smallest"));
    g_assert_cmpuint(occurrences(e2, "ndk-pcie-telemetry: "), ==, 1);
    g_assert_nonnull(strstr(e2, "accumulator load 0.93 at "
                            "drain-period=1024: a SNAPSHOT's pause"));
    g_assert_nonnull(strstr(e2, "drain-period=2048 is the smallest"));
}

/* Send one qtest command over fd `in` and read its reply line from `out`. */
static void raw_ask(int in, FILE *out, const char *cmd)
{
    char line[256];

    g_assert_cmpint(write(in, cmd, strlen(cmd)), ==, strlen(cmd));
    do {
        g_assert_nonnull(fgets(line, sizeof(line), out));
    } while (strncmp(line, "OK", 2) && strncmp(line, "FAIL", 4));
    g_assert_cmpint(strncmp(line, "OK", 2), ==, 0);
}

/*
 * SIGTERM while a read of an overloaded card waits for a catch-up of many
 * host seconds: the read gives up and QEMU exits (over the raw qtest
 * protocol, since libqtest would wait for the reply itself). The card
 * costs more than real time (random traffic is counted window by window,
 * and its 16 endpoints lose deltas all the time), so the background
 * cannot keep up and the read waits.
 */
static void test_sigterm_during_read(void)
{
    const char *argv[] = {
        g_getenv("QTEST_QEMU_BINARY"), "-machine", "q35", "-nodefaults",
        "-display", "none", "-accel", "qtest", "-qtest", "stdio",
        "-object", "telemetry-traffic-random,id=t0", "-device",
        "ndk-pcie-telemetry,addr=04.0,traffic=t0,pcie-endpoints=16,"
        "dma-ports=4", NULL,
    };
    static const char read_status[] = "readl 0xe0000024\n";
    g_autoptr(GError) gerr = NULL;
    int in, out, status = 0;
    pid_t r = 0;
    GPid pid;
    FILE *rsp;
    char buf[256];

    g_assert_nonnull(argv[0]);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                      &pid, &in, &out, NULL, &gerr));
    rsp = fdopen(out, "r");
    raw_ask(in, rsp, "clock_step 1000\n");
    /* BAR0 at 0xe0000000, memory decoding on (config through CF8/CFC) */
    raw_ask(in, rsp, "outl 0xcf8 0x80002010\n");
    raw_ask(in, rsp, "outl 0xcfc 0xe0000000\n");
    raw_ask(in, rsp, "outl 0xcf8 0x80002004\n");
    raw_ask(in, rsp, "outl 0xcfc 0x2\n");
    /* 20 virtual seconds: more than as many host seconds of catch-up */
    raw_ask(in, rsp, "clock_step 20000000000\n");
    g_assert_cmpint(write(in, read_status, strlen(read_status)), ==,
                    strlen(read_status));
    g_usleep(G_USEC_PER_SEC);
    /* the read still waits: no reply yet */
    g_assert(g_unix_set_fd_nonblocking(out, true, NULL));
    g_assert_null(fgets(buf, sizeof(buf), rsp));
    kill(pid, SIGTERM);
    for (int i = 0; i < 1000 && r != pid; i++) {
        r = waitpid(pid, &status, WNOHANG);
        if (r != pid) {
            g_usleep(10000);
        }
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    fclose(rsp);
    close(in);
    g_spawn_close_pid(pid);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* The smallest and largest legal values start and read back. */
static void test_edge_properties(void)
{
    Ndk n;

    /*
     * 64 > 40; CFG_DRAIN = 64 | 4 << 16; CFG_LAYOUT = 64 | 64 << 16 |
     * 48 << 24
     */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "drain-period=64,cnt-width=64");
    g_assert_cmphex(rd(&n, REG_CFG_DRAIN), ==, 0x00040040);
    g_assert_cmphex(rd(&n, REG_CFG_LAYOUT), ==, 0x30400040);
    /*
     * Accumulator load 3 x (31 x 400 MHz + 17 x 200 MHz) / (64 x 100 MHz)
     * = 7.4: deltas get lost within microseconds.
     */
    step_to(&n, n.t0 + 100000);
    g_assert_cmphex(rd(&n, REG_STATUS) & STATUS_LOST, ==, STATUS_LOST);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* The NDK device tree and the block's offset in BAR0                  */

#define DT_ARGS "-device ndk-pcie-telemetry,addr=04.0,pcie-endpoints=2," \
                "block-offset=0x20000"
#define DT_OFFSET               0x20000
#define DT_BAR_SIZE             0x40000

static uint32_t vsec_rd(Ndk *n, uint32_t reg)
{
    return qtest_readl(n->qts, ecam(n->dev->devfn, VSEC + reg));
}

static void vsec_wr(Ndk *n, uint32_t reg, uint32_t val)
{
    qtest_writel(n->qts, ecam(n->dev->devfn, VSEC + reg), val);
}

/* The whole stream, word by word through the index and data registers. */
static GByteArray *vsec_fetch(Ndk *n)
{
    uint32_t len = vsec_rd(n, VSEC_LENGTH), words = DIV_ROUND_UP(len, 4);
    GByteArray *b = g_byte_array_sized_new(words * 4);
    uint8_t le[4];

    g_assert_cmpuint(len, >, 24);
    g_assert_cmpuint(len, <, 4096);
    for (uint32_t i = 0; i < words; i++) {
        vsec_wr(n, VSEC_INDEX, i);
        g_assert_cmpuint(vsec_rd(n, VSEC_INDEX), ==, i);
        stl_le_p(le, vsec_rd(n, VSEC_DATA));
        g_byte_array_append(b, le, 4);
    }
    /* the last word is padded with zeros */
    for (uint32_t i = len; i < words * 4; i++) {
        g_assert_cmphex(b->data[i], ==, 0);
    }
    g_byte_array_set_size(b, len);
    return b;
}

static uint32_t fdt_u32(const void *fdt, int node, const char *name)
{
    int len = -1;
    const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    g_assert_cmpint(len, ==, 4);
    return fdt32_to_cpu(*p);
}

/*
 * Decompress the stream and find what NDK software looks for: the
 * telemetry node on an MI bus of /firmware mapped to BAR0 of endpoint 0.
 */
static void check_devtree(GByteArray *xz, uint32_t offset, unsigned eps)
{
    g_autofree uint8_t *fdt = g_malloc0(65536);
    uint64_t memlimit = 1024 * 1024 + 65536;
    size_t in_pos = 0, out_pos = 0;
    lzma_stream_flags flags;
    const fdt32_t *reg;
    const char *str;
    int fw, bus, tel, len;

    g_assert_cmpint(lzma_stream_header_decode(&flags, xz->data), ==,
                    LZMA_OK);
    g_assert_cmpint(flags.check, ==, LZMA_CHECK_CRC32);
    /* a decoder limited to little more than a 1 MiB dictionary copes */
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, xz->data,
                                              &in_pos, xz->len, fdt,
                                              &out_pos, 65536), ==, LZMA_OK);
    g_assert_cmpuint(in_pos, ==, xz->len);
    g_assert_cmpint(fdt_check_header(fdt), ==, 0);
    g_assert_cmpuint(fdt_totalsize(fdt), ==, out_pos);

    fw = fdt_path_offset(fdt, "/firmware");
    g_assert_cmpint(fw, >=, 0);
    tel = fdt_node_offset_by_compatible(fdt, -1,
                                        "cesnet,ofm,pcie_telemetry_mi");
    g_assert_cmpint(tel, >=, 0);
    g_assert_cmpint(fdt_node_offset_by_compatible(fdt, tel,
                        "cesnet,ofm,pcie_telemetry_mi"), ==,
                    -FDT_ERR_NOTFOUND);
    bus = fdt_parent_offset(fdt, tel);
    g_assert_cmpint(fdt_parent_offset(fdt, bus), ==, fw);
    g_assert_cmpint(fdt_node_check_compatible(fdt, bus, "netcope,bus,mi"),
                    ==, 0);
    str = fdt_getprop(fdt, bus, "resource", &len);
    g_assert_nonnull(str);
    g_assert_cmpstr(str, ==, "PCI0,BAR0");
    g_assert_cmphex(fdt_u32(fdt, bus, "#address-cells"), ==, 1);
    g_assert_cmphex(fdt_u32(fdt, bus, "#size-cells"), ==, 1);

    reg = fdt_getprop(fdt, tel, "reg", &len);
    g_assert_nonnull(reg);
    g_assert_cmpint(len, ==, 8);
    g_assert_cmphex(fdt32_to_cpu(reg[0]), ==, offset);
    g_assert_cmphex(fdt32_to_cpu(reg[1]), ==, 0x10000);
    g_assert_cmphex(fdt_u32(fdt, tel, "version"), ==, VERSION);
    g_assert_cmpuint(fdt_u32(fdt, tel, "pcie-endpoints"), ==, eps);
}

/* The VSEC through ECAM, its registers, and the tree it holds. */
static void test_devtree_vsec(void)
{
    g_autoptr(GByteArray) xz = NULL;
    uint32_t words, w;
    Ndk n;

    ndk_open_bar(&n, "q35", NDK_VENDOR_ID, NDK_DEVICE_ID, DT_BAR_SIZE,
                 DT_ARGS);
    ecam_enable(&n);
    g_assert_cmphex(qtest_readl(n.qts, ecam(n.dev->devfn, 0)), ==,
                    NDK_DEVICE_ID << 16 | NDK_VENDOR_ID);

    /* ID 0x000B, version 1, the last capability */
    g_assert_cmphex(vsec_rd(&n, 0), ==, 0x0001000B);
    g_assert_cmphex(vsec_rd(&n, 4), ==, VSEC_HEADER);
    g_assert_cmphex(vsec_rd(&n, VSEC_ENDPOINT), ==, 0x80000000);
    /* after reset the index is 0: the data word starts with the XZ magic */
    g_assert_cmphex(vsec_rd(&n, VSEC_INDEX), ==, 0);
    g_assert_cmphex(vsec_rd(&n, VSEC_DATA), ==, 0x587A37FD);
    g_assert_cmphex(vsec_rd(&n, 0x18), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 0x1C), ==, 0);

    xz = vsec_fetch(&n);
    check_devtree(xz, DT_OFFSET, 2);
    words = DIV_ROUND_UP(xz->len, 4);

    /* narrow reads of the data register: bytes of word 1 */
    vsec_wr(&n, VSEC_INDEX, 1);
    w = ldl_le_p(xz->data + 4);
    for (int i = 0; i < 4; i++) {
        g_assert_cmphex(qtest_readb(n.qts, ecam(n.dev->devfn,
                                                VSEC + VSEC_DATA + i)),
                        ==, (w >> (8 * i)) & 0xFF);
    }
    g_assert_cmphex(qtest_readw(n.qts, ecam(n.dev->devfn,
                                            VSEC + VSEC_DATA + 2)),
                    ==, w >> 16);
    /* past the end: 0, and the index keeps all 32 bits */
    vsec_wr(&n, VSEC_INDEX, words);
    g_assert_cmphex(vsec_rd(&n, VSEC_DATA), ==, 0);
    vsec_wr(&n, VSEC_INDEX, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, VSEC_INDEX), ==, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, VSEC_DATA), ==, 0);

    /* everything but the index is read-only */
    for (uint32_t r = 0; r < 0x20; r += 4) {
        if (r != VSEC_INDEX) {
            vsec_wr(&n, r, 0x5A5A5A5A);
        }
    }
    g_assert_cmphex(vsec_rd(&n, 0), ==, 0x0001000B);
    g_assert_cmphex(vsec_rd(&n, 4), ==, VSEC_HEADER);
    g_assert_cmphex(vsec_rd(&n, VSEC_ENDPOINT), ==, 0x80000000);
    g_assert_cmphex(vsec_rd(&n, VSEC_LENGTH), ==, xz->len);
    g_assert_cmphex(vsec_rd(&n, VSEC_INDEX), ==, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, 0x18), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 0x1C), ==, 0);
    vsec_wr(&n, VSEC_INDEX, 0);
    g_assert_cmphex(vsec_rd(&n, VSEC_DATA), ==, ldl_le_p(xz->data));

    /* a system reset puts the index back to 0 */
    vsec_wr(&n, VSEC_INDEX, 3);
    qtest_system_reset(n.qts);
    ecam_enable(&n);
    g_assert_cmphex(vsec_rd(&n, VSEC_INDEX), ==, 0);
    ndk_close(&n);
}

/* Size probe of BAR0: all ones written, the size bits read back as 0. */
static uint64_t bar0_size(Ndk *n)
{
    uint32_t saved = qpci_config_readl(n->dev, PCI_BASE_ADDRESS_0), probe;
    uint16_t cmd = qpci_config_readw(n->dev, PCI_COMMAND);

    qpci_config_writew(n->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
    qpci_config_writel(n->dev, PCI_BASE_ADDRESS_0, 0xFFFFFFFF);
    probe = qpci_config_readl(n->dev, PCI_BASE_ADDRESS_0);
    qpci_config_writel(n->dev, PCI_BASE_ADDRESS_0, saved);
    qpci_config_writew(n->dev, PCI_COMMAND, cmd);
    return (uint64_t)(uint32_t)~(probe & PCI_BASE_ADDRESS_MEM_MASK) + 1;
}

/* The block at 0x20000 of a 0x40000-byte BAR0; the rest is empty. */
static void test_block_offset(void)
{
    static const uint32_t outside[] = {
        0x0, 0x20, 0x28, 0x8000, 0x10020, 0x1FFFC, 0x30000, 0x30020,
        0x38000, 0x3FFFC,
    };
    Ndk n;

    ndk_open_bar(&n, "q35", NDK_VENDOR_ID, NDK_DEVICE_ID, DT_BAR_SIZE,
                 DT_ARGS);
    g_assert_cmphex(bar0_size(&n), ==, DT_BAR_SIZE);
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_VERSION), ==, VERSION);
    /* 2 endpoints, 1 DMA port, 4 probes */
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_CFG_TOPOLOGY), ==, 0x00040102);
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        g_assert_cmphex(rd(&n, outside[i]), ==, 0);
    }
    g_assert_cmphex(rdq(&n, 0x1FFF8), ==, 0);
    g_assert_cmphex(qpci_io_readb(n.dev, n.bar, 0x3FFFF), ==, 0);
    /* an alias of MAGIC near the end of the register area */
    g_assert_cmphex(rd(&n, DT_OFFSET + 0x7F00), ==, MAGIC);

    /* PCIe window 0 drained: 4095 cycles in the live copy */
    step_to(&n, n.t0 + 15000);
    wr(&n, DT_OFFSET + REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 0);
    g_assert_cmpuint(rd(&n, DT_OFFSET + CNT(0)), ==, 4095);
    /*
     * Writes outside the block change nothing: CLEAR and READ_SEL at the
     * offsets the registers would have without the offset, and elsewhere.
     */
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        wr(&n, outside[i], CMD_CLEAR | CMD_CLEAR_FLAGS);
        qpci_io_writeq(n.dev, n.bar, outside[i] & ~7u, ~0ull);
    }
    wr(&n, REG_READ_SEL, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        g_assert_cmphex(rd(&n, outside[i]), ==, 0);
    }
    step(&n, 2000);
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_READ_SEL), ==, 1);
    g_assert_cmpuint(rd(&n, DT_OFFSET + CNT(0)), ==, 4095);
    /* and the block still takes its own commands */
    wr(&n, DT_OFFSET + REG_COMMAND, CMD_CLEAR);
    /* 1 + 2 x 128 MI cycles, done before PCIe window 1 drains (20.48 us) */
    step(&n, 3000);
    g_assert_cmphex(rd(&n, DT_OFFSET + REG_STATUS), ==, 0);
    g_assert_cmpuint(rd(&n, DT_OFFSET + CNT(0)), ==, 0);
    ndk_close(&n);

    /* the largest offset: a 256 MiB BAR0 */
    ndk_open_bar(&n, "q35", NDK_VENDOR_ID, NDK_DEVICE_ID, 0x10000000,
                 "-device ndk-pcie-telemetry,addr=04.0,"
                 "block-offset=0x0fff0000");
    g_assert_cmphex(rd(&n, 0x0FFF0000 + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, 0x0FFEFFFC), ==, 0);
    g_assert_cmphex(rd(&n, 0), ==, 0);
    ndk_close(&n);

    /* block-offset 0x1000: the next power of two is 0x20000 */
    ndk_open_bar(&n, "q35", NDK_VENDOR_ID, NDK_DEVICE_ID, 0x20000,
                 "-device ndk-pcie-telemetry,addr=04.0,block-offset=0x1000");
    g_assert_cmphex(rd(&n, 0x1000 + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, 0x11000), ==, 0);
    g_assert_cmphex(rd(&n, 0), ==, 0);
    ndk_close(&n);
}

/* devtree=off: no capability in the extended space, the block at 0. */
static void test_devtree_off(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,devtree=off");
    ecam_enable(&n);
    g_assert_cmphex(qtest_readl(n.qts, ecam(n.dev->devfn, 0)), ==,
                    NDK_DEVICE_ID << 16 | NDK_VENDOR_ID);
    g_assert_cmphex(qtest_readl(n.qts, ecam(n.dev->devfn, VSEC)), ==, 0);
    g_assert_cmphex(qtest_readl(n.qts, ecam(n.dev->devfn, VSEC + 4)), ==, 0);
    g_assert_cmphex(qtest_readl(n.qts, ecam(n.dev->devfn, VSEC + 0xC)), ==,
                    0);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);
}

/* The word index is configuration space: it survives a migration. */
static void test_devtree_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-dt-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autoptr(GByteArray) xz = NULL;
    int64_t t0, t1;
    Ndk a, b;

    g_assert(dir);
    ndk_open_bar(&a, "q35", NDK_VENDOR_ID, NDK_DEVICE_ID, DT_BAR_SIZE,
                 DT_ARGS);
    ecam_enable(&a);
    xz = vsec_fetch(&a);
    g_assert_cmpuint(xz->len, >, 4 * 5 + 4);
    vsec_wr(&a, VSEC_INDEX, 5);
    g_assert_cmphex(vsec_rd(&a, VSEC_DATA), ==, ldl_le_p(xz->data + 20));
    t0 = a.t0;
    t1 = a.now + 1000;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", DT_ARGS, uri, t0, t1);
    /* ECAM came with the MCH's state, the index with the card's */
    g_assert_cmphex(vsec_rd(&b, 4), ==, VSEC_HEADER);
    g_assert_cmphex(vsec_rd(&b, VSEC_LENGTH), ==, xz->len);
    g_assert_cmphex(vsec_rd(&b, VSEC_INDEX), ==, 5);
    g_assert_cmphex(vsec_rd(&b, VSEC_DATA), ==, ldl_le_p(xz->data + 20));
    g_assert_cmphex(rd(&b, DT_OFFSET + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&b, 0), ==, 0);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* Reset                                                                */

static void test_reset(void)
{
    uint64_t origin;
    uint32_t st;
    uint8_t exp;
    int64_t tr;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    exp = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    set_pcie_settings(&n, exp, 1, 3, true, true, true);
    step_to(&n, n.t0 + 15000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    snapshot(&n, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), !=, 0);

    /* a system reset is an MI reset: the counter memory stays */
    tr = n.now;
    qtest_system_reset(n.qts);
    g_assert_cmpint(qtest_clock_step(n.qts, 1), ==, tr + 1);
    n.now = tr + 1;
    qpci_device_enable(n.dev);
    n.bar = qpci_iomap(n.dev, 0, NULL);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, REG_READ_SEL), ==, 0);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 0x07FF0000);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 0xFFFF0000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);

    /*
     * The probes start over at the reset: their first window is again
     * 4095 cycles, drained 10.24 us after the reset (without the reset
     * window 1 would have brought 4096 at 20.48 us).
     */
    origin = first_cycle(tr, PCIE_HZ);
    step_to(&n, cycle_ns(drain_cycle(origin, DP, 0), PCIE_HZ) + 2000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4095);
    /* and Device Control is back at its power-on values */
    st = status_from_config(qpci_config_readw(n.dev, exp + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.dev, exp + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.dev, exp + PCI_EXP_LNKCTL));
    g_assert_cmphex(st & 7, ==, 0);
    g_assert_cmphex(st >> 3 & 7, ==, 2);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Conventional PCI                                                     */

static void test_conventional_pci(void)
{
    Ndk n;

    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0");
    g_assert_cmpint(n.dev->devfn, ==, NDK_DEVFN);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&n, REG_VERSION), ==, VERSION);
    g_assert_cmphex(rd(&n, REG_CFG_LAYOUT), ==, 0x30300040);
    /* no PCIe capability, nothing at 0x80 */
    g_assert_cmphex(qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0), ==, 0);
    g_assert_cmphex(qpci_config_readl(n.dev, 0x80), ==, 0);
    /* it counts all the same */
    step_to(&n, n.t0 + 15000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)) & (1 << 9), ==, 1 << 9);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Live changes of the traffic (qom-set)                                */

static QDict *qom_set_int(QTestState *qts, const char *path,
                          const char *prop, int64_t val)
{
    return qtest_qmp(qts, "{ 'execute': 'qom-set', 'arguments': "
                     "{ 'path': %s, 'property': %s, 'value': %" PRId64
                     " } }", path, prop, val);
}

static void qom_set_ok(QTestState *qts, const char *path, const char *prop,
                       int64_t val)
{
    QDict *rsp = qom_set_int(qts, path, prop, val);

    if (qdict_haskey(rsp, "error")) {
        g_test_message("qom-set %s %s %" PRId64 ": %s", path, prop, val,
                       qdict_get_str(qdict_get_qdict(rsp, "error"),
                                     "desc"));
    }
    g_assert_false(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

/* INT64_MIN if qom-get fails */
static int64_t qom_get_int(QTestState *qts, const char *path,
                           const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", path, prop);
    int64_t v = INT64_MIN;

    g_assert_true(qdict_haskey(rsp, "return"));
    if (qdict_haskey(rsp, "return")) {
        v = qdict_get_int(rsp, "return");
    }
    qobject_unref(rsp);
    return v;
}

/*
 * The PCIe probe of a card whose only traffic is RQ frames of rq_bytes,
 * back to back; all tags and FIFO words free (band 3 of both).
 */
static SimProbe rq_probe(uint32_t rq_bytes)
{
    return (SimProbe) {
        .hz = PCIE_HZ, .regions = 2, .nbus = 2,
        .bus = {
            { .frame_bytes = rq_bytes, .regions = 2, .ipr = 8 },
            { .frame_bytes = 0, .regions = 2, .ipr = 8 },
        },
        .pcie = true, .tags_free = 256, .tag_capacity = 256,
        .stfifo_free = 1024, .stfifo_capacity = 1024,
    };
}

#define LIVE_ARGS \
    "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0"

/*
 * A qom-set while the card runs applies from the card's next PCIe drain
 * window: windows that started before it keep the old value.
 */
static void test_live_qom_set(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    uint64_t origin, od, from[3];
    SimProbe ver[3];
    g_autofree char *out = NULL;
    const char *desc = "";
    QDict *rsp;
    Ndk n;

    ndk_open(&n, "q35", LIVE_ARGS);
    origin = first_cycle(n.t0, PCIE_HZ);
    od = first_cycle(n.t0, DMA_HZ);
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "rq-frame-bytes"), ==,
                    256);

    /*
     * 15 us after the reset: PCIe cycle origin + 6000, inside window 1 =
     * [origin + 4095, origin + 8191). RQ frames of 256 bytes are 64 items
     * in 8 regions = 4 words, back to back: a word in every cycle. The
     * change applies from window 2, which starts at origin + 8191
     * (20.4775 us when the card starts at 0).
     */
    step_to(&n, n.t0 + 15000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 1);
    qom_set_ok(n.qts, "/objects/t0", "rq-frame-bytes", 0);
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "rq-frame-bytes"), ==,
                    0);

    /*
     * 35 us: window 2 = [8191, 12287) was drained at 30.72 us, its deltas
     * are in the live copy, window 3 ends at 40.96 us. RQ moved a word in
     * every cycle of windows 0 and 1 (4095 + 4096) and none in window 2;
     * the RQ channels do not count the origin (cycle 0), and their window
     * 2, which ends 5 (words) or 30 (items) cycles after the cycle
     * counter's, had no RQ traffic either.
     */
    step_to(&n, n.t0 + 35000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 3);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 2 * 4096);
    g_assert_cmpuint(cnt(&n, 1 + CH_WORDS), ==, 4095 + 4096 - 1);
    /* (words 1..3 of the frame whose SOF in cycle 0 was not seen: none) */
    g_assert_cmpuint(cnt(&n, 1 + CH_ITEMS), ==, 16 * (4095 + 4096 - 1 - 3));

    /* every counter: the simulator over the two versions */
    ver[0] = rq_probe(256);
    from[0] = origin;
    ver[1] = rq_probe(0);
    from[1] = drain_cycle(origin, DP, 1);
    g_assert_cmpuint(from[1], ==, origin + 8191);
    memset(exp, 0, sizeof(exp));
    sim_windows_versions(ver, from, 2, origin, DP, 3, exp);
    g_assert_cmpuint(exp[1 + CH_WORDS], ==, 4095 + 4096 - 1);
    /* the DMA buses stay idle: only their cycles, window 0 */
    g_assert_cmpuint(windows_by(n.now, od, DMA_HZ, DP), ==, 1);
    exp[31] = DP - 1;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, rq-frame-bytes 256 -> 0", got, exp, DEF_ENTRIES);

    /*
     * Out of range (0 to 65536): refused with a message that names the
     * property; the value stays.
     */
    rsp = qom_set_int(n.qts, "/objects/t0", "rq-frame-bytes", 70000);
    g_assert_true(qdict_haskey(rsp, "error"));
    if (qdict_haskey(rsp, "error")) {
        desc = qdict_get_str(qdict_get_qdict(rsp, "error"), "desc");
    }
    g_test_message("qom-set rq-frame-bytes 70000: %s", desc);
    g_assert_nonnull(strstr(desc, "rq-frame-bytes"));
    qobject_unref(rsp);
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "rq-frame-bytes"), ==,
                    0);

    /*
     * Through HMP at 35 us (cycle 14000, window 3 = [12287, 16383)):
     * 128-byte frames (32 items in 4 regions = 2 words, back to back)
     * from window 4 = [16383, 20479) on.
     */
    out = qtest_hmp(n.qts, "qom-set /objects/t0 rq-frame-bytes 128");
    g_test_message("HMP qom-set: '%s'", out);
    g_assert_null(strstr(out, "rror"));
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "rq-frame-bytes"), ==,
                    128);

    /*
     * 55 us: PCIe windows 0..4, DMA windows 0 and 1. Words (slot 1, 5
     * cycles late): 4095 - 1 + 4096 (windows 0, 1 but cycle 0) + 4096 + 5
     * (window 4 and 5 cycles of window 5, [16383, 20484), all with the new
     * frames). SOF (slot 3, 15 cycles late): one every 4 cycles in
     * windows 0 and 1 but cycle 0 (cycles 4, ..., 8188: 2047), one every
     * 2 from window 4 on (16384, ..., 20492: 2055). Items (slot 6, 30
     * cycles late): 16 per word, also for word 1 of the frame that window
     * 4 begins with: the 256-byte frame cut after its word 2 at cycle 8190
     * was still open.
     */
    step_to(&n, n.t0 + 55000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 5);
    g_assert_cmpuint(windows_by(n.now, od, DMA_HZ, DP), ==, 2);
    ver[2] = rq_probe(128);
    from[2] = drain_cycle(origin, DP, 3);
    g_assert_cmpuint(from[2], ==, origin + 16383);
    memset(exp, 0, sizeof(exp));
    sim_windows_versions(ver, from, 3, origin, DP, 5, exp);
    exp[31] = 2 * DP - 1;
    g_assert_cmpuint(exp[0], ==, 5 * 4096 - 1);
    g_assert_cmpuint(exp[1 + CH_WORDS], ==, 4095 - 1 + 4096 + 4096 + 5);
    g_assert_cmpuint(exp[1 + CH_SOF], ==, 2047 + 2055);
    g_assert_cmpuint(exp[1 + CH_ITEMS], ==,
                     16 * (4095 - 1 + 4096 + 4096 + 30 - 3));
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, rq-frame-bytes 0 -> 128", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * The same rule at a PCIe clock of 4 GHz (the highest allowed), where four
 * cycles share each ns. DRAIN_PERIOD 32768: window k >= 1 starts at cycle
 * origin + 32768 k - 1. At 12 us (cycle 48000, window 1 = [32767, 65535))
 * the change applies from window 2 (cycle 65535, 16383.75 ns): windows 0
 * and 1 keep the 256-byte frames, a word in every one of their 32767 +
 * 32768 cycles and a SOF every 4 cycles (0, 4, ..., 65532: 16384). The
 * RQ channels do not count the origin (a word with a SOF), and the cycles
 * their windows gain past the cycle counter's edge (5 to 30) have the new
 * value: no traffic.
 */
static void test_live_qom_set_4ghz(void)
{
    const uint64_t hz = 4000000000ull, dp = 32768;
    uint64_t origin;
    Ndk n;

    ndk_open(&n, "q35",
             "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256 "
             "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,"
             "pcie-clk-freq=4000000000,drain-period=32768");
    origin = first_cycle(n.t0, hz);
    g_assert_cmpuint(origin % 4, ==, 0);
    step_to(&n, n.t0 + 12000);
    g_assert_cmpuint(windows_by(n.now, origin, hz, dp), ==, 1);
    qom_set_ok(n.qts, "/objects/t0", "rq-frame-bytes", 0);

    /* 28.672 us: window 2 drained at 24.576 us; window 3 ends at 32.768 us */
    step_to(&n, n.t0 + 28672);
    g_assert_cmpuint(windows_by(n.now, origin, hz, dp), ==, 3);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 3 * dp - 1);
    g_assert_cmpuint(cnt(&n, 1 + CH_WORDS), ==, 2 * dp - 2);
    g_assert_cmpuint(cnt(&n, 1 + CH_SOF), ==, 2 * dp / 4 - 1);
    /* words 1..3 of the frame of cycle 0, whose SOF was not seen: none */
    g_assert_cmpuint(cnt(&n, 1 + CH_ITEMS), ==, 16 * (2 * dp - 5));
    ndk_close(&n);
}

/*
 * Many changes while a slow DMA window is open. With dma-clk-freq=25 MHz
 * a DMA window lasts 4096 x 40 ns = 163.84 us, 16 PCIe windows; DMA
 * window 1 is [163.8 us, 327.64 us). At 168.84 us (PCIe window 16) UP goes
 * idle (up-frame-bytes 0), from PCIe window 17 (174.0775 us) on; then in
 * each of the PCIe windows 17 .. 16 + nbrake a change of `brake` alone (a
 * signal of the PCIe probe only), each from the PCIe window after it.
 */
#define MANY_ARGS \
    "-object telemetry-traffic-pattern,id=t0,up-frame-bytes=100,up-gap=3," \
    "up-stall=2 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,dma-clk-freq=25000000"
#define SLOW_DMA_HZ 25000000ull

static void many_changes(Ndk *n, unsigned nbrake, uint64_t *dma)
{
    uint64_t od = first_cycle(n->t0, SLOW_DMA_HZ);

    step_to(n, n->t0 + 16 * 10240 + 5000);
    qom_set_ok(n->qts, "/objects/t0", "up-frame-bytes", 0);
    for (unsigned k = 1; k <= nbrake; k++) {
        step_to(n, n->t0 + (16 + k) * 10240 + 5000);
        qom_set_ok(n->qts, "/objects/t0", "brake", k);
    }
    g_assert_cmpint(qom_get_int(n->qts, "/objects/t0", "up-frame-bytes"),
                    ==, 0);
    g_assert_cmpint(qom_get_int(n->qts, "/objects/t0", "brake"), ==, nbrake);
    /* 340 us: DMA windows 0 and 1 are in the live copy */
    step_to(n, n->t0 + 340000);
    g_assert_cmpuint(windows_by(n->now, od, SLOW_DMA_HZ, DP), ==, 2);
    wr(n, REG_READ_SEL, 1);
    for (unsigned e = 0; e < 17; e++) {
        dma[e] = cnt(n, 31 + e);
    }
}

static void test_live_many_changes(void)
{
    uint64_t x[17], y[17];
    Ndk n;

    /*
     * X: the UP change and 7 BRAKE changes, all within 2 DMA windows
     * (2 x 163.84 us) of each other: with the starting values 9 versions
     * of the parameters that DMA window 1 may need. Y: the UP change only.
     */
    ndk_open(&n, "q35", MANY_ARGS);
    many_changes(&n, 7, x);
    ndk_close(&n);
    ndk_open(&n, "q35", MANY_ARGS);
    many_changes(&n, 0, y);
    ndk_close(&n);

    /* BRAKE does not reach the DMA probe: both count the same */
    check_counters("DMA probe (entry 31 + i), 8 changes vs 1", x, y, 17);
    /*
     * UP period 2 stalled + 2 words + 3 idle = 7 cycles. DMA window 0
     * (4095 = 585 x 7 cycles): 1170 words. Window 1 had the old frames at
     * least until the change's moment, DMA cycle ceil(174077.5 / 40) =
     * 4352: cycles 4095 .. 4351, 257 = 36 x 7 + 5 from a period's start,
     * 36 x 2 + 2 words. So at least 1170 + 74 UP words (the words
     * channel misses cycle 0, a stalled one, and its windows end 4 cycles
     * after the cycle counter's: none fewer).
     */
    g_assert_cmpuint(x[1 + CH_WORDS], >=, 1170 + 74);
    g_assert_cmpuint(y[1 + CH_WORDS], >=, 1170 + 74);
    g_assert_cmpuint(x[0], ==, 2 * 4096 - 1);
}

/*
 * Migration with a change still pending: A makes it at 30.9 us, inside
 * PCIe window 3 = [12287, 16383) (cycle 12360), so it applies from window
 * 4 (cycle 16383, 40.9575 us), after the migration point T1 = 31 us.
 */
static void live_change_phase1(Ndk *n, int64_t t1)
{
    step_to(n, n->t0 + 3000);
    wr(n, REG_READ_SEL, 1);
    step_to(n, n->t0 + 15000);
    snapshot(n, DEF_ENTRIES);
    step_to(n, n->t0 + 30900);
    qom_set_ok(n->qts, "/objects/tp0", "rq-frame-bytes", 128);
    qom_set_ok(n->qts, "/objects/tp0", "tags-free", 20);
    qom_set_ok(n->qts, "/objects/tp0", "brake", 2);
    step_to(n, t1);
}

static void check_changed_values(QTestState *qts)
{
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "rq-frame-bytes"), ==,
                    128);
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "tags-free"), ==, 20);
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "brake"), ==, 2);
    /* untouched ones keep the command line's */
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "up-frame-bytes"), ==,
                    100);
}

static void test_live_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    MigResult *rb = g_new0(MigResult, 1), *rc = g_new0(MigResult, 1);
    uint64_t exp[DEF_ENTRIES] = { 0 };
    uint64_t op, od, wp, wd, from[2];
    SimProbe ver[2], dp;
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    ndk_open(&a, "q35", MIG_ARGS);
    t0 = a.t0;
    t1 = t0 + 31000;
    t2 = t0 + 24 * 10240 + 5120;
    live_change_phase1(&a, t1);
    migrate_out(&a, uri);

    /* B starts with the old values on its command line */
    migrate_in(&b, "q35", MIG_ARGS, uri, t0, t1);
    check_changed_values(b.qts);
    mig_phase2(&b, t2, rb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ndk_open(&c, "q35", MIG_ARGS);
    g_assert_cmpint(c.t0, ==, t0);
    live_change_phase1(&c, t1);
    check_changed_values(c.qts);
    mig_phase2(&c, t2, rc);
    ndk_close(&c);

    g_assert_cmphex(rb->status, ==, rc->status);
    g_assert_cmphex(rb->read_sel, ==, rc->read_sel);
    g_assert_cmphex(rb->tags, ==, rc->tags);
    g_assert_cmphex(rb->stfifo, ==, rc->stfifo);
    g_assert_cmphex(rb->pcie_status, ==, rc->pcie_status);
    check_counters("B vs C, live", rb->live, rc->live, DEF_ENTRIES);
    check_counters("B vs C, snapshot before T1", rb->snap1, rc->snap1,
                   DEF_ENTRIES);
    check_counters("B vs C, snapshot at T2", rb->snap2, rc->snap2,
                   DEF_ENTRIES);

    /*
     * The prediction at T2: PCIe windows 0..23, the change from window 4
     * on (128-byte RQ frames, 20 free tags: band 1 of 256, BRAKE bit 1
     * instead of bits 0 and 2); the DMA side (windows 0..11) keeps its
     * traffic. PCIE_TAGS: 20 now, lowest min(100, 20).
     */
    op = first_cycle(t0, PCIE_HZ);
    od = first_cycle(t0, DMA_HZ);
    wp = windows_by(t2, op, PCIE_HZ, DP);
    wd = windows_by(t2, od, DMA_HZ, DP);
    g_assert_cmpuint(wp, ==, 24);
    g_assert_cmpuint(wd, ==, 12);
    pattern_probes(&ver[0], &dp);
    ver[1] = ver[0];
    ver[1].bus[0].frame_bytes = 128;
    ver[1].tags_free = 20;
    ver[1].brake = 2;
    from[0] = op;
    from[1] = drain_cycle(op, DP, 3);
    sim_windows_versions(ver, from, 2, op, DP, wp, exp);
    sim_windows(&dp, od, DP, wd, exp + 31);
    /*
     * BRAKE 0 and 2 in windows 0..3 only (but the origin), BRAKE 1 from
     * window 4 on; BRAKE 1 (slot 2) counts 10 cycles past the last edge,
     * tag band 1 (slot 0, a band) stops 1 cycle before it
     */
    g_assert_cmpuint(exp[17], ==, 4 * 4096 - 2);
    g_assert_cmpuint(exp[18], ==, 20 * 4096 + 10);
    g_assert_cmpuint(exp[19], ==, 4 * 4096 - 2);
    g_assert_cmpuint(exp[23 + 1], ==, 20 * 4096 - 1);
    check_counters("B, live", rb->live, exp, DEF_ENTRIES);
    check_counters("B, snapshot at T2", rb->snap2, exp, DEF_ENTRIES);
    check_counters("C, live", rc->live, exp, DEF_ENTRIES);
    g_assert_cmphex(rb->tags, ==, 20 | 20 << 16);
    g_free(rb);
    g_free(rc);
}

/* ------------------------------------------------------------------ */
/* Random traffic                                                       */

static char *random_args(const char *props)
{
    return g_strdup_printf("-object telemetry-traffic-random,id=t0%s%s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           *props ? "," : "", props);
}

/* Exact cycle counters of a card reset at t0, read at t (mid-window) */
static void check_cycles(const char *what, const uint64_t *c, int64_t t0,
                         int64_t t)
{
    uint64_t wp = windows_by(t, first_cycle(t0, PCIE_HZ), PCIE_HZ, DP);
    uint64_t wd = windows_by(t, first_cycle(t0, DMA_HZ), DMA_HZ, DP);

    g_test_message("%s: %" PRIu64 " PCIe, %" PRIu64 " DMA windows", what,
                   wp, wd);
    g_assert_cmpuint(c[0], ==, wp ? wp * DP - 1 : 0);
    g_assert_cmpuint(c[31], ==, wd ? wd * DP - 1 : 0);
}

static void test_random_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *args = random_args("seed=7");
    uint64_t lb[DEF_ENTRIES], lc[DEF_ENTRIES];
    uint64_t sb[DEF_ENTRIES], sc[DEF_ENTRIES];
    uint32_t regs_b[4], regs_c[4];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    /*
     * A to T1: 200 ns after the drain of PCIe window 49, its deltas on
     * their way to the live copy. T2: half a window after the drain of
     * PCIe window 99 (and of DMA window 49).
     */
    ndk_open(&a, "q35", args);
    t0 = a.t0;
    t1 = cycle_ns(drain_cycle(first_cycle(t0, PCIE_HZ), DP, 49), PCIE_HZ) +
         200;
    t2 = t0 + 100 * 10240 + 5120;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", args, uri, t0, t1);
    g_assert_cmpint(qom_get_int(b.qts, "/objects/t0", "seed"), ==, 7);
    step_to(&b, t2);
    wr(&b, REG_READ_SEL, 1);
    read_counters(&b, DEF_ENTRIES, lb);
    regs_b[0] = rd(&b, REG_STATUS);
    regs_b[1] = rd(&b, REG_PCIE_STATUS(0));
    regs_b[2] = rd(&b, REG_PCIE_TAGS(0));
    regs_b[3] = rd(&b, REG_PCIE_STFIFO(0));
    snapshot(&b, DEF_ENTRIES);
    wr(&b, REG_READ_SEL, 0);
    read_counters(&b, DEF_ENTRIES, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    /* C: straight to T2 */
    ndk_open(&c, "q35", args);
    g_assert_cmpint(c.t0, ==, t0);
    step_to(&c, t2);
    wr(&c, REG_READ_SEL, 1);
    read_counters(&c, DEF_ENTRIES, lc);
    regs_c[0] = rd(&c, REG_STATUS);
    regs_c[1] = rd(&c, REG_PCIE_STATUS(0));
    regs_c[2] = rd(&c, REG_PCIE_TAGS(0));
    regs_c[3] = rd(&c, REG_PCIE_STFIFO(0));
    snapshot(&c, DEF_ENTRIES);
    wr(&c, REG_READ_SEL, 0);
    read_counters(&c, DEF_ENTRIES, sc);
    ndk_close(&c);

    check_counters("random, B vs C, live", lb, lc, DEF_ENTRIES);
    check_counters("random, B vs C, snapshot", sb, sc, DEF_ENTRIES);
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmphex(regs_b[i], ==, regs_c[i]);
    }
    g_assert_cmphex(regs_b[0], ==, 0);
    check_cycles("random, B", lb, t0, t2);
    /* traffic flowed on all four buses (default loads 70, 45, 60, 45 %) */
    g_assert_cmpuint(lb[1 + CH_WORDS], >, 0);
    g_assert_cmpuint(lb[1 + 8 + CH_WORDS], >, 0);
    g_assert_cmpuint(lb[32 + CH_WORDS], >, 0);
    g_assert_cmpuint(lb[32 + 8 + CH_WORDS], >, 0);
}

/* Run a random card for 2 ms and read every counter after a SNAPSHOT. */
static void random_run(const char *props, uint64_t *c)
{
    g_autofree char *args = random_args(props);
    Ndk n;

    ndk_open(&n, "q35", args);
    step_to(&n, n.t0 + 2000000);
    snapshot(&n, DEF_ENTRIES);
    read_counters(&n, DEF_ENTRIES, c);
    /* accumulator load 0.46: nothing lost */
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    /* the snapshot holds what the live copy had at 2 ms */
    check_cycles(props, c, n.t0, n.t0 + 2000000);
    ndk_close(&n);
}

static void check_le(const char *what, const char *rel, unsigned e,
                     uint64_t a, uint64_t b)
{
    if (a > b) {
        g_test_message("%s: entry %u: %s: %" PRIu64 " > %" PRIu64, what, e,
                       rel, a, b);
    }
    g_assert_cmpuint(a, <=, b);
}

/*
 * The invariants compare channels whose windows differ: after whole
 * windows channel c holds the cycles [o + first_c, E_k + edge_c), so a
 * channel a may hold ch_extra(a, b) cycles that channel b lacks (at the
 * end: a later slot; at the start: cycle o, which only the cycle counter,
 * the MVB channels and the bands count). An invariant "a <= f(b)" that
 * holds cycle by cycle is widened by exactly those cycles times the most
 * a can gain in one cycle (or b lose): 1 for words, stalls, regions used
 * and BRAKE bits, R = 2 for SOF and MVB items, 8 items per region.
 */

/*
 * A bus with base entry e of a probe of layout l whose cycle counter is
 * entry e0 (channel 0): words + stall <= cycles, SOF <= words x R, each
 * region-used <= words, items <= (sum of region-used) x 8.
 */
static void check_bus_bounds(const char *what, const uint64_t *c,
                             const Layout *l, unsigned e0, unsigned bus)
{
    unsigned rb = 1 + bus * (6 + l->regions), o = e0 + rb;
    uint64_t words = c[o + CH_WORDS], used_w = 0;
    /* words and stalls: at most 1 together in each cycle */
    uint64_t ws_extra = MAX(ch_extra(l, rb + CH_WORDS, 0),
                            ch_extra(l, rb + CH_STALL, 0));

    check_le(what, "words + stall <= cycles", o,
             words + c[o + CH_STALL], c[e0] + ws_extra);
    check_le(what, "SOF <= words x regions", o + CH_SOF, c[o + CH_SOF],
             l->regions * (words +
                           ch_extra(l, rb + CH_SOF, rb + CH_WORDS)));
    for (unsigned r = 0; r < l->regions; r++) {
        unsigned ch = rb + CH_REGION0 + r;

        check_le(what, "region-used <= words", o + CH_REGION0 + r,
                 c[o + CH_REGION0 + r],
                 words + ch_extra(l, ch, rb + CH_WORDS));
        /* the regions as seen over the items' span */
        used_w += c[o + CH_REGION0 + r] +
                  ch_extra(l, rb + CH_ITEMS, ch);
    }
    check_le(what, "items <= region-used x 8", o + CH_ITEMS,
             c[o + CH_ITEMS], 8 * used_w);
}

/*
 * Each of the two histograms (entries e0 + n - 8 .. n - 5 and n - 4 ..
 * n - 1) adds 1 to exactly one band in each cycle: its sum is the cycles,
 * give or take the cycles a band's span has that the cycle counter's
 * lacks and the other way round (a cycle is in one band only, so the
 * largest of these counts).
 */
static void check_histograms(const char *what, const uint64_t *c,
                             const Layout *l, unsigned e0)
{
    for (unsigned h = 0; h < 2; h++) {
        uint64_t sum = 0, more = 0, less = 0;

        for (unsigned j = 0; j < 4; j++) {
            unsigned ch = l->n - 8 + 4 * h + j;

            sum += c[e0 + ch];
            more = MAX(more, ch_extra(l, ch, 0));
            less = MAX(less, ch_extra(l, 0, ch));
        }
        if (sum + less < c[e0] || sum > c[e0] + more) {
            g_test_message("%s: histogram %u sums to %" PRIu64 ", cycles %"
                           PRIu64 " (-%" PRIu64 ", +%" PRIu64 ")", what, h,
                           sum, c[e0], less, more);
        }
        g_assert_cmpuint(sum + less, >=, c[e0]);
        g_assert_cmpuint(sum, <=, c[e0] + more);
    }
}

/*
 * The invariants of the channel definitions, per probe (R = 2 regions,
 * 8 items per region on every bus of the defaults), widened as above:
 *   the bus bounds of check_bus_bounds;
 *   PCIe probe: MVB and MVB stall 0, each BRAKE <= cycles, each
 *   histogram's 4 bands sum to the cycles;
 *   DMA probe: every frame has one MVB item with its SOF word, UP reads
 *   have one without: MVB items >= SOF on UP, = SOF on DOWN.
 */
static void check_random_invariants(const char *what, const uint64_t *c,
                                    bool brakes)
{
    static const unsigned base[2] = { 0, 31 };
    const Layout lay[2] = { pcie_layout(2), dma_layout(1, 2) };
    uint64_t sum;

    for (unsigned p = 0; p < 2; p++) {
        const Layout *l = &lay[p];
        uint64_t cyc = c[base[p]];

        for (unsigned b = 0; b < 2; b++) {
            unsigned rb = 1 + b * 8, o = base[p] + rb;
            uint64_t mvb = c[o + CH_MVB], sof = c[o + CH_SOF];

            g_assert_cmpuint(c[o + CH_WORDS], >, 0);
            check_bus_bounds(what, c, l, base[p], b);
            if (p == 0) {
                g_assert_cmpuint(mvb, ==, 0);
                g_assert_cmpuint(c[o + CH_MVB_STALL], ==, 0);
                continue;
            }
            /* SOF and MVB items: at most R = 2 of each in a cycle */
            check_le(what, "SOF <= MVB items", o + CH_MVB, sof,
                     mvb + 2 * ch_extra(l, rb + CH_SOF, rb + CH_MVB));
            if (b == 1) {
                check_le(what, "MVB items <= SOF (DOWN)", o + CH_MVB, mvb,
                         sof + 2 * ch_extra(l, rb + CH_MVB, rb + CH_SOF));
            }
            check_le(what, "MVB stall <= cycles", o + CH_MVB_STALL,
                     c[o + CH_MVB_STALL],
                     cyc + ch_extra(l, rb + CH_MVB_STALL, 0));
        }
    }

    sum = 0;
    for (unsigned k = 0; k < 6; k++) {
        check_le(what, "BRAKE <= cycles", 17 + k, c[17 + k],
                 c[0] + ch_extra(&lay[0], 17 + k, 0));
        sum += c[17 + k];
    }
    if (brakes) {
        g_assert_cmpuint(sum, >, 0);
    } else {
        /* brake-percent 0: never */
        g_assert_cmpuint(sum, ==, 0);
    }
    check_histograms(what, c, &lay[0], 0);
    for (unsigned e = 48; e < DEF_ENTRIES; e++) {
        g_assert_cmpuint(c[e], ==, 0);
    }
}

#define RANDOM_S3 "seed=3,rq-load=90,up-read-percent=20,brake-percent=30"
#define RANDOM_S4 "seed=4,rq-load=90,up-read-percent=20,brake-percent=30"

static void test_random_invariants(void)
{
    uint64_t def[DEF_ENTRIES], s3[DEF_ENTRIES], s3b[DEF_ENTRIES];
    uint64_t s4[DEF_ENTRIES];
    unsigned differ = 0;

    random_run("", def);
    check_random_invariants("random, defaults", def, false);
    random_run(RANDOM_S3, s3);
    check_random_invariants("random, seed 3", s3, true);
    /* UP: 20 % of the requests are reads, so more MVB items than SOFs */
    g_assert_cmpuint(s3[32 + CH_MVB], >, s3[32 + CH_SOF]);

    /* the same seed again: the same counts */
    random_run(RANDOM_S3, s3b);
    check_counters("random, seed 3 twice", s3b, s3, DEF_ENTRIES);

    /* another seed: other counts */
    random_run(RANDOM_S4, s4);
    check_random_invariants("random, seed 4", s4, true);
    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        differ += s4[e] != s3[e];
    }
    g_test_message("seed 3 vs seed 4: %u counters differ", differ);
    g_assert_cmpuint(differ, >, 0);
    /* only the cycles and the unused entries must agree */
    g_assert_cmpuint(s4[0], ==, s3[0]);
    g_assert_cmpuint(s4[31], ==, s3[31]);
}

/* ------------------------------------------------------------------ */
/* PCIe capability: what the card supports                              */

#define EXP_DEVCAP2_10BIT_TAG_COMP 0x00010000

static void check_pcie_caps(const char *props, bool ext_tag, bool tag10)
{
    g_autofree char *args = g_strdup_printf(
        "-device ndk-pcie-telemetry,addr=04.0%s", props);
    uint32_t devcap, devcap2;
    uint16_t devctl;
    uint64_t origin;
    uint8_t exp;
    Ndk n;

    g_test_message("PCIe capability with '%s'", props);
    ndk_open(&n, "q35", args);
    exp = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    devcap = qpci_config_readl(n.dev, exp + PCI_EXP_DEVCAP);
    devcap2 = qpci_config_readl(n.dev, exp + PCI_EXP_DEVCAP2);
    /* Max_Payload_Size Supported: 512 = 128 << 2 (max-payload-size) */
    g_assert_cmphex(devcap & PCI_EXP_DEVCAP_PAYLOAD, ==, 2);
    /* Extended Tag Field Supported, bit 5 */
    g_assert_cmphex(devcap & PCI_EXP_DEVCAP_EXT_TAG, ==,
                    ext_tag ? PCI_EXP_DEVCAP_EXT_TAG : 0);
    /* 10-Bit Tag Completer (16) and Requester (17) Supported */
    g_assert_cmphex(devcap2 & (EXP_DEVCAP2_10BIT_TAG_COMP |
                               EXP_DEVCAP2_10BIT_TAG), ==,
                    tag10 ? EXP_DEVCAP2_10BIT_TAG_COMP |
                            EXP_DEVCAP2_10BIT_TAG : 0);
    /*
     * At power-on extended tags are enabled where supported, 10-bit tags
     * are off; PCIE_STATUS shows that after the first drain
     */
    devctl = qpci_config_readw(n.dev, exp + PCI_EXP_DEVCTL);
    g_assert_cmphex(devctl & PCI_EXP_DEVCTL_EXT_TAG, ==,
                    ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0);
    origin = first_cycle(n.t0, PCIE_HZ);
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)) & (3 << 6), ==,
                    ext_tag ? 1 << 6 : 0);
    ndk_close(&n);
}

static void test_pcie_ext_tag_off(void)
{
    check_pcie_caps("", true, true);
    check_pcie_caps(",ext-tag=off,tag-10bit=off", false, false);
    check_pcie_caps(",ext-tag=off", false, true);
    check_pcie_caps(",tag-10bit=off", true, false);
}

/* ------------------------------------------------------------------ */
/* A card hot-plugged long after the machine started                    */

static void test_hotplug_late(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    uint64_t size = 0;
    Ndk n;

    memset(&n, 0, sizeof(n));
    n.qts = qtest_init("-machine pc -nodefaults");
    n.now = qtest_clock_step(n.qts, 20000000);
    g_assert_cmpint(n.now, ==, 20000000);
    qtest_qmp_device_add(n.qts, "ndk-pcie-telemetry", "late", "{}");
    n.t0 = n.now;
    n.bus = qpci_new_pc(n.qts, NULL);
    n.dev = find_device(n.bus, NDK_VENDOR_ID, NDK_DEVICE_ID);
    qpci_device_enable(n.dev);
    n.bar = qpci_iomap(n.dev, 0, &size);
    g_assert_cmphex(size, ==, NDK_BAR_SIZE);

    /* the counter memory of a freshly configured FPGA: zeros */
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    wr(&n, REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, at once", got, exp, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, snapshot, at once", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 0x07FF0000);

    /*
     * Its probes start at its creation: PCIe cycle 0.4 x 20 ms = 8000000.
     * 15 us later window 0 (4095 cycles, drained 10.24 us after the
     * creation) is in the live copy: cycles, tag band 3 and FIFO band 3
     * (idle card, all free), whose windows close 9 (slot 2) and 29 (slot
     * 6) cycles after the cycle counter's; DMA window 0 ends 20.475 us
     * after it.
     */
    g_assert_cmpuint(first_cycle(n.t0, PCIE_HZ), ==, 8000000);
    step_to(&n, n.t0 + 15000);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    exp[0] = 4095;
    exp[26] = 4095 + 9;
    exp[30] = 4095 + 29;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, +15 us", got, exp, DEF_ENTRIES);

    /* +25 us: PCIe windows 0 and 1, DMA window 0 */
    step_to(&n, n.t0 + 25000);
    exp[0] = 4095 + 4096;
    exp[26] = 4095 + 4096 + 9;
    exp[30] = 4095 + 4096 + 29;
    exp[31] = 4095;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, +25 us", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);

    /*
     * Unplugged again: the device must really go (DEVICE_DELETED comes
     * only when the object is freed, so nothing may keep a reference).
     */
    qpci_unplug_acpi_device_test(n.qts, "late", n.dev->devfn >> 3);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Helpers of the generator tests                                       */

/*
 * Entries of the default card (R = 2 on every bus, 1 DMA port): the PCIe
 * probe's bus b (0 RQ, 1 RC) at 1 + 8 b, BRAKE k at 17 + k, the tag bands
 * at 23..26 and the FIFO bands at 27..30; the DMA probe's cycles at 31, its
 * bus b (0 UP, 1 DOWN) at 32 + 8 b.
 */
#define PCH(b, k)       (1 + 8 * (b) + (k))
#define DCH(b, k)       (32 + 8 * (b) + (k))
#define BRAKE_CH(k)     (17 + (k))
#define TAG_BAND(j)     (23 + (j))
#define FIFO_BAND(j)    (27 + (j))
#define DMA_CYCLES      31

static const char *const bus_name[4] = { "RQ", "RC", "UP", "DOWN" };

/* Entry of channel k of bus i of RQ, RC, UP, DOWN */
static unsigned bus_ch(unsigned i, unsigned k)
{
    return i < 2 ? PCH(i, k) : DCH(i - 2, k);
}

/*
 * Half a PCIe window after the drain of PCIe window k - 1 of a card reset
 * at 0 (10240 k - 2.5 ns): mid-window for the DMA probe as well, whose
 * drains fall at 20480 j - 5 ns.
 */
static int64_t mid_window(const Ndk *n, unsigned k)
{
    return n->t0 + (int64_t)k * 10240 + 5120;
}

/* Every word of the register file below 0x100 */
static void read_regs(Ndk *n, uint32_t *regs)
{
    for (unsigned i = 0; i < 64; i++) {
        regs[i] = rd(n, 4 * i);
    }
}

static QDict *qom_set_str(QTestState *qts, const char *path,
                          const char *prop, const char *val)
{
    return qtest_qmp(qts, "{ 'execute': 'qom-set', 'arguments': "
                     "{ 'path': %s, 'property': %s, 'value': %s } }",
                     path, prop, val);
}

/* The message of a refused qom-set, "" if it was taken; frees rsp. */
static char *qom_set_error(QDict *rsp)
{
    char *desc = g_strdup(qdict_haskey(rsp, "error") ?
                          qdict_get_str(qdict_get_qdict(rsp, "error"),
                                        "desc") : "");

    qobject_unref(rsp);
    return desc;
}

static char *qom_get_str(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", path, prop);
    char *v = NULL;

    g_assert_true(qdict_haskey(rsp, "return"));
    if (qdict_haskey(rsp, "return")) {
        v = g_strdup(qdict_get_str(rsp, "return"));
    }
    qobject_unref(rsp);
    return v ? v : g_strdup("");
}

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* ------------------------------------------------------------------ */
/* The ptc generator                                                    */

#define PTC_ARGS \
    "-object telemetry-traffic-ptc,id=t0 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0"

/*
 * The settings the tests negotiate in Device Control right after the
 * start, before the first drain, so that every window is counted with
 * them: MPS 256 B (1), MRRS 512 B (2), extended tags, no 10-bit tags, RCB
 * 64 B. PCIE_STATUS then reads 1 | 2 << 3 | 1 << 6 | link up << 9.
 */
#define PTC_STATUS      (1u | 2u << 3 | 1u << 6 | 1u << 9)

static void ptc_open(Ndk *n, const char *args)
{
    uint8_t exp;

    ndk_open(n, "q35", args);
    exp = qpci_find_capability(n->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    set_pcie_settings(n, exp, 1, 2, true, false, false);
}

/*
 * Every register, the live counters, then a snapshot of them (its BUSY
 * waited for as for busy_entries entries)
 */
static void read_all(Ndk *n, unsigned entries, unsigned busy_entries,
                     uint32_t *regs, uint64_t *live, uint64_t *snap)
{
    wr(n, REG_READ_SEL, 1);
    read_regs(n, regs);
    read_counters(n, entries, live);
    snapshot(n, busy_entries);
    wr(n, REG_READ_SEL, 0);
    read_counters(n, entries, snap);
}

/* The same at t, of a default card */
static void read_all_at(Ndk *n, int64_t t, uint32_t *regs, uint64_t *live,
                        uint64_t *snap)
{
    step_to(n, t);
    read_all(n, DEF_ENTRIES, DEF_ENTRIES, regs, live, snap);
}

/* Two copies of the 64 registers agree, or the first difference fails. */
static void check_regs(const char *what, const uint32_t *b, const uint32_t *c)
{
    for (unsigned i = 0; i < 64; i++) {
        if (b[i] != c[i]) {
            g_test_message("%s, register 0x%02x: B 0x%08x, C 0x%08x",
                           what, 4 * i, b[i], c[i]);
        }
        g_assert_cmphex(b[i], ==, c[i]);
    }
}

/*
 * A -> B at T1 = 200 ns after the drain of PCIe window 49 (about 1.02 ms),
 * with traffic on every bus and the deltas of that window on their way;
 * B runs to T2, half a window after the drain of PCIe window 99, and must
 * equal C, which ran 0 -> T2 without the migration, in every register and
 * counter. The negotiated settings (MPS 256 B) reach B in its config space
 * and must drive its traffic as they drive C's.
 */
static void test_ptc_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t at1[DEF_ENTRIES], ct1[DEF_ENTRIES];
    uint64_t lb[DEF_ENTRIES], lc[DEF_ENTRIES];
    uint64_t sb[DEF_ENTRIES], sc[DEF_ENTRIES];
    uint32_t rb[64], rc[64];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    ptc_open(&a, PTC_ARGS);
    t0 = a.t0;
    t1 = cycle_ns(drain_cycle(first_cycle(t0, PCIE_HZ), DP, 49), PCIE_HZ) +
         200;
    t2 = mid_window(&a, 100);
    step_to(&a, t1);
    wr(&a, REG_READ_SEL, 1);
    read_counters(&a, DEF_ENTRIES, at1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", PTC_ARGS, uri, t0, t1);
    g_assert_cmpint(qom_get_int(b.qts, "/objects/t0", "tags"), ==, 48);
    read_all_at(&b, t2, rb, lb, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ptc_open(&c, PTC_ARGS);
    g_assert_cmpint(c.t0, ==, t0);
    step_to(&c, t1);
    wr(&c, REG_READ_SEL, 1);
    read_counters(&c, DEF_ENTRIES, ct1);
    read_all_at(&c, t2, rc, lc, sc);
    ndk_close(&c);

    check_counters("ptc, A vs C at T1", at1, ct1, DEF_ENTRIES);
    check_regs("ptc", rb, rc);
    check_counters("ptc, B vs C, live at T2", lb, lc, DEF_ENTRIES);
    check_counters("ptc, B vs C, snapshot at T2", sb, sc, DEF_ENTRIES);

    /* what B must read whatever C does */
    for (unsigned i = 0; i < DEFAULT_CFG_REGS; i++) {
        g_assert_cmphex(rb[default_regs[i].off / 4], ==, default_regs[i].val);
    }
    g_assert_cmphex(rb[REG_STATUS / 4], ==, 0);
    g_assert_cmphex(rb[REG_READ_SEL / 4], ==, 1);
    g_assert_cmphex(rb[REG_PCIE_STATUS(0) / 4], ==, PTC_STATUS);
    check_cycles("ptc, B", lb, t0, t2);
    /* mid-window, all deltas in: the snapshot is the live copy */
    check_counters("ptc, B, snapshot vs live", sb, lb, DEF_ENTRIES);
    /* traffic flowed before T1, and more of it from T1 to T2 */
    for (unsigned i = 0; i < 4; i++) {
        static const unsigned k[] = { CH_WORDS, CH_SOF, CH_ITEMS };

        for (unsigned j = 0; j < G_N_ELEMENTS(k); j++) {
            unsigned e = bus_ch(i, k[j]);

            g_test_message("ptc, %s entry %u: %" PRIu64 " at T1, %" PRIu64
                           " at T2", bus_name[i], e, at1[e], lb[e]);
            g_assert_cmpuint(at1[e], >, 0);
            g_assert_cmpuint(lb[e], >, at1[e]);
        }
    }
}

/*
 * An overloaded card (3 endpoints at DRAIN_PERIOD 1024: load 1.39) with
 * ptc traffic is counted in the background as its clock runs, in steps of
 * 10 ms as a running VM's: A migrates at T1 with nothing read since the
 * start, while the model is behind by up to a tick and in the middle of a
 * lossy period. B, loaded from A's state, and C, which never migrated,
 * must then read the same registers, flags and counters at T2.
 */
#define LOSSY_BG_ARGS \
    "-object telemetry-traffic-ptc,id=t0 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,pcie-endpoints=3," \
    "drain-period=1024"
/* 3 endpoints of 48 entries each (the layout of this card), zeros past */
#define LOSSY_BG_CPE 48
#define LOSSY_BG_ENTRIES 160

static void step_paced(Ndk *n, int64_t t)
{
    while (n->now < t) {
        step_to(n, MIN(t, n->now + 10 * 1000 * 1000));
    }
}

/* (BUSY may wait for the adder: a generous bound) */
#define LOSSY_BG_BUSY_ENTRIES 4096

static void test_lossy_background_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t *lb = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *lc = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *sb = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *sc = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint32_t rb[64], rc[64];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);
    ptc_open(&a, LOSSY_BG_ARGS);
    t0 = a.t0;
    t1 = t0 + 123 * 1000 * 1000 + 4567;
    t2 = t1 + 77 * 1000 * 1000 + 891;
    step_paced(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", LOSSY_BG_ARGS, uri, t0, t1);
    step_paced(&b, t2);
    read_all(&b, LOSSY_BG_ENTRIES, LOSSY_BG_BUSY_ENTRIES, rb, lb, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ptc_open(&c, LOSSY_BG_ARGS);
    g_assert_cmpint(c.t0, ==, t0);
    step_paced(&c, t2);
    read_all(&c, LOSSY_BG_ENTRIES, LOSSY_BG_BUSY_ENTRIES, rc, lc, sc);
    ndk_close(&c);

    check_regs("lossy", rb, rc);
    check_counters("lossy, B vs C, live at T2", lb, lc, LOSSY_BG_ENTRIES);
    check_counters("lossy, B vs C, snapshot at T2", sb, sc,
                   LOSSY_BG_ENTRIES);
    /* the card lost deltas, and counted traffic on every endpoint */
    g_assert_cmphex(rb[REG_STATUS / 4] & STATUS_LOST, ==, STATUS_LOST);
    for (unsigned e = 0; e < 3; e++) {
        g_assert_cmpuint(sb[LOSSY_BG_CPE * e + bus_ch(0, CH_WORDS)], >, 0);
    }
    g_free(lb);
    g_free(lc);
    g_free(sb);
    g_free(sc);
}

/*
 * bytes are those of sof frames of size each, but for one cut frame.
 * The items channel (slot 6) closes its window later than the SOF channel
 * (slot 3) and counts the items of extra_cycles cycles more, at most R x 8
 * items of ITEM_BYTES each a cycle (R = 2 on every bus of the defaults).
 */
static bool same_frames(uint64_t bytes, uint64_t size, uint64_t sof,
                        uint64_t extra_cycles)
{
    uint64_t more = extra_cycles * 2 * 8 * ITEM_BYTES;

    if (bytes > size * sof + more || bytes + size <= size * sof) {
        g_test_message("%" PRIu64 " bytes, %" PRIu64 " frames of %" PRIu64
                       " (+%" PRIu64 " bytes)", bytes, sof, size, more);
    }
    return bytes <= size * sof + more && bytes + size > size * sof;
}

/* Cycles the items of bus i (0 RQ, 1 RC, 2 + UP/DOWN) have that SOF lacks */
static uint64_t items_past_sof(unsigned i, unsigned ports)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(ports, 2);
    unsigned rb = 1 + (i < 2 ? i : i - 2) * 8;

    return ch_extra(i < 2 ? &lp : &ld, rb + CH_ITEMS, rb + CH_SOF);
}

static void check_frames(const char *what, const uint64_t *c, unsigned i,
                         uint64_t size)
{
    uint64_t sof = c[bus_ch(i, CH_SOF)];
    uint64_t bytes = c[bus_ch(i, CH_ITEMS)] * ITEM_BYTES;

    g_test_message("%s: %s Avg B %.2f over %" PRIu64 " frames, expected %"
                   PRIu64, what, bus_name[i], sof ? (double)bytes / sof : 0,
                   sof, size);
    g_assert_cmpuint(sof, >, 0);
    g_assert_true(same_frames(bytes, size, sof, items_past_sof(i, 1)));
}

/*
 * The claims of docs/traffic-generators.md that hold for any card, on the
 * counters of a card with the ptc defaults after 3 ms, read after a
 * SNAPSHOT. At the middle of PCIe window 294 the PCIe probe has counted
 * windows 0..293 (cycles up to 1204222, 3010.5575 us) and the DMA probe
 * windows 0..146 (cycles up to 602110, 3010.555 us): the same span of time,
 * whole schedules of the model (its blocks are 4096 PCIe cycles from cycle
 * 0, its frames never cross the end of a 256-cycle period), so the
 * completions RC carried in it are those DOWN carried, to a frame.
 *
 * The completion size is the MPS PCIE_STATUS reports (256 B negotiated
 * here); read-bytes (2048) is a multiple of it, so every completion has
 * that size. With P DMA ports (entries: UP of port p is DMA bus 2p, DOWN
 * 2p + 1) every UP bus has its own RD % and Avg B, as the reference
 * report shows them; the completions of RC go down on the DOWN buses
 * together.
 */
/* Picoseconds of cycle c of a clock of hz (a divisor of 10^12) */
static uint64_t cycle_ps(uint64_t c, uint64_t hz)
{
    g_assert_cmpuint(1000000000000ull % hz, ==, 0);
    return c * (1000000000000ull / hz);
}

/* Whole cycles of a clock of hz that cover ps picoseconds (0 if <= 0) */
static uint64_t ps_cycles(int64_t ps, uint64_t hz)
{
    uint64_t per = 1000000000000ull / hz;

    return ps <= 0 ? 0 : ((uint64_t)ps + per - 1) / per;
}

static void ptc_claims(const char *args, unsigned ports)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(ports, 2);
    uint64_t c[DEF_ENTRIES], origin, od, down_sof = 0;
    uint64_t rc_lo, rc_hi, rc_more = 0, down_more = 0;
    uint32_t st, tags, mps;
    int64_t t;
    Ndk n;

    g_assert_cmpuint(31 + 1 + 2 * ports * 8, <=, DEF_ENTRIES);
    ptc_open(&n, args);
    origin = first_cycle(n.t0, PCIE_HZ);
    od = first_cycle(n.t0, DMA_HZ);
    step_to(&n, word_ns(origin, 0));
    st = rd(&n, REG_PCIE_STATUS(0));
    g_assert_cmphex(st, ==, PTC_STATUS);
    mps = 128u << (st & 7);
    g_assert_cmpuint(mps, ==, 256);

    t = mid_window(&n, 294);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, c);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, PTC_STATUS);
    tags = rd(&n, REG_PCIE_TAGS(0));
    check_cycles(args, c, n.t0, t);
    g_assert_cmpuint(c[0], ==, 294 * 4096 - 1);
    g_assert_cmpuint(c[DMA_CYCLES], ==, 147 * 4096 - 1);
    ndk_close(&n);

    /*
     * every cycle with no free tag is a cycle of "no free PCIe tag"; tag
     * band 0 (slot 7, from cycle o) holds 30 cycles BRAKE 0 (slot 1, from
     * cycle o + 1) lacks, 1 count each at most
     */
    g_test_message("BRAKE 0: %" PRIu64 " cycles, tag band 0: %" PRIu64,
                   c[BRAKE_CH(0)], c[TAG_BAND(0)]);
    g_assert_cmpuint(ch_extra(&lp, TAG_BAND(0), BRAKE_CH(0)), ==, 30);
    g_assert_cmpuint(c[BRAKE_CH(0)] +
                     ch_extra(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     c[TAG_BAND(0)]);

    /* RC: completions of MPS bytes with their 12-byte header */
    check_frames("ptc", c, 1, mps + 12);
    for (unsigned p = 0; p < ports; p++) {
        unsigned up = 2 * p, down = 2 * p + 1;
        uint64_t mvb = c[DCH(up, CH_MVB)], sof = c[DCH(up, CH_SOF)];
        double rdp = mvb ? 100.0 * (mvb - sof) / mvb : 0;

        /* RD % of UP: (MVB items - SOF) / MVB items = read-percent (40) */
        g_test_message("ptc, DMA port %u: RD %% of UP %.2f (%" PRIu64
                       " MVB items, %" PRIu64 " SOF)", p, rdp, mvb, sof);
        g_assert_cmpuint(mvb, >, 0);
        g_assert_cmpfloat(rdp, >=, 38.0);
        g_assert_cmpfloat(rdp, <=, 42.0);
        /* UP carries the writes of write-bytes (192), DOWN completions */
        g_assert_true(same_frames(c[DCH(up, CH_ITEMS)] * ITEM_BYTES, 192,
                                  sof, items_past_sof(2 + up, ports)));
        g_assert_true(same_frames(c[DCH(down, CH_ITEMS)] * ITEM_BYTES, mps,
                                  c[DCH(down, CH_SOF)],
                                  items_past_sof(2 + down, ports)));
        /*
         * each completion on DOWN has its MVB header: MVB items (from
         * cycle o, a slot later) and SOF differ by at most R = 2 for each
         * cycle one's span has and the other's lacks
         */
        g_assert_cmpuint(c[DCH(down, CH_MVB)], <=, c[DCH(down, CH_SOF)] +
                         2 * ch_extra(&ld, DCH(down, CH_MVB) - DMA_CYCLES,
                                      DCH(down, CH_SOF) - DMA_CYCLES));
        g_assert_cmpuint(c[DCH(down, CH_SOF)], <=, c[DCH(down, CH_MVB)] +
                         2 * ch_extra(&ld, DCH(down, CH_SOF) - DMA_CYCLES,
                                      DCH(down, CH_MVB) - DMA_CYCLES));
        /* DOWN held by the DMA side: reason 4 covers its stalls and more */
        g_assert_cmpfloat((double)c[BRAKE_CH(4)] / c[0], >=,
                          (double)c[DCH(down, CH_STALL)] / c[DMA_CYCLES]);
        down_sof += c[DCH(down, CH_SOF)];
    }
    /*
     * every completion on RC appears on DOWN, to 2 frames. The SOF
     * channels of RC (PCIe cycles) and of each DOWN (DMA cycles) cover
     * different spans of time: each side may also count the SOF (R = 2 a
     * cycle of its own clock) of the time its span has and the other's
     * lacks, at either end.
     */
    ch_span(&lp, origin, DP, 294, PCH(1, CH_SOF), &rc_lo, &rc_hi);
    rc_lo = cycle_ps(rc_lo, PCIE_HZ);
    rc_hi = cycle_ps(rc_hi, PCIE_HZ);
    for (unsigned p = 0; p < ports; p++) {
        uint64_t lo, hi;

        ch_span(&ld, od, DP, 147, DCH(2 * p + 1, CH_SOF) - DMA_CYCLES, &lo,
                &hi);
        lo = cycle_ps(lo, DMA_HZ);
        hi = cycle_ps(hi, DMA_HZ);
        rc_more = MAX(rc_more,
                      2 * ps_cycles((int64_t)rc_hi - (int64_t)hi, PCIE_HZ) +
                      2 * ps_cycles((int64_t)lo - (int64_t)rc_lo, PCIE_HZ));
        down_more += 2 * ps_cycles((int64_t)hi - (int64_t)rc_hi, DMA_HZ) +
                     2 * ps_cycles((int64_t)rc_lo - (int64_t)lo, DMA_HZ);
    }
    g_test_message("ptc: %" PRIu64 " completions on RC, %" PRIu64 " on DOWN"
                   " (+%" PRIu64 ", +%" PRIu64 ")", c[PCH(1, CH_SOF)],
                   down_sof, rc_more, down_more);
    g_assert_cmpuint(down_sof + 2 + rc_more, >=, c[PCH(1, CH_SOF)]);
    g_assert_cmpuint(down_sof, <=, c[PCH(1, CH_SOF)] + 2 + down_more);

    /* no bus beyond its width, within the cycles of its own clock */
    for (unsigned i = 0; i < 2 + 2 * ports; i++) {
        unsigned e0 = i < 2 ? PCH(i, 0) : DCH(i - 2, 0);
        uint64_t cyc = c[i < 2 ? 0 : DMA_CYCLES];
        uint64_t words = c[e0 + CH_WORDS];

        g_test_message("ptc, PCIe/DMA bus %u: %" PRIu64 " words, %" PRIu64
                       " stalls of %" PRIu64 " cycles", i, words,
                       c[e0 + CH_STALL], cyc);
        g_assert_cmpuint(words, >, 0);
        if (i < 2) {
            check_bus_bounds(args, c, &lp, 0, i);
        } else {
            check_bus_bounds(args, c, &ld, DMA_CYCLES, i - 2);
        }
    }
    /* the PCIe side has no MVB */
    for (unsigned b = 0; b < 2; b++) {
        g_assert_cmpuint(c[PCH(b, CH_MVB)], ==, 0);
        g_assert_cmpuint(c[PCH(b, CH_MVB_STALL)], ==, 0);
    }
    /*
     * The PTC hands out at most tags = 48 of the 256: never more than
     * 256 / 2 free (band 3); each histogram counts every cycle once (its
     * bands' windows widened as in check_histograms).
     */
    g_assert_cmpuint(c[TAG_BAND(3)], ==, 0);
    g_assert_cmpuint(tags & 0xFFFF, <=, 48);
    g_assert_cmpuint(tags >> 16, <=, tags & 0xFFFF);
    check_histograms(args, c, &lp, 0);
    for (unsigned e = 32 + 16 * ports; e < DEF_ENTRIES; e++) {
        g_assert_cmpuint(c[e], ==, 0);
    }
}

static void test_ptc_claims(void)
{
    ptc_claims(PTC_ARGS, 1);
}

/*
 * The same with 2 DMA ports: 31 + 1 + 2 x 2 x 8 = 64 channels per
 * endpoint, ENTRIES 64; the DMA buses UP0, DOWN0, UP1, DOWN1 at 32, 40,
 * 48, 56.
 */
static void test_ptc_claims_2ports(void)
{
    ptc_claims("-object telemetry-traffic-ptc,id=t0 "
               "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,dma-ports=2",
               2);
}

/*
 * qom-set tags=8 and latency-ns=4000 while the card runs: from the next
 * PCIe drain window on, reads hold their tags twice as long and only 8
 * exist, so "no free PCIe tag" (BRAKE 0) is active in a larger share of
 * the cycles. Live counters at the middle of PCIe windows 20 and 60 give
 * the delta of windows 20..59 (old values); the change is made in window
 * 60 and applies from window 61; counters in windows 62 and 102 give the
 * delta of windows 62..101 (new values). 40 windows each: five jitter
 * groups of 8 windows.
 */
static void test_ptc_qom_set_tags(void)
{
    const Layout lp = pcie_layout(2);
    uint64_t ca[DEF_ENTRIES], cb[DEF_ENTRIES], cc[DEF_ENTRIES];
    uint64_t cd[DEF_ENTRIES], before[DEF_ENTRIES], after[DEF_ENTRIES];
    uint64_t origin;
    double sb, sa;
    uint32_t tags;
    Ndk n;

    ptc_open(&n, PTC_ARGS);
    origin = first_cycle(n.t0, PCIE_HZ);
    wr(&n, REG_READ_SEL, 1);
    step_to(&n, mid_window(&n, 20));
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 20);
    read_counters(&n, DEF_ENTRIES, ca);
    step_to(&n, mid_window(&n, 60));
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 60);
    read_counters(&n, DEF_ENTRIES, cb);
    qom_set_ok(n.qts, "/objects/t0", "tags", 8);
    qom_set_ok(n.qts, "/objects/t0", "latency-ns", 4000);
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "tags"), ==, 8);
    g_assert_cmpint(qom_get_int(n.qts, "/objects/t0", "latency-ns"), ==,
                    4000);
    step_to(&n, mid_window(&n, 62));
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 62);
    read_counters(&n, DEF_ENTRIES, cc);
    /* window 61 had the new pool: at most 8 tags free now and lowest */
    tags = rd(&n, REG_PCIE_TAGS(0));
    step_to(&n, mid_window(&n, 102));
    read_counters(&n, DEF_ENTRIES, cd);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);

    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        before[e] = cb[e] - ca[e];
        after[e] = cd[e] - cc[e];
    }
    g_assert_cmpuint(before[0], ==, 40 * DP);
    g_assert_cmpuint(after[0], ==, 40 * DP);
    sb = (double)before[BRAKE_CH(0)] / before[0];
    sa = (double)after[BRAKE_CH(0)] / after[0];
    g_test_message("BRAKE 0 share: %.4f with 48 tags and 2000 ns, %.4f with "
                   "8 tags and 4000 ns", sb, sa);
    g_assert_cmpfloat(sa, >, sb);
    g_assert_cmpuint(after[BRAKE_CH(0)], >, before[BRAKE_CH(0)]);
    /*
     * the claim holds on both sides. Each difference covers 40 windows of
     * every channel, but a channel's windows lie edge_c cycles after the
     * cycle counter's: tag band 0 (slot 7, 34) holds 29 cycles BRAKE 0
     * (slot 1, 5) lacks, 1 count each at most.
     */
    g_assert_cmpuint(ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), ==, 29);
    g_assert_cmpuint(before[BRAKE_CH(0)] +
                     ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     before[TAG_BAND(0)]);
    g_assert_cmpuint(after[BRAKE_CH(0)] +
                     ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     after[TAG_BAND(0)]);
    /*
     * with 8 tags at most, free tags stay in bands 0 and 1 (<= 256 / 8):
     * each cycle in one of them; their windows (slots 7 and 0: edges 34
     * and -1) are 35 cycles apart, so 35 cycles may count in both or in
     * neither
     */
    g_assert_cmpuint(after[TAG_BAND(2)] + after[TAG_BAND(3)], ==, 0);
    g_assert_cmpuint(ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)), ==, 35);
    g_assert_cmpuint(after[TAG_BAND(0)] + after[TAG_BAND(1)], <=,
                     40 * DP + ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)));
    g_assert_cmpuint(after[TAG_BAND(0)] + after[TAG_BAND(1)] +
                     ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)), >=, 40 * DP);
    g_assert_cmpuint(tags & 0xFFFF, <=, 8);
    /* reads still flow */
    g_assert_cmpuint(after[DCH(1, CH_WORDS)], >, 0);
}

/* ------------------------------------------------------------------ */
/* The scenario generator                                               */

/*
 * Phase 1: the link is down, nothing moves, for 50 us. Phase 2, the last,
 * for ever: 256-byte RQ frames back to back, and on UP the 100-byte frames
 * of PATTERN_ARGS (2 stalled cycles, 2 words, 3 idle: period 7). Phase 2
 * starts at 50 us: PCIe cycle 20000, inside PCIe window 4 = [16383, 20479),
 * and DMA cycle 10000 = 7 x 1428 + 4, inside DMA window 2. A phase plays
 * its own pattern time from its first cycle, so UP begins there with the
 * first stalled cycle of a frame, not 4 cycles into a period.
 */
static const char scenario_ini[] =
    "# written by the QTest: 50 us of a link that is down\n"
    "[phase down]\n"
    "model=idle\n"
    "duration=50us\n"
    "link-up=false\n"
    "\n"
    "# then 256-byte RQ frames back to back, for ever (the last phase)\n"
    "[phase rq]\n"
    "model = pattern\n"
    "duration = 1 ms\n"
    "rq-frame-bytes=256\n"
    "up-frame-bytes=100\n"
    "up-gap=3\n"
    "up-stall=2\n";

/* A parameter the pattern model does not have */
static const char scenario_bad_ini[] =
    "[phase 1]\n"
    "model=pattern\n"
    "duration=10us\n"
    "rq-bytes=256\n";

static void test_scenario_phases(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-scn-XXXXXX", NULL);
    g_autofree char *ini = NULL, *bad = NULL, *args = NULL, *desc = NULL;
    g_autofree char *file = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    uint64_t origin, p2, d2, from[2];
    SimProbe ver[2], pp, dp;
    uint32_t st0;
    uint8_t ecap;
    Ndk n;

    g_assert(dir);
    ini = write_tmp(dir, "phases.ini", scenario_ini);
    bad = write_tmp(dir, "bad.ini", scenario_bad_ini);
    args = g_strdup_printf("-object telemetry-traffic-scenario,id=t0,file=%s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           ini);
    ndk_open(&n, "q35", args);
    /* the phases are in virtual time from 0: the arithmetic below too */
    g_assert_cmpint(n.t0, ==, 0);
    origin = first_cycle(n.t0, PCIE_HZ);
    p2 = first_cycle(50000, PCIE_HZ);
    g_assert_cmpuint(p2, ==, 20000);
    g_assert_cmpuint(drain_cycle(origin, DP, 3), <, p2);
    g_assert_cmpuint(drain_cycle(origin, DP, 4), >, p2);
    d2 = first_cycle(50000, DMA_HZ);
    g_assert_cmpuint(d2, ==, 10000);
    ecap = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    st0 = status_from_config(qpci_config_readw(n.dev, ecap + PCI_EXP_DEVCTL),
                             qpci_config_readw(n.dev,
                                               ecap + PCI_EXP_DEVCTL2),
                             qpci_config_readw(n.dev, ecap + PCI_EXP_LNKCTL));
    st0 &= ~(1u << 9);

    /* after the first drain: link down, all tags and FIFO words free */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 256 | 256 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    /* the drain of window 3 samples cycle 16384, 41 us: still down */
    step_to(&n, word_ns(origin, 3));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0);

    /* 45 us: windows 0..3 counted, RQ has not moved */
    step_to(&n, n.t0 + 45000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 4);
    wr(&n, REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4 * DP - 1);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_WORDS)), ==, 0);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_ITEMS)), ==, 0);

    /* the drain of window 4 samples cycle 20480, in phase 2: link up */
    step_to(&n, word_ns(origin, 4));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0 | 1u << 9);

    /*
     * 55 us: window 4 counted. RQ moved a word in each cycle from 20000
     * and started a frame every 4 cycles from 20000; 16 items in every
     * word. Each RQ channel's window 4 ends 5 x slot cycles after the
     * cycle counter's (20479): words (slot 1) count 20000..20483 (484),
     * SOF (slot 3) 20000, ..., 20492 (124), items (slot 6) 509 words,
     * region 0 (slot 7) 514 words, region 1 (slot 0) 20000..20478 (479).
     */
    step_to(&n, n.t0 + 55000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 5);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_WORDS)), ==, 484);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_SOF)), ==, 124);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_ITEMS)), ==, 16 * 509);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_REGION0)), ==, 514);
    g_assert_cmpuint(cnt(&n, PCH(0, CH_REGION0 + 1)), ==, 479);
    /* DMA windows 0 and 1 (cycles up to 8190) were all in phase 1 */
    g_assert_cmpuint(windows_by(n.now, first_cycle(n.t0, DMA_HZ), DMA_HZ,
                                DP), ==, 2);
    g_assert_cmpuint(cnt(&n, DMA_CYCLES), ==, 2 * DP - 1);
    g_assert_cmpuint(cnt(&n, DCH(0, CH_WORDS)), ==, 0);

    /* a file with an unknown key is refused, naming file, group and key */
    desc = qom_set_error(qom_set_str(n.qts, "/objects/t0", "file", bad));
    g_test_message("qom-set file %s: %s", bad, desc);
    g_assert_nonnull(strstr(desc, bad));
    g_assert_nonnull(strstr(desc, "[phase 1]"));
    g_assert_nonnull(strstr(desc, "rq-bytes"));
    file = qom_get_str(n.qts, "/objects/t0", "file");
    g_assert_cmpstr(file, ==, ini);

    /*
     * Half a window after the drain of window 8: every counter, the
     * simulator over the two phases (both with all tags and FIFO words
     * free). DMA windows 0..3 = cycles [0, 16383) of the cycle counter:
     * UP idle up to 10000, then phase 2's own cycles of its pattern, up
     * to 6383 + 4 x slot. UP words (slot 1) see [0, 6387): 6387 = 7 x 912
     * + 3, 912 frames and the first word of one more; SOF (slot 3) and
     * MVB items (slot 4) [0, 6395) = 7 x 913 + 4, 914 frames; items (slot
     * 6) [0, 6407) = 7 x 915 + 2: 915 frames of 25 items. The DMA probe
     * starts at cycle 0 like the PCIe one (the card was reset at 0).
     */
    ver[0] = rq_probe(0);
    from[0] = origin;
    ver[1] = rq_probe(256);
    from[1] = p2;
    sim_windows_versions(ver, from, 2, origin, DP, 9, exp);
    pattern_probes(&pp, &dp);
    dp.bus[0].start = d2;
    sim_windows(&dp, first_cycle(n.t0, DMA_HZ), DP, 4, exp + DMA_CYCLES);
    g_assert_cmpuint(exp[DMA_CYCLES], ==, 4 * DP - 1);
    g_assert_cmpuint(exp[PCH(0, CH_WORDS)], ==, 484 + 4 * 4096);
    g_assert_cmpuint(exp[PCH(0, CH_SOF)], ==, 124 + 4 * 1024);
    g_assert_cmpuint(exp[TAG_BAND(3)], ==, 9 * 4096 - 1 + 9);
    g_assert_cmpuint(exp[DCH(0, CH_WORDS)], ==, 2 * 912 + 1);
    /* stalls (slot 2): [0, 6391) = 7 x 913: 913 frames' 2 cycles */
    g_assert_cmpuint(exp[DCH(0, CH_STALL)], ==, 2 * 913);
    g_assert_cmpuint(exp[DCH(0, CH_SOF)], ==, 914);
    g_assert_cmpuint(exp[DCH(0, CH_MVB)], ==, 914);
    g_assert_cmpuint(exp[DCH(0, CH_ITEMS)], ==, 25 * 915);
    step_to(&n, mid_window(&n, 9));
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 9);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("scenario, live", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st0 | 1u << 9);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    ndk_close(&n);
    unlink(ini);
    unlink(bad);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The plugin generator with the sample plugin                          */

/*
 * The sample plugin with burst=3, idle=6, bytes=40, tags=20, mps=1: a
 * period of 9 cycles from cycle 0 of each probe, a one-word frame on RQ and
 * on UP (with its MVB item) in each of its first 3 cycles. 40 bytes are 10
 * items: region 0 with the SOF and 8 items, region 1 with the EOF at item
 * 1 (2 items). Over the first C cycles the frames number
 * C / 9 x 3 + min(C % 9, 3). RC and DOWN idle, no BRAKE, 20 free tags
 * (band 1 of 256: 1 <= 20 <= 32), all FIFO words free (band 3); MPS
 * encoding 1 in PCIE_STATUS instead of the host's 0.
 */
#define SQ_ARGS         "burst=3,,idle=6,,bytes=40,,tags=20,,mps=1"
#define SQ_BURST        3
#define SQ_PERIOD       9

static uint64_t sq_frames(uint64_t c)
{
    return c / SQ_PERIOD * SQ_BURST + MIN(c % SQ_PERIOD, SQ_BURST);
}

/*
 * Counters after kp PCIe and kd DMA windows of a card reset at 0, each
 * channel over its own span: per frame and per cycle of its span.
 */
static void sq_probe(const Layout *l, uint64_t k, const uint64_t *per_frame,
                     const uint64_t *per_cycle, uint64_t *exp)
{
    for (unsigned c = 0; c < l->n; c++) {
        uint64_t lo, hi;

        ch_span(l, 0, DP, k, c, &lo, &hi);
        exp[c] = per_frame[c] * (sq_frames(hi) - sq_frames(lo)) +
                 per_cycle[c] * (hi - lo);
    }
}

static void sq_expect(uint64_t kp, uint64_t kd, uint64_t *exp)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    uint64_t pf[SIM_MAX_CH] = { 0 }, pc[SIM_MAX_CH] = { 0 };
    uint64_t df[SIM_MAX_CH] = { 0 }, dc[SIM_MAX_CH] = { 0 };

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    pc[0] = 1;
    pf[PCH(0, CH_WORDS)] = pf[PCH(0, CH_SOF)] = 1;
    pf[PCH(0, CH_ITEMS)] = 10;
    pf[PCH(0, CH_REGION0)] = pf[PCH(0, CH_REGION0 + 1)] = 1;
    pc[TAG_BAND(1)] = 1;
    pc[FIFO_BAND(3)] = 1;
    dc[0] = 1;
    df[1 + CH_WORDS] = df[1 + CH_SOF] = df[1 + CH_MVB] = 1;
    df[1 + CH_ITEMS] = 10;
    df[1 + CH_REGION0] = df[1 + CH_REGION0 + 1] = 1;
    sq_probe(&lp, kp, pf, pc, exp);
    sq_probe(&ld, kd, df, dc, exp + DMA_CYCLES);
}

static void test_plugin_sample(void)
{
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-plg-XXXXXX", NULL);
    g_autofree char *obj = NULL, *quoted = NULL, *args = NULL;
    g_autofree char *got_args = NULL, *desc = NULL, *text = NULL;
    g_autofree char *obj_missing = NULL, *obj_text = NULL, *obj_bad = NULL;
    g_autofree char *msg_text = NULL, *msg_bad = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES], origin;
    uint32_t st;
    uint8_t ecap;
    Ndk n;

    if (!so || !g_file_test(so, G_FILE_TEST_IS_REGULAR)) {
        g_test_message("PTM_SAMPLE_PLUGIN (%s) names no file: run the test "
                       "with tests/qtest/run-qtest.sh after building the "
                       "project (build/traffic-gen/plugins/"
                       "ptm-sample-plugin.so)", so ? so : "unset");
        g_test_fail();
        return;
    }
    g_assert(dir);

    /* the hand arithmetic of the closed form */
    g_assert_cmpuint(sq_frames(9 * 4096 - 1), ==, 4095 * 3 + 3);
    g_assert_cmpuint(sq_frames(4 * 4096 - 1), ==, 1820 * 3 + 3);
    g_assert_cmpuint(sq_frames(4095), ==, 455 * 3);

    obj = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s,args="
                          SQ_ARGS, so);
    quoted = g_shell_quote(obj);
    args = g_strdup_printf("-object %s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           quoted);
    ndk_open(&n, "q35", args);
    g_assert_cmpint(n.t0, ==, 0);
    origin = first_cycle(n.t0, PCIE_HZ);
    got_args = qom_get_str(n.qts, "/objects/t0", "args");
    g_assert_cmpstr(got_args, ==, "burst=3,idle=6,bytes=40,tags=20,mps=1");
    ecap = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    st = status_from_config(qpci_config_readw(n.dev, ecap + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.dev, ecap + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.dev, ecap + PCI_EXP_LNKCTL));
    g_assert_cmphex(st & 7, ==, 0);
    st |= 1;

    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 20 | 20 << 16);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    /* 15 us: the deltas of PCIe window 0 are in, no DMA window yet */
    step_to(&n, n.t0 + 15000);
    g_assert_cmpuint(windows_by(n.now, origin, PCIE_HZ, DP), ==, 1);
    wr(&n, REG_READ_SEL, 1);
    sq_expect(1, 0, exp);
    g_assert_cmpuint(exp[0], ==, 4095);
    /* RQ words (slot 1): cycles [1, 4095 + 5) */
    g_assert_cmpuint(exp[PCH(0, CH_WORDS)], ==, sq_frames(4100) - 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("plugin, live, PCIe window 0", got, exp, DEF_ENTRIES);

    /* arguments the plugin refuses: the old ones stay */
    desc = qom_set_error(qom_set_str(n.qts, "/objects/t0", "args",
                                     "bytes=100"));
    g_test_message("qom-set args bytes=100: %s", desc);
    g_assert_nonnull(strstr(desc, "bytes=100"));
    g_assert_nonnull(strstr(desc, "(sample)"));
    g_free(got_args);
    got_args = qom_get_str(n.qts, "/objects/t0", "args");
    g_assert_cmpstr(got_args, ==, "burst=3,idle=6,bytes=40,tags=20,mps=1");

    /* PCIe windows 0..8 (36863 cycles), DMA windows 0..3 (16383) */
    step_to(&n, mid_window(&n, 9));
    sq_expect(9, 4, exp);
    g_assert_cmpuint(exp[0], ==, 9 * 4096 - 1);
    g_assert_cmpuint(exp[DMA_CYCLES], ==, 4 * 4096 - 1);
    /*
     * RQ words (slot 1): cycles [1, 36863 + 5), 36868 = 9 x 4096 + 4: all
     * 4096 x 3 + 3 frames but the one of cycle 0; DMA MVB items (slot 4,
     * from cycle 0): [0, 16383 + 16), 16399 = 9 x 1822 + 1
     */
    g_assert_cmpuint(exp[PCH(0, CH_WORDS)], ==, 12290);
    g_assert_cmpuint(exp[DCH(0, CH_MVB)], ==, 1822 * 3 + 1);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("plugin, snapshot", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st);
    ndk_close(&n);

    /* refused at start-up, with the reason: a path that does not exist */
    obj_missing = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s/"
                                  "no-such-plugin.so", dir);
    msg_text = g_strdup_printf("plugin %s/no-such-plugin.so: no such file",
                               dir);
    {
        const char *extra[] = {
            "-object", obj_missing,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_text);
    }
    /* a file that is not a shared object */
    text = write_tmp(dir, "not-a-plugin.so", "not an ELF file\n");
    obj_text = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s",
                               text);
    g_free(msg_text);
    msg_text = g_strdup_printf("plugin %s: not a shared object that can be "
                               "loaded", text);
    {
        const char *extra[] = {
            "-object", obj_text,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_text);
    }
    /* arguments the plugin's create() refuses: a frame is one word */
    obj_bad = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s,"
                              "args=bytes=100", so);
    msg_bad = g_strdup_printf("plugin %s (sample): bytes=100: a frame is "
                              "one word here, 1 to 64 bytes", so);
    {
        const char *extra[] = {
            "-object", obj_bad,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_bad);
    }
    unlink(text);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The replay generator                                                 */

/*
 * A hand-written VCD of the default card (R = 2, 3-bit EOF_POS: region r
 * of bus b is bit 2 b + r of SOF/EOF/MVB_VLD and bits 3 (2 b + r) + 2 ..
 * 3 (2 b + r) of EOF_POS). PCIE_CLK rises at 5, 15, ..., 75 (8 cycles),
 * DMA_CLK at 5, 25, 45, 65 (4 cycles); the values of PCIe cycle k are set
 * at 10 k, those of DMA cycle j at 20 j, before the edges that sample them.
 * Replayed with end=loop: PCIe cycle c of the card is cycle c % 8 of the
 * trace, DMA cycle c is c % 4.
 *
 * PCIe cycles (tags: PCIE_TAG_FREE; no PCIE_STFIFO_FREE: the capacity,
 * band 3; PCIE_MPS 3 throughout; no PCIE_LINK_UP: up):
 *   0  RQ word: SOF r0, no EOF: 8 + 8 items           tags 200 (band 3)
 *   1  RQ word: EOF r0 at 3: 4 items in r0             tags 200
 *   2  RQ held (SRC_RDY, no DST_RDY): a stall          tags 200
 *   3  RQ word: SOF r0, EOF r1 at 7: 8 + 8 items       tags 200
 *   4  RC word: SOF and EOF r0 at 2: 3 items           tags 200
 *   5  idle, BRAKE 3                                    tags 10 (band 1)
 *   6  idle                                             tags 10
 *   7  idle, BRAKE 0                                    tags 0 (band 0)
 * Per pass: RQ 3 words, 1 stall, 2 SOF, 36 items, r0 3, r1 2; RC 1 word,
 * 1 SOF, 3 items, r0 1; BRAKE 0 once, BRAKE 3 once; tag bands 0/1/3:
 * 1, 2, 5.
 * DMA cycles:
 *   0  UP word: SOF r0, EOF r1 at 7: 16 items; MVB item r0, handshake
 *   1  UP MVB alone: items r0 and r1, handshake
 *   2  UP MVB item r0 held (MVB stall); DOWN word held (stall)
 *   3  UP MVB item r0 taken; DOWN word taken: SOF and EOF r0 at 0, 1 item,
 *      with its MVB item (bit 2)
 * Per pass: UP 1 word, 1 SOF, 16 items, r0 1, r1 1, MVB 4, MVB stall 1;
 * DOWN 1 word, 1 stall, 1 SOF, 1 item, r0 1, MVB 1.
 */
static const char replay_vcd[] =
    "$date written by the QTest $end\n"
    "$version by hand $end\n"
    "$timescale 1ns $end\n"
    "$scope module tb $end\n"
    "$scope module dut $end\n"
    "$var wire 1 ! pcie_clk $end\n"
    "$var wire 4 \" pcie_mfb_sof [3:0] $end\n"
    "$var wire 4 # pcie_mfb_eof [3:0] $end\n"
    "$var wire 12 $ pcie_mfb_eof_pos [11:0] $end\n"
    "$var wire 2 % pcie_mfb_src_rdy [1:0] $end\n"
    "$var wire 2 & pcie_mfb_dst_rdy [1:0] $end\n"
    "$var wire 11 ' pcie_tag_free [10:0] $end\n"
    "$var wire 6 ( pcie_ptc_brake [5:0] $end\n"
    "$var wire 3 ) pcie_mps [2:0] $end\n"
    "$var wire 1 * dma_clk $end\n"
    "$var wire 4 + dma_mfb_sof [3:0] $end\n"
    "$var wire 4 , dma_mfb_eof [3:0] $end\n"
    "$var wire 12 - dma_mfb_eof_pos [11:0] $end\n"
    "$var wire 2 . dma_mfb_src_rdy [1:0] $end\n"
    "$var wire 2 / dma_mfb_dst_rdy [1:0] $end\n"
    "$var wire 4 0 dma_mvb_vld [3:0] $end\n"
    "$var wire 2 1 dma_mvb_src_rdy [1:0] $end\n"
    "$var wire 2 2 dma_mvb_dst_rdy [1:0] $end\n"
    "$upscope $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n"
    "#0\n"
    "$dumpvars\n"
    "0!\n" "b0001 \"\n" "b0000 #\n" "b000000000000 $\n" "b01 %\n" "b01 &\n"
    "b11001000 '\n" "b000000 (\n" "b011 )\n"
    "0*\n" "b0001 +\n" "b0010 ,\n" "b000000111000 -\n" "b01 .\n" "b01 /\n"
    "b0001 0\n" "b01 1\n" "b01 2\n"
    "$end\n"
    "#5\n" "1!\n" "1*\n"
    "#10\n" "0!\n"                                      /* PCIe 1 */
    "b0000 \"\n" "b0001 #\n" "b000000000011 $\n"
    "#15\n" "1!\n" "0*\n"
    "#20\n" "0!\n"                                      /* PCIe 2, DMA 1 */
    "b0001 \"\n" "b0010 #\n" "b000000111000 $\n" "b00 &\n"
    "b0000 +\n" "b0000 ,\n" "b000000000000 -\n" "b00 .\n" "b00 /\n"
    "b0011 0\n"
    "#25\n" "1!\n" "1*\n"
    "#30\n" "0!\n"                                      /* PCIe 3 */
    "b01 &\n"
    "#35\n" "1!\n" "0*\n"
    "#40\n" "0!\n"                                      /* PCIe 4, DMA 2 */
    "b0100 \"\n" "b0100 #\n" "b000010000000 $\n" "b10 %\n" "b10 &\n"
    "b0100 +\n" "b0100 ,\n" "b10 .\n" "b0001 0\n" "b00 2\n"
    "#45\n" "1!\n" "1*\n"
    "#50\n" "0!\n"                                      /* PCIe 5 */
    "b0000 \"\n" "b0000 #\n" "b000000000000 $\n" "b00 %\n" "b00 &\n"
    "b1010 '\n" "b001000 (\n"
    "#55\n" "1!\n" "0*\n"
    "#60\n" "0!\n"                                      /* PCIe 6, DMA 3 */
    "b000000 (\n"
    "b10 /\n" "b0101 0\n" "b11 1\n" "b11 2\n"
    "#65\n" "1!\n" "1*\n"
    "#70\n" "0!\n"                                      /* PCIe 7 */
    "b0 '\n" "b000001 (\n"
    "#75\n" "1!\n" "0*\n"
    "#80\n" "0!\n";

/*
 * What each cycle of the trace adds to the channels (the tables above;
 * every frame ends within the pass, so the adds do not depend on what
 * came before but for the RQ word of cycle 1, whose frame cycle 0 opens).
 */
static void replay_pcie_cycle(unsigned k, uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    inc[FIFO_BAND(3)] = 1;
    inc[TAG_BAND(k < 5 ? 3 : k < 7 ? 1 : 0)] = 1;
    switch (k) {
    case 0:
    case 3:
        inc[PCH(0, CH_WORDS)] = inc[PCH(0, CH_SOF)] = 1;
        inc[PCH(0, CH_ITEMS)] = 16;
        inc[PCH(0, CH_REGION0)] = inc[PCH(0, CH_REGION0 + 1)] = 1;
        break;
    case 1:
        inc[PCH(0, CH_WORDS)] = inc[PCH(0, CH_REGION0)] = 1;
        inc[PCH(0, CH_ITEMS)] = 4;
        break;
    case 2:
        inc[PCH(0, CH_STALL)] = 1;
        break;
    case 4:
        inc[PCH(1, CH_WORDS)] = inc[PCH(1, CH_SOF)] = 1;
        inc[PCH(1, CH_ITEMS)] = 3;
        inc[PCH(1, CH_REGION0)] = 1;
        break;
    case 5:
        inc[BRAKE_CH(3)] = 1;
        break;
    case 7:
        inc[BRAKE_CH(0)] = 1;
        break;
    }
}

static void replay_dma_cycle(unsigned k, uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    switch (k) {
    case 0:
        inc[1 + CH_WORDS] = inc[1 + CH_SOF] = inc[1 + CH_MVB] = 1;
        inc[1 + CH_ITEMS] = 16;
        inc[1 + CH_REGION0] = inc[1 + CH_REGION0 + 1] = 1;
        break;
    case 1:
        inc[1 + CH_MVB] = 2;
        break;
    case 2:
        inc[1 + CH_MVB_STALL] = 1;
        inc[9 + CH_STALL] = 1;
        break;
    case 3:
        inc[1 + CH_MVB] = 1;
        inc[9 + CH_WORDS] = inc[9 + CH_SOF] = inc[9 + CH_MVB] = 1;
        inc[9 + CH_ITEMS] = inc[9 + CH_REGION0] = 1;
        break;
    }
}

/*
 * Counters after w PCIe and wd DMA windows of a card reset at 0: each
 * channel sums the trace cycles (c % 8 of PCIe cycle c, c % 4 of DMA
 * cycle c) of its own span.
 */
static void replay_expect(uint64_t w, uint64_t wd, uint64_t *exp)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    uint64_t inc[SIM_MAX_CH], lo, hi;

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    for (unsigned c = 0; c < lp.n; c++) {
        ch_span(&lp, 0, DP, w, c, &lo, &hi);
        for (uint64_t t = lo; t < hi; t++) {
            replay_pcie_cycle(t % 8, inc);
            if (t == 1) {
                /* its frame's SOF, in cycle 0, was not seen */
                inc[PCH(0, CH_ITEMS)] = inc[PCH(0, CH_REGION0)] = 0;
            }
            exp[c] += inc[c];
        }
    }
    for (unsigned c = 0; c < ld.n; c++) {
        ch_span(&ld, 0, DP, wd, c, &lo, &hi);
        for (uint64_t t = lo; t < hi; t++) {
            replay_dma_cycle(t % 4, inc);
            exp[DMA_CYCLES + c] += inc[c];
        }
    }
}

static void test_replay_vcd(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-vcd-XXXXXX", NULL);
    g_autofree char *vcd = NULL, *args = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES], origin;
    uint32_t st;
    uint8_t ecap;
    Ndk n;

    g_assert(dir);
    vcd = write_tmp(dir, "trace.vcd", replay_vcd);
    args = g_strdup_printf("-object telemetry-traffic-replay,id=t0,file=%s,"
                           "scope=tb.dut,end=loop "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           vcd);
    ndk_open(&n, "q35", args);
    g_assert_cmpint(n.t0, ==, 0);
    origin = first_cycle(n.t0, PCIE_HZ);
    ecap = qpci_find_capability(n.dev, PCI_CAP_ID_EXP, 0);
    st = status_from_config(qpci_config_readw(n.dev, ecap + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.dev, ecap + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.dev, ecap + PCI_EXP_LNKCTL));
    /* PCIE_MPS of the trace instead of the host's MPS */
    st = (st & ~7u) | 3;

    /*
     * After the first drain: its tick samples cycle 4096, trace cycle 0:
     * 200 free tags now; cycle 7 of the cycles [1, 4096) had none: lowest
     * 0
     */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, REG_PCIE_STATUS(0)), ==, st);
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 200);
    g_assert_cmphex(rd(&n, REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /* 15 us: PCIe window 0, no DMA window yet */
    step_to(&n, n.t0 + 15000);
    wr(&n, REG_READ_SEL, 1);
    replay_expect(1, 0, exp);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("replay, live, 15 us", got, exp, DEF_ENTRIES);

    /* PCIe windows 0..8, DMA windows 0..3, through a SNAPSHOT */
    step_to(&n, mid_window(&n, 9));
    replay_expect(9, 4, exp);
    /*
     * By hand: RQ words (slot 1) count the cycles [1, 36868): 4608 passes
     * of 3 words and cycles 36864..36867 (trace 0..3: 3 more), but cycle
     * 0; tag band 0 (slot 7: [0, 36897)) once a pass: 4612; DMA MVB items
     * (slot 4, from cycle 0: [0, 16399)) 4 a pass: 4099 passes and trace
     * cycles 0..2
     */
    g_assert_cmpuint(exp[PCH(0, CH_WORDS)], ==, 3 * 4608 + 3 - 1);
    g_assert_cmpuint(exp[TAG_BAND(0)], ==, 4612);
    g_assert_cmpuint(exp[DCH(0, CH_MVB)], ==, 4 * 4099 + 3);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("replay, snapshot", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, REG_STATUS), ==, 0);
    /* now: cycle 36864, trace cycle 0; lowest 0 since the first drain */
    g_assert_cmphex(rd(&n, REG_PCIE_TAGS(0)), ==, 200);
    ndk_close(&n);
    unlink(vcd);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* Seeded random accesses of every kind, for every generator            */

/*
 * Each case makes a card with a random block offset and geometry, driven
 * by one generator, and throws a few thousand random accesses at BAR0
 * (1, 2, 4 and 8 bytes at any offset, inside and outside the block),
 * random COMMAND values, random configuration writes (Device Control
 * among them), live changes of the generator and clock steps at it, then
 * resets the machine while a SNAPSHOT keeps the block BUSY, and at last
 * unplugs a card (ACPI hotplug on pc) while traffic runs. What must hold
 * whatever happened: bytes outside the block read 0, MAGIC and VERSION
 * read back at every alias, counter bits above CNT_WIDTH and entries past
 * the last endpoint read 0, BUSY falls within the documented time,
 * counters never decrease from one SNAPSHOT to the next without a CLEAR
 * (modulo 2^CNT_WIDTH; a card starts from zeros) and gain at most what
 * the elapsed cycles allow, and QEMU lives on. NDK_QTEST_SEED (decimal or
 * 0x hex) replays a run; the seed in use is printed.
 */
#define STORM_SEED              0x4E444B31u
#define STORM_ROUNDS            6
#define STORM_OPS               450
#define STORM_UNPLUG_OPS        200
#define STORM_MAX_ENTRIES       256
#define STORM_BLOCK_SIZE        0x10000u
/* ACPI PCI hotplug eject register of -machine pc (as libqos/pci-pc.c) */
#define PC_ACPI_PCIHP_EJ        0xae08

typedef enum {
    GEN_IDLE, GEN_PATTERN, GEN_PTC, GEN_RANDOM, GEN_REPLAY, GEN_SCENARIO,
    GEN_PLUGIN, GEN_COUNT
} StormGen;

static const char *const storm_gen_name[GEN_COUNT] = {
    "idle", "pattern", "ptc", "random", "replay", "scenario", "plugin",
};

/* A card: its geometry and clocks, and the generator that drives it */
typedef struct StormCard {
    StormGen gen;
    unsigned endpoints, ports, item, regions[4], items[4];
    unsigned cnt_width, drain;
    uint64_t pcie_hz, dma_hz, mi_hz;
    uint32_t offset;
    uint64_t bar_size;
    char *props;                /* the device's properties */
    char *object;               /* -object argument, shell-quoted */
} StormCard;

typedef struct Storm {
    Ndk n;
    GRand *rng;
    const StormCard *card;
    unsigned entries;           /* ENTRIES */
    unsigned used;              /* entries of the card's endpoints */
    uint64_t max_inc;           /* most a counter gains in a probe cycle */
    uint8_t exp;                /* PCIe capability, 0 on a PCI bus */
    bool ecam;                  /* q35: extended config space via ECAM */
    bool mem;                   /* memory decoding enabled */
    bool cleared;               /* a CLEAR may have come since base */
    int64_t busy_by;            /* BUSY must read 0 from then on */
    uint64_t base[STORM_MAX_ENTRIES];
    int64_t base_t;
    unsigned accesses;
} Storm;

static uint32_t storm_seed(void)
{
    const char *env = g_getenv("NDK_QTEST_SEED");
    uint64_t v;
    char *end;

    if (!env || !*env) {
        return STORM_SEED;
    }
    v = g_ascii_strtoull(env, &end, 0);
    g_assert_true(*end == 0 && v <= UINT32_MAX);
    return v;
}

static uint32_t rnd(GRand *r, uint32_t lo, uint32_t hi)
{
    return lo + g_rand_int_range(r, 0, hi - lo + 1);
}

static unsigned clog2u(unsigned x)
{
    return x <= 1 ? 0 : 32 - clz32(x - 1);
}

/* A short text trace for any geometry: region 0 of port 0, with resets */
static const char storm_trace[] =
    "# written by the QTest\n"
    "pcie0 cycles=3 reset=1\n"
    "pcie0 rq.src=1 rq.dst=1 rq.sof=1 rq.eof=1 rq.pos0=0 tags=1\n"
    "pcie0 rc.src=1 rc.sof=1 brake=0x21 stfifo=0\n"
    "pcie0 rc.src=1 rc.dst=1 rc.sof=1 rc.eof=1 rc.pos0=0 link=0\n"
    "pcie0 cycles=40 tags=0 brake=0x3f\n"
    "dma0 cycles=2 reset=1\n"
    "dma0 up.src=1 up.dst=1 up.sof=1 up.eof=1 up.pos0=0 up.vld=1 "
    "up.msrc=1 up.mdst=1\n"
    "dma0 down.src=1 down.sof=1 down.vld=1 down.msrc=1\n"
    "dma0 down.src=1 down.dst=1 down.sof=1 down.eof=1 down.pos0=0 "
    "down.vld=1 down.msrc=1 down.mdst=1\n"
    "dma0 cycles=30\n"
    "pcie1 rq.src=1 rq.dst=1 rq.sof=1\n"
    "pcie1 cycles=7 reset=1\n"
    "dma1 cycles=5 up.src=1 up.dst=1 up.sof=1 up.eof=1\n";

static const char *const storm_ends[] = { "idle", "hold", "loop" };

/*
 * Values drawn one after the other (not as arguments of one call, whose
 * order C leaves open): v[i] from lim[i][0] to lim[i][1].
 */
static void rnd_n(GRand *r, uint32_t *v, const uint32_t (*lim)[2],
                  unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        v[i] = rnd(r, lim[i][0], lim[i][1]);
    }
}

static char *storm_object(GRand *r, StormGen g, const StormCard *c,
                          const char *dir)
{
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    g_autofree char *file = NULL, *text = NULL, *raw = NULL;
    uint32_t v[16], s1, s2;

    switch (g) {
    case GEN_IDLE: {
        const uint32_t lim[][2] = { { 0, 3 }, { 0, 2048 }, { 0, 65536 } };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf("telemetry-traffic-idle,id=t0,link-up=%s,"
                              "tags-free=%d,stfifo-free=%d",
                              v[0] ? "on" : "off", (int)v[1] - 1,
                              (int)v[2] - 1);
        break;
    }
    case GEN_PATTERN: {
        const uint32_t lim[][2] = {
            { 0, 600 }, { 0, 8 }, { 0, 3 }, { 0, 600 }, { 0, 8 },
            { 0, 600 }, { 0, 3 }, { 0, 600 }, { 0, 8 },
            { 1, c->regions[2] }, { 1, c->regions[3] }, { 0, 0x3F },
            { 0, 100 }, { 1, 100 }, { 0, 300 }, { 0, 3000 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-pattern,id=t0,rq-frame-bytes=%u,rq-gap=%u,"
            "rq-stall=%u,rc-frame-bytes=%u,rc-gap=%u,up-frame-bytes=%u,"
            "up-stall=%u,down-frame-bytes=%u,down-gap=%u,up-mvb-items=%u,"
            "down-mvb-items=%u,brake=%u,brake-duty=%u,brake-period=%u,"
            "tags-free=%d,stfifo-free=%d", v[0], v[1], v[2], v[3], v[4],
            v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13],
            (int)v[14] - 1, (int)v[15] - 1);
        break;
    }
    case GEN_PTC: {
        const uint32_t lim[][2] = {
            { 10, 100 }, { 0, 100 }, { 0, 64 }, { 100, 5000 }, { 0, 90 },
            { 0, 10 }, { 0, 20 }, { 0, 1 }, { 1, 32 },
        };

        s1 = g_rand_int(r);
        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-ptc,id=t0,seed=%u,load=%u,read-percent=%u,"
            "tags=%u,latency-ns=%u,jitter-percent=%u,rq-stall=%u,"
            "down-stall=%u,cplh-credits=%u", s1, v[0], v[1], v[2], v[3],
            v[4], v[5], v[6], v[7] ? 0 : v[8]);
        break;
    }
    case GEN_RANDOM: {
        const uint32_t lim[][2] = {
            { 0, 100 }, { 0, 100 }, { 0, 100 }, { 0, 100 }, { 64, 2048 },
            { 1, 512 }, { 0, 30 }, { 0, 60 }, { 0, 100 }, { 0, 300 },
        };

        s1 = g_rand_int(r);
        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-random,id=t0,seed=%u,rq-load=%u,rc-load=%u,"
            "up-load=%u,down-load=%u,rq-max-bytes=%u,up-min-bytes=%u,"
            "down-stall=%u,brake-percent=%u,up-read-percent=%u,tags-free=%d",
            s1, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
            (int)v[9] - 1);
        break;
    }
    case GEN_REPLAY:
        file = write_tmp(dir, "storm.trace", storm_trace);
        raw = g_strdup_printf("telemetry-traffic-replay,id=t0,file=%s,end=%s",
                              file, storm_ends[rnd(r, 0, 2)]);
        break;
    case GEN_SCENARIO: {
        const uint32_t lim[][2] = {
            { 1, 40 }, { 1, 90 }, { 1, 600 }, { 1, 600 }, { 0, 5 },
            { 0, 0x3F }, { 1, 120 }, { 1, 150 }, { 0, 3 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        s1 = g_rand_int(r);
        s2 = g_rand_int(r);
        text = g_strdup_printf(
            "# written by the QTest\n"
            "[phase down]\nmodel=idle\nduration=%uus\nlink-up=false\n\n"
            "[phase burst]\nmodel=pattern\nduration=%uus\n"
            "rq-frame-bytes=%u\nup-frame-bytes=%u\nup-gap=%u\nbrake=%u\n"
            "reset=dma\n\n"
            "[phase random]\nmodel=random\nduration=%uus\nseed=%u\n"
            "brake-percent=20\n\n"
            "[phase ptc]\nmodel=ptc\nduration=%uus\nseed=%u\nreset=pcie0\n",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], s1, v[7], s2);
        file = write_tmp(dir, "storm.ini", text);
        raw = g_strdup_printf("telemetry-traffic-scenario,id=t0,file=%s,"
                              "loop=%s", file, v[8] ? "on" : "off");
        break;
    }
    case GEN_PLUGIN: {
        /* a frame is one word of RQ and of UP */
        const uint32_t word = MIN(c->regions[0] * c->items[0],
                                  c->regions[2] * c->items[2]) * c->item;
        const uint32_t lim[][2] = {
            { 1, 50 }, { 0, 50 }, { 1, word }, { 0, 2047 }, { 0, 100000 },
            { 1, 5000 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-plugin,id=t0,path=%s,args=burst=%u,,idle=%u,,"
            "bytes=%u,,tags=%u,,reset=%u,,hold=%u", so, v[0], v[1], v[2],
            v[3], v[4], v[5]);
        break;
    }
    default:
        g_assert_not_reached();
    }
    return g_shell_quote(raw);
}

/*
 * A random card: 1 or 2 endpoints, 1 or 2 DMA ports, 1 to 4 regions of
 * 1 to 16 items (sometimes up to 256), clocks that also suit ptc (a PCIe
 * clock of a multiple of 4 MHz, a DMA clock of j / 256 of it with j <=
 * 256), a drain period that keeps the accumulator's load at most 0.5, and
 * a block offset that keeps BAR0 within 16 MiB (test_block_offset has the
 * largest).
 */
static void storm_card(StormCard *c, GRand *r, StormGen g, const char *dir)
{
    static const unsigned item_bytes[] = { 1, 2, 3, 4, 8, 16 };
    static const char *const fpga[] = {
        "AGILEX", "STRATIX10", "ULTRASCALE", "7SERIES",
    };
    static const uint32_t lim[][2] = {
        { 1, 2047 }, { 1, 65535 }, { 0, 5 }, { 0, 1 }, { 0, 1 }, { 0, 3 },
        { 0, 4 },
    };
    unsigned rp, rd, pch, dch, gmax, min_drain, bytes[4];
    uint32_t v[G_N_ELEMENTS(lim)];
    double load;

    memset(c, 0, sizeof(*c));
    c->gen = g;
    c->endpoints = rnd(r, 1, 2);
    c->ports = rnd(r, 1, 2);
    c->item = item_bytes[rnd(r, 0, G_N_ELEMENTS(item_bytes) - 1)];
    for (unsigned k = 0; k < 4; k++) {
        c->regions[k] = rnd(r, 1, 4);
        c->items[k] = rnd(r, 0, 5) ? rnd(r, 1, 16) : rnd(r, 1, 256);
        bytes[k] = c->items[k] * c->item;
    }
    rp = MAX(c->regions[0], c->regions[1]);
    rd = MAX(c->regions[2], c->regions[3]);
    pch = 1 + 2 * (6 + rp) + 14;
    dch = 1 + 2 * c->ports * (6 + rd);
    c->cnt_width = rnd(r, 33, 64);
    c->pcie_hz = 4000000ull * rnd(r, 25, 125);
    c->dma_hz = c->pcie_hz * rnd(r, 64, 256) / 256;
    c->mi_hz = 1000000ull * rnd(r, 50, 250);
    gmax = (MAX(pch, dch) + 7) / 8;
    min_drain = 8 * (gmax + 1) + 1;
    c->drain = 256;
    while (c->drain < min_drain) {
        c->drain *= 2;
    }
    c->drain <<= rnd(r, 0, 3);
    load = c->endpoints * 3.0 * (pch * (double)c->pcie_hz +
                                 dch * (double)c->dma_hz) /
           (c->drain * (double)c->mi_hz);
    while (load > 0.5 && c->drain < 32768) {
        c->drain *= 2;
        load /= 2;
    }
    switch (rnd(r, 0, 3)) {
    case 0:
        c->offset = 0;
        break;
    case 1:
        c->offset = 0x1000 * rnd(r, 1, 15);
        break;
    case 2:
        c->offset = 0x1000 * rnd(r, 16, 0xFF);
        break;
    default:
        c->offset = 0x10000 * rnd(r, 0x10, 0xFF);
        break;
    }
    c->bar_size = pow2ceil((uint64_t)c->offset + STORM_BLOCK_SIZE);
    rnd_n(r, v, lim, G_N_ELEMENTS(lim));
    c->props = g_strdup_printf(
        "pcie-endpoints=%u,dma-ports=%u,mfb-item-bytes=%u,"
        "pcie-rq-mfb-regions=%u,pcie-rc-mfb-regions=%u,"
        "dma-up-mfb-regions=%u,dma-down-mfb-regions=%u,"
        "pcie-rq-mfb-region-bytes=%u,pcie-rc-mfb-region-bytes=%u,"
        "dma-up-mfb-region-bytes=%u,dma-down-mfb-region-bytes=%u,"
        "pcie-eof-pos-width=%u,dma-eof-pos-width=%u,cnt-width=%u,"
        "drain-period=%u,tag-capacity=%u,stfifo-capacity=%u,"
        "pcie-clk-freq=%" PRIu64 ",dma-clk-freq=%" PRIu64 ","
        "mi-clk-freq=%" PRIu64 ",block-offset=0x%x,max-payload-size=%u,"
        "ext-tag=%s,tag-10bit=%s,device=%s,devtree=%s",
        c->endpoints, c->ports, c->item, c->regions[0], c->regions[1],
        c->regions[2], c->regions[3], bytes[0], bytes[1], bytes[2], bytes[3],
        clog2u(MAX(c->items[0], c->items[1])),
        clog2u(MAX(c->items[2], c->items[3])), c->cnt_width, c->drain,
        v[0], v[1], c->pcie_hz, c->dma_hz, c->mi_hz, c->offset, 128u << v[2],
        v[3] ? "on" : "off", v[4] ? "on" : "off", fpga[v[5]],
        v[6] ? "on" : "off");
    c->object = storm_object(r, g, c, dir);
}

static void storm_card_free(StormCard *c)
{
    g_free(c->props);
    g_free(c->object);
}

static int64_t storm_mi_ns(const Storm *s, uint64_t c)
{
    return cycle_ns(c, s->card->mi_hz);
}

static uint64_t storm_mi_now(const Storm *s)
{
    return cycle_at(s->n.now, s->card->mi_hz);
}

/* the BUSY bound of a sweep requested in MI cycle w: running + pending */
static void storm_busy_after(Storm *s, uint64_t w, uint64_t cycles)
{
    s->busy_by = MAX(s->busy_by, storm_mi_ns(s, w + cycles + 1));
}

static uint64_t storm_read(Storm *s, uint64_t o, unsigned size)
{
    uint64_t a = s->n.bar.addr + o;

    s->accesses++;
    switch (size) {
    case 1:
        return qtest_readb(s->n.qts, a);
    case 2:
        return qtest_readw(s->n.qts, a);
    case 4:
        return qtest_readl(s->n.qts, a);
    default:
        return qtest_readq(s->n.qts, a);
    }
}

static void storm_write(Storm *s, uint64_t o, unsigned size, uint64_t v)
{
    uint64_t a = s->n.bar.addr + o;

    s->accesses++;
    switch (size) {
    case 1:
        qtest_writeb(s->n.qts, a, v);
        break;
    case 2:
        qtest_writew(s->n.qts, a, v);
        break;
    case 4:
        qtest_writel(s->n.qts, a, v);
        break;
    default:
        qtest_writeq(s->n.qts, a, v);
        break;
    }
}

/* A byte read at BAR0 offset o: what it must be, as far as known */
static void storm_check_byte(Storm *s, uint64_t o, uint8_t b)
{
    const StormCard *c = s->card;
    uint32_t rel, e, j;

    if (o < c->offset || o >= c->offset + STORM_BLOCK_SIZE) {
        if (b) {
            g_test_message("BAR0 + 0x%" PRIx64 " (outside the block at "
                           "0x%x) reads 0x%02x", o, c->offset, b);
        }
        g_assert_cmphex(b, ==, 0);
        return;
    }
    rel = o - c->offset;
    if (rel < CNT_BASE) {
        /* below the counters only bits 7..2 decode */
        if ((rel & 0xFC) == REG_MAGIC) {
            g_assert_cmphex(b, ==, (MAGIC >> 8 * (rel & 3)) & 0xFF);
        } else if ((rel & 0xFC) == REG_VERSION) {
            g_assert_cmphex(b, ==, (VERSION >> 8 * (rel & 3)) & 0xFF);
        }
        return;
    }
    e = ((rel - CNT_BASE) >> 3) & (s->entries - 1);
    j = rel & 7;
    if (e >= s->used) {
        g_assert_cmphex(b, ==, 0);
    } else if (8 * j + 8 > c->cnt_width) {
        /* counter bits from CNT_WIDTH up */
        unsigned keep = c->cnt_width > 8 * j ? c->cnt_width - 8 * j : 0;

        g_assert_cmphex(b >> keep, ==, 0);
    }
}

/* An offset in BAR0 for an access of size bytes, mostly where it matters */
static uint64_t storm_offset(Storm *s, unsigned size)
{
    const StormCard *c = s->card;
    GRand *r = s->rng;
    int64_t o;
    unsigned k = rnd(r, 0, 99);

    if (k < 35) {
        /* the registers, sometimes at an alias */
        o = c->offset + rnd(r, 0, 0xFF);
        if (!rnd(r, 0, 3)) {
            o += 0x100 * rnd(r, 1, 0x7F);
        }
    } else if (k < 60) {
        /* the counters and their first alias */
        o = c->offset + CNT_BASE + rnd(r, 0, 16 * s->entries - 1);
    } else if (k < 75) {
        o = c->offset + rnd(r, 0, STORM_BLOCK_SIZE - 1);
    } else if (k < 88) {
        /* across either edge of the block */
        o = (int64_t)c->offset + (rnd(r, 0, 1) ? STORM_BLOCK_SIZE : 0);
        o += (int64_t)rnd(r, 0, 32) - 16;
    } else {
        o = (int64_t)(g_rand_double(r) * c->bar_size);
    }
    return MAX(0, MIN(o, (int64_t)c->bar_size - (int64_t)size));
}

static void storm_bar_read(Storm *s)
{
    unsigned size = 1u << rnd(s->rng, 0, 3);
    uint64_t o = storm_offset(s, size), v = storm_read(s, o, size);

    /* with memory decoding off the BAR is not there */
    if (!s->mem) {
        return;
    }
    for (unsigned i = 0; i < size && !g_test_failed(); i++) {
        storm_check_byte(s, o + i, v >> 8 * i);
        if (g_test_failed()) {
            g_test_message("a read of %u bytes at BAR0 + 0x%" PRIx64
                           " at %" PRId64 " ns: 0x%" PRIx64, size, o,
                           s->n.now, v);
        }
    }
}

/*
 * The bytes of a write that land in lane 0 of a COMMAND alias: a command
 * (SNAPSHOT or CLEAR) moves the BUSY bound, a CLEAR the counters' base;
 * without may_clear the CLEAR bits are taken out.
 */
static uint64_t storm_note_write(Storm *s, uint64_t o, unsigned size,
                                 uint64_t v, bool may_clear)
{
    const StormCard *c = s->card;
    unsigned e = s->entries;

    for (unsigned i = 0; i < size; i++) {
        uint64_t a = o + i;
        uint32_t rel = a - c->offset;
        uint8_t b;

        if (a < c->offset || a >= c->offset + STORM_BLOCK_SIZE ||
            rel >= CNT_BASE || (rel & 0xFF) != REG_COMMAND) {
            continue;
        }
        if (!may_clear) {
            v &= ~((uint64_t)CMD_CLEAR << 8 * i);
        }
        b = v >> 8 * i;
        if (b & (CMD_SNAPSHOT | CMD_CLEAR)) {
            /* a sweep may run (both: 2 + 4 E) and this one wait behind */
            storm_busy_after(s, storm_mi_now(s), 2 * (4 * e + 8) + 16);
        }
        if (b & CMD_CLEAR) {
            s->cleared = true;
        }
    }
    return v;
}

static void storm_bar_write(Storm *s, bool may_clear)
{
    unsigned size = 1u << rnd(s->rng, 0, 3);
    uint64_t o = storm_offset(s, size);
    uint64_t v = g_rand_int(s->rng);

    v |= (uint64_t)g_rand_int(s->rng) << 32;
    storm_write(s, o, size, storm_note_write(s, o, size, v, may_clear));
}

/* A random value for COMMAND: mostly one or two commands, some noise */
static void storm_command(Storm *s, bool may_clear)
{
    uint64_t o = s->card->offset + REG_COMMAND;
    uint32_t v = rnd(s->rng, 0, 3) ? rnd(s->rng, 0, 0xF) : g_rand_int(s->rng);

    storm_write(s, o, 4, storm_note_write(s, o, 4, v, may_clear));
}

static void storm_mem_sync(Storm *s)
{
    s->mem = qpci_config_readw(s->n.dev, PCI_COMMAND) & PCI_COMMAND_MEMORY;
}

/*
 * A random configuration write: COMMAND, Device Control, Device Control 2,
 * Link Control, any other offset of the first 256 bytes but BAR0's, and
 * on q35 the extended space (the device tree's index and data word).
 */
static void storm_config(Storm *s)
{
    QPCIDevice *d = s->n.dev;
    GRand *r = s->rng;
    unsigned k = rnd(r, 0, 9), size;
    uint32_t off, v = g_rand_int(r);
    uint64_t a;

    if (s->exp && k <= 2) {
        qpci_config_writew(d, s->exp + PCI_EXP_DEVCTL, v);
    } else if (s->exp && k == 3) {
        qpci_config_writew(d, s->exp + PCI_EXP_DEVCTL2, v);
    } else if (s->exp && k == 4) {
        qpci_config_writew(d, s->exp + PCI_EXP_LNKCTL, v);
    } else if (k == 5) {
        qpci_config_writew(d, PCI_COMMAND, v);
    } else if (s->ecam && k >= 8) {
        /* the VSEC's index (past the end too) and data word, or anywhere */
        if (k == 8) {
            qtest_writel(s->n.qts, ecam(d->devfn, VSEC_INDEX + VSEC),
                         rnd(r, 0, 3) ? rnd(r, 0, 600) : v);
            qtest_readl(s->n.qts, ecam(d->devfn, VSEC_DATA + VSEC));
        } else {
            size = 1u << rnd(r, 0, 2);
            off = rnd(r, 0x100, 0xFFF);
            a = ecam(d->devfn, ROUND_DOWN(off, size));
            if (rnd(r, 0, 1)) {
                qtest_readl(s->n.qts, a & ~3ull);
            } else if (size == 1) {
                qtest_writeb(s->n.qts, a, v);
            } else if (size == 2) {
                qtest_writew(s->n.qts, a, v);
            } else {
                qtest_writel(s->n.qts, a, v);
            }
        }
    } else {
        size = 1u << rnd(r, 0, 2);
        off = rnd(r, 0, 0xFF);
        off = ROUND_DOWN(off, size);
        if (off < PCI_BASE_ADDRESS_1 && off + size > PCI_BASE_ADDRESS_0) {
            off = PCI_INTERRUPT_LINE;
            size = 1;
        }
        if (rnd(r, 0, 1)) {
            qpci_config_readl(d, off & ~3u);
        } else if (size == 1) {
            qpci_config_writeb(d, off, v);
        } else if (size == 2) {
            qpci_config_writew(d, off, v);
        } else {
            qpci_config_writel(d, off, v);
        }
    }
    storm_mem_sync(s);
}

/* A live change of one of the generator's parameters (qom-set) */
static void storm_qom_set(Storm *s)
{
    GRand *r = s->rng;
    g_autofree char *val = NULL, *out = NULL;
    const char *prop;
    unsigned k;

    switch (s->card->gen) {
    case GEN_IDLE:
        prop = "link-up";
        val = g_strdup(rnd(r, 0, 1) ? "on" : "off");
        break;
    case GEN_PATTERN:
        prop = "rq-frame-bytes";
        val = g_strdup_printf("%u", rnd(r, 0, 600));
        break;
    case GEN_PTC:
        prop = "load";
        val = g_strdup_printf("%u", rnd(r, 10, 100));
        break;
    case GEN_RANDOM:
        prop = "seed";
        val = g_strdup_printf("%u", g_rand_int(r));
        break;
    case GEN_REPLAY:
        prop = "end";
        val = g_strdup(storm_ends[rnd(r, 0, 2)]);
        break;
    case GEN_SCENARIO:
        prop = "loop";
        val = g_strdup(rnd(r, 0, 1) ? "on" : "off");
        break;
    default:
        prop = "args";
        k = rnd(r, 1, 50);
        val = g_strdup_printf("burst=%u,idle=%u,bytes=1", k, rnd(r, 0, 50));
        break;
    }
    out = qtest_hmp(s->n.qts, "qom-set /objects/t0 %s %s", prop, val);
    if (*out) {
        g_test_message("qom-set %s %s: %s", prop, val, out);
    }
    g_assert_cmpstr(out, ==, "");
}

static void storm_step(Storm *s)
{
    unsigned k = rnd(s->rng, 0, 99);

    step(&s->n, k < 50 ? rnd(s->rng, 1, 1000) :
                k < 85 ? rnd(s->rng, 1000, 20000) :
                         rnd(s->rng, 20000, 300000));
}

/* ops random operations; the memory decoding is back on at the end */
static void storm_round(Storm *s, unsigned ops, bool may_clear)
{
    for (unsigned i = 0; i < ops && !g_test_failed(); i++) {
        unsigned k = rnd(s->rng, 0, 99);

        if (k < 58) {
            storm_bar_read(s);
        } else if (k < 76) {
            storm_bar_write(s, may_clear);
        } else if (k < 81) {
            storm_command(s, may_clear);
        } else if (k < 89) {
            storm_config(s);
        } else if (k < 91) {
            storm_qom_set(s);
        } else {
            storm_step(s);
        }
    }
    qpci_device_enable(s->n.dev);
    s->mem = true;
}

/* Poll STATUS every MI cycle until BUSY falls; by busy_by at the latest */
static void storm_wait_idle(Storm *s, const char *what)
{
    int64_t period = storm_mi_ns(s, 1);

    while (storm_read(s, s->card->offset + REG_STATUS, 4) & STATUS_BUSY) {
        if (s->n.now >= s->busy_by) {
            g_test_message("%s: BUSY still set at %" PRId64 " ns, bound %"
                           PRId64 " ns", what, s->n.now, s->busy_by);
            g_assert_cmpint(s->n.now, <, s->busy_by);
            return;
        }
        step(&s->n, period);
    }
}

/*
 * A SNAPSHOT, checked: BUSY from w + 2, down by w + 6 + 2 ENTRIES; then
 * every counter against the previous snapshot (or the zeros of the new
 * card): never less without a CLEAR in between (modulo 2^CNT_WIDTH), at
 * most max_inc a cycle more over the time between them plus 4 windows.
 */
static void storm_checkpoint(Storm *s, const char *what)
{
    const StormCard *c = s->card;
    uint64_t cur[STORM_MAX_ENTRIES], mask, w, cycles, bound;
    unsigned bad = 0;
    int64_t t;

    storm_wait_idle(s, what);
    storm_write(s, c->offset + REG_READ_SEL, 4, 0);
    t = s->n.now;
    w = storm_mi_now(s);
    storm_write(s, c->offset + REG_COMMAND, 4, CMD_SNAPSHOT);
    storm_busy_after(s, w, 6 + 2 * s->entries);
    step_to(&s->n, storm_mi_ns(s, w + 2));
    g_assert_cmphex(storm_read(s, c->offset + REG_STATUS, 4) & STATUS_BUSY,
                    ==, STATUS_BUSY);
    storm_wait_idle(s, what);

    mask = c->cnt_width == 64 ? ~0ull : (1ull << c->cnt_width) - 1;
    cycles = cycle_at(t - s->base_t, MAX(c->pcie_hz, c->dma_hz)) +
             4ull * c->drain + 64;
    bound = cycles > mask / s->max_inc ? mask : cycles * s->max_inc;
    for (unsigned e = 0; e < s->used; e++) {
        uint64_t d;

        cur[e] = storm_read(s, c->offset + CNT(e), 8);
        g_assert_cmphex(cur[e] & ~mask, ==, 0);
        d = (cur[e] - s->base[e]) & mask;
        if (!s->cleared && d > bound && bad++ < 4) {
            g_test_message("%s: entry %u went from %" PRIu64 " to %" PRIu64
                           " (bound %" PRIu64 ")", what, e, s->base[e],
                           cur[e], bound);
        }
    }
    g_assert_cmpuint(bad, ==, 0);
    g_test_message("%s at %" PRId64 " ns: %u entries%s, %u accesses so far",
                   what, t, s->used, s->cleared ? " (after a CLEAR)" :
                   " checked", s->accesses);
    memcpy(s->base, cur, s->used * sizeof(cur[0]));
    s->base_t = t;
    s->cleared = false;
}

static void storm_alive(Storm *s)
{
    QDict *rsp = qtest_qmp(s->n.qts, "{ 'execute': 'query-status' }");

    g_assert_true(qtest_probe_child(s->n.qts));
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
}

static void storm_open(Storm *s, const StormCard *c, GRand *r,
                       const char *machine)
{
    g_autofree char *args = g_strdup_printf(
        "-object %s -device ndk-pcie-telemetry,id=ndk0,addr=04.0,traffic=t0,"
        "%s", c->object, c->props);
    uint32_t topo, layout, rp, rdma;

    memset(s, 0, sizeof(*s));
    s->card = c;
    s->rng = r;
    ndk_open_bar(&s->n, machine, NDK_VENDOR_ID, NDK_DEVICE_ID, c->bar_size,
                 args);
    topo = rd(&s->n, c->offset + REG_CFG_TOPOLOGY);
    layout = rd(&s->n, c->offset + REG_CFG_LAYOUT);
    g_assert_cmpuint(topo & 0xFF, ==, c->endpoints);
    g_assert_cmpuint(layout >> 16 & 0xFF, ==, c->cnt_width);
    s->entries = layout & 0xFFFF;
    s->used = c->endpoints * (layout >> 24);
    g_assert_true(is_power_of_2(s->entries));
    g_assert_cmpuint(s->entries, <=, STORM_MAX_ENTRIES);
    g_assert_cmpuint(s->used, <=, s->entries);
    rp = MAX(c->regions[0], c->regions[1]);
    rdma = MAX(c->regions[2], c->regions[3]);
    s->max_inc = MAX(rp, rdma) * MAX(MAX(c->items[0], c->items[1]),
                                   MAX(c->items[2], c->items[3]));
    s->exp = qpci_find_capability(s->n.dev, PCI_CAP_ID_EXP, 0);
    s->ecam = !strcmp(machine, "q35");
    if (s->ecam) {
        ecam_enable(&s->n);
    }
    s->mem = true;
    /* the counter memory of a new card is zeros */
    s->base_t = s->n.t0;
}

/*
 * A SNAPSHOT, and while its sweep runs a system reset: the counter memory
 * stays, BUSY and READ_SEL restart; the BAR comes back where it was.
 */
static void storm_reset_busy(Storm *s)
{
    const StormCard *c = s->card;
    uint64_t w;
    QDict *rsp;

    storm_wait_idle(s, "before the reset");
    storm_write(s, c->offset + REG_READ_SEL, 4, 1);
    w = storm_mi_now(s);
    storm_write(s, c->offset + REG_COMMAND, 4, CMD_SNAPSHOT);
    storm_busy_after(s, w, 6 + 2 * s->entries);
    step_to(&s->n, storm_mi_ns(s, w + 2 + rnd(s->rng, 0, 2 * s->entries)));
    g_assert_cmphex(storm_read(s, c->offset + REG_STATUS, 4) & STATUS_BUSY,
                    ==, STATUS_BUSY);
    g_test_message("system_reset %" PRIu64 " MI cycles into a SNAPSHOT",
                   storm_mi_now(s) - w);

    rsp = qtest_qmp(s->n.qts, "{ 'execute': 'system_reset' }");
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_qmp_eventwait(s->n.qts, "RESET");
    qpci_config_writel(s->n.dev, PCI_BASE_ADDRESS_0, s->n.bar.addr);
    qpci_device_enable(s->n.dev);
    s->mem = true;
    if (s->ecam) {
        ecam_enable(&s->n);
    }
    /* no sweep may outlast the reset by more than one SNAPSHOT's */
    s->busy_by = storm_mi_ns(s, storm_mi_now(s) + 7 + 2 * s->entries);
    storm_wait_idle(s, "after the reset");
    g_assert_cmphex(rd(&s->n, c->offset + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&s->n, c->offset + REG_READ_SEL), ==, 0);
}

/* After everything: MAGIC at the offset, zeros around the block */
static void storm_final(Storm *s)
{
    const StormCard *c = s->card;

    g_assert_cmphex(rd(&s->n, c->offset + REG_MAGIC), ==, MAGIC);
    g_assert_cmphex(rd(&s->n, c->offset + REG_VERSION), ==, VERSION);
    if (c->offset) {
        g_assert_cmphex(rdq(&s->n, c->offset - 8), ==, 0);
        g_assert_cmphex(rd(&s->n, 0), ==, 0);
    }
    if (c->offset + STORM_BLOCK_SIZE < c->bar_size) {
        g_assert_cmphex(rdq(&s->n, c->offset + STORM_BLOCK_SIZE), ==, 0);
        g_assert_cmphex(rd(&s->n, c->bar_size - 4), ==, 0);
    }
    storm_alive(s);
}

/*
 * On pc (conventional PCI, ACPI hotplug): traffic, a second card on the
 * same generator refused, a device_del, more traffic while the unplug
 * waits for the guest's eject, the eject, the DEVICE_DELETED event; the
 * clock runs on without the card, the generator then drives a new card,
 * which goes on counting when the generator's object is deleted under it
 * (allowed or refused, either is fine).
 */
static void storm_unplug(const StormCard *c, GRand *r)
{
    g_autofree char *out = NULL;
    uint64_t size = 0;
    Storm s;

    storm_open(&s, c, r, "pc");
    g_assert_cmpuint(s.exp, ==, 0);
    storm_round(&s, STORM_UNPLUG_OPS, true);
    storm_checkpoint(&s, "pc");
    /* a generator drives one card: a second one is refused */
    out = qtest_hmp(s.n.qts, "device_add ndk-pcie-telemetry,id=ndk2,"
                    "traffic=t0,%s", c->props);
    g_assert_nonnull(strstr(out, "already drives another card"));
    g_free(out);
    qtest_qmp_device_del_send(s.n.qts, "ndk0");
    storm_round(&s, STORM_UNPLUG_OPS, true);
    qtest_outl(s.n.qts, PC_ACPI_PCIHP_EJ, 1 << (s.n.dev->devfn >> 3));
    qtest_qmp_eventwait(s.n.qts, "DEVICE_DELETED");
    /* the old BAR is gone; accesses there reach nothing */
    qtest_readq(s.n.qts, s.n.bar.addr + c->offset);
    qtest_writel(s.n.qts, s.n.bar.addr + c->offset + REG_COMMAND,
                 CMD_SNAPSHOT | CMD_CLEAR);
    step(&s.n, 3000000);
    storm_alive(&s);

    out = qtest_hmp(s.n.qts, "device_add ndk-pcie-telemetry,id=ndk1,"
                    "traffic=t0,%s", c->props);
    g_assert_cmpstr(out, ==, "");
    g_free(s.n.dev);
    s.n.dev = find_device(s.n.bus, NDK_VENDOR_ID, NDK_DEVICE_ID);
    qpci_device_enable(s.n.dev);
    s.n.bar = qpci_iomap(s.n.dev, 0, &size);
    g_assert_cmphex(size, ==, c->bar_size);
    /* a new card: zeros from its creation on */
    s.base_t = s.n.now;
    memset(s.base, 0, sizeof(s.base));
    s.cleared = false;
    storm_round(&s, STORM_UNPLUG_OPS, false);
    storm_checkpoint(&s, "new card");
    qobject_unref(qtest_qmp(s.n.qts, "{ 'execute': 'object-del', "
                            "'arguments': { 'id': 't0' } }"));
    step(&s.n, 2000000);
    storm_checkpoint(&s, "generator deleted");
    storm_final(&s);
    ndk_close(&s.n);
}

static void test_storm(const void *data)
{
    StormGen g = GPOINTER_TO_INT(data);
    uint32_t seed = storm_seed();
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-storm-XXXXXX", NULL);
    g_autofree char *trace = NULL, *ini = NULL;
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    GRand *r;
    StormCard c;
    Storm s;

    g_assert(dir);
    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    if (g == GEN_PLUGIN && (!so || !g_file_test(so, G_FILE_TEST_IS_REGULAR))) {
        g_test_skip("PTM_SAMPLE_PLUGIN names no file (run-qtest.sh sets it)");
        rmdir(dir);
        return;
    }
    r = g_rand_new_with_seed(seed ^ (g * 0x9E3779B9u));
    storm_card(&c, r, g, dir);
    g_test_message("%s: -object %s -device ndk-pcie-telemetry,%s",
                   storm_gen_name[g], c.object, c.props);

    storm_open(&s, &c, r, "q35");
    g_assert_cmpuint(s.exp, ==, 0x80);
    for (unsigned i = 0; i < STORM_ROUNDS && !g_test_failed(); i++) {
        g_autofree char *what = g_strdup_printf("round %u", i);

        storm_round(&s, STORM_OPS, rnd(r, 0, 2) == 0);
        storm_checkpoint(&s, what);
    }
    if (!g_test_failed()) {
        storm_reset_busy(&s);
        storm_round(&s, STORM_OPS, false);
        storm_checkpoint(&s, "after the reset");
    }
    storm_final(&s);
    ndk_close(&s.n);

    if (!g_test_failed()) {
        storm_unplug(&c, r);
    }
    storm_card_free(&c);
    g_rand_free(r);
    trace = g_build_filename(dir, "storm.trace", NULL);
    ini = g_build_filename(dir, "storm.ini", NULL);
    unlink(trace);
    unlink(ini);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* MSI: what the nfb driver's pci_enable_msi finds                     */

#define MSI_CAP                 0x50
#define PCIE_CAP                0x80
/* guest RAM where a message of the card would land */
#define MSI_TRAP                0x00200000u
#define MSI_DATA                0x5A5Au

/* The capability list as (position, ID) pairs; returns how many. */
static unsigned cap_list(QPCIDevice *dev, uint8_t *pos, uint8_t *id,
                         unsigned max)
{
    unsigned n = 0;
    uint8_t p;

    if (!(qpci_config_readw(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        return 0;
    }
    p = qpci_config_readb(dev, PCI_CAPABILITY_LIST);
    while (p && n < max) {
        /* dword aligned, past the header */
        g_assert_cmphex(p & 3, ==, 0);
        g_assert_cmphex(p, >=, 0x40);
        pos[n] = p;
        id[n] = qpci_config_readb(dev, p);
        n++;
        p = qpci_config_readb(dev, p + 1);
    }
    g_assert_cmphex(p, ==, 0);
    return n;
}

/*
 * The capabilities in this order: (position, ID) pairs, ended by 0;
 * every other one of pos and id.
 */
static void check_caps(QPCIDevice *dev, const uint8_t *want)
{
    uint8_t pos[16], id[16];
    unsigned n = cap_list(dev, pos, id, 16), k;

    for (k = 0; want[2 * k]; k++) {
        g_assert_cmpuint(k, <, n);
        g_assert_cmphex(pos[k], ==, want[2 * k]);
        g_assert_cmphex(id[k], ==, want[2 * k + 1]);
    }
    g_assert_cmpuint(n, ==, k);
}

/*
 * Message Control: 64-bit address capable (bit 7), one vector (Multiple
 * Message Capable 0), no per-vector masking (bit 8), off; the address
 * and data registers of the 64-bit layout.
 */
static void check_msi_cap(QPCIDevice *dev)
{
    uint16_t flags = qpci_config_readw(dev, MSI_CAP + PCI_MSI_FLAGS);

    g_assert_cmphex(flags, ==, PCI_MSI_FLAGS_64BIT);
    g_assert_cmphex(qpci_config_readl(dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, 0);
    g_assert_cmphex(qpci_config_readl(dev, MSI_CAP + PCI_MSI_ADDRESS_HI),
                    ==, 0);
    g_assert_cmphex(qpci_config_readw(dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    0);
    /* all ones: Enable and a Multiple Message Enable held at 1 vector */
    qpci_config_writew(dev, MSI_CAP + PCI_MSI_FLAGS, 0xFFFF);
    g_assert_cmphex(qpci_config_readw(dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_ENABLE);
    qpci_config_writew(dev, MSI_CAP + PCI_MSI_FLAGS, 0);
    g_assert_cmphex(qpci_config_readw(dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT);
    /* the address keeps bits 31..2 and all upper bits, the data 16 bits */
    qpci_config_writel(dev, MSI_CAP + PCI_MSI_ADDRESS_LO, 0xFFFFFFFF);
    qpci_config_writel(dev, MSI_CAP + PCI_MSI_ADDRESS_HI, 0xFFFFFFFF);
    qpci_config_writew(dev, MSI_CAP + PCI_MSI_DATA_64, 0xFFFF);
    g_assert_cmphex(qpci_config_readl(dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, 0xFFFFFFFC);
    g_assert_cmphex(qpci_config_readl(dev, MSI_CAP + PCI_MSI_ADDRESS_HI),
                    ==, 0xFFFFFFFF);
    g_assert_cmphex(qpci_config_readw(dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    0xFFFF);
    /* no pending or mask bits: the capability ends at the data word */
    g_assert_cmphex(qpci_config_readw(dev, MSI_CAP + 0x0E), ==, 0);
    /* and no INTx pin */
    g_assert_cmphex(qpci_config_readb(dev, PCI_INTERRUPT_PIN), ==, 0);
}

/* Point the message at guest RAM and enable it. */
static void msi_arm(QPCIDevice *dev)
{
    qpci_config_writel(dev, MSI_CAP + PCI_MSI_ADDRESS_LO, MSI_TRAP);
    qpci_config_writel(dev, MSI_CAP + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(dev, MSI_CAP + PCI_MSI_DATA_64, MSI_DATA);
    qpci_config_writew(dev, MSI_CAP + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE);
}

static void test_msi(void)
{
    static const uint8_t q35_caps[] = {
        MSI_CAP, PCI_CAP_ID_MSI, PCIE_CAP, PCI_CAP_ID_EXP, 0,
    };
    static const uint8_t pc_caps[] = { MSI_CAP, PCI_CAP_ID_MSI, 0 };
    static const uint8_t q35_off_caps[] = { PCIE_CAP, PCI_CAP_ID_EXP, 0 };
    static const uint8_t none[] = { 0 };
    uint64_t origin;
    Ndk n;

    /* q35: MSI, then the PCIe capability */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    check_caps(n.dev, q35_caps);
    check_msi_cap(n.dev);
    /* a system reset turns it off and clears address and data */
    msi_arm(n.dev);
    qtest_system_reset(n.qts);
    g_assert_cmphex(qpci_config_readw(n.dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT);
    g_assert_cmphex(qpci_config_readl(n.dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, 0);
    g_assert_cmphex(qpci_config_readw(n.dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    0);
    ndk_close(&n);

    /* a conventional PCI bus has MSI all the same */
    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0");
    check_caps(n.dev, pc_caps);
    check_msi_cap(n.dev);
    ndk_close(&n);

    /* msi=off: a card like NDK's UltraScale+ builds (no MSI) */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,msi=off");
    check_caps(n.dev, q35_off_caps);
    g_assert_cmphex(qpci_config_readl(n.dev, MSI_CAP), ==, 0);
    ndk_close(&n);
    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0,msi=off");
    check_caps(n.dev, none);
    ndk_close(&n);

    /*
     * The block raises no interrupt: with MSI enabled and bus mastering
     * on, snapshots, a clear and a full pattern window later nothing has
     * been written where a message would go.
     */
    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_COMMAND) &
                    PCI_COMMAND_MASTER, ==, PCI_COMMAND_MASTER);
    msi_arm(n.dev);
    g_assert_cmphex(qtest_readl(n.qts, MSI_TRAP), ==, 0);
    origin = first_cycle(n.t0, PCIE_HZ);
    step_to(&n, word_ns(origin, 2));
    snapshot(&n, DEF_ENTRIES);
    wr(&n, REG_COMMAND, CMD_CLEAR | CMD_CLEAR_FLAGS | CMD_CLEAR_LOWEST);
    step_to(&n, word_ns(origin, 4));
    snapshot(&n, DEF_ENTRIES);
    g_assert_cmpuint(cnt(&n, 0), >, 0);
    g_assert_cmphex(qtest_readl(n.qts, MSI_TRAP), ==, 0);
    g_assert_cmphex(qpci_config_readw(n.dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_ENABLE);
    ndk_close(&n);
}

/*
 * msi=auto (the default) offers MSI where the machine has it and goes
 * without where it has none; msi=on has it or refuses to start. A 486
 * has no local APIC, and without one an x86 machine has no MSI.
 */
static void test_msi_auto_on(void)
{
    static const uint8_t q35_caps[] = {
        MSI_CAP, PCI_CAP_ID_MSI, PCIE_CAP, PCI_CAP_ID_EXP, 0,
    };
    static const uint8_t q35_off_caps[] = { PCIE_CAP, PCI_CAP_ID_EXP, 0 };
    static const uint8_t none[] = { 0 };
    static const char *const on_no_apic[] = {
        "-cpu", "486", "-device", "ndk-pcie-telemetry,addr=04.0,msi=on",
        NULL,
    };
    static const char *const on_no_apic_pc[] = {
        "-machine", "pc", "-cpu", "486",
        "-device", "ndk-pcie-telemetry,addr=04.0,msi=on", NULL,
    };
    Ndk n;

    /* a machine with MSI: auto and on both offer it */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,msi=auto");
    check_caps(n.dev, q35_caps);
    check_msi_cap(n.dev);
    ndk_close(&n);
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,msi=on");
    check_caps(n.dev, q35_caps);
    check_msi_cap(n.dev);
    ndk_close(&n);

    /* without MSI the default and auto start without the capability */
    ndk_open(&n, "q35", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0");
    check_caps(n.dev, q35_off_caps);
    g_assert_cmphex(qpci_config_readl(n.dev, MSI_CAP), ==, 0);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);
    ndk_open(&n, "pc", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0,"
             "msi=auto");
    check_caps(n.dev, none);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);
    ndk_open(&n, "q35", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0,"
             "msi=off");
    check_caps(n.dev, q35_off_caps);
    ndk_close(&n);

    /* and msi=on refuses to start, naming the property */
    expect_start_refused(on_no_apic, "'msi'");
    expect_start_refused(on_no_apic, "msi=auto");
    /* the later -machine wins over the q35 of expect_start_refused */
    expect_start_refused(on_no_apic_pc, "'msi'");
}

/* ------------------------------------------------------------------ */
/* The link: Link Capabilities and Status                               */

/* q35 with a root port at 00:03.0 whose secondary bus 1 holds the card */
#define RP_DEVFN                QPCI_DEVFN(3, 0)
#define RP_BUS                  1

static uint64_t ecam_at(int bus, int devfn, uint32_t off)
{
    return ECAM_BASE + ((uint64_t)bus << 20 | devfn << 12 | off);
}

/*
 * The nfb driver's set-up: the card behind a pcie-root-port (it refuses
 * the root bus). No firmware runs under qtest: give the port its bus
 * numbers, then reach the card through ECAM.
 */
static void rp_bus_up(Ndk *n)
{
    QPCIDevice *rp = qpci_device_find(n->bus, RP_DEVFN);

    g_assert(rp);
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, RP_BUS);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, RP_BUS);
    g_free(rp);
    ecam_enable(n);
    g_assert_cmphex(qtest_readl(n->qts, ecam_at(RP_BUS, 0, PCI_VENDOR_ID)),
                    ==, NDK_DEVICE_ID << 16 | NDK_VENDOR_ID);
}

static void rp_open(Ndk *n, const char *port_props, const char *props)
{
    memset(n, 0, sizeof(*n));
    n->qts = qtest_initf("-machine q35 -nodefaults "
                         "-device pcie-root-port,id=rp0,chassis=1,slot=1,"
                         "addr=03.0%s -device ndk-pcie-telemetry,bus=rp0%s",
                         port_props, props);
    n->bus = qpci_new_pc(n->qts, NULL);
    rp_bus_up(n);
}

/* The capability with this ID in the list, through ECAM; 0 if none. */
static uint8_t ecam_find_cap(QTestState *qts, uint64_t cfg, uint8_t cap_id)
{
    uint8_t p = qtest_readb(qts, cfg + PCI_CAPABILITY_LIST);

    for (int i = 0; p && i < 48; i++) {
        if (qtest_readb(qts, cfg + p) == cap_id) {
            return p;
        }
        p = qtest_readb(qts, cfg + p + 1);
    }
    return 0;
}

typedef struct LinkCase {
    const char *props;
    unsigned speed;     /* encoding of Link Capabilities/Status: 3 = 8 GT/s */
    unsigned width;     /* lanes */
} LinkCase;

/*
 * Link Capabilities (Max Link Speed 3..0, Maximum Link Width 9..4) and
 * Link Status (Current Link Speed 3..0, Negotiated Link Width 9..4) say
 * speed and width; Link Capabilities 2 lists every speed up to the
 * maximum (bits 1 to speed), Target Link Speed starts at the maximum.
 * Both are read-only.
 */
static void check_link(QTestState *qts, uint64_t cfg, unsigned type,
                       const LinkCase *lc)
{
    uint8_t exp = ecam_find_cap(qts, cfg, PCI_CAP_ID_EXP);
    uint32_t lnkcap, lnkcap2, vector = ((1u << lc->speed) - 1) << 1;
    uint16_t lnksta, tls;

    g_test_message("link '%s': speed %u, x%u", lc->props, lc->speed,
                   lc->width);
    g_assert_cmphex(exp, ==, PCIE_CAP);
    g_assert_cmphex((qtest_readw(qts, cfg + exp + PCI_EXP_FLAGS) &
                     PCI_EXP_FLAGS_TYPE) >> 4, ==, type);
    lnkcap = qtest_readl(qts, cfg + exp + PCI_EXP_LNKCAP);
    lnksta = qtest_readw(qts, cfg + exp + PCI_EXP_LNKSTA);
    g_assert_cmphex(lnkcap & 0xF, ==, lc->speed);
    g_assert_cmpuint((lnkcap >> 4) & 0x3F, ==, lc->width);
    g_assert_cmphex(lnksta & 0xF, ==, lc->speed);
    g_assert_cmpuint((lnksta >> 4) & 0x3F, ==, lc->width);

    lnkcap2 = qtest_readl(qts, cfg + exp + PCI_EXP_LNKCAP2);
    tls = qtest_readw(qts, cfg + exp + PCI_EXP_LNKCTL2) & 0xF;
    if (lc->speed >= 3) {
        g_assert_cmphex(lnkcap2 & 0xFE, ==, vector);
        g_assert_cmphex(tls, ==, lc->speed);
    } else {
        /* 2.5 and 5 GT/s need not fill it in; if they do, rightly */
        g_assert_true((lnkcap2 & 0xFE) == 0 || (lnkcap2 & 0xFE) == vector);
        g_assert_true(tls == 0 || tls == lc->speed);
    }

    qtest_writel(qts, cfg + exp + PCI_EXP_LNKCAP, 0xFFFFFFFF);
    qtest_writew(qts, cfg + exp + PCI_EXP_LNKSTA, 0xFFFF);
    g_assert_cmphex(qtest_readl(qts, cfg + exp + PCI_EXP_LNKCAP), ==,
                    lnkcap);
    g_assert_cmphex(qtest_readw(qts, cfg + exp + PCI_EXP_LNKSTA), ==,
                    lnksta);
}

static const LinkCase link_cases[] = {
    { "", 3, 16 },                              /* 8 GT/s x16 */
    { ",link-speed=2_5,link-width=1", 1, 1 },
    { ",link-speed=5,link-width=2", 2, 2 },
    { ",link-speed=8,link-width=8", 3, 8 },
    { ",link-speed=16,link-width=4", 4, 4 },
    { ",link-speed=32,link-width=12", 5, 12 },
    { ",link-speed=64,link-width=32", 6, 32 },
};

/*
 * The root port's Link Status: QEMU shows the card's, held to the port's
 * own Link Capabilities. The kernel's pcie_bandwidth_available (what the
 * nfb driver puts in the tree for nfb-info) takes the lower of the two.
 */
static void check_port_link(QTestState *qts, unsigned speed, unsigned width)
{
    uint64_t cfg = ecam_at(0, RP_DEVFN, 0);
    uint8_t exp = ecam_find_cap(qts, cfg, PCI_CAP_ID_EXP);
    uint16_t lnksta;

    g_assert_cmphex(exp, !=, 0);
    lnksta = qtest_readw(qts, cfg + exp + PCI_EXP_LNKSTA);
    g_assert_cmphex(lnksta & 0xF, ==, speed);
    g_assert_cmpuint((lnksta >> 4) & 0x3F, ==, width);
}

/* Behind a root port the function is an Endpoint, as lspci shows it. */
static void test_link_root_port(void)
{
    /* a Gen4 x16 card in a Gen3 x8 slot: the port shows 8 GT/s x8 */
    const LinkCase gen4 = { ",link-speed=16", 4, 16 };
    Ndk n;

    for (size_t i = 0; i < G_N_ELEMENTS(link_cases); i++) {
        rp_open(&n, "", link_cases[i].props);
        check_link(n.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT,
                   &link_cases[i]);
        /* pcie-root-port's default x-speed=16, x-width=32 */
        check_port_link(n.qts, MIN(link_cases[i].speed, 4),
                        link_cases[i].width);
        /* a system reset changes neither */
        qtest_system_reset(n.qts);
        rp_bus_up(&n);
        check_link(n.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT,
                   &link_cases[i]);
        ndk_close(&n);
    }

    rp_open(&n, ",x-speed=8,x-width=8", gen4.props);
    check_link(n.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT, &gen4);
    check_port_link(n.qts, 3, 8);
    ndk_close(&n);
}

/*
 * On q35's root bus the function is a Root Complex Integrated Endpoint
 * (lspci shows no link for one); the registers hold the link all the same.
 */
static void test_link_root_bus(void)
{
    static const size_t cases[] = { 0, 4 };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *args = g_strdup_printf(
            "-device ndk-pcie-telemetry,addr=04.0%s",
            link_cases[cases[i]].props);
        Ndk n;

        ndk_open(&n, "q35", args);
        ecam_enable(&n);
        check_link(n.qts, ecam_at(0, NDK_DEVFN, 0), PCI_EXP_TYPE_RC_END,
                   &link_cases[cases[i]]);
        ndk_close(&n);
    }
}

/* ------------------------------------------------------------------ */
/* Migration of MSI and the link                                        */

#define ML_ARGS "-device ndk-pcie-telemetry,addr=04.0,link-speed=16," \
                "link-width=4"

/*
 * Load the stream at uri into a QEMU started with args: true if it was
 * taken, false if refused (the QEMU stays up to say so).
 */
static bool migrate_in_ok(const char *args, const char *uri)
{
    QTestState *qts = qtest_initf("-machine q35 -nodefaults %s "
                                  "-incoming defer", args);
    bool ok = false;

    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    for (int i = 0; i < 10000; i++) {
        QDict *rsp = qtest_qmp_assert_success_ref(qts, "{ 'execute': "
                                                  "'query-migrate' }");
        const char *st = qdict_haskey(rsp, "status") ?
                         qdict_get_str(rsp, "status") : "none";
        bool failed = !strcmp(st, "failed");

        ok = !strcmp(st, "completed");
        qobject_unref(rsp);
        if (ok || failed) {
            break;
        }
        g_usleep(1000);
    }
    qtest_quit(qts);
    return ok;
}

/*
 * MSI's address, data and enable are configuration space and arrive;
 * a destination whose link differs is refused, as QEMU refuses any
 * difference in read-only configuration space, and so is one whose
 * device tree differs (the card checks its CRC).
 */
static void test_msi_link_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-msi-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    const LinkCase lc = { "link-speed=16,link-width=4", 4, 4 };
    int64_t t0, t1;
    Ndk a, b;

    g_assert(dir);
    ndk_open(&a, "q35", ML_ARGS);
    msi_arm(a.dev);
    qpci_config_writel(a.dev, MSI_CAP + PCI_MSI_ADDRESS_HI, 0x12);
    t0 = a.t0;
    t1 = a.now + 1000;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", ML_ARGS, uri, t0, t1);
    g_assert_cmphex(qpci_config_readw(b.dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_ENABLE);
    g_assert_cmphex(qpci_config_readl(b.dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, MSI_TRAP);
    g_assert_cmphex(qpci_config_readl(b.dev, MSI_CAP + PCI_MSI_ADDRESS_HI),
                    ==, 0x12);
    g_assert_cmphex(qpci_config_readw(b.dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    MSI_DATA);
    ecam_enable(&b);
    check_link(b.qts, ecam_at(0, NDK_DEVFN, 0), PCI_EXP_TYPE_RC_END, &lc);
    g_assert_cmphex(rd(&b, REG_MAGIC), ==, MAGIC);
    ndk_close(&b);

    /* the same stream: taken as it was, refused with another link */
    g_assert_true(migrate_in_ok(ML_ARGS, uri));
    g_assert_false(migrate_in_ok("-device ndk-pcie-telemetry,addr=04.0,"
                                 "link-speed=16,link-width=8", uri));
    g_assert_false(migrate_in_ok("-device ndk-pcie-telemetry,addr=04.0,"
                                 "link-speed=8,link-width=4", uri));
    /* and without MSI */
    g_assert_false(migrate_in_ok(ML_ARGS ",msi=off", uri));
    /*
     * or with another firmware identity, even one whose tree has the
     * same length (only the length is configuration space)
     */
    g_assert_false(migrate_in_ok(ML_ARGS ",card-name=QEMU-NDK-TELEMETRX",
                                 uri));
    g_assert_false(migrate_in_ok(ML_ARGS ",build-time=1796215335", uri));
    unlink(file);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The firmware's identity on /firmware of the device tree              */

/* The card's tree, fetched through the VSEC and decompressed. */
static uint8_t *fetch_fdt(Ndk *n)
{
    g_autoptr(GByteArray) xz = NULL;
    uint8_t *fdt = g_malloc0(65536);
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0, out_pos = 0;

    ecam_enable(n);
    xz = vsec_fetch(n);
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, xz->data,
                                              &in_pos, xz->len, fdt,
                                              &out_pos, 65536), ==, LZMA_OK);
    g_assert_cmpint(fdt_check_header(fdt), ==, 0);
    return fdt;
}

/* A string of /firmware as nfb-info reads it; NULL: not there. */
static void check_fw_string(const void *fdt, const char *name,
                            const char *want)
{
    int fw = fdt_path_offset(fdt, "/firmware"), len = -1;
    const char *p;

    g_assert_cmpint(fw, >=, 0);
    p = fdt_getprop(fdt, fw, name, &len);
    if (!want) {
        g_assert_null(p);
        g_assert_cmpint(len, ==, -FDT_ERR_NOTFOUND);
        return;
    }
    g_assert_nonnull(p);
    g_assert_cmpint(len, ==, (int)strlen(want) + 1);
    g_assert_cmpstr(p, ==, want);
}

/* The defaults: the model's identity, the card named by its PCI ID. */
#define FW_BUILD_TIME           1796215334u     /* 2026-12-02 12:42:14 UTC */

static void check_fw_defaults(const void *fdt, const char *card_name)
{
    int fw = fdt_path_offset(fdt, "/firmware");

    check_fw_string(fdt, "card-name", card_name);
    check_fw_string(fdt, "project-name", "ndk-pcie-telemetry");
    check_fw_string(fdt, "project-variant", NULL);
    check_fw_string(fdt, "project-version", "0.1.0");
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, FW_BUILD_TIME);
    /* no QEMU version: the tree is the same in every QEMU release */
    check_fw_string(fdt, "build-tool", "QEMU");
    check_fw_string(fdt, "build-author", "ndk-pcie-telemetry developers");
    check_fw_string(fdt, "build-revision", NULL);
}

static void test_firmware_id(void)
{
    g_autofree uint8_t *fdt = NULL;
    g_autofree char *name = NULL;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,id=ndk0");
    fdt = fetch_fdt(&n);
    check_fw_defaults(fdt, "QEMU-NDK-TELEMETRY");
    /* the telemetry node is still where NDK software looks */
    g_assert_cmpint(fdt_path_offset(fdt, "/firmware/mi_bus0/"
                                    "pcie_telemetry@0"), >=, 0);
    name = qom_get_str(n.qts, "/machine/peripheral/ndk0", "card-name");
    g_assert_cmpstr(name, ==, "QEMU-NDK-TELEMETRY");
    ndk_close(&n);
    g_clear_pointer(&fdt, g_free);
    g_clear_pointer(&name, g_free);

    /* CESNET's generic NDK ID: the name the nfb driver gives it */
    ndk_open_ids(&n, "q35", 0x18ec, 0xc000,
                 "-device ndk-pcie-telemetry,addr=04.0,id=ndk0,"
                 "vendor-id=0x18ec,device-id=0xc000");
    fdt = fetch_fdt(&n);
    check_fw_defaults(fdt, "COMBO-GENERIC");
    name = qom_get_str(n.qts, "/machine/peripheral/ndk0", "card-name");
    g_assert_cmpstr(name, ==, "COMBO-GENERIC");
    ndk_close(&n);
}

/* Every property set, and empty ones left out. */
static void test_firmware_id_set(void)
{
    g_autofree uint8_t *fdt = NULL;
    int fw;
    Ndk n;

    ndk_open(&n, "q35", "-device 'ndk-pcie-telemetry,addr=04.0,"
             "card-name=N6010,project-name=NDK_NIC,project-variant=100G2,"
             "project-version=0.3.2,build-time=1685752222,"
             "build-tool=Quartus Version 22.4.0 Build 94 SC Pro Edition,"
             "build-author=no-reply@liberouter.org,build-revision=1a2b3c4'");
    fdt = fetch_fdt(&n);
    fw = fdt_path_offset(fdt, "/firmware");
    check_fw_string(fdt, "card-name", "N6010");
    check_fw_string(fdt, "project-name", "NDK_NIC");
    check_fw_string(fdt, "project-variant", "100G2");
    check_fw_string(fdt, "project-version", "0.3.2");
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, 1685752222);
    check_fw_string(fdt, "build-tool",
                    "Quartus Version 22.4.0 Build 94 SC Pro Edition");
    check_fw_string(fdt, "build-author", "no-reply@liberouter.org");
    check_fw_string(fdt, "build-revision", "1a2b3c4");
    ndk_close(&n);
    g_clear_pointer(&fdt, g_free);

    /* empty: as firmware built without them (the driver names the card) */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,card-name=,"
             "project-name=,project-version=,build-tool=,build-author=,"
             "build-time=0");
    fdt = fetch_fdt(&n);
    fw = fdt_path_offset(fdt, "/firmware");
    check_fw_string(fdt, "card-name", NULL);
    check_fw_string(fdt, "project-name", NULL);
    check_fw_string(fdt, "project-version", NULL);
    check_fw_string(fdt, "build-tool", NULL);
    check_fw_string(fdt, "build-author", NULL);
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, 0);
    ndk_close(&n);
}

/* Wrong values of the new properties stop QEMU and name the property. */
static void test_bad_link_id(void)
{
    g_autofree char *too_long = g_strnfill(128, 'x');
    g_autofree char *props = g_strdup_printf("card-name=%s", too_long);
    g_autofree char *longest = g_strnfill(127, 'x');
    Ndk n;

    expect_refused("link-speed=7", "link-speed");
    expect_refused("link-speed=2.5", "link-speed");
    expect_refused("link-width=3", "link-width");
    expect_refused("link-width=64", "link-width");
    expect_refused(props, "card-name");
    expect_refused("project-name=a\tb", "project-name");
    expect_refused("project-variant=\x7f", "project-variant");
    expect_refused("project-version=1.0\n", "project-version");
    expect_refused("build-tool=caf\xc3\xa9", "build-tool");
    expect_refused("build-author=\x01", "build-author");
    expect_refused("build-revision=\x1b[0m", "build-revision");
    expect_refused("build-time=4294967296", "build-time");
    expect_refused("build-time=-1", "build-time");
    expect_refused("msi=maybe", "msi");

    /* the longest string is taken */
    g_clear_pointer(&props, g_free);
    props = g_strdup_printf("-device ndk-pcie-telemetry,addr=04.0,"
                            "build-revision=%s", longest);
    ndk_open(&n, "q35", props);
    g_assert_cmphex(rd(&n, REG_MAGIC), ==, MAGIC);
    ndk_close(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/q35/identity", test_identity);
    g_test_add_func("/ndk-pcie-telemetry/registers/defaults",
                   test_registers_default);
    g_test_add_func("/ndk-pcie-telemetry/registers/2ep-2dma-rq4",
                   test_registers_2ep);
    g_test_add_func("/ndk-pcie-telemetry/snapshot/busy-readsel-clear",
                   test_snapshot_clear);
    g_test_add_func("/ndk-pcie-telemetry/snapshot/behind-delta",
                    test_snapshot_behind_delta);
    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-counts",
                   test_pattern_counts);
    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-hour-unread",
                    test_pattern_hour_unread);
    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-counts-hotplug",
                    test_pattern_counts_hotplug);
    g_test_add_func("/ndk-pcie-telemetry/pcie-status/follows-config",
                   test_pcie_status);
    g_test_add_func("/ndk-pcie-telemetry/q35/ecam", test_ecam);
    g_test_add_func("/ndk-pcie-telemetry/access/sizes-alias-readonly",
                   test_access);
    g_test_add_func("/ndk-pcie-telemetry/counters/64bit-read-48",
                   test_counter_48);
    g_test_add_func("/ndk-pcie-telemetry/counters/wrap-33", test_counter_33);
    g_test_add_func("/ndk-pcie-telemetry/migration/file-with-traffic",
                   test_migration);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/3-endpoints",
                   test_lost_deltas_3);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/sizing-warning",
                    test_sizing_warning);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/sigterm-during-read",
                    test_sigterm_during_read);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/2-endpoints",
                   test_lost_deltas_2);
    g_test_add_func("/ndk-pcie-telemetry/properties/refused",
                   test_bad_properties);
    g_test_add_func("/ndk-pcie-telemetry/properties/edges",
                   test_edge_properties);
    g_test_add_func("/ndk-pcie-telemetry/devtree/vsec", test_devtree_vsec);
    g_test_add_func("/ndk-pcie-telemetry/devtree/block-offset",
                    test_block_offset);
    g_test_add_func("/ndk-pcie-telemetry/devtree/off", test_devtree_off);
    g_test_add_func("/ndk-pcie-telemetry/devtree/migration",
                    test_devtree_migration);
    g_test_add_func("/ndk-pcie-telemetry/reset/keeps-counters", test_reset);
    g_test_add_func("/ndk-pcie-telemetry/pc/conventional",
                   test_conventional_pci);
    g_test_add_func("/ndk-pcie-telemetry/live/qom-set-next-window",
                    test_live_qom_set);
    g_test_add_func("/ndk-pcie-telemetry/live/qom-set-next-window-4ghz",
                    test_live_qom_set_4ghz);
    g_test_add_func("/ndk-pcie-telemetry/live/many-changes-keep-past",
                    test_live_many_changes);
    g_test_add_func("/ndk-pcie-telemetry/live/migration-keeps-change",
                    test_live_migration);
    g_test_add_func("/ndk-pcie-telemetry/random/migration-continues",
                    test_random_migration);
    g_test_add_func("/ndk-pcie-telemetry/random/invariants",
                    test_random_invariants);
    g_test_add_func("/ndk-pcie-telemetry/pcie/ext-tag-off",
                    test_pcie_ext_tag_off);
    g_test_add_func("/ndk-pcie-telemetry/hotplug/late-starts-from-zero",
                    test_hotplug_late);
    g_test_add_func("/ndk-pcie-telemetry/ptc/migration-continues",
                    test_ptc_migration);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/"
                    "migration-during-background",
                    test_lossy_background_migration);
    g_test_add_func("/ndk-pcie-telemetry/ptc/claims", test_ptc_claims);
    g_test_add_func("/ndk-pcie-telemetry/ptc/claims-2-dma-ports",
                    test_ptc_claims_2ports);
    g_test_add_func("/ndk-pcie-telemetry/ptc/qom-set-tags",
                    test_ptc_qom_set_tags);
    g_test_add_func("/ndk-pcie-telemetry/scenario/phases",
                    test_scenario_phases);
    g_test_add_func("/ndk-pcie-telemetry/plugin/sample", test_plugin_sample);
    g_test_add_func("/ndk-pcie-telemetry/replay/vcd", test_replay_vcd);
    g_test_add_func("/ndk-pcie-telemetry/msi/capability", test_msi);
    g_test_add_func("/ndk-pcie-telemetry/msi/auto-on", test_msi_auto_on);
    g_test_add_func("/ndk-pcie-telemetry/link/root-port",
                    test_link_root_port);
    g_test_add_func("/ndk-pcie-telemetry/link/root-bus", test_link_root_bus);
    g_test_add_func("/ndk-pcie-telemetry/migration/msi-link",
                    test_msi_link_migration);
    g_test_add_func("/ndk-pcie-telemetry/firmware-id/defaults",
                    test_firmware_id);
    g_test_add_func("/ndk-pcie-telemetry/firmware-id/set-and-empty",
                    test_firmware_id_set);
    g_test_add_func("/ndk-pcie-telemetry/properties/refused-link-id",
                    test_bad_link_id);
    for (unsigned g = 0; g < GEN_COUNT; g++) {
        g_autofree char *path = g_strdup_printf(
            "/ndk-pcie-telemetry/random-access/%s", storm_gen_name[g]);

        g_test_add_data_func(path, GINT_TO_POINTER(g), test_storm);
    }

    return g_test_run();
}
