/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RAS DES capability of the DesignWare root port (dwc-ras-des.c):
 * the lane event counters with their commands and the sequences Linux's
 * dwc_pcie_pmu writes, the time-based analysis against a traffic source
 * the test controls (manual and timed runs, the 64-bit result in the
 * driver's order, the 16-byte unit), accesses of every width and
 * alignment, injection and its text form, reset, the port's link sums
 * over functions that come, go and reset, and migration.
 */
#include <glib.h>
#include <string.h>

#include "dwc-ras-des.h"

#define CTL     DWC_REG_EVENT_CNT_CTL
#define DATA    DWC_REG_EVENT_CNT_DATA
#define TBA     DWC_REG_TBA_CTL
#define LO      DWC_REG_TBA_DATA_LO
#define HI      DWC_REG_TBA_DATA_HI

/* A traffic source whose totals the test sets; it notes its calls */
typedef struct Src {
    DwcLinkTotals t;
    unsigned calls;
    uint64_t last_now;
} Src;

static void src_totals(void *opaque, uint64_t now, DwcLinkTotals *out)
{
    Src *src = opaque;

    src->calls++;
    src->last_now = now;
    *out = src->t;
}

static void open_des(DwcRasDes *s, Src *src)
{
    memset(src, 0, sizeof(*src));
    dwc_ras_des_init(s, src_totals, src);
}

static uint32_t rd(DwcRasDes *s, uint32_t off, uint64_t now)
{
    return dwc_ras_des_read(s, off, 4, now);
}

static void wr(DwcRasDes *s, uint32_t off, uint32_t val, uint64_t now)
{
    dwc_ras_des_write(s, off, val, 4, now);
}

/* The driver's read of the 64-bit result: high, low, high again */
static uint64_t rd64(DwcRasDes *s, uint64_t now)
{
    uint32_t hi = rd(s, HI, now), lo, ss;

    do {
        ss = hi;
        lo = rd(s, LO, now);
        hi = rd(s, HI, now);
    } while (hi != ss);
    return (uint64_t)hi << 32 | lo;
}

static uint32_t sel(uint32_t event, unsigned lane)
{
    return event << DWC_ECC_EVENT_SHIFT | lane << DWC_ECC_LANE_SHIFT;
}

static uint32_t enable(uint32_t code)
{
    return code << DWC_ECC_ENABLE_SHIFT;
}

static uint32_t tba(uint32_t report, uint32_t dur, bool start)
{
    return report << DWC_TBA_REPORT_SHIFT | dur << DWC_TBA_DURATION_SHIFT |
           (start ? DWC_TBA_START : 0);
}

static void inject(DwcRasDes *s, unsigned lane, uint32_t id, uint32_t n,
                   bool expect_counted)
{
    bool counted = !expect_counted;
    char *err = dwc_ras_des_inject(s, 16, lane, dwc_lane_event_by_id(id), n,
                                   &counted);

    g_assert_null(err);
    g_assert_cmpint(counted, ==, expect_counted);
}

/* ------------------------------------------------------------------ */

static void test_header(void)
{
    /* ID 2 in [15:0], revision 4 in [19:16], length 0x100 in [31:20] */
    g_assert_cmphex(DWC_RAS_DES_VSEC_HDR, ==, 0x10040002);
    g_assert_cmpuint(dwc_lane_event_by_id(0x600), ==, 0);
    g_assert_cmpuint(dwc_lane_event_by_id(0x717), ==, DWC_LANE_EVENTS - 1);
    g_assert_cmpint(dwc_lane_event_by_id(0x70D), ==, -1);
    g_assert_cmpint(dwc_lane_event_by_id(0x607), ==, -1);
    g_assert_cmpint(dwc_lane_event_by_name("rx_memory_read"), ==,
                    dwc_lane_event_by_id(0x70C));
    g_assert_cmpstr(dwc_lane_event_name(dwc_lane_event_by_id(0x602)), ==,
                    "rx_ack_dllp");
    g_assert_null(dwc_lane_event_name(DWC_LANE_EVENTS));
    for (unsigned i = 1; i < DWC_LANE_EVENTS; i++) {
        g_assert_cmphex(dwc_lane_event_id(i), >, dwc_lane_event_id(i - 1));
    }
}

static void test_reset_values(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    for (uint32_t off = 0; off < DWC_RAS_DES_LEN; off += 4) {
        g_assert_cmphex(rd(&s, off, 100), ==, 0);
    }
    /* read-only and unmodelled registers ignore writes */
    for (uint32_t off = 0; off < DWC_RAS_DES_LEN; off += 4) {
        if (off != CTL && off != TBA) {
            wr(&s, off, 0xFFFFFFFF, 100);
        }
    }
    for (uint32_t off = 0; off < DWC_RAS_DES_LEN; off += 4) {
        g_assert_cmphex(rd(&s, off, 200), ==, 0);
    }
    g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
}

static void test_event_control(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    /* select fields read back; commands and reserved bits read 0 */
    wr(&s, CTL, 0xFFFFFFFF, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, 0x0FFF0F00);
    /* everything was turned on by the all-on command above */
    wr(&s, CTL, sel(0x70C, 2), 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2) | DWC_ECC_STATUS);
    inject(&s, 2, 0x70C, 5, true);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 5);

    /* all off, all clear */
    wr(&s, CTL, sel(0x70C, 2) | enable(DWC_ECC_ENABLE_OFF_ALL) |
       DWC_ECC_CLEAR_ALL, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2));
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
    inject(&s, 2, 0x70C, 5, false);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);

    /* per event on: this event on this lane only */
    wr(&s, CTL, sel(0x70C, 2) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2) | DWC_ECC_STATUS);
    inject(&s, 2, 0x70C, 7, true);
    inject(&s, 3, 0x70C, 1, false);
    inject(&s, 2, 0x70B, 1, false);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 7);
    wr(&s, CTL, sel(0x70C, 3), 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 3));
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
    wr(&s, CTL, sel(0x70B, 2), 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);

    /* selecting again keeps the count; per clear clears it, stays on */
    wr(&s, CTL, sel(0x70C, 2), 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 7);
    wr(&s, CTL, sel(0x70C, 2) | DWC_ECC_CLEAR_ONE, 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
    g_assert_cmphex(rd(&s, CTL, 0) & DWC_ECC_STATUS, ==, DWC_ECC_STATUS);
    inject(&s, 2, 0x70C, 1, true);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 1);

    /* per event off keeps the count, counts no more */
    wr(&s, CTL, sel(0x70C, 2) | enable(DWC_ECC_ENABLE_OFF_ONE), 0);
    inject(&s, 2, 0x70C, 1, false);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 1);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2));

    /* the "no change" codes change nothing */
    for (uint32_t c = 0; c < 8; c += 2) {
        wr(&s, CTL, sel(0x70C, 2) | enable(c), 0);
        g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2));
    }
    wr(&s, CTL, sel(0x70C, 2) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    for (uint32_t c = 0; c < 8; c += 2) {
        wr(&s, CTL, sel(0x70C, 2) | enable(c) | 2, 0);
        g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 2) | DWC_ECC_STATUS);
        g_assert_cmpuint(rd(&s, DATA, 0), ==, 1);
    }

    /* an event of no group the model has: no counter, no status */
    wr(&s, CTL, sel(0x70D, 2) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70D, 2));
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);

    /* counters wrap at 32 bits */
    wr(&s, CTL, sel(0x600, 15) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    inject(&s, 15, 0x600, 0xFFFFFFFF, true);
    inject(&s, 15, 0x600, 3, true);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 2);
}

/*
 * Linux 6.12's dwc_pcie_pmu: add writes the selection with "per event
 * off" and "per clear"; start and stop read the register, clear bits
 * [4:2] and OR in 0x3 and 0x1 unshifted, which lands in the clear field
 * ("all clear", "per clear") and leaves the enable field at "no change".
 * The counter is never turned on, and every read returns 0.
 */
static void test_driver_612_lane(void)
{
    DwcRasDes s;
    Src src;
    uint32_t v;

    open_des(&s, &src);
    wr(&s, CTL, sel(0x70C, 4) | enable(DWC_ECC_ENABLE_OFF_ONE) |
       DWC_ECC_CLEAR_ONE, 0);
    v = rd(&s, CTL, 0);
    wr(&s, CTL, (v & ~DWC_ECC_ENABLE_MASK) | 0x3, 0);      /* start */
    inject(&s, 4, 0x70C, 9, false);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
    v = rd(&s, CTL, 0);
    wr(&s, CTL, (v & ~DWC_ECC_ENABLE_MASK) | 0x1, 0);      /* stop */
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 4));
}

/*
 * Later kernels write whole words: start = selection | per on | per
 * clear; a read selects with "per on", reads, and clears with "per on |
 * per clear"; several events count at once.
 */
static void test_driver_later_lane(void)
{
    uint32_t ids[2] = { 0x70C, 0x602 };
    unsigned lanes[2] = { 4, 0 };
    uint32_t on = enable(DWC_ECC_ENABLE_ON_ONE);
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    for (unsigned k = 0; k < 2; k++) {
        wr(&s, CTL, sel(ids[k], lanes[k]) | on | DWC_ECC_CLEAR_ONE, 0);
    }
    inject(&s, 4, 0x70C, 9, true);
    inject(&s, 0, 0x602, 2, true);
    inject(&s, 1, 0x602, 5, false);
    for (unsigned k = 0; k < 2; k++) {
        wr(&s, CTL, sel(ids[k], lanes[k]) | on, 0);
        g_assert_cmpuint(rd(&s, DATA, 0), ==, k ? 2 : 9);
        wr(&s, CTL, sel(ids[k], lanes[k]) | on | DWC_ECC_CLEAR_ONE, 0);
    }
    inject(&s, 4, 0x70C, 1, true);
    wr(&s, CTL, sel(0x70C, 4) | on, 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 1);
    wr(&s, CTL, sel(0x602, 0) | on, 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
}

/* Byte and word accesses, and accesses that cross a register */
static void test_partial_access(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    /* lane select alone (byte 1): no command runs */
    dwc_ras_des_write(&s, CTL + 1, 0x05, 1, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0, 5));
    /* event select alone (bytes 2..3) */
    dwc_ras_des_write(&s, CTL + 2, 0x070C, 2, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 5));
    /* the command byte alone acts on the stored selection */
    dwc_ras_des_write(&s, CTL, enable(DWC_ECC_ENABLE_ON_ONE), 1, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70C, 5) | DWC_ECC_STATUS);
    inject(&s, 5, 0x70C, 0x12345678, true);
    g_assert_cmphex(rd(&s, DATA, 0), ==, 0x12345678);
    /* narrow reads at every offset */
    g_assert_cmphex(dwc_ras_des_read(&s, DATA + 1, 1, 0), ==, 0x56);
    g_assert_cmphex(dwc_ras_des_read(&s, DATA + 2, 2, 0), ==, 0x1234);
    g_assert_cmphex(dwc_ras_des_read(&s, CTL, 1, 0), ==, 0x80);
    g_assert_cmphex(dwc_ras_des_read(&s, CTL + 1, 1, 0), ==, 0x05);
    /* a dword across CTL [3:2] and DATA [1:0] */
    g_assert_cmphex(dwc_ras_des_read(&s, CTL + 2, 4, 0), ==, 0x5678070C);
    /* ... and across DATA [3] and TBA_CTL [2:0] */
    g_assert_cmphex(dwc_ras_des_read(&s, DATA + 3, 4, 0), ==, 0x00000012);
    /*
     * a dword write across CTL [3:2] and DATA [1:0]: the event select
     * changes, DATA ignores it, and CTL's command byte was not written
     */
    dwc_ras_des_write(&s, CTL + 2, 0xFFFF070B, 4, 0);
    g_assert_cmphex(rd(&s, CTL, 0), ==, sel(0x70B, 5));
    g_assert_cmphex(rd(&s, DATA, 0), ==, 0);
    /* a word write across TBA_CTL [3] and DATA_LO [0] sets the report */
    dwc_ras_des_write(&s, TBA + 3, 0xFF21, 2, 0);
    g_assert_cmphex(rd(&s, TBA, 0), ==, tba(0x21, 0, false));
    /* the start bit is in byte 0: a write of byte 1 leaves it */
    dwc_ras_des_write(&s, TBA + 1, 0xFF, 1, 10);
    g_assert_cmphex(rd(&s, TBA, 10), ==, tba(0x21, 0xFF, false));
    dwc_ras_des_write(&s, TBA, DWC_TBA_START, 1, 10);
    g_assert_cmphex(rd(&s, TBA, 10), ==, tba(0x21, 0xFF, true));
    /* past the end of the modelled registers */
    g_assert_cmphex(dwc_ras_des_read(&s, DWC_RAS_DES_LEN - 2, 2, 10), ==, 0);
}

/* Any read equals the bytes of the aligned dwords it covers */
static void test_read_bytes(void)
{
    GRand *r = g_rand_new_with_seed(0xD3C0);
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    wr(&s, CTL, sel(0x713, 9) | enable(DWC_ECC_ENABLE_ON_ALL), 0);
    inject(&s, 9, 0x713, 0xA1B2C3D4, true);
    src.t.payload_up = 1u << 20;
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, 0, true), 0);
    for (unsigned i = 0; i < 2000; i++) {
        uint32_t off = g_rand_int_range(r, 0, 0x24);
        unsigned len = g_rand_int_range(r, 1, 5);
        uint64_t now = 0x1234567890ull;
        uint8_t b[0x28];
        uint32_t exp = 0;

        for (uint32_t d = 0; d < sizeof(b); d += 4) {
            uint32_t v = rd(&s, d, now);

            for (unsigned k = 0; k < 4; k++) {
                b[d + k] = v >> (8 * k);
            }
        }
        for (unsigned k = 0; k < len; k++) {
            exp |= (uint32_t)b[off + k] << (8 * k);
        }
        g_assert_cmphex(dwc_ras_des_read(&s, off, len, now), ==, exp);
    }
    g_rand_free(r);
}

/* ------------------------------------------------------------------ */

static void test_tba_manual(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    src.t.l0_ns = 700;
    src.t.down_ns = 300;
    /* what the driver's add writes: report, manual, start */
    wr(&s, TBA, tba(DWC_TBA_L0, DWC_TBA_DUR_MANUAL, true), 1000);
    g_assert_cmpuint(src.last_now, ==, 1000);
    g_assert_true(dwc_ras_des_tba_running(&s, 1000));
    g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
    src.t.l0_ns = 700 + 3000;
    src.t.down_ns = 300 + 1000;
    g_assert_cmpuint(rd64(&s, 5000), ==, 3000);
    g_assert_cmpuint(src.last_now, ==, 5000);
    /* the driver's start: set the start bit again; the run goes on */
    wr(&s, TBA, rd(&s, TBA, 5000) | DWC_TBA_START, 5000);
    g_assert_cmpuint(rd64(&s, 5000), ==, 3000);
    /* the report select may change under a run: the same start */
    wr(&s, TBA, tba(DWC_TBA_CFG_RCVRY, 0, true), 5000);
    g_assert_cmpuint(rd64(&s, 5000), ==, 1000);
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, 0, true), 5000);
    g_assert_cmpuint(rd64(&s, 5000), ==, 4000);
    /* stop (the driver clears bit 0): the result stays */
    src.t.l0_ns += 500;
    wr(&s, TBA, tba(DWC_TBA_L0, 0, false), 5500);
    g_assert_false(dwc_ras_des_tba_running(&s, 5500));
    src.t.l0_ns += 99999;
    g_assert_cmpuint(rd64(&s, 9000), ==, 3500);
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, 0, false), 9000);
    g_assert_cmpuint(rd64(&s, 9000), ==, 4500);
    /* the next start clears it */
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, 0, true), 10000);
    g_assert_cmpuint(rd64(&s, 10000), ==, 0);
    g_assert_cmpuint(rd64(&s, 10007), ==, 7);
    /* unmodelled states and reserved reports count nothing */
    for (uint32_t r = 0; r < 0x100; r++) {
        bool counts = r == DWC_TBA_ONE_CYCLE || r == DWC_TBA_L0 ||
                      r == DWC_TBA_CFG_RCVRY ||
                      r == DWC_TBA_TX_PCIE_PAYLOAD ||
                      r == DWC_TBA_RX_PCIE_PAYLOAD;

        wr(&s, TBA, tba(r, 0, false), 20000 + r);
        wr(&s, TBA, tba(r, 0, true), 20000 + r);
        src.t.payload_up += 64;
        src.t.payload_down += 64;
        src.t.l0_ns += 1;
        src.t.down_ns += 1;
        if (!counts) {
            g_assert_cmpuint(rd64(&s, 30000), ==, 0);
        } else {
            g_assert_cmpuint(rd64(&s, 30000), >, 0);
        }
    }
}

static void test_tba_clamp(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    wr(&s, TBA, tba(DWC_TBA_L0, 0, true), 100);
    /* a source that claims more time than went by is bounded by it */
    src.t.l0_ns = 5000;
    src.t.down_ns = 5000;
    g_assert_cmpuint(rd64(&s, 1100), ==, 1000);
    wr(&s, TBA, tba(DWC_TBA_CFG_RCVRY, 0, true), 1100);
    g_assert_cmpuint(rd64(&s, 1100), ==, 1000);
    /* and one whose totals went back counts 0, not a wrapped difference */
    wr(&s, TBA, 0, 1100);
    src.t.payload_up = 4096;
    wr(&s, TBA, tba(DWC_TBA_L0, 0, true), 1100);
    src.t.l0_ns = 0;
    src.t.payload_up = 0;
    g_assert_cmpuint(rd64(&s, 1200), ==, 0);
    wr(&s, TBA, tba(DWC_TBA_RX_PCIE_PAYLOAD, 0, true), 1200);
    g_assert_cmpuint(rd64(&s, 1200), ==, 0);
}

/* Payload in 16-byte units: the byte difference, rounded down */
static void test_tba_payload(void)
{
    static const struct {
        uint64_t at_start, at_read, units;
    } cases[] = {
        { 0, 15, 0 }, { 0, 16, 1 }, { 0, 47, 2 }, { 8, 23, 0 }, { 8, 24, 1 },
        { 15, 16, 0 }, { 1, 1ull << 40, (1ull << 36) - 1 },
        /* 2^68 - 16 bytes: a 64-bit result past 2^32 units */
        { 0, UINT64_MAX, UINT64_MAX / 16 },
    };
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        for (unsigned dir = 0; dir < 2; dir++) {
            uint32_t rep = dir ? DWC_TBA_RX_PCIE_PAYLOAD :
                                 DWC_TBA_TX_PCIE_PAYLOAD;
            uint64_t t = 1000 * (2 * i + dir);
            uint64_t first = cases[i].at_start, then = cases[i].at_read;

            src.t.payload_up = dir ? first : 0;
            src.t.payload_down = dir ? 0 : first;
            wr(&s, TBA, tba(rep, 0, true), t + 100);
            src.t.payload_up = dir ? then : 999;
            src.t.payload_down = dir ? 999 : then;
            g_assert_cmpuint(rd64(&s, t + 200), ==, cases[i].units);
            wr(&s, TBA, tba(rep, 0, false), t + 300);
            g_assert_cmpuint(rd64(&s, t + 400), ==, cases[i].units);
        }
    }
}

/* Timed runs stop at their end; reads between show the run so far */
static void test_tba_timed(void)
{
    static const struct {
        uint32_t code;
        uint64_t ns;
    } durs[] = {
        { DWC_TBA_DUR_1MS, 1000000 }, { DWC_TBA_DUR_10MS, 10000000 },
        { DWC_TBA_DUR_100MS, 100000000 }, { DWC_TBA_DUR_1S, 1000000000 },
        { DWC_TBA_DUR_2S, 2000000000 }, { DWC_TBA_DUR_4S, 4000000000ull },
        { DWC_TBA_DUR_4US, 4000 }, { DWC_TBA_DUR_MANUAL, 0 }, { 0x07, 0 },
        { 0x80, 0 }, { 0xFE, 0 },
    };
    DwcRasDes s;
    Src src;
    uint64_t t;

    open_des(&s, &src);
    for (unsigned i = 0; i < G_N_ELEMENTS(durs); i++) {
        uint64_t t0 = 1000 + i * 10000000000ull, end = t0 + durs[i].ns;

        wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, durs[i].code, true), t0);
        if (!durs[i].ns) {
            g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
            g_assert_cmpuint(rd64(&s, t0 + 9000000000ull), ==, 9000000000ull);
            wr(&s, TBA, 0, t0 + 9000000000ull);
            continue;
        }
        g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, end);
        g_assert_cmpuint(rd64(&s, end - 1), ==, durs[i].ns - 1);
        g_assert_cmphex(rd(&s, TBA, end - 1), ==,
                        tba(DWC_TBA_ONE_CYCLE, durs[i].code, true));
        g_assert_cmphex(rd(&s, TBA, end), ==,
                        tba(DWC_TBA_ONE_CYCLE, durs[i].code, false));
        g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
        g_assert_cmpuint(rd64(&s, end + 12345), ==, durs[i].ns);
    }

    /* ended by sync at the deadline: the totals of then */
    t = 1ull << 40;
    src.t.l0_ns = 100;
    wr(&s, TBA, tba(DWC_TBA_L0, DWC_TBA_DUR_4US, true), t);
    src.t.l0_ns = 100 + 3000;
    dwc_ras_des_sync(&s, t + 3999);
    g_assert_true(dwc_ras_des_tba_running(&s, t + 3999));
    dwc_ras_des_sync(&s, t + 4000);
    g_assert_false(dwc_ras_des_tba_running(&s, t + 4000));
    g_assert_cmpuint(src.last_now, ==, t + 4000);
    src.t.l0_ns = 1000000;
    g_assert_cmpuint(rd64(&s, t + 100000), ==, 3000);
    /* ended lazily by a later access: the time is the run's, bounded */
    t += 1000000;
    wr(&s, TBA, tba(DWC_TBA_L0, DWC_TBA_DUR_4US, true), t);
    src.t.l0_ns += 9000;
    g_assert_cmpuint(rd64(&s, t + 9000), ==, 4000);
    /* a stop before the end ends it there */
    t += 1000000;
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, DWC_TBA_DUR_1MS, true), t);
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, DWC_TBA_DUR_1MS, false), t + 777);
    g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
    g_assert_cmpuint(rd64(&s, t + 5000000), ==, 777);
}

/* Over 2^32 ns the high word counts: the driver's order reads it whole */
static void test_tba_64bit(void)
{
    uint64_t t0 = 123, t = t0 + 5000000000ull;
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, 0, true), t0);
    g_assert_cmphex(rd(&s, HI, t), ==, 1);
    g_assert_cmphex(rd(&s, LO, t), ==, (uint32_t)(5000000000ull));
    g_assert_cmpuint(rd64(&s, t), ==, 5000000000ull);
}

static void test_reset(void)
{
    DwcRasDes s;
    Src src;

    open_des(&s, &src);
    wr(&s, CTL, sel(0x700, 1) | enable(DWC_ECC_ENABLE_ON_ALL), 0);
    inject(&s, 1, 0x700, 3, true);
    wr(&s, TBA, tba(DWC_TBA_ONE_CYCLE, DWC_TBA_DUR_1S, true), 10);
    dwc_ras_des_reset(&s);
    for (uint32_t off = 0; off < DWC_RAS_DES_LEN; off += 4) {
        g_assert_cmphex(rd(&s, off, 1000), ==, 0);
    }
    g_assert_cmpuint(dwc_ras_des_deadline(&s), ==, UINT64_MAX);
    /* the counters are off again, and the source is kept */
    inject(&s, 1, 0x700, 3, false);
    wr(&s, TBA, tba(DWC_TBA_L0, 0, true), 2000);
    g_assert_cmpuint(src.last_now, ==, 2000);
}

static void test_inject(void)
{
    DwcRasDes s;
    Src src;
    bool counted;
    char *err;

    open_des(&s, &src);
    wr(&s, CTL, enable(DWC_ECC_ENABLE_ON_ALL), 0);
    err = dwc_ras_des_inject(&s, 4, 3, 0, 1, &counted);
    g_assert_null(err);
    g_assert_true(counted);
    err = dwc_ras_des_inject(&s, 4, 4, 0, 1, &counted);
    g_assert_cmpstr(err, ==, "lane 4 is not below the link's width x4");
    g_assert_false(counted);
    g_free(err);
    err = dwc_ras_des_inject(&s, 32, 16, 0, 1, &counted);
    g_assert_nonnull(err);
    g_free(err);
    err = dwc_ras_des_inject(&s, 4, 0, DWC_LANE_EVENTS, 1, &counted);
    g_assert_nonnull(err);
    g_free(err);
    wr(&s, CTL, sel(0x600, 3), 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 1);
    wr(&s, CTL, sel(0x600, 4), 0);
    g_assert_cmpuint(rd(&s, DATA, 0), ==, 0);
}

static void test_parse(void)
{
    static const struct {
        const char *text;
        unsigned lane;
        uint32_t id, count;
    } good[] = {
        { "lane=3,event=rx_memory_read,count=5", 3, 0x70C, 5 },
        { "event=tx_ack_dllp,lane=0", 0, 0x600, 1 },
        { "count=4294967295,lane=15,event=0x717", 15, 0x717, 0xFFFFFFFF },
        { "lane=0x2,event=1803,count=0x10", 2, 0x70B, 16 },
    };
    static const struct {
        const char *text, *needle;
    } bad[] = {
        { "lane=16,event=tx_ack_dllp", "lane '16'" },
        { "lane=-1,event=tx_ack_dllp", "lane '-1'" },
        { "lane=,event=tx_ack_dllp", "lane ''" },
        { "lane=1,event=nothing", "no lane event 'nothing'" },
        { "lane=1,event=0x70d", "no lane event '0x70d'" },
        { "lane=1,event=1547", "no lane event '1547'" },
        { "lane=1,event=tx_ack_dllp,count=0", "count '0'" },
        { "lane=1,event=tx_ack_dllp,count=4294967296", "count '4294967296'" },
        { "lane=1,event=tx_ack_dllp,count=1x", "count '1x'" },
        { "lane=1", "event missing" },
        { "event=tx_ack_dllp", "lane missing" },
        { "", "lane missing" },
        { "lane", "is not key=value" },
        { "lane=1,lane=2,event=tx_ack_dllp", "'lane' is given twice" },
        { "lane=1,event=tx_ack_dllp,size=3", "'size' is no key" },
        { "lane=1;event=tx_ack_dllp", "lane '1;event=tx_ack_dllp'" },
    };
    DwcLaneError e;

    for (unsigned i = 0; i < G_N_ELEMENTS(good); i++) {
        char *err = dwc_lane_error_parse(good[i].text, &e);

        g_assert_null(err);
        g_assert_cmpuint(e.lane, ==, good[i].lane);
        g_assert_cmphex(dwc_lane_event_id(e.index), ==, good[i].id);
        g_assert_cmpuint(e.count, ==, good[i].count);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *err = dwc_lane_error_parse(bad[i].text, &e);

        g_assert_nonnull(err);
        if (!strstr(err, bad[i].needle)) {
            g_test_message("'%s': %s", bad[i].text, err);
        }
        g_assert_nonnull(strstr(err, bad[i].needle));
        g_free(err);
    }
}

/* ------------------------------------------------------------------ */

static void totals_at(const DwcLinkSum *ls, uint64_t now, DwcLinkTotals *t)
{
    dwc_link_sum_totals(ls, now, t);
    g_assert_cmpuint(t->l0_ns + t->down_ns, ==, now - ls->origin);
}

static void test_link_sum(void)
{
    DwcLinkSum *ls = g_new0(DwcLinkSum, 1);
    PcieLinkTotals d0 = { 0 }, d3 = { 0 };
    DwcLinkTotals t;

    dwc_link_sum_init(ls, 1000);
    /* nothing below: the link is down */
    totals_at(ls, 5000, &t);
    g_assert_cmpuint(t.down_ns, ==, 4000);
    g_assert_cmpuint(t.payload_up | t.payload_down, ==, 0);
    /* a function 3 alone does not bring the link up */
    dwc_link_sum_attach(ls, 3, 5000);
    d3.payload_up = 100;
    d3.link_down_ns = 77;
    dwc_link_sum_update(ls, 3, &d3);
    totals_at(ls, 6000, &t);
    g_assert_cmpuint(t.down_ns, ==, 5000);
    g_assert_cmpuint(t.payload_up, ==, 100);
    /* function 0 does; its down time counts, function 3's does not */
    dwc_link_sum_attach(ls, 0, 6000);
    d0.link_down_ns = 250;
    d0.payload_down = 64;
    dwc_link_sum_update(ls, 0, &d0);
    totals_at(ls, 10000, &t);
    g_assert_cmpuint(t.down_ns, ==, 5000 + 250);
    g_assert_cmpuint(t.l0_ns, ==, 9000 - 5250);
    g_assert_cmpuint(t.payload_down, ==, 64);
    g_assert_cmpuint(t.payload_up, ==, 100);
    /* function 0 resets: its totals restart, the port keeps its own */
    d0.payload_down = 16;
    d0.link_down_ns = 10;
    dwc_link_sum_update(ls, 0, &d0);
    totals_at(ls, 11000, &t);
    g_assert_cmpuint(t.payload_down, ==, 64 + 16);
    g_assert_cmpuint(t.down_ns, ==, 5000 + 250 + 10);
    /* one total below the last one is a reset, for all of them */
    d3.payload_up = 150;
    d3.payload_down = 0;
    dwc_link_sum_update(ls, 3, &d3);
    d3.payload_up = 20;
    dwc_link_sum_update(ls, 3, &d3);
    totals_at(ls, 11000, &t);
    g_assert_cmpuint(t.payload_up, ==, 170);
    /* functions go: what they had stays; without function 0, down */
    dwc_link_sum_detach(ls, 3, 12000);
    dwc_link_sum_detach(ls, 0, 12000);
    totals_at(ls, 15000, &t);
    g_assert_cmpuint(t.payload_up, ==, 170);
    g_assert_cmpuint(t.payload_down, ==, 80);
    g_assert_cmpuint(t.down_ns, ==, 5000 + 260 + 3000);
    /* a new function 0 starts from nothing */
    dwc_link_sum_attach(ls, 0, 15000);
    d0.payload_down = 5;
    d0.link_down_ns = 0;
    dwc_link_sum_update(ls, 0, &d0);
    totals_at(ls, 16000, &t);
    g_assert_cmpuint(t.payload_down, ==, 85);
    g_assert_cmpuint(t.down_ns, ==, 8260);
    g_assert_cmpuint(t.l0_ns, ==, 15000 - 8260);
    /* a function that claims more down time than went by is bounded */
    d0.link_down_ns = 1ull << 50;
    dwc_link_sum_update(ls, 0, &d0);
    totals_at(ls, 17000, &t);
    g_assert_cmpuint(t.l0_ns, ==, 0);
    g_free(ls);
}

/* The port's sums as the capability's source */
static void link_src(void *opaque, uint64_t now, DwcLinkTotals *out)
{
    dwc_link_sum_totals(opaque, now, out);
}

static void test_link_sum_tba(void)
{
    DwcLinkSum *ls = g_new0(DwcLinkSum, 1);
    DwcRasDes s;

    dwc_link_sum_init(ls, 0);
    dwc_ras_des_init(&s, link_src, ls);
    wr(&s, TBA, tba(DWC_TBA_CFG_RCVRY, 0, true), 1000);
    dwc_link_sum_attach(ls, 0, 4000);
    g_assert_cmpuint(rd64(&s, 10000), ==, 3000);
    wr(&s, TBA, tba(DWC_TBA_L0, 0, true), 10000);
    g_assert_cmpuint(rd64(&s, 10000), ==, 6000);
    g_free(ls);
}

/* ------------------------------------------------------------------ */

static void busy_state(DwcRasDes *s, DwcLinkSum *ls, Src *src)
{
    PcieLinkTotals d = { 1, 2, 3 };

    wr(s, CTL, sel(0x70C, 3) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    wr(s, CTL, sel(0x600, 0) | enable(DWC_ECC_ENABLE_ON_ONE), 0);
    inject(s, 3, 0x70C, 0xDEADBEEF, true);
    inject(s, 0, 0x600, 11, true);
    src->t.payload_up = 1000;
    src->t.l0_ns = 10;
    wr(s, TBA, tba(DWC_TBA_RX_PCIE_PAYLOAD, DWC_TBA_DUR_10MS, true), 500);
    src->t.payload_up = 5000;
    dwc_link_sum_init(ls, 7);
    dwc_link_sum_attach(ls, 0, 9);
    dwc_link_sum_attach(ls, 17, 9);
    dwc_link_sum_update(ls, 17, &d);
    dwc_link_sum_attach(ls, 200, 9);
    dwc_link_sum_update(ls, 200, &d);
    d.payload_up = 0;
    dwc_link_sum_update(ls, 200, &d);
}

static void check_same(DwcRasDes *a, DwcRasDes *b, const DwcLinkSum *la,
                       const DwcLinkSum *lb, uint64_t now)
{
    DwcLinkTotals ta, tb;

    for (uint32_t id = 0x600; id < 0x720; id++) {
        for (unsigned lane = 0; lane < 16; lane++) {
            wr(a, CTL, sel(id, lane), now);
            wr(b, CTL, sel(id, lane), now);
            g_assert_cmphex(rd(a, CTL, now), ==, rd(b, CTL, now));
            g_assert_cmphex(rd(a, DATA, now), ==, rd(b, DATA, now));
        }
    }
    g_assert_cmphex(rd(a, TBA, now), ==, rd(b, TBA, now));
    g_assert_cmpuint(rd64(a, now), ==, rd64(b, now));
    g_assert_cmpuint(dwc_ras_des_deadline(a), ==, dwc_ras_des_deadline(b));
    dwc_link_sum_totals(la, now, &ta);
    dwc_link_sum_totals(lb, now, &tb);
    g_assert_cmpmem(&ta, sizeof(ta), &tb, sizeof(tb));
}

static void test_migration(void)
{
    DwcLinkSum *ls = g_new0(DwcLinkSum, 1), *ls2 = g_new0(DwcLinkSum, 1);
    DwcRasDes s, s2;
    Src src, src2;
    uint8_t *buf, *bad;
    size_t len;
    char *err;

    open_des(&s, &src);
    busy_state(&s, ls, &src);
    buf = dwc_state_save(&s, ls, &len);
    open_des(&s2, &src2);
    src2.t = src.t;
    dwc_link_sum_init(ls2, 0);
    err = dwc_state_load(&s2, ls2, buf, len);
    g_assert_null(err);
    g_assert_true(s2.opaque == &src2);
    g_assert_cmpuint(rd64(&s2, 1000), ==, (5000 - 1000) / 16);
    check_same(&s, &s2, ls, ls2, 2000);
    /* the timed run still ends where it would have */
    g_assert_cmpuint(dwc_ras_des_deadline(&s2), ==, 500 + 10000000);

    /* refused states change nothing */
    wr(&s2, CTL, sel(0x717, 1), 2000);
    bad = g_memdup2(buf, len);
    err = dwc_state_load(&s2, ls2, bad, len - 1);
    g_assert_nonnull(err);
    g_free(err);
    bad[0] ^= 1;                        /* magic */
    err = dwc_state_load(&s2, ls2, bad, len);
    g_assert_nonnull(err);
    g_free(err);
    memcpy(bad, buf, len);
    bad[8] |= 0x80;                     /* a reserved bit of CTL */
    err = dwc_state_load(&s2, ls2, bad, len);
    g_assert_cmpstr(err, ==, "RAS DES state: reserved control bits set");
    g_free(err);
    memcpy(bad, buf, len);
    bad[16] = 0xFF;                     /* enable bits past lane 15 */
    bad[17] = 0xFF;
    bad[18] = 0x01;
    err = dwc_state_load(&s2, ls2, bad, len);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_cmphex(rd(&s2, CTL, 2000), ==, sel(0x717, 1));
    g_free(bad);
    g_free(buf);

    /* a stopped state and an empty one round-trip as well */
    wr(&s, TBA, 0, 3000);
    buf = dwc_state_save(&s, ls, &len);
    err = dwc_state_load(&s2, ls2, buf, len);
    g_assert_null(err);
    check_same(&s, &s2, ls, ls2, 4000);
    g_free(buf);
    dwc_ras_des_reset(&s);
    dwc_link_sum_init(ls, 0);
    buf = dwc_state_save(&s, ls, &len);
    err = dwc_state_load(&s2, ls2, buf, len);
    g_assert_null(err);
    check_same(&s, &s2, ls, ls2, 4000);
    g_free(buf);
    g_free(ls);
    g_free(ls2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dwc-ras-des/header", test_header);
    g_test_add_func("/dwc-ras-des/reset-values", test_reset_values);
    g_test_add_func("/dwc-ras-des/event-control", test_event_control);
    g_test_add_func("/dwc-ras-des/driver-6.12-lane", test_driver_612_lane);
    g_test_add_func("/dwc-ras-des/driver-later-lane", test_driver_later_lane);
    g_test_add_func("/dwc-ras-des/partial-access", test_partial_access);
    g_test_add_func("/dwc-ras-des/read-bytes", test_read_bytes);
    g_test_add_func("/dwc-ras-des/tba-manual", test_tba_manual);
    g_test_add_func("/dwc-ras-des/tba-clamp", test_tba_clamp);
    g_test_add_func("/dwc-ras-des/tba-payload", test_tba_payload);
    g_test_add_func("/dwc-ras-des/tba-timed", test_tba_timed);
    g_test_add_func("/dwc-ras-des/tba-64bit", test_tba_64bit);
    g_test_add_func("/dwc-ras-des/reset", test_reset);
    g_test_add_func("/dwc-ras-des/inject", test_inject);
    g_test_add_func("/dwc-ras-des/parse", test_parse);
    g_test_add_func("/dwc-ras-des/link-sum", test_link_sum);
    g_test_add_func("/dwc-ras-des/link-sum-tba", test_link_sum_tba);
    g_test_add_func("/dwc-ras-des/migration", test_migration);
    return g_test_run();
}
