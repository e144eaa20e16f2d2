/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DesignWare xData model (qemu-device/xdata/xdata-core.c): the
 * registers at every width and alignment, the dw-xdata-pcie driver's
 * probe, start, stop and perf sequences, the write and read tests'
 * counts against the link-rate rule at several speeds, widths, MPS and
 * MRRS, the burst count's end of a test with STATUS done, the perf
 * enable's gating, the link's totals with the CPU's BAR accesses, reset,
 * migration and bad accesses. The expected counts are worked out by hand
 * from docs/xdata.md's rule (the numbers in the tables), not by the
 * model's functions.
 */
#include <glib.h>
#include <string.h>

#include "xdata-core.h"

#define MS              1000000ull
#define T0              5000ull         /* the tests' doorbell */
#define BAR             0xC0000000ull   /* where the guest put BAR 0 */
#define EP_MEM_OFFSET   0x8000000ull    /* the driver's target offset */
#define BURST_VALUE     0x1001u         /* the driver's burst count */

static XdataLink env_link;

static void env_link_fn(void *opaque, XdataLink *out)
{
    *out = env_link;
}

static void env_init(XdataCore *s, uint32_t mts, uint32_t width,
                     uint32_t mps, uint32_t mrrs)
{
    env_link = (XdataLink) { mts, width, mps, mrrs };
    xdata_init(s, env_link_fn, NULL);
}

static uint32_t rd(XdataCore *s, uint32_t off, uint64_t now)
{
    return xdata_read(s, off, 4, now);
}

static void wr(XdataCore *s, uint32_t off, uint32_t v, uint64_t now)
{
    xdata_write(s, off, 4, v, now);
}

/* ------------------------------------------------------------------ */
/* The driver's sequences (drivers/misc/dw-xdata-pcie.c, Linux 6.12)  */

static void drv_probe(XdataCore *s, uint64_t now)
{
    wr(s, XDATA_RAM_ADDR, 0, now);
    wr(s, XDATA_RAM_PORT, 0, now);
    wr(s, XDATA_ADDR_LSB, (uint32_t)(BAR + EP_MEM_OFFSET), now);
    wr(s, XDATA_ADDR_MSB, (BAR + EP_MEM_OFFSET) >> 32, now);
}

static void drv_stop(XdataCore *s, uint64_t now)
{
    uint32_t burst = rd(s, XDATA_BURST_CNT, now);

    if (burst & XDATA_BURST_REPEAT) {
        wr(s, XDATA_BURST_CNT, burst & ~XDATA_BURST_REPEAT, now);
    }
}

/* length in dwords: MPS / 4 for a write test, MRRS / 4 for a read test */
static void drv_start(XdataCore *s, bool write, uint32_t len_dw,
                      uint64_t now)
{
    uint32_t control = XDATA_CTRL_DOORBELL | XDATA_CTRL_PATTERN_INC |
                       XDATA_CTRL_NO_ADDR_INC | len_dw << 2;

    drv_stop(s, now);
    wr(s, XDATA_STATUS, 0, now);
    wr(s, XDATA_BURST_CNT, XDATA_BURST_REPEAT | BURST_VALUE, now);
    wr(s, XDATA_PATTERN, 0, now);
    wr(s, XDATA_CONTROL, control | (write ? XDATA_CTRL_WRITE : 0), now);
}

/* dw_xdata_perf_meas between perf control 0 and ENABLE */
static uint64_t drv_meas(XdataCore *s, bool write, uint64_t now)
{
    uint32_t msb = write ? XDATA_WR_CNT_MSB : XDATA_RD_CNT_MSB;
    uint64_t v;

    wr(s, XDATA_PERF_CONTROL, 0, now);
    v = (uint64_t)rd(s, msb, now) << 32;
    v |= rd(s, msb - 4, now);
    wr(s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, now);
    return v;
}

/* dw_xdata_perf_diff: MB/s as the driver prints it */
static uint64_t drv_rate(uint64_t m1, uint64_t m0, uint64_t ns)
{
    uint64_t rate = (m1 - m0) * 1000000000ull;

    rate >>= 20;
    return (rate + ns / 2) / ns;
}

/* ------------------------------------------------------------------ */

static void test_reset_identity(void)
{
    static const uint32_t regs[] = {
        XDATA_ADDR_LSB, XDATA_ADDR_MSB, XDATA_BURST_CNT, XDATA_CONTROL,
        XDATA_PATTERN, XDATA_STATUS, XDATA_RAM_ADDR, XDATA_RAM_PORT,
        XDATA_PERF_CONTROL, XDATA_WR_CNT_LSB, XDATA_WR_CNT_MSB,
        XDATA_RD_CNT_LSB, XDATA_RD_CNT_MSB,
    };
    XdataCore s;
    PcieLinkTotals t;

    env_init(&s, 8000, 4, 128, 512);
    for (unsigned i = 0; i < G_N_ELEMENTS(regs); i++) {
        g_assert_cmphex(rd(&s, regs[i], 10 * MS), ==, 0);
    }
    g_assert_false(xdata_running(&s, 10 * MS));
    g_assert_null(xdata_test(&s));
    xdata_totals(&s, 10 * MS, &t);
    /* the 13 reads just made: 4 bytes each up */
    g_assert_cmpuint(t.payload_up, ==, 13 * 4);
    g_assert_cmpuint(t.payload_down, ==, 0);
    g_assert_cmpuint(t.link_down_ns, ==, 0);
}

static void test_register_widths(void)
{
    static const uint32_t plain[] = {
        XDATA_ADDR_LSB, XDATA_ADDR_MSB, XDATA_PATTERN, XDATA_RAM_ADDR,
        XDATA_RAM_PORT,
    };
    XdataCore s;

    env_init(&s, 8000, 4, 128, 512);
    /* every byte lane of the plain registers, read at 1, 2 and 4 bytes */
    for (unsigned i = 0; i < G_N_ELEMENTS(plain); i++) {
        uint32_t o = plain[i], v = 0x8040201u * (i + 1) + 0x01000000u;

        for (unsigned b = 0; b < 4; b++) {
            xdata_write(&s, o + b, 1, v >> 8 * b, 0);
        }
        g_assert_cmphex(rd(&s, o, 0), ==, v);
        for (unsigned b = 0; b < 4; b++) {
            g_assert_cmphex(xdata_read(&s, o + b, 1, 0), ==,
                            v >> 8 * b & 0xFF);
        }
        g_assert_cmphex(xdata_read(&s, o, 2, 0), ==, v & 0xFFFF);
        g_assert_cmphex(xdata_read(&s, o + 2, 2, 0), ==, v >> 16);
        /* a 16-bit write changes only its two bytes */
        xdata_write(&s, o + 2, 2, 0xBEEF, 0);
        g_assert_cmphex(rd(&s, o, 0), ==, (v & 0xFFFF) | 0xBEEF0000u);
    }
    /* 8 bytes at once: the address, low word first */
    xdata_write(&s, XDATA_ADDR_LSB, 8, 0x0123456789ABCDEFull, 0);
    g_assert_cmphex(rd(&s, XDATA_ADDR_LSB, 0), ==, 0x89ABCDEF);
    g_assert_cmphex(rd(&s, XDATA_ADDR_MSB, 0), ==, 0x01234567);
    g_assert_cmphex(xdata_read(&s, XDATA_ADDR_LSB, 8, 0), ==,
                    0x0123456789ABCDEFull);
    /* unaligned: 4 bytes across the two halves of the address */
    xdata_write(&s, XDATA_ADDR_LSB + 2, 4, 0xAAAA5555u, 0);
    g_assert_cmphex(rd(&s, XDATA_ADDR_LSB, 0), ==, 0x5555CDEF);
    g_assert_cmphex(rd(&s, XDATA_ADDR_MSB, 0), ==, 0x0123AAAA);
    g_assert_cmphex(xdata_read(&s, XDATA_ADDR_LSB + 3, 2, 0), ==, 0xAA55);

    /* the burst count holds all 32 bits */
    wr(&s, XDATA_BURST_CNT, 0xFFFFFFFF, 0);
    g_assert_cmphex(rd(&s, XDATA_BURST_CNT, 0), ==, 0xFFFFFFFF);
    wr(&s, XDATA_BURST_CNT, 0, 0);
    /*
     * control: write, length, pattern and address bits; the doorbell and
     * the rest read 0 (byte 0 written without the doorbell)
     */
    wr(&s, XDATA_CONTROL, 0xFFFFFFFE, 0);
    g_assert_cmphex(rd(&s, XDATA_CONTROL, 0), ==, 0x00053FFE);
    g_assert_null(xdata_test(&s));
    /* a byte of it alone: bits 15:8, the length's upper part */
    xdata_write(&s, XDATA_CONTROL + 1, 1, 0x00, 0);
    g_assert_cmphex(rd(&s, XDATA_CONTROL, 0), ==, 0x000500FE);
    /* a doorbell in a byte write: bit 0 of byte 0 */
    xdata_write(&s, XDATA_CONTROL + 2, 1, 0x01, 0);
    g_assert_null(xdata_test(&s));
    xdata_write(&s, XDATA_CONTROL, 1, 0x01, 0);
    g_assert_nonnull(xdata_test(&s));
    g_assert_cmphex(rd(&s, XDATA_CONTROL, 0), ==, 0x00010000);
    /* perf control: bit 5 only */
    wr(&s, XDATA_PERF_CONTROL, 0xFFFFFFFF, 0);
    g_assert_cmphex(rd(&s, XDATA_PERF_CONTROL, 0), ==, XDATA_PERF_ENABLE);
    xdata_write(&s, XDATA_PERF_CONTROL + 1, 1, 0, 0);
    g_assert_cmphex(rd(&s, XDATA_PERF_CONTROL, 0), ==, XDATA_PERF_ENABLE);
    /*
     * status (done: that test had length 0) and the counters: writes
     * of ones change nothing
     */
    wr(&s, XDATA_STATUS, 0xFFFFFFFF, 0);
    g_assert_cmphex(rd(&s, XDATA_STATUS, 0), ==, XDATA_STATUS_DONE);
    wr(&s, XDATA_WR_CNT_LSB, 0x1234, 0);
    xdata_write(&s, XDATA_RD_CNT_LSB, 8, 0x1234, 0);
    g_assert_cmphex(rd(&s, XDATA_WR_CNT_LSB, 0), ==, 0);
    g_assert_cmphex(rd(&s, XDATA_RD_CNT_LSB, 0), ==, 0);
}

/*
 * The rule's numbers, by hand (docs/xdata.md): raw = MT/s x lanes x
 * coding / 8 bytes a us, coding 8/10 to 5 GT/s, 128/130 to 32 GT/s,
 * 236/256 at 64; a write TLP is its payload + 12 (3DW) or 16 (4DW) + 8
 * (no 8 at 64 GT/s); a read request 12/16 + 8 up, each completion its
 * payload + 12 + 8 down. Bytes after 1 ms and 100 ms, and the driver's
 * MB/s over exactly 100 ms.
 */
typedef struct RateCase {
    bool write;
    uint32_t mts, width, mps, mrrs, len_dw;
    bool addr64;
    uint32_t wire;
    uint64_t bytes_1ms, bytes_100ms, mb_s;
} RateCase;

static const RateCase rate_cases[] = {
    /* 3.9385 B/ns, 128 B in 148: 26611.2 a ms */
    { true, 8000, 4, 128, 512, 32, false, 148, 3406208, 340623616, 3248 },
    /* 0.25 B/ns, 256 B in 276 */
    { true, 2500, 1, 256, 512, 64, false, 276, 231680, 23188224, 221 },
    /* 31.508 B/ns, 4DW headers: 512 B in 536 */
    { true, 16000, 16, 512, 512, 128, true, 536, 30096896, 3009689600,
      28703 },
    /* flits: 59 B/ns, 256 B in 268 */
    { true, 64000, 8, 256, 512, 64, false, 268, 56358144, 5635820800,
      53747 },
    /* 300 B in three TLPs of at most 128 B: 300 + 3 x 20 */
    { true, 8000, 4, 128, 512, 75, false, 360, 3282000, 328205100, 3130 },
    /* read 512 B: four completions of 128 B down, 592 */
    { false, 8000, 4, 128, 512, 128, false, 592, 3405824, 340623360, 3248 },
    /*
     * read 1200 B: requests of 512, 512, 176 and 2 + 2 + 1 completions
     * of 256 at most: 1200 + 5 x 20 down, 3 x 20 up; 1 B/ns
     */
    { false, 5000, 2, 256, 512, 300, false, 1300, 922800, 92307600, 880 },
    /* read 4096 B in one request of 4DW: 16 completions, 4096 + 320 */
    { false, 32000, 8, 256, 4096, 1024, true, 4416, 29220864, 2922450944,
      27871 },
};

static void test_rates(void)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(rate_cases); i++) {
        const RateCase *c = &rate_cases[i];
        uint32_t cnt = c->write ? XDATA_WR_CNT_LSB : XDATA_RD_CNT_LSB;
        uint32_t other = c->write ? XDATA_RD_CNT_LSB : XDATA_WR_CNT_LSB;
        XdataCore s;
        PcieLinkTotals t;
        uint64_t m0, m1;

        g_test_message("case %u: %s %u MT/s x%u MPS %u MRRS %u len %u",
                       i, c->write ? "write" : "read", c->mts, c->width,
                       c->mps, c->mrrs, c->len_dw * 4);
        env_init(&s, c->mts, c->width, c->mps, c->mrrs);
        if (c->addr64) {
            wr(&s, XDATA_ADDR_MSB, 1, 0);
        }
        wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
        wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT, 0);
        wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | c->len_dw << 2 |
           (c->write ? XDATA_CTRL_WRITE : 0), T0);
        g_assert_cmpuint(xdata_test(&s)->shape.wire, ==, c->wire);
        g_assert_cmpuint(xdata_read(&s, cnt, 8, T0 + MS), ==, c->bytes_1ms);
        g_assert_cmpuint(xdata_read(&s, cnt, 8, T0 + 100 * MS), ==,
                         c->bytes_100ms);
        g_assert_cmpuint(xdata_read(&s, other, 8, T0 + 100 * MS), ==, 0);
        g_assert_true(xdata_running(&s, T0 + 100 * MS));
        g_assert_cmphex(rd(&s, XDATA_STATUS, T0 + 100 * MS), ==, 0);
        /*
         * the port's view: the same payload, beside the BAR reads (3 of
         * 8 bytes and 1 of 4 so far) up and the register writes down
         */
        xdata_totals(&s, T0 + 100 * MS, &t);
        t.payload_up -= 3 * 8 + 4;
        t.payload_down -= (3 + c->addr64) * 4;
        g_assert_cmpuint(c->write ? t.payload_up : t.payload_down, ==,
                         c->bytes_100ms);
        g_assert_cmpuint(c->write ? t.payload_down : t.payload_up, ==, 0);
        /* the driver's measurement over exactly 100 ms */
        m0 = drv_meas(&s, c->write, T0 + 200 * MS);
        m1 = drv_meas(&s, c->write, T0 + 300 * MS);
        g_assert_cmpuint(drv_rate(m1, m0, 100 * MS), ==, c->mb_s);
    }
}

/* The driver's probe, start and perf, for a write test and a read test */
static void test_driver_sequence(void)
{
    XdataCore s;
    uint64_t m0, m1, t = 0;

    env_init(&s, 8000, 4, 128, 512);
    drv_probe(&s, t);
    g_assert_cmphex(rd(&s, XDATA_ADDR_LSB, t), ==, 0xC8000000);
    g_assert_cmphex(rd(&s, XDATA_ADDR_MSB, t), ==, 0);
    /* echo 1 > write: MPS / 4 dwords */
    t = 1 * MS;
    drv_start(&s, true, 128 / 4, t);
    g_assert_true(xdata_running(&s, t));
    g_assert_cmphex(rd(&s, XDATA_CONTROL, t), ==, 0x00050082);
    /* usleep_range(100, 150), then the status: not done */
    t += 100000;
    g_assert_cmphex(rd(&s, XDATA_STATUS, t) & XDATA_STATUS_DONE, ==, 0);
    /* cat write: the counters count from the first perf enable on */
    t = 50 * MS;
    m0 = drv_meas(&s, true, t);
    g_assert_cmpuint(m0, ==, 0);
    m1 = drv_meas(&s, true, t + 100 * MS);
    g_assert_cmpuint(drv_rate(m1, m0, 100 * MS), ==, 3248);
    /* a jiffy of 4 ms more in the driver's time: 100 / 104 of it */
    m0 = drv_meas(&s, true, t + 200 * MS);
    m1 = drv_meas(&s, true, t + 300 * MS);
    g_assert_cmpuint(drv_rate(m1, m0, 104 * MS), ==, 3124);
    /* echo 1 > read: the write test ends, MRRS / 4 dwords read */
    t = 500 * MS;
    drv_start(&s, false, 512 / 4, t);
    g_assert_false(xdata_test(&s)->write);
    m0 = drv_meas(&s, false, t + 10 * MS);
    m1 = drv_meas(&s, false, t + 110 * MS);
    g_assert_cmpuint(drv_rate(m1, m0, 100 * MS), ==, 3248);
    /* the write counter stopped at the doorbell of the read test */
    m0 = drv_meas(&s, true, t + 120 * MS);
    m1 = drv_meas(&s, true, t + 220 * MS);
    g_assert_cmpuint(m1, ==, m0);
    g_assert_cmpuint(m0, >, 0);
}

/*
 * Stop: clearing the repeat bit ends the test with the burst in
 * progress. At 8 GT/s x4, MPS 128, 1 ms after the doorbell 26611
 * transfers are done: the seventh burst of 4097, so it ends after 28679,
 * the first instant with 28679 x 148 link bytes: 1077704 ns after.
 */
static void test_stop_burst(void)
{
    XdataCore s;
    uint64_t end = T0 + 1077704;

    env_init(&s, 8000, 4, 128, 512);
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
    drv_start(&s, true, 32, T0);
    drv_stop(&s, T0 + MS);
    g_assert_cmphex(rd(&s, XDATA_BURST_CNT, T0 + MS), ==, BURST_VALUE);
    g_assert_true(xdata_running(&s, end - 1));
    g_assert_cmphex(rd(&s, XDATA_STATUS, end - 1), ==, 0);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, end - 1), ==,
                     28678ull * 128);
    /* the driver clears the status before the end: done comes anyway */
    wr(&s, XDATA_STATUS, 0, end - 1);
    g_assert_false(xdata_running(&s, end));
    g_assert_cmphex(rd(&s, XDATA_STATUS, end), ==, XDATA_STATUS_DONE);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, end + 10 * MS), ==,
                     28679ull * 128);
    /* written 0 it clears; written 1 it stays */
    wr(&s, XDATA_STATUS, XDATA_STATUS_DONE, end + 1);
    g_assert_cmphex(rd(&s, XDATA_STATUS, end + 1), ==, XDATA_STATUS_DONE);
    wr(&s, XDATA_STATUS, 0, end + 2);
    g_assert_cmphex(rd(&s, XDATA_STATUS, end + 3), ==, 0);
    /* the stop of an ended test writes nothing and changes nothing */
    drv_stop(&s, end + 4);
    g_assert_cmphex(rd(&s, XDATA_STATUS, end + 5), ==, 0);
    /* setting repeat again does not restart it: a doorbell does */
    wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT | BURST_VALUE, end + 6);
    g_assert_false(xdata_running(&s, end + 7));

    /* repeat cleared and set again before the end: it goes on */
    drv_start(&s, true, 32, 2 * MS * 100);
    drv_stop(&s, 2 * MS * 100 + MS);
    wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT | BURST_VALUE,
       2 * MS * 100 + MS + 1);
    g_assert_true(xdata_running(&s, 2 * MS * 100 + 10 * MS));
    /* a burst count of 0 ends it at once, with the transfers done */
    wr(&s, XDATA_BURST_CNT, 0, 2 * MS * 100 + 20 * MS);
    g_assert_false(xdata_running(&s, 2 * MS * 100 + 20 * MS));
    g_assert_cmphex(rd(&s, XDATA_STATUS, 2 * MS * 100 + 20 * MS), ==,
                    XDATA_STATUS_DONE);
}

/* Without repeat: count transfers and done; length 0: done at once */
static void test_burst_counts(void)
{
    XdataCore s;
    PcieLinkTotals t;

    /* 2.5 GT/s x1: 0.25 B/ns; 10 transfers of 148 bytes end at 5920 ns */
    env_init(&s, 2500, 1, 128, 512);
    wr(&s, XDATA_BURST_CNT, 10, 0);
    wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | XDATA_CTRL_WRITE | 32 << 2,
       T0);
    g_assert_true(xdata_running(&s, T0 + 5919));
    g_assert_false(xdata_running(&s, T0 + 5920));
    g_assert_cmphex(rd(&s, XDATA_STATUS, T0 + 5919), ==, 0);
    g_assert_cmphex(rd(&s, XDATA_STATUS, T0 + 5920), ==, 1);
    xdata_totals(&s, T0 + MS, &t);
    g_assert_cmpuint(t.payload_up, ==, 10 * 128 + 2 * 4);

    /* length 0: nothing moves, done at the doorbell */
    env_init(&s, 8000, 4, 128, 512);
    wr(&s, XDATA_STATUS, 0, T0);
    wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT, T0);
    wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | XDATA_CTRL_WRITE, T0);
    g_assert_cmphex(rd(&s, XDATA_STATUS, T0), ==, XDATA_STATUS_DONE);
    g_assert_false(xdata_running(&s, T0));
    xdata_totals(&s, T0 + MS, &t);
    g_assert_cmpuint(t.payload_up, ==, 4);
    /* a burst count of 0 without repeat: the same */
    wr(&s, XDATA_BURST_CNT, 0, T0 + 1);
    wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | 32 << 2, T0 + 1);
    g_assert_false(xdata_running(&s, T0 + 1));
}

/* The perf enable gates both counters; the link's totals run on */
static void test_perf_gate(void)
{
    XdataCore s;
    PcieLinkTotals t;

    env_init(&s, 8000, 4, 128, 512);
    wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT, 0);
    wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | XDATA_CTRL_WRITE | 32 << 2,
       T0);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + MS), ==, 0);
    /* enabled from 1 ms to 2 ms: 53222 - 26611 transfers */
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, T0 + MS);
    wr(&s, XDATA_PERF_CONTROL, 0, T0 + 2 * MS);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 5 * MS), ==,
                     (53222ull - 26611) * 128);
    /* and again from 5 ms: on top of it */
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, T0 + 5 * MS);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 6 * MS), ==,
                     (53222ull - 26611 + 159667 - 133056) * 128);
    xdata_totals(&s, T0 + 6 * MS, &t);
    g_assert_cmpuint(t.payload_up - 3 * 8, ==, 159667ull * 128);
}

/* A doorbell while a test runs ends it there; its bytes stay counted */
static void test_restart(void)
{
    XdataCore s;
    PcieLinkTotals t;

    env_init(&s, 8000, 4, 128, 512);
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
    drv_start(&s, true, 32, T0);
    drv_start(&s, true, 32, T0 + MS);
    g_assert_cmpuint(xdata_test(&s)->t0, ==, T0 + MS);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 2 * MS), ==,
                     2 * 3406208ull);
    drv_start(&s, false, 128, T0 + 2 * MS);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 3 * MS), ==,
                     2 * 3406208ull);
    g_assert_cmpuint(xdata_read(&s, XDATA_RD_CNT_LSB, 8, T0 + 3 * MS), ==,
                     3405824ull);
    xdata_totals(&s, T0 + 3 * MS, &t);
    /* 15 register writes down beside it */
    g_assert_cmpuint(t.payload_down - 15 * 4, ==, 3405824ull);
    /* 4DW headers for an address above 4 GiB: 128 B in 152 */
    wr(&s, XDATA_ADDR_MSB, 0x10, T0 + 3 * MS);
    drv_start(&s, true, 32, T0 + 4 * MS);
    g_assert_true(xdata_test(&s)->addr64);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 5 * MS) -
                     xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + 4 * MS), ==,
                     25910ull * 128);
}

/* The CPU's BAR accesses as the link carries them: whole dwords */
static void test_bar_traffic(void)
{
    XdataCore s;
    PcieLinkTotals t;

    env_init(&s, 8000, 4, 128, 512);
    xdata_read(&s, XDATA_PATTERN, 1, 0);             /* 1 DW */
    xdata_read(&s, XDATA_PATTERN + 2, 4, 0);         /* 2 DW */
    xdata_read(&s, XDATA_WR_CNT_LSB, 8, 0);          /* 2 DW */
    xdata_read(&s, 0x800, 2, 0);                     /* undefined: 1 DW */
    xdata_write(&s, XDATA_PATTERN + 3, 2, 0, 0);     /* 2 DW */
    xdata_write(&s, XDATA_PATTERN, 8, 0, 0);         /* 2 DW */
    xdata_totals(&s, 0, &t);
    g_assert_cmpuint(t.payload_up, ==, (1 + 2 + 2 + 1) * 4);
    g_assert_cmpuint(t.payload_down, ==, (2 + 2) * 4);
    /* outside BAR 0 or of no size the model has: nothing */
    xdata_read(&s, XDATA_BAR_SIZE, 4, 0);
    xdata_write(&s, XDATA_BAR_SIZE - 4, 8, 0, 0);
    xdata_read(&s, 0, 3, 0);
    xdata_totals(&s, 0, &t);
    g_assert_cmpuint(t.payload_up, ==, 24);
    g_assert_cmpuint(t.payload_down, ==, 16);
}

static void test_reset(void)
{
    XdataCore s;
    PcieLinkTotals t;

    env_init(&s, 8000, 4, 128, 512);
    drv_probe(&s, 0);
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
    drv_start(&s, true, 32, T0);
    g_assert_cmpuint(xdata_read(&s, XDATA_WR_CNT_LSB, 8, T0 + MS), >, 0);
    xdata_reset(&s);
    g_assert_false(xdata_running(&s, T0 + 2 * MS));
    g_assert_null(xdata_test(&s));
    xdata_totals(&s, T0 + 2 * MS, &t);
    g_assert_cmpuint(t.payload_up, ==, 0);
    g_assert_cmpuint(t.payload_down, ==, 0);
    for (uint32_t o = 0; o < 0x110; o += 4) {
        g_assert_cmphex(rd(&s, o, T0 + 3 * MS), ==, 0);
    }
    /* the link function survives: a test after the reset runs */
    wr(&s, XDATA_BURST_CNT, XDATA_BURST_REPEAT, T0 + 4 * MS);
    wr(&s, XDATA_CONTROL, XDATA_CTRL_DOORBELL | XDATA_CTRL_WRITE | 32 << 2,
       T0 + 4 * MS);
    g_assert_cmpuint(xdata_test(&s)->shape.wire, ==, 148);
}

/*
 * Migrated in the middle of a test: the destination, whose link would be
 * another, reads what the source would have read at every later time.
 */
static void test_migration(void)
{
    XdataCore a, b, c;
    g_autofree void *buf = NULL;
    g_autofree uint8_t *bad = NULL;
    size_t len;
    char *err;
    uint64_t after[] = { T0 + 3 * MS, T0 + 50 * MS, T0 + 1000 * MS };

    env_init(&a, 16000, 8, 256, 1024);
    drv_probe(&a, 0);
    wr(&a, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
    drv_start(&a, false, 256, T0);
    drv_meas(&a, false, T0 + MS);
    buf = xdata_save(&a, &len);
    env_init(&b, 2500, 1, 128, 128);
    err = xdata_load(&b, buf, len);
    g_assert_null(err);
    drv_stop(&a, T0 + 2 * MS);
    drv_stop(&b, T0 + 2 * MS);
    for (unsigned i = 0; i < G_N_ELEMENTS(after); i++) {
        PcieLinkTotals ta, tb;

        for (uint32_t o = 0; o < 0x110; o += 4) {
            g_assert_cmphex(rd(&a, o, after[i]), ==, rd(&b, o, after[i]));
        }
        xdata_totals(&a, after[i], &ta);
        xdata_totals(&b, after[i], &tb);
        g_assert_cmpuint(ta.payload_up, ==, tb.payload_up);
        g_assert_cmpuint(ta.payload_down, ==, tb.payload_down);
        g_assert_cmpint(xdata_running(&a, after[i]), ==,
                        xdata_running(&b, after[i]));
    }
    g_assert_cmpuint(rd(&b, XDATA_RD_CNT_LSB, after[2]), >, 0);

    /* states refused, each leaving the core as it was */
    env_init(&c, 8000, 4, 128, 512);
    bad = g_memdup2(buf, len);
    bad[0] ^= 1;
    err = xdata_load(&c, bad, len);
    g_assert_nonnull(strstr(err, "not one this model saved"));
    g_free(err);
    err = xdata_load(&c, buf, len - 8);
    g_assert_nonnull(strstr(err, "bytes"));
    g_free(err);
    memcpy(bad, buf, len);
    bad[5 * 8] = 0x10;                          /* flags */
    err = xdata_load(&c, bad, len);
    g_assert_nonnull(strstr(err, "flags"));
    g_free(err);
    memcpy(bad, buf, len);
    bad[7 * 8] = 0x01;                          /* speed 15873 MT/s */
    err = xdata_load(&c, bad, len);
    g_assert_nonnull(strstr(err, "speed"));
    g_free(err);
    memcpy(bad, buf, len);
    bad[5 * 8] = 0x03;                          /* a write of a read */
    err = xdata_load(&c, bad, len);
    g_assert_nonnull(strstr(err, "direction"));
    g_free(err);
    memcpy(bad, buf, len);
    bad[5 * 8] = 0x00;                          /* never started, a t0 */
    err = xdata_load(&c, bad, len);
    g_assert_nonnull(strstr(err, "never started"));
    g_free(err);
    g_assert_null(xdata_test(&c));
    /* a fresh core's state goes through too */
    g_free(buf);
    buf = xdata_save(&c, &len);
    err = xdata_load(&b, buf, len);
    g_assert_null(err);
    g_assert_null(xdata_test(&b));
    g_assert_cmpuint(rd(&b, XDATA_RD_CNT_LSB, after[2]), ==, 0);
}

/* Bytes the block does not define read 0; writes there change nothing */
static void test_bad_access(void)
{
    static const uint32_t holes[] = {
        0x020, 0x054, 0x05C, 0x0FC, 0x110, 0x800, 0xFFC,
    };
    XdataCore s;

    env_init(&s, 8000, 4, 128, 512);
    for (unsigned i = 0; i < G_N_ELEMENTS(holes); i++) {
        wr(&s, holes[i], 0xFFFFFFFF, 0);
        g_assert_cmphex(rd(&s, holes[i], 0), ==, 0);
    }
    /* an 8-byte read of a register and a hole: the hole's half is 0 */
    wr(&s, XDATA_PERF_CONTROL, XDATA_PERF_ENABLE, 0);
    g_assert_cmphex(xdata_read(&s, XDATA_PERF_CONTROL, 8, 0), ==,
                    XDATA_PERF_ENABLE);
    g_assert_cmphex(xdata_read(&s, 0x54, 8, 0), ==,
                    (uint64_t)XDATA_PERF_ENABLE << 32);
    /* sizes and offsets outside: 0, and nothing written */
    g_assert_cmphex(xdata_read(&s, XDATA_BAR_SIZE, 4, 0), ==, 0);
    g_assert_cmphex(xdata_read(&s, XDATA_BAR_SIZE - 2, 4, 0), ==, 0);
    g_assert_cmphex(xdata_read(&s, XDATA_PATTERN, 3, 0), ==, 0);
    xdata_write(&s, XDATA_PATTERN, 3, 0xFFFFFF, 0);
    xdata_write(&s, XDATA_PATTERN, 16, 0xFFFFFF, 0);
    g_assert_cmphex(rd(&s, XDATA_PATTERN, 0), ==, 0);
    g_assert_false(xdata_write(&s, XDATA_CONTROL, 3, 1, 0));
    g_assert_null(xdata_test(&s));
}

static void test_link_and_shape(void)
{
    XdataLink ok = { 8000, 4, 128, 512 };
    XdataShape sh;
    static const struct {
        XdataLink l;
        const char *needle;
    } bad[] = {
        { { 3000, 4, 128, 512 }, "speed of 3000" },
        { { 8000, 0, 128, 512 }, "x0" },
        { { 8000, 33, 128, 512 }, "x33" },
        { { 8000, 4, 64, 512 }, "Max_Payload_Size of 64" },
        { { 8000, 4, 384, 512 }, "Max_Payload_Size of 384" },
        { { 8000, 4, 128, 8192 }, "Max_Read_Request_Size of 8192" },
    };

    g_assert_null(xdata_link_check(&ok));
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *why = xdata_link_check(&bad[i].l);

        g_assert_nonnull(why);
        g_assert_nonnull(strstr(why, bad[i].needle));
    }
    /* 8 GT/s x4: 8000 x 4 x 128 / (130 x 8000) bytes a ns */
    xdata_shape(&ok, true, 32, false, &sh);
    g_assert_cmpuint(sh.rate_num * 1040000, ==, 4096000 * sh.rate_den);
    g_assert_cmpuint(sh.payload, ==, 128);
    g_assert_cmpuint(sh.tlps, ==, 1);
    g_assert_cmpuint(sh.requests, ==, 0);
    g_assert_cmpuint(sh.wire_up, ==, 148);
    g_assert_cmpuint(sh.wire_down, ==, 0);
    g_assert_cmpuint(xdata_payload_per_s(&sh), ==, 3406237006ull);
    /* read 1200 B at MRRS 512, MPS 256 */
    xdata_shape(&(XdataLink) { 5000, 2, 256, 512 }, false, 300, false, &sh);
    g_assert_cmpuint(sh.requests, ==, 3);
    g_assert_cmpuint(sh.tlps, ==, 5);
    g_assert_cmpuint(sh.wire_up, ==, 60);
    g_assert_cmpuint(sh.wire_down, ==, 1300);
    g_assert_cmpuint(sh.wire, ==, 1300);
    g_assert_cmpuint(xdata_payload_per_s(&sh), ==, 923076923ull);
    /* 1 DW read with 4DW headers in flits: 16 up and 16 down */
    xdata_shape(&(XdataLink) { 64000, 1, 128, 128 }, false, 1, true, &sh);
    g_assert_cmpuint(sh.wire_up, ==, 16);
    g_assert_cmpuint(sh.wire_down, ==, 16);
    /* length 0: nothing */
    xdata_shape(&ok, true, 0, false, &sh);
    g_assert_cmpuint(sh.wire, ==, 0);
    g_assert_cmpuint(xdata_payload_per_s(&sh), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xdata/reset-identity", test_reset_identity);
    g_test_add_func("/xdata/register-widths", test_register_widths);
    g_test_add_func("/xdata/rates", test_rates);
    g_test_add_func("/xdata/driver-sequence", test_driver_sequence);
    g_test_add_func("/xdata/stop-burst", test_stop_burst);
    g_test_add_func("/xdata/burst-counts", test_burst_counts);
    g_test_add_func("/xdata/perf-gate", test_perf_gate);
    g_test_add_func("/xdata/restart", test_restart);
    g_test_add_func("/xdata/bar-traffic", test_bar_traffic);
    g_test_add_func("/xdata/reset", test_reset);
    g_test_add_func("/xdata/migration", test_migration);
    g_test_add_func("/xdata/bad-access", test_bad_access);
    g_test_add_func("/xdata/link-shape", test_link_and_shape);
    return g_test_run();
}
