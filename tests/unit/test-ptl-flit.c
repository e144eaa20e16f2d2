/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --flit and libpcie-telemetry's flit half (docs/flit.md):
 *  - the decode functions on raw register values worked out by hand from
 *    the register tables of docs/flit.md, field by field;
 *  - the measurement arithmetic: the 32-bit Flit Counter across
 *    wrap-arounds, the 16-bit counters that stop at 65535, the Flit->Ack
 *    average and worst case, an overflowed Status;
 *  - a measurement through ptl_config_ops on a configuration space in an
 *    array that answers as a link end does: what is written and when,
 *    what is written back, a measurement found running, a function gone;
 *  - the same measurement on the QEMU-free model of a link end
 *    (qemu-device/flit/flit-end.c) behind the capabilities, against the
 *    figures docs/flit.md gives for x16;
 *  - the text and JSON output;
 *  - the command line of --flit and its errors;
 *  - with PTT_TOOL, pcie-telemetry --list and --flit on a fake sysfs tree
 *    (PCIE_TELEMETRY_SYSFS): a card below a root port, both with the
 *    capabilities, and a card without them (exit 13).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcie-telemetry.h"
#include "options.h"
/* the QEMU-free model of a link end (qemu-device/flit), read only */
#include "flit-end.h"
#include "test-sysfs-support.h"

/* ------------------------------------------------------------ decoding */

static void test_mode(void)
{
    ptl_flit_mode m;

    memset(&m, 0, sizeof(m));
    /* PCIe Capabilities 0x8042: v2, root port, Flit Mode Supported [15];
     * Link Control 0x2000: Flit Mode Disable [13]; Link Status 2 0x0400:
     * Flit Mode Status [10] */
    ptl_flit_mode_decode(0x8042, 0x2000, 0x0400, &m);
    g_assert_true(m.pcie);
    g_assert_true(m.supported);
    g_assert_true(m.disable);
    g_assert_true(m.active);
    g_assert_true(ptl_flit_mode_any(&m));
    /* every other bit set, none of the three */
    ptl_flit_mode_decode(0x7fff, 0xdfff, 0xfbff, &m);
    g_assert_false(m.supported || m.disable || m.active);
    g_assert_false(ptl_flit_mode_any(&m));
    /* a capability alone counts */
    m.cap[PTL_FLIT_CAP_PERF] = 0x260;
    g_assert_true(ptl_flit_mode_any(&m));

    g_assert_cmphex(ptl_flit_cap_id(PTL_FLIT_CAP_64GT), ==, 0x31);
    g_assert_cmphex(ptl_flit_cap_id(PTL_FLIT_CAP_LOG), ==, 0x32);
    g_assert_cmphex(ptl_flit_cap_id(PTL_FLIT_CAP_PERF), ==, 0x33);
    /* width codes: x1 0 ... x16 4 */
    g_assert_cmpuint(ptl_flit_width(0), ==, 1);
    g_assert_cmpuint(ptl_flit_width(1), ==, 2);
    g_assert_cmpuint(ptl_flit_width(2), ==, 4);
    g_assert_cmpuint(ptl_flit_width(3), ==, 8);
    g_assert_cmpuint(ptl_flit_width(4), ==, 16);
    g_assert_cmpuint(ptl_flit_width(5), ==, 0);
    g_assert_cmpuint(ptl_flit_width(7), ==, 0);
}

static void test_64gt(void)
{
    ptl_flit_64gt s;

    /* what the model reads once trained: complete, phases 1 to 3 */
    ptl_flit_64gt_decode(0x0F, &s);
    g_assert_cmphex(s.status, ==, 0x0F);
    g_assert_true(s.eq_complete && s.eq_phase1 && s.eq_phase2 &&
                  s.eq_phase3);
    g_assert_false(s.eq_request);
    ptl_flit_64gt_decode(0x10, &s);
    g_assert_false(s.eq_complete || s.eq_phase1 || s.eq_phase2 ||
                   s.eq_phase3);
    g_assert_true(s.eq_request);
    /* complete and phase 2 */
    ptl_flit_64gt_decode(0x05, &s);
    g_assert_true(s.eq_complete && s.eq_phase2);
    g_assert_false(s.eq_phase1 || s.eq_phase3 || s.eq_request);
}

static void test_log(void)
{
    ptl_flit_log_entry e;

    /* valid [0], x16 (4 << 1 = 0x8), 3 flits (2 << 8 = 0x200), more
     * [13] 0x2000, FEC uncorrectable [15] 0x8000 */
    ptl_flit_log_decode(0x0000A209, 0x12345678, &e);
    g_assert_cmphex(e.log1, ==, 0xA209);
    g_assert_cmphex(e.log2, ==, 0x12345678);
    g_assert_true(e.valid);
    g_assert_cmpuint(e.width_code, ==, 4);
    g_assert_cmpuint(e.width, ==, 16);
    g_assert_cmpuint(e.offset, ==, 0);
    g_assert_cmpuint(e.consecutive, ==, 2);
    g_assert_true(e.more);
    g_assert_false(e.unrecognized);
    g_assert_true(e.uncorrectable);
    g_assert_cmphex(e.syndrome, ==, 0);

    /* one unrecognized flit at x1: valid, unrecognized [14] 0x4000 */
    ptl_flit_log_decode(0x00004001, 0, &e);
    g_assert_true(e.valid && e.unrecognized);
    g_assert_false(e.uncorrectable || e.more);
    g_assert_cmpuint(e.width, ==, 1);
    g_assert_cmpuint(e.consecutive, ==, 0);

    /* 32 flits at x4 (the field's most, 31 << 8 = 0x1F00; 2 << 1) */
    ptl_flit_log_decode(0x00009F05, 0, &e);
    g_assert_cmpuint(e.width, ==, 4);
    g_assert_cmpuint(e.consecutive, ==, 31);
    g_assert_true(e.uncorrectable);

    /* a reserved width code (5), offset [7:4] 15, the syndromes */
    ptl_flit_log_decode(0xABCD00FB, 0, &e);
    g_assert_cmpuint(e.width_code, ==, 5);
    g_assert_cmpuint(e.width, ==, 0);
    g_assert_cmpuint(e.offset, ==, 15);
    g_assert_cmphex(e.syndrome, ==, 0xABCD);

    /* empty */
    ptl_flit_log_decode(0, 0, &e);
    g_assert_false(e.valid || e.more || e.unrecognized || e.uncorrectable);
}

static void test_err_counter(void)
{
    ptl_flit_err_counter c;

    /* Enable 1, Interrupt Enable 2, events 01b << 2, trigger 10 << 4 */
    ptl_flit_err_counter_decode(0x00A7, 0x0503, &c);
    g_assert_true(c.enabled && c.int_enable);
    g_assert_cmpuint(c.events, ==, 1);
    g_assert_cmpuint(c.trigger, ==, 10);
    /* status: x8 (3) when started, count 5 << 8 */
    g_assert_cmpuint(c.width_code, ==, 3);
    g_assert_cmpuint(c.width, ==, 8);
    g_assert_false(c.interrupt);
    g_assert_cmpuint(c.count, ==, 5);

    /* trigger 255, events none (11b), counter at its 255 */
    ptl_flit_err_counter_decode(0x0FFC, 0xFF00, &c);
    g_assert_false(c.enabled || c.int_enable);
    g_assert_cmpuint(c.events, ==, 3);
    g_assert_cmpuint(c.trigger, ==, 255);
    g_assert_cmpuint(c.count, ==, 255);
    g_assert_cmpuint(c.width, ==, 1);

    /* width [2:0] and interrupt [3] apart: x16 (4) is no interrupt */
    ptl_flit_err_counter_decode(0, 0x0004, &c);
    g_assert_cmpuint(c.width, ==, 16);
    g_assert_false(c.interrupt);
    ptl_flit_err_counter_decode(0, 0x0008, &c);
    g_assert_cmpuint(c.width, ==, 1);
    g_assert_true(c.interrupt);

    g_assert_cmpstr(ptl_flit_events_text(0), ==, "all flit errors");
    g_assert_cmpstr(ptl_flit_events_text(1), ==,
                    "uncorrectable and unrecognized");
    g_assert_cmpstr(ptl_flit_events_text(2), ==, "correctable");
    g_assert_cmpstr(ptl_flit_events_text(3), ==, "none");
}

static void test_fber_ctl(void)
{
    ptl_flit_fber_ctl f;

    /* Enable [0], granularity 3 [3:2] */
    ptl_flit_fber_ctl_decode(0x0D, &f);
    g_assert_true(f.enabled);
    g_assert_cmpuint(f.granularity, ==, 3);
    /* Clear [1] alone */
    ptl_flit_fber_ctl_decode(0x02, &f);
    g_assert_false(f.enabled);
    g_assert_cmpuint(f.granularity, ==, 0);
    ptl_flit_fber_ctl_decode(0x08, &f);
    g_assert_false(f.enabled);
    g_assert_cmpuint(f.granularity, ==, 2);
}

static void test_perf_ctl(void)
{
    ptl_flit_perf_ctl c;

    /* Enable 1, type 001b << 1, 31 << 6 = 0x7C0, threshold 1 << 11,
     * trackers 00101b << 14 = 0x14000, LTSSM instances 3 << 19, LTSSM
     * threshold 2 << 24, L1 threshold 5 << 27 */
    ptl_flit_perf_ctl_decode(0x2A194FC3, &c);
    g_assert_true(c.enabled);
    g_assert_cmpuint(c.type, ==, 1);
    g_assert_cmpuint(c.instances, ==, 31);
    g_assert_cmpuint(c.threshold, ==, 1);
    g_assert_cmphex(c.trackers, ==, 0x5);
    g_assert_cmpuint(c.ltssm_instances, ==, 3);
    g_assert_cmpuint(c.ltssm_threshold, ==, 2);
    g_assert_cmpuint(c.l1_threshold, ==, 5);
    /* Nak->Replay 100b, worst case */
    ptl_flit_perf_ctl_decode(0x00000008, &c);
    g_assert_false(c.enabled);
    g_assert_cmpuint(c.type, ==, 4);
    g_assert_cmpuint(c.instances, ==, 0);

    /* what the tool writes: type 001b (0x2), instances << 6, Enable */
    g_assert_cmphex(ptl_flit_perf_ctl_run(0, 31, false), ==, 0x000007C2);
    g_assert_cmphex(ptl_flit_perf_ctl_run(0, 31, true), ==, 0x000007C3);
    g_assert_cmphex(ptl_flit_perf_ctl_run(0, 0, true), ==, 0x00000003);
    /* from a Control with everything set: only RsvdP [5:4], [31:30]
     * stay; no threshold, no tracker */
    g_assert_cmphex(ptl_flit_perf_ctl_run(0xFFFFFFFF, 5, true), ==,
                    0xC0000173);

    /* the i-th LTSSM register: the i-th enabled tracker */
    g_assert_cmpint(ptl_flit_ltssm_tracker(0x5, 0), ==, 0);
    g_assert_cmpint(ptl_flit_ltssm_tracker(0x5, 1), ==, 2);
    g_assert_cmpint(ptl_flit_ltssm_tracker(0x5, 2), ==, -1);
    g_assert_cmpint(ptl_flit_ltssm_tracker(0x0, 0), ==, -1);
    g_assert_cmpint(ptl_flit_ltssm_tracker(0x1F, 4), ==, 4);
    g_assert_cmpstr(ptl_flit_tracker_name(0), ==, "L0->Recovery");
    g_assert_cmpstr(ptl_flit_tracker_name(1), ==, "L0p upconfiguration");
    g_assert_cmpstr(ptl_flit_tracker_name(2), ==, "L1.0->L0");
    g_assert_cmpstr(ptl_flit_tracker_name(4), ==, "L1.2->L0");
    g_assert_null(ptl_flit_tracker_name(5));
}

static void test_perf_status(void)
{
    ptl_flit_perf_status s;

    /* done 10b, 31 tracked (31 << 2 = 0x7C), counter 279 (0x117 << 8) */
    ptl_flit_perf_status_decode(0x0001177E, &s);
    g_assert_cmpuint(s.status, ==, PTL_FST_DONE);
    g_assert_cmpuint(s.tracked, ==, 31);
    g_assert_false(s.interrupt);
    g_assert_cmpuint(s.counter, ==, 279);
    /* interrupt [7], counter 0xFFFF, started */
    ptl_flit_perf_status_decode(0x00FFFF81, &s);
    g_assert_cmpuint(s.status, ==, PTL_FST_STARTED);
    g_assert_cmpuint(s.tracked, ==, 0);
    g_assert_true(s.interrupt);
    g_assert_cmpuint(s.counter, ==, 0xFFFF);
    /* bits above 23 are not the counter's */
    ptl_flit_perf_status_decode(0xFF000000, &s);
    g_assert_cmpuint(s.counter, ==, 0);
    g_assert_cmpuint(s.status, ==, PTL_FST_NOT_STARTED);

    g_assert_cmpstr(ptl_flit_status_text(0), ==, "not started");
    g_assert_cmpstr(ptl_flit_status_text(1), ==, "started");
    g_assert_cmpstr(ptl_flit_status_text(2), ==, "done");
    g_assert_cmpstr(ptl_flit_status_text(3), ==, "overflow");
}

/* ---------------------------------------------------------- arithmetic */

static void test_counter_wrap(void)
{
    uint64_t total = 0;
    uint32_t last = 0xF0000000;
    bool sat;

    g_assert_cmphex(ptl_flit_counter_diff(5, 5), ==, 0);
    g_assert_cmphex(ptl_flit_counter_diff(100, 350), ==, 250);
    /* across 2^32: 0xFFFFFFF0 -> 0x10 is 0x20 flits */
    g_assert_cmphex(ptl_flit_counter_diff(0xFFFFFFF0, 0x10), ==, 0x20);
    g_assert_cmphex(ptl_flit_counter_diff(0, 0xFFFFFFFF), ==, 0xFFFFFFFF);
    g_assert_cmphex(ptl_flit_counter_diff(1, 0), ==, 0xFFFFFFFF);

    /* read often enough, the total passes 2^32 */
    ptl_flit_counter_add(&total, &last, 0x00000000);
    g_assert_cmphex(total, ==, 0x10000000);
    g_assert_cmphex(last, ==, 0);
    ptl_flit_counter_add(&total, &last, 0x80000000);
    g_assert_cmphex(total, ==, 0x90000000);
    ptl_flit_counter_add(&total, &last, 0x7FFFFFFF);
    g_assert_cmphex(total, ==, 0x18FFFFFFFull);
    ptl_flit_counter_add(&total, &last, 0x7FFFFFFF);
    g_assert_cmphex(total, ==, 0x18FFFFFFFull);

    /* the 16-bit counters stop at 65535 and go back only when cleared */
    g_assert_cmpuint(ptl_flit_count16_diff(10, 25, &sat), ==, 15);
    g_assert_false(sat);
    g_assert_cmpuint(ptl_flit_count16_diff(100, 0xFFFF, &sat), ==, 65435);
    g_assert_true(sat);
    g_assert_cmpuint(ptl_flit_count16_diff(300, 20, &sat), ==, 20);
    g_assert_false(sat);
    g_assert_cmpuint(ptl_flit_count16_diff(0x12340005, 0x0007, &sat), ==,
                     2);
}

static void test_latency(void)
{
    ptl_flit_latency l;

    /* 31 instances done: 279 x 8 ns = 2232 ns over 31 flits: 72 ns each,
     * the model's x16 latency at 10 ns of flight (docs/flit.md) */
    ptl_flit_latency_compute(0x0001177E, 31, &l);
    g_assert_true(l.measured);
    g_assert_cmpuint(l.instances, ==, 31);
    g_assert_cmpuint(l.st.status, ==, PTL_FST_DONE);
    g_assert_cmpfloat(l.counter_ns, ==, 2232.0);
    g_assert_cmpfloat(l.average_ns, ==, 72.0);
    g_assert_true(isnan(l.worst_ns));

    /* 3 of 5 instances so far: 3 x 74 ns = 222 ns, rounded up to 8 ns
     * each: 3 x 80 = 240 ns = 30 counts; started 01b, 3 << 2 */
    ptl_flit_latency_compute((30u << 8) | (3u << 2) | 1u, 5, &l);
    g_assert_cmpuint(l.st.status, ==, PTL_FST_STARTED);
    g_assert_cmpfloat(l.counter_ns, ==, 240.0);
    g_assert_cmpfloat(l.average_ns, ==, 80.0);

    /* worst case (instances 0): the counter is the longest, 9 x 8 ns;
     * tracked stops at 31 */
    ptl_flit_latency_compute((9u << 8) | (31u << 2) | 1u, 0, &l);
    g_assert_cmpfloat(l.worst_ns, ==, 72.0);
    g_assert_cmpfloat(l.counter_ns, ==, 72.0);
    g_assert_true(isnan(l.average_ns));

    /* overflow 11b: the other fields are undefined, nothing derived */
    ptl_flit_latency_compute(0x00FFFF7F, 31, &l);
    g_assert_cmpuint(l.st.status, ==, PTL_FST_OVERFLOW);
    g_assert_true(isnan(l.counter_ns) && isnan(l.average_ns) &&
                  isnan(l.worst_ns));
    /* not started */
    ptl_flit_latency_compute(0, 31, &l);
    g_assert_true(isnan(l.counter_ns) && isnan(l.average_ns));
    /* started, nothing tracked yet: no average, no division by 0 */
    ptl_flit_latency_compute(0x00000001, 31, &l);
    g_assert_cmpfloat(l.counter_ns, ==, 0.0);
    g_assert_true(isnan(l.average_ns) && isnan(l.worst_ns));
    ptl_flit_latency_compute(0x00000001, 0, &l);
    g_assert_true(isnan(l.worst_ns));
}

/* ------------------------------------------- a link end in an array */

/*
 * A function's configuration space as a card with flit mode has it:
 * PCI Express capability at 0x40, the device-tree VSEC at 0x100, then
 * 0x0031 at 0x200, 0x0032 at 0x220, 0x0033 at 0x260 (the virtual
 * card's offsets). Writes follow docs/flit.md: FBER Control's Clear
 * zeroes the counters and reads 0, Performance Control's Enable 0 -> 1
 * starts a measurement. Every write is logged.
 */
#define CAP_PCIE 0x40
#define CAP_64GT 0x200
#define CAP_LOG  0x220
#define CAP_PERF 0x260

typedef struct fake {
    uint32_t cfg[1024];
    unsigned size;              /* bytes that read */
    GArray *writes;             /* pairs of offset, value */
    bool fail_reads;
} fake;

static bool fake_read(void *opaque, uint32_t off, uint32_t *v)
{
    fake *f = opaque;

    if (f->fail_reads || off % 4 || off >= f->size) {
        return false;
    }
    *v = f->cfg[off / 4];
    return true;
}

static bool fake_write(void *opaque, uint32_t off, uint32_t v)
{
    fake *f = opaque;
    uint32_t pair[2] = { off, v };

    g_array_append_vals(f->writes, pair, 2);
    if (off == CAP_LOG + 0x10) {
        if (v & 2) {
            f->cfg[(CAP_LOG + 0x14) / 4] = 0;
            for (unsigned i = 0x18; i < 0x3C; i += 4) {
                f->cfg[(CAP_LOG + i) / 4] = 0;
            }
        }
        f->cfg[off / 4] = v & 0x0D;
    } else if (off == CAP_PERF + 0x08) {
        if (!(f->cfg[off / 4] & 1) && (v & 1)) {
            f->cfg[(CAP_PERF + 0x0C) / 4] = 1;  /* started */
        }
        f->cfg[off / 4] = v;
    } else {
        g_assert_not_reached();     /* nothing else is ever written */
    }
    return true;
}

static const char *fake_error(void *opaque)
{
    return "fake access refused";
}

static const ptl_config_ops fake_ops = {
    .read32 = fake_read, .write32 = fake_write, .error = fake_error,
};

static void fake_init(fake *f, bool port)
{
    memset(f, 0, sizeof(*f));
    f->size = 4096;
    f->writes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    f->cfg[0] = 0x0d7b1234;
    f->cfg[1] = 0x00100000;                 /* Status: capability list */
    f->cfg[0x34 / 4] = CAP_PCIE;
    /* ID 0x10, next 0, Capabilities: v2, endpoint or root port, flit */
    f->cfg[CAP_PCIE / 4] = ((port ? 0x8042u : 0x8002u) << 16) | 0x0010;
    f->cfg[(CAP_PCIE + 0x0C) / 4] = 0x00000106;     /* LnkCap 64 GT/s x16 */
    f->cfg[(CAP_PCIE + 0x10) / 4] = 0x01060000;     /* LnkSta 64 GT/s x16 */
    f->cfg[(CAP_PCIE + 0x30) / 4] = 0x04000000;     /* LnkSta2: flit mode */
    f->cfg[0x100 / 4] = 0x2001000B;         /* VSEC, v1, next 0x200 */
    f->cfg[CAP_64GT / 4] = 0x22010031;
    f->cfg[(CAP_64GT + 0x0C) / 4] = 0x0F;
    f->cfg[CAP_LOG / 4] = 0x26010032;
    f->cfg[CAP_PERF / 4] = 0x00010033;
    f->cfg[(CAP_PERF + 0x04) / 4] = 2u << 10;   /* 2 LTSSM registers */
}

static uint32_t *reg(fake *f, uint32_t off)
{
    return &f->cfg[off / 4];
}

static void check_writes(fake *f, const uint32_t *want, unsigned n)
{
    g_assert_cmpuint(f->writes->len, ==, 2 * n);
    for (unsigned i = 0; i < 2 * n; i++) {
        g_assert_cmphex(g_array_index(f->writes, uint32_t, i), ==, want[i]);
    }
    g_array_set_size(f->writes, 0);
}

static void test_probe(void)
{
    fake f;
    ptl_flit_meas *m;
    const ptl_flit_dev *d;
    ptl_error e = { 0 };

    fake_init(&f, true);
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:00:01.0", false,
                                      31, &m, &e), ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    g_assert_cmpstr(d->slot, ==, "0000:00:01.0");
    g_assert_false(d->card);
    g_assert_true(d->mode.pcie && d->mode.supported && d->mode.active);
    g_assert_false(d->mode.disable);
    g_assert_cmphex(d->mode.cap[PTL_FLIT_CAP_64GT], ==, CAP_64GT);
    g_assert_cmphex(d->mode.cap[PTL_FLIT_CAP_LOG], ==, CAP_LOG);
    g_assert_cmphex(d->mode.cap[PTL_FLIT_CAP_PERF], ==, CAP_PERF);
    g_assert_true(d->link.present);
    g_assert_cmpuint(d->link.speed, ==, 6);
    g_assert_cmpuint(d->link.width, ==, 16);
    /* probing reads only */
    g_assert_cmpuint(f.writes->len, ==, 0);
    ptl_flit_meas_free(m);

    /* Link Status 2 is not there in a version 1 capability */
    *reg(&f, CAP_PCIE) = (0x8041u << 16) | 0x0010;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:00:01.0", false,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_true(ptl_flit_meas_dev(m)->mode.supported);
    g_assert_false(ptl_flit_meas_dev(m)->mode.active);
    ptl_flit_meas_free(m);

    /* lists that loop on themselves end: an MSI capability whose next
     * is itself, 0x0033 whose next is itself */
    g_array_free(f.writes, TRUE);
    fake_init(&f, false);
    *reg(&f, CAP_PCIE) = 0x00004005;
    *reg(&f, CAP_PERF) = 0x26010033;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "x", true, 0, &m, &e),
                    ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    g_assert_false(d->mode.pcie || d->link.present);
    g_assert_cmphex(d->mode.cap[PTL_FLIT_CAP_PERF], ==, CAP_PERF);
    ptl_flit_meas_free(m);

    /* no extended configuration space (conventional PCI): no capability */
    g_array_free(f.writes, TRUE);
    fake_init(&f, false);
    f.size = 256;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "x", true, 0, &m, &e),
                    ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    g_assert_cmpuint(d->mode.cap[0] | d->mode.cap[1] | d->mode.cap[2], ==,
                     0);
    g_assert_true(d->mode.supported);
    ptl_flit_meas_free(m);

    /* nothing of flit mode */
    g_array_free(f.writes, TRUE);
    fake_init(&f, false);
    *reg(&f, CAP_PCIE) = 0x00020010;
    *reg(&f, 0x100) = 0x0001000B;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "x", true, 0, &m, &e),
                    ==, PTL_OK);
    g_assert_false(ptl_flit_mode_any(&ptl_flit_meas_dev(m)->mode));
    ptl_flit_meas_free(m);

    /* a function that reads all ones went away */
    g_array_free(f.writes, TRUE);
    fake_init(&f, false);
    memset(f.cfg, 0xff, sizeof(f.cfg));
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:01:00.0", true,
                                      0, &m, &e), ==, PTL_E_GONE);
    g_assert_null(m);
    g_assert_cmpstr(e.msg, ==, "0000:01:00.0 does not respond (its "
                    "configuration space reads all ones)");
    /* a failing access says where and why */
    f.fail_reads = true;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:01:00.0", true,
                                      0, &m, &e), ==, PTL_E_INTERNAL);
    g_assert_nonnull(strstr(e.msg, "0x000 of the configuration space of "
                            "0000:01:00.0 failed: fake access refused"));
    /* instances are 5 bits */
    f.fail_reads = false;
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "x", true, 32, &m, &e),
                    ==, PTL_E_USAGE);
    g_array_free(f.writes, TRUE);
}

/* A measurement on a function that had both measurements off. */
static void test_measure(void)
{
    fake f;
    ptl_flit_meas *m;
    const ptl_flit_dev *d;
    ptl_error e = { 0 };

    fake_init(&f, false);
    *reg(&f, CAP_LOG + 0x10) = 0x08;            /* FBER off, granularity 2 */
    *reg(&f, CAP_LOG + 0x14) = 12345;           /* stale counts */
    *reg(&f, CAP_LOG + 0x18) = 77;
    *reg(&f, CAP_PERF + 0x08) = 0x00004000;     /* off; L0->Recovery tracker */
    *reg(&f, CAP_PERF + 0x0C) = 0x0001177E;     /* an old result */
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:01:00.0", true,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, 1000000000, &e), ==, PTL_OK);
    {
        /* FBER: Enable | Clear, granularity kept; Control: Enable 0, then
         * Enable 1 with type 001b and 31 instances, no tracker */
        static const uint32_t want[] = {
            CAP_LOG + 0x10, 0x0B,
            CAP_PERF + 0x08, 0x000007C2,
            CAP_PERF + 0x08, 0x000007C3,
        };

        check_writes(&f, want, 3);
    }
    g_assert_cmphex(*reg(&f, CAP_LOG + 0x14), ==, 0);
    g_assert_cmphex(*reg(&f, CAP_PERF + 0x0C), ==, 1);

    /* the interval: flits, errors, a logged error, the latency done */
    *reg(&f, CAP_LOG + 0x14) = 400000000;
    g_assert_cmpint(ptl_flit_meas_poll(m, &e), ==, PTL_OK);
    *reg(&f, CAP_LOG + 0x14) = 500000000;
    *reg(&f, CAP_LOG + 0x18) = 3;               /* invalid flits */
    *reg(&f, CAP_LOG + 0x1C) = 0x00020001;      /* lane 0: 1, lane 1: 2 */
    *reg(&f, CAP_LOG + 0x38) = 0xFFFF0000;      /* lane 15 stopped */
    *reg(&f, CAP_LOG + 0x04) = 0x0000A209;
    *reg(&f, CAP_LOG + 0x0C) = 0x05030007;      /* counter on, count 5 */
    *reg(&f, CAP_PERF + 0x0C) = 0x0001177E;
    *reg(&f, CAP_PERF + 0x10) = 0x00000106;     /* LTSSM 0: done, 1, 1 */
    *reg(&f, CAP_PERF + 0x14) = 0x00000081;     /* LTSSM 1: interrupt */
    g_assert_cmpint(ptl_flit_meas_end(m, 3000000000ull, &e), ==, PTL_OK);
    g_assert_cmpuint(f.writes->len, ==, 0);     /* reading only */

    d = ptl_flit_meas_dev(m);
    g_assert_true(d->card);
    g_assert_cmphex(d->pl64.status, ==, 0x0F);
    g_assert_true(d->log.valid && d->log.uncorrectable);
    g_assert_cmpuint(d->log.consecutive, ==, 2);
    g_assert_true(d->counter.enabled);
    g_assert_cmpuint(d->counter.events, ==, 1);
    g_assert_cmpuint(d->counter.count, ==, 5);
    g_assert_cmpuint(d->counter.width, ==, 8);
    g_assert_cmphex(d->fber_found.control, ==, 0x08);
    g_assert_false(d->fber_found.enabled);
    g_assert_true(d->fber.measured);
    g_assert_true(d->fber.cleared);
    g_assert_cmpfloat(d->fber.seconds, ==, 2.0);
    g_assert_cmpuint(d->fber.flits, ==, 500000000);
    g_assert_cmpfloat(d->fber.flits_per_s, ==, 250000000.0);
    g_assert_cmpuint(d->fber.invalid, ==, 3);
    g_assert_false(d->fber.invalid_saturated);
    g_assert_cmpuint(d->fber.nlanes, ==, 16);
    g_assert_cmpuint(d->fber.lane[0], ==, 1);
    g_assert_cmpuint(d->fber.lane[1], ==, 2);
    g_assert_cmpuint(d->fber.lane[15], ==, 0xFFFF);
    g_assert_true(d->fber.lane_saturated[15]);
    g_assert_false(d->fber.lane_saturated[14]);
    g_assert_true(d->perf.latency.measured);
    g_assert_cmpuint(d->perf.latency.instances, ==, 31);
    g_assert_cmpfloat(d->perf.latency.average_ns, ==, 72.0);
    g_assert_cmpuint(d->perf.nltssm, ==, 2);
    g_assert_cmphex(d->perf.found.control, ==, 0x4000);
    g_assert_cmphex(d->perf.found.trackers, ==, 1);
    g_assert_cmpuint(d->perf.ltssm[0].status, ==, PTL_FST_DONE);
    g_assert_cmpuint(d->perf.ltssm[0].tracked, ==, 1);
    g_assert_cmpuint(d->perf.ltssm[0].counter, ==, 1);
    g_assert_true(d->perf.ltssm[1].interrupt);

    /* a watch's next interval: cleared and started again */
    g_assert_cmpint(ptl_flit_meas_start(m, 3000000000ull, &e), ==, PTL_OK);
    {
        static const uint32_t want[] = {
            CAP_LOG + 0x10, 0x0B,
            CAP_PERF + 0x08, 0x000007C2,
            CAP_PERF + 0x08, 0x000007C3,
        };

        check_writes(&f, want, 3);
    }
    *reg(&f, CAP_LOG + 0x14) = 1000;
    g_assert_cmpint(ptl_flit_meas_end(m, 3500000000ull, &e), ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    g_assert_cmpuint(d->fber.flits, ==, 1000);
    g_assert_cmpfloat(d->fber.flits_per_s, ==, 2000.0);
    g_assert_cmpuint(d->fber.lane[0], ==, 0);

    /* back as found: FBER off with its granularity, the Control */
    g_assert_cmpint(ptl_flit_meas_restore(m, &e), ==, PTL_OK);
    {
        static const uint32_t want[] = {
            CAP_LOG + 0x10, 0x08,
            CAP_PERF + 0x08, 0x00004000,
        };

        check_writes(&f, want, 2);
    }
    /* twice: nothing more */
    g_assert_cmpint(ptl_flit_meas_restore(m, &e), ==, PTL_OK);
    g_assert_cmpuint(f.writes->len, ==, 0);
    ptl_flit_meas_free(m);
    g_array_free(f.writes, TRUE);
}

static char *render(bool json, const ptl_flit_dev *devs, unsigned n,
                    double seconds);

/* Both measurements found running: nothing written, FBER by difference. */
static void test_measure_found_running(void)
{
    fake f;
    ptl_flit_meas *m;
    const ptl_flit_dev *d;
    ptl_error e = { 0 };

    fake_init(&f, false);
    *reg(&f, CAP_LOG + 0x10) = 0x01;
    *reg(&f, CAP_LOG + 0x14) = 0xFFFFFF00;
    *reg(&f, CAP_LOG + 0x18) = 10;
    *reg(&f, CAP_LOG + 0x1C) = 0x00050004;
    *reg(&f, CAP_PERF + 0x08) = 0x00000043;     /* on: 1 instance */
    *reg(&f, CAP_PERF + 0x0C) = 0x00000905;     /* started, 1, counter 9 */
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:00:01.0", false,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, 0, &e), ==, PTL_OK);
    /* the Flit Counter wraps, read in between */
    *reg(&f, CAP_LOG + 0x14) = 0x00000100;
    g_assert_cmpint(ptl_flit_meas_poll(m, &e), ==, PTL_OK);
    *reg(&f, CAP_LOG + 0x14) = 0x80000000;
    *reg(&f, CAP_LOG + 0x18) = 15;
    *reg(&f, CAP_LOG + 0x1C) = 0x00050006;
    g_assert_cmpint(ptl_flit_meas_end(m, 4000000000ull, &e), ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    /* 0x200 to the wrap and 0x7FFFFF00 after it */
    g_assert_cmphex(d->fber.flits, ==, 0x80000100ull);
    g_assert_cmpfloat(d->fber.flits_per_s, ==, 0x80000100 / 4.0);
    g_assert_false(d->fber.cleared);
    g_assert_true(d->fber_found.enabled);
    g_assert_cmpuint(d->fber.invalid, ==, 5);
    g_assert_cmpuint(d->fber.lane[0], ==, 2);
    g_assert_cmpuint(d->fber.lane[1], ==, 0);
    g_assert_false(d->perf.latency.measured);
    g_assert_nonnull(strstr(d->perf.latency.skipped, "another measurement"));
    g_assert_cmpuint(d->perf.latency.st.counter, ==, 9);
    {
        g_autofree char *text = render(false, d, 1, 4.0);

        g_assert_nonnull(strstr(text, "\n    FBER measurement   on as "
                                "found, granularity 0 (0x00000001): counted "
                                "by difference, left on\n"));
        g_assert_nonnull(strstr(text, "\n    flits received     2147483904 "
                                "in 4.000 s, 536870976 flits/s\n"));
        g_assert_nonnull(strstr(text, "\n    Flit->Ack latency  not "
                                "measured: Enable was set (another "
                                "measurement is running): left alone "
                                "(status started, 0x00000905)\n"));
    }
    /* a lane that stopped at 65535, and an overflowed latency */
    *reg(&f, CAP_LOG + 0x18) = 0xFFFF;
    *reg(&f, CAP_LOG + 0x1C) = 0xFFFF0006;
    g_assert_cmpint(ptl_flit_meas_end(m, 5000000000ull, &e), ==, PTL_OK);
    {
        ptl_flit_dev o = *ptl_flit_meas_dev(m);
        g_autofree char *text = NULL;

        ptl_flit_latency_compute(0x00FFFF7F, 31, &o.perf.latency);
        text = render(false, &o, 1, 1.0);
        g_assert_nonnull(strstr(text, "\n    invalid flits      65520+\n"));
        g_assert_nonnull(strstr(text, "\n    correctable        lanes 0-15: "
                                "0 65530+ 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"));
        g_assert_nonnull(strstr(text, "\n    Flit->Ack latency  overflow, "
                                "31 instances: the counter passed 0xFFFF, "
                                "the other fields are undefined "
                                "(0x00ffff7f)\n"));
    }
    g_assert_cmpint(ptl_flit_meas_restore(m, &e), ==, PTL_OK);
    g_assert_cmpuint(f.writes->len, ==, 0);
    ptl_flit_meas_free(m);
    g_array_free(f.writes, TRUE);
}

static void test_measure_gone(void)
{
    fake f;
    ptl_flit_meas *m;
    ptl_error e = { 0 };

    fake_init(&f, false);
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:01:00.0", true,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, 0, &e), ==, PTL_OK);
    memset(f.cfg, 0xff, sizeof(f.cfg));
    g_assert_cmpint(ptl_flit_meas_end(m, 1000, &e), ==, PTL_E_GONE);
    g_assert_cmpstr(e.msg, ==, "0000:01:00.0 disappeared (its capability "
                    "0x0031 at 0x200 reads 0xffffffff)");
    ptl_flit_meas_free(m);
    g_array_free(f.writes, TRUE);
}

/* --------------------------------------- the model of a link end */

/*
 * The fake's PCI part (header, PCI Express capability, capability
 * headers) with the model's registers behind 0x0031, 0x0032 and 0x0033:
 * a link end at x16 in flit mode, in L0 all the time, that sends and
 * receives 10 bytes of TLP payload a nanosecond.
 */
typedef struct model {
    fake f;
    FlitEnd end;
    uint64_t now;               /* virtual ns */
} model;

static const unsigned model_base[FLIT_CAPS] = { CAP_64GT, CAP_LOG, CAP_PERF };

static void model_totals(void *opaque, uint64_t now, FlitTotals *out)
{
    out->l0_ns = now;
    out->tx_payload = now * 10;
    out->rx_payload = now * 10;
}

static void model_irq(void *opaque)
{
    g_assert_not_reached();     /* the tool sets no threshold */
}

static int model_cap(model *m, uint32_t off)
{
    for (int k = 0; k < FLIT_CAPS; k++) {
        if (off > model_base[k] &&
            off < model_base[k] + flit_cap_size(k, &m->end.cfg)) {
            return k;
        }
    }
    return -1;
}

static bool model_read(void *opaque, uint32_t off, uint32_t *v)
{
    model *m = opaque;
    int k = model_cap(m, off);

    if (k < 0) {
        return fake_read(&m->f, off, v);
    }
    *v = flit_end_read(&m->end, k, off - model_base[k], 4, m->now);
    return true;
}

static bool model_write(void *opaque, uint32_t off, uint32_t v)
{
    model *m = opaque;
    int k = model_cap(m, off);
    uint32_t pair[2] = { off, v };

    g_assert_cmpint(k, >=, 0);
    g_array_append_vals(m->f.writes, pair, 2);
    flit_end_write(&m->end, k, off - model_base[k], v, 4, m->now);
    return true;
}

static const ptl_config_ops model_ops = {
    .read32 = model_read, .write32 = model_write, .error = fake_error,
};

static void test_model(void)
{
    FlitEndConfig cfg = { .width = 16, .ltssm_regs = 5, .flight_ns = 10 };
    FlitError unc = { .kind = FLIT_ERR_UNCORRECTABLE, .count = 3 };
    FlitError cor = { .kind = FLIT_ERR_CORRECTABLE, .lane = 2,
                      .count = 10 };
    model md;
    ptl_flit_meas *m;
    const ptl_flit_dev *d;
    ptl_error e = { 0 };
    uint32_t v;

    fake_init(&md.f, false);
    g_assert_null(flit_end_check(&cfg));
    flit_end_init(&md.end, &cfg, model_totals, model_irq, &md);
    md.now = 1000;
    flit_end_set_active(&md.end, true, 16, md.now);

    g_assert_cmpint(ptl_flit_meas_new(&model_ops, &md, "0000:01:00.0", true,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, md.now, &e), ==, PTL_OK);
    md.now += 500000000;
    flit_end_rx_errors(&md.end, &unc, md.now);
    flit_end_rx_errors(&md.end, &cor, md.now);
    md.now += 500000000;
    g_assert_cmpint(ptl_flit_meas_end(m, md.now, &e), ==, PTL_OK);
    d = ptl_flit_meas_dev(m);

    /* trained: equalization complete, phases 1 to 3 (0x0F) */
    g_assert_cmphex(d->pl64.status, ==, 0x0F);
    /* 1 s of L0 at x16: 8e9 symbols a lane, B = 748 x 16 + 40 = 12008
     * a SKP period: 666222 periods of 748 flits, and of the 6224 symbols
     * left 389 flits of 16: 498334056 + 389 */
    g_assert_true(d->fber.cleared);
    g_assert_cmpuint(d->fber.flits, ==, 498334445);
    g_assert_cmpfloat(d->fber.seconds, ==, 1.0);
    g_assert_cmpfloat(d->fber.flits_per_s, ==, 498334445.0);
    /* 3 uncorrectable flits, 10 correctable on lane 2 */
    g_assert_cmpuint(d->fber.invalid, ==, 3);
    g_assert_cmpuint(d->fber.lane[2], ==, 10);
    g_assert_cmpuint(d->fber.lane[0] + d->fber.lane[1] + d->fber.lane[3], ==,
                     0);
    /* one entry: valid, x16 (4 << 1), 2 after it (2 << 8), uncorrectable */
    g_assert_cmphex(d->log.log1, ==, 0x8209);
    g_assert_true(d->log.valid && d->log.uncorrectable && !d->log.more);
    g_assert_cmpuint(d->log.consecutive, ==, 2);
    /* Flit->Ack at x16, 10 ns of flight: 2 + 2 x 10 + 50 = 72 ns, 9
     * counts a flit; 31 flits: 279 counts, done */
    g_assert_true(d->perf.latency.measured);
    g_assert_cmpuint(d->perf.latency.st.status, ==, PTL_FST_DONE);
    g_assert_cmpuint(d->perf.latency.st.tracked, ==, 31);
    g_assert_cmpuint(d->perf.latency.st.counter, ==, 279);
    g_assert_cmpfloat(d->perf.latency.average_ns, ==, 72.0);
    g_assert_cmpuint(d->perf.nltssm, ==, 5);
    for (unsigned i = 0; i < 5; i++) {
        g_assert_cmpuint(d->perf.ltssm[i].raw, ==, 0);
    }

    /* another measurement meanwhile finds both on and leaves them */
    {
        ptl_flit_meas *m2;

        g_array_set_size(md.f.writes, 0);
        g_assert_cmpint(ptl_flit_meas_new(&model_ops, &md, "0000:01:00.0",
                                          true, 0, &m2, &e), ==, PTL_OK);
        g_assert_cmpint(ptl_flit_meas_start(m2, md.now, &e), ==, PTL_OK);
        g_assert_cmpint(ptl_flit_meas_end(m2, md.now + 1000, &e), ==,
                        PTL_OK);
        g_assert_false(ptl_flit_meas_dev(m2)->perf.latency.measured);
        g_assert_false(ptl_flit_meas_dev(m2)->fber.cleared);
        g_assert_cmpint(ptl_flit_meas_restore(m2, &e), ==, PTL_OK);
        g_assert_cmpuint(md.f.writes->len, ==, 0);
        ptl_flit_meas_free(m2);
    }

    /* the worst case, after the first measurement was written back */
    g_assert_cmpint(ptl_flit_meas_restore(m, &e), ==, PTL_OK);
    ptl_flit_meas_free(m);
    g_array_set_size(md.f.writes, 0);
    g_assert_cmpint(ptl_flit_meas_new(&model_ops, &md, "0000:01:00.0", true,
                                      0, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, md.now, &e), ==, PTL_OK);
    md.now += 1000000;
    g_assert_cmpint(ptl_flit_meas_end(m, md.now, &e), ==, PTL_OK);
    d = ptl_flit_meas_dev(m);
    g_assert_cmpuint(d->perf.latency.st.status, ==, PTL_FST_STARTED);
    g_assert_cmpuint(d->perf.latency.st.tracked, ==, 31);
    g_assert_cmpfloat(d->perf.latency.worst_ns, ==, 72.0);

    /* written back: both off, the counters and the Status held */
    g_assert_cmpint(ptl_flit_meas_restore(m, &e), ==, PTL_OK);
    md.now += 1000000000;
    g_assert_true(model_read(&md, CAP_LOG + 0x10, &v));
    g_assert_cmphex(v, ==, 0);
    g_assert_true(model_read(&md, CAP_PERF + 0x08, &v));
    g_assert_cmphex(v, ==, 0);
    g_assert_true(model_read(&md, CAP_PERF + 0x0C, &v));
    g_assert_cmphex(v, ==, (9u << 8) | (31u << 2) | 2u);   /* done */
    g_assert_true(model_read(&md, CAP_LOG + 0x14, &v));
    /* what the last (1 ms) interval counted, held: 8e6 symbols, 666
     * periods of 748 flits and 167 of the 2672 symbols left */
    g_assert_cmpuint(v, ==, 666 * 748 + 167);
    ptl_flit_meas_free(m);
    g_array_free(md.f.writes, TRUE);
}

/* -------------------------------------------------------------- output */

static char *render(bool json, const ptl_flit_dev *devs, unsigned n,
                    double seconds)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    g_assert_nonnull(f);
    if (json) {
        g_assert_cmpint(ptl_flit_format_json(f, devs, n, seconds), ==, 0);
    } else {
        g_assert_cmpint(ptl_flit_format_text(f, devs, n, seconds), ==, 0);
    }
    fclose(f);
    return buf;
}

static void measured_dev(ptl_flit_dev *out)
{
    fake f;
    ptl_flit_meas *m;
    ptl_error e = { 0 };

    fake_init(&f, false);
    g_assert_cmpint(ptl_flit_meas_new(&fake_ops, &f, "0000:01:00.0", true,
                                      31, &m, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_flit_meas_start(m, 0, &e), ==, PTL_OK);
    *reg(&f, CAP_LOG + 0x14) = 498000000;
    *reg(&f, CAP_LOG + 0x04) = 0x0000A209;
    *reg(&f, CAP_PERF + 0x0C) = 0x0001177E;
    *reg(&f, CAP_PERF + 0x10) = 0x00000106;
    g_assert_cmpint(ptl_flit_meas_end(m, 1000000000, &e), ==, PTL_OK);
    *out = *ptl_flit_meas_dev(m);
    ptl_flit_meas_free(m);
    g_array_free(f.writes, TRUE);
}

static void test_format(void)
{
    ptl_flit_dev d;
    g_autofree char *text = NULL;
    g_autofree char *json = NULL;
    g_autofree char *line = NULL;
    ptl_json *doc;
    const ptl_json *dev, *v;
    ptl_error e = { 0 };
    size_t len = 0;
    FILE *f;

    measured_dev(&d);
    text = render(false, &d, 1, 1.0);
    g_assert_true(g_str_has_prefix(text, "Flit mode of 0000:01:00.0 and the "
                                   "ports above it, over 1.00 s\n-----"));
    g_assert_nonnull(strstr(text, "\n0000:01:00.0 (card): flit mode "
                            "supported, active; link 64 GT/s x16\n"));
    g_assert_nonnull(strstr(text, "\n  Physical Layer 64.0 GT/s at 0x200\n"
                            "    status             equalization complete+ "
                            "phase1+ phase2+ phase3+ request- "
                            "(0x0000000f)\n"));
    g_assert_nonnull(strstr(text, "\n  Flit Logging at 0x220\n"
                            "    error log          valid, x16, offset 0, "
                            "FEC uncorrectable, 2 consecutive after it, more "
                            "entries (0x0000a209)\n"
                            "    syndromes          0x0000 (log 1), "
                            "0x00000000 (log 2)\n"
                            "    error counter      off, interrupt off, "
                            "counting all flit errors, trigger 0 "
                            "(0x0000)\n"
                            "    counter status     count 0, x1 when started "
                            "(0x0000)\n"));
    g_assert_nonnull(strstr(text, "\n    FBER measurement   off as found, "
                            "granularity 0 (0x00000000): enabled with Clear "
                            "for the interval\n"));
    g_assert_nonnull(strstr(text, "\n    invalid flits      0\n"));
    g_assert_nonnull(strstr(text, "\n    trackers           none enabled "
                            "(control 0x00000000 as found)\n"));
    g_assert_nonnull(strstr(text, "\n    flits received     498000000 in "
                            "1.000 s, 498000000 flits/s\n"));
    g_assert_nonnull(strstr(text, "\n    correctable        lanes 0-15: 0 0 "
                            "0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"));
    g_assert_nonnull(strstr(text, "\n    Flit->Ack latency  done, 31 "
                            "instances: 31 flits tracked, counter 279 (2232 "
                            "ns), average 72.0 ns\n"));
    g_assert_nonnull(strstr(text, "\n  Flit Performance Measurement at 0x260: "
                            "2 LTSSM registers, interrupt vector 0\n"));
    g_assert_nonnull(strstr(text, "\n    LTSSM 0            done, count 1, "
                            "counter 1 (64 us)\n"));

    json = render(true, &d, 1, 1.0);
    g_assert_cmpint(ptl_json_parse(json, strlen(json), 0, 0, NULL, &doc, &e),
                    ==, PTL_OK);
    g_assert_cmpfloat(ptl_json_get(doc, "seconds")->number, ==, 1.0);
    v = ptl_json_get(doc, "flit");
    g_assert_cmpint(v->type, ==, PTL_JSON_ARRAY);
    g_assert_cmpuint(v->n, ==, 1);
    dev = &v->items[0];
    g_assert_cmpstr(ptl_json_get(dev, "device")->string, ==, "0000:01:00.0");
    g_assert_cmpstr(ptl_json_get(dev, "role")->string, ==, "card");
    g_assert_cmpint(ptl_json_get(dev, "flit_mode")->type, ==, PTL_JSON_TRUE);
    v = ptl_json_get(ptl_json_get(dev, "log"), "fber");
    g_assert_cmpuint(ptl_json_get(v, "flits")->uint, ==, 498000000);
    g_assert_cmpuint(ptl_json_get(v, "lanes")->n, ==, 16);
    v = ptl_json_get(ptl_json_get(dev, "log"), "error_log");
    g_assert_cmpuint(ptl_json_get(v, "width")->uint, ==, 16);
    g_assert_cmpuint(ptl_json_get(v, "consecutive")->uint, ==, 2);
    v = ptl_json_get(ptl_json_get(dev, "perf"), "latency");
    g_assert_cmpstr(ptl_json_get(v, "status")->string, ==, "done");
    g_assert_cmpfloat(ptl_json_get(v, "average_ns")->number, ==, 72.0);
    g_assert_cmpint(ptl_json_get(v, "worst_ns")->type, ==, PTL_JSON_NULL);
    v = ptl_json_get(ptl_json_get(dev, "perf"), "ltssm");
    g_assert_cmpuint(v->n, ==, 2);
    g_assert_cmpuint(ptl_json_get(&v->items[0], "counter_us")->uint, ==, 64);
    ptl_json_free(doc);

    /* --list's line */
    f = open_memstream(&line, &len);
    g_assert_cmpint(ptl_flit_format_list(f, &d, "    "), ==, 0);
    fclose(f);
    g_assert_cmpstr(line, ==, "    flit card 0000:01:00.0: supported, "
                    "active; 0x0031 at 0x200, 0x0032 at 0x220, 0x0033 at "
                    "0x260\n");
}

/* ---------------------------------------------------------- options */

static int parse(ptt_opts *o, char *msg, const char *line)
{
    g_auto(GStrv) words = NULL;
    g_autofree char *cmd = g_strconcat("pcie-telemetry ", line, NULL);
    int argc;

    g_assert_true(g_shell_parse_argv(cmd, &argc, &words, NULL));
    return ptt_parse_options(argc, words, o, msg, 256);
}

static void test_options(void)
{
    static const struct {
        const char *line, *msg;
    } bad[] = {
        { "--flit --flit-instances 32", "--flit-instances: '32' is not a "
          "number of instances (0 to 31; 0: the worst case)" },
        { "--flit --flit-instances -1", "--flit-instances: '-1'" },
        { "--flit --flit-instances x", "--flit-instances: 'x'" },
        { "--flit --flit-instances ''", "--flit-instances: ''" },
        { "--flit --flit-instances 0x1f", "--flit-instances: '0x1f'" },
        { "--flit --flit-instances", "--flit-instances needs an argument" },
        { "--flit-instances 4", "--flit-instances goes with --flit only" },
        { "--flit -c", "-c does not go with --flit" },
        { "--flit --port rx", "--port does not go with --flit" },
        { "--flit -l", "--list does not go with --flit" },
        { "--flit -i 1", "-i does not go with --flit" },
        { "--flit --bar 0 --offset 0", "--bar does not go with --flit" },
        { "--flit --offset 0", "--offset does not go with --flit" },
        { "--flit --csv", "--csv does not go with --flit" },
        { "--flit --prometheus", "--prometheus does not go with --flit" },
        { "--flit -t 0", "--flit needs an interval above 0" },
        { "--flit --input x.json", "--flit does not go with --input" },
        { "--flit --listen 9441", "--flit does not go with --listen" },
        { "--flit --live", "--flit does not go with --live" },
        { "--flit extra", "unexpected argument 'extra'" },
    };
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, ""), ==, 0);
    g_assert_false(o.flit);
    g_assert_cmpuint(o.flit_instances, ==, 31);

    g_assert_cmpint(parse(&o, msg, "--flit"), ==, 0);
    g_assert_true(o.flit);
    g_assert_cmpuint(o.flit_instances, ==, 31);
    g_assert_cmpfloat(o.interval, ==, 1.0);
    g_assert_cmpint(o.format, ==, PTT_TEXT);

    g_assert_cmpint(parse(&o, msg, "--flit -d 01:00.0 -w -t 0.5 -j "
                          "--flit-instances 0"), ==, 0);
    g_assert_true(o.flit && o.watch);
    g_assert_cmpuint(o.flit_instances, ==, 0);
    g_assert_cmpfloat(o.interval, ==, 0.5);
    g_assert_cmpint(o.format, ==, PTT_JSON);
    g_assert_cmpint(parse(&o, msg, "--flit-instances=7 --flit -D 1234:0d7b "
                          "--add-id 18ec:c400"), ==, 0);
    g_assert_cmpuint(o.flit_instances, ==, 7);
    g_assert_cmpint(parse(&o, msg, "--flit --flit-instances 31"), ==, 0);
    g_assert_cmpuint(o.flit_instances, ==, 31);

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_cmpint(parse(&o, msg, bad[i].line), ==, 2);
        if (!g_str_has_prefix(msg, bad[i].msg)) {
            g_error("%s: '%s' does not start with '%s'", bad[i].line, msg,
                    bad[i].msg);
        }
    }
}

/* ------------------------------------------------------ the tool */

static char *top, *sys;

/* A function at sys/devices/<path>, linked from bus/pci/devices. */
static void add_function(const char *path, const fake *f)
{
    g_autofree char *dir = g_build_filename(sys, "devices", path, NULL);
    g_autofree char *slot = g_path_get_basename(path);
    g_autofree char *link = g_build_filename(sys, "bus/pci/devices", slot,
                                             NULL);
    g_autofree char *target = g_build_filename("../../../devices", path,
                                               NULL);
    g_autofree char *v = g_strdup_printf("0x%04x\n", f->cfg[0] & 0xffff);
    g_autofree char *d = g_strdup_printf("0x%04x\n", f->cfg[0] >> 16);

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    tsys_put(dir, "vendor", v, -1);
    tsys_put(dir, "device", d, -1);
    tsys_put(dir, "class", "0x020000\n", -1);
    tsys_put(dir, "irq", "0\n", -1);
    tsys_put(dir, "resource", "0x0000000000000000 0x0000000000000000 "
        "0x0000000000000000\n", -1);
    tsys_put(dir, "config", f->cfg, 4096);
    g_assert_cmpint(symlink(target, link), ==, 0);
}

static uint32_t file_reg(const char *path, uint32_t off)
{
    g_autofree char *p = g_build_filename(sys, "devices", path, "config",
                                          NULL);
    g_autofree char *data = NULL;
    gsize len;
    uint32_t v;

    g_assert_true(g_file_get_contents(p, &data, &len, NULL));
    g_assert_cmpuint(len, ==, 4096);
    memcpy(&v, data + off, 4);
    return v;
}

static void setup_tree(void)
{
    g_autofree char *d = NULL;
    g_autofree char *pci = NULL;
    fake f;

    top = g_dir_make_tmp("ptl-flit-XXXXXX", NULL);
    g_assert_nonnull(top);
    sys = g_build_filename(top, "sys", NULL);
    d = g_build_filename(sys, "bus/pci/devices", NULL);
    g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
    pci = g_build_filename(sys, "bus/pci", NULL);
    g_setenv("PCIE_TELEMETRY_SYSFS", pci, TRUE);

    /* the root port 00:01.0 and the card below it, both in flit mode;
     * the port's FBER found with granularity 1, the card's latency
     * Control with the L0->Recovery tracker */
    fake_init(&f, true);
    f.cfg[0] = 0x12348086;                  /* not a card's ID */
    f.cfg[(CAP_LOG + 0x10) / 4] = 0x04;
    add_function("pci0000:00/0000:00:01.0", &f);
    g_array_free(f.writes, TRUE);
    fake_init(&f, false);
    f.cfg[(CAP_PERF + 0x08) / 4] = 0x00004000;
    f.cfg[(CAP_PERF + 0x10) / 4] = 0x00000106;
    add_function("pci0000:00/0000:00:01.0/0000:01:00.0", &f);
    g_array_free(f.writes, TRUE);
    /* a card without flit mode below a port without it */
    memset(f.cfg, 0, sizeof(f.cfg));
    f.cfg[0] = 0x12348086;
    add_function("pci0000:00/0000:00:02.0", &f);
    f.cfg[0] = 0x0d7b1234;
    add_function("pci0000:00/0000:00:02.0/0000:02:00.0", &f);
}

static void test_tool_list(void)
{
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--list", NULL };
    g_auto(GStrv) lines = NULL;
    int seen = 0;

    if (!tsys_have_tool()) {
        return;
    }
    g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 0);
    lines = g_strsplit(out, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, "0000:01:00.0 ")) {
            g_assert_true(g_str_has_prefix(l[1], "    link 64 GT/s x16"));
            g_assert_true(g_str_has_prefix(l[2], "    0000:01:00.0 has no "
                                           "NDK device tree"));
            g_assert_cmpstr(l[3], ==, "    flit card 0000:01:00.0: "
                            "supported, active; 0x0031 at 0x200, 0x0032 at "
                            "0x220, 0x0033 at 0x260");
            g_assert_cmpstr(l[4], ==, "    flit port 0000:00:01.0: "
                            "supported, active; 0x0031 at 0x200, 0x0032 at "
                            "0x220, 0x0033 at 0x260");
            seen++;
        }
        if (g_str_has_prefix(*l, "0000:02:00.0 ")) {
            /* as before: no flit line */
            g_assert_true(g_str_has_prefix(l[1], "    0000:02:00.0 has no "
                                           "NDK device tree"));
            g_assert_true(l[2] == NULL || !g_str_has_prefix(l[2], "    "));
            seen++;
        }
    }
    g_assert_cmpint(seen, ==, 2);
}

static void test_tool_flit(void)
{
    g_autofree char *out = NULL, *err = NULL, *text = NULL;
    const char *args[] = { "--flit", "-d", "01:00.0", "-t", "0.05", "-j",
                           NULL };
    const char *targs[] = { "--flit", "-d", "0000:01:00.0", "-t", "0.05",
                            "--flit-instances", "0", NULL };
    ptl_json *doc;
    const ptl_json *flit, *v;
    ptl_error e = { 0 };

    if (!tsys_have_tool()) {
        return;
    }
    g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 0);
    g_assert_cmpstr(err, ==, "");
    g_assert_cmpint(ptl_json_parse(out, strlen(out), 0, 0, NULL, &doc, &e),
                    ==, PTL_OK);
    g_assert_cmpfloat(ptl_json_get(doc, "seconds")->number, >=, 0.04);
    flit = ptl_json_get(doc, "flit");
    g_assert_cmpuint(flit->n, ==, 2);
    g_assert_cmpstr(ptl_json_get(&flit->items[0], "device")->string, ==,
                    "0000:01:00.0");
    g_assert_cmpstr(ptl_json_get(&flit->items[0], "role")->string, ==,
                    "card");
    g_assert_cmpstr(ptl_json_get(&flit->items[1], "device")->string, ==,
                    "0000:00:01.0");
    g_assert_cmpstr(ptl_json_get(&flit->items[1], "role")->string, ==,
                    "port");
    /* the file keeps what was written: Enable | Clear, Enable 1 */
    v = ptl_json_get(ptl_json_get(&flit->items[0], "perf"), "latency");
    g_assert_cmpstr(ptl_json_get(v, "status")->string, ==, "not started");
    v = ptl_json_get(ptl_json_get(&flit->items[1], "log"), "fber");
    g_assert_cmpuint(ptl_json_get(v, "control")->uint, ==, 4);
    g_assert_cmpint(ptl_json_get(v, "cleared")->type, ==, PTL_JSON_TRUE);
    v = ptl_json_get(&flit->items[0], "perf");
    g_assert_cmpuint(ptl_json_get(v, "ltssm")->n, ==, 2);
    g_assert_cmpuint(ptl_json_get(v, "trackers")->n, ==, 1);
    g_assert_cmpstr(ptl_json_get(v, "trackers")->items[0].string, ==,
                    "L0->Recovery");
    ptl_json_free(doc);
    /* written back as found */
    g_assert_cmphex(file_reg("pci0000:00/0000:00:01.0/0000:01:00.0",
                             CAP_LOG + 0x10), ==, 0);
    g_assert_cmphex(file_reg("pci0000:00/0000:00:01.0/0000:01:00.0",
                             CAP_PERF + 0x08), ==, 0x4000);
    g_assert_cmphex(file_reg("pci0000:00/0000:00:01.0", CAP_LOG + 0x10), ==,
                    0x04);
    g_assert_cmphex(file_reg("pci0000:00/0000:00:01.0", CAP_PERF + 0x08),
                    ==, 0);

    g_free(err);
    g_assert_cmpint(tsys_run_tool(targs, &text, &err), ==, 0);
    g_assert_true(g_str_has_prefix(text, "Flit mode of 0000:01:00.0 and the "
                                   "ports above it, over 0.0"));
    g_assert_nonnull(strstr(text, "\n0000:00:01.0 (port): flit mode "
                            "supported, active; link 64 GT/s x16\n"));
    g_assert_nonnull(strstr(text, "\n    Flit->Ack latency  not started, "
                            "worst case (0x00000000)\n"));
    g_assert_nonnull(strstr(text, "\n    trackers           L0->Recovery "
                            "enabled (control 0x00004000 as found)\n"));
    g_assert_nonnull(strstr(text, "\n    LTSSM 0            L0->Recovery: "
                            "done, count 1, counter 1 (64 us)\n"));
}

static void test_tool_errors(void)
{
    static const struct {
        const char *dev;
        int rc;
        const char *msg;
    } cases[] = {
        { "0000:02:00.0", PTL_E_NO_FLIT, "pcie-telemetry: no flit-mode "
          "link: neither the card nor a port above it has flit mode or a "
          "flit capability (0x0031-0x0033)\n" },
        { "0000:09:00.0", PTL_E_NO_CARD, "pcie-telemetry: no PCI function "
          "matches 0000:09:00.0" },
    };

    if (!tsys_have_tool()) {
        return;
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *out = NULL, *err = NULL;
        const char *args[] = { "--flit", "-d", cases[i].dev, "-t", "0.01",
                               NULL };

        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, cases[i].rc);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_prefix(err, cases[i].msg));
    }
}

int main(int argc, char **argv)
{
    int r;

    g_test_init(&argc, &argv, NULL);
    setup_tree();
    g_test_add_func("/ptl-flit/mode", test_mode);
    g_test_add_func("/ptl-flit/64gt", test_64gt);
    g_test_add_func("/ptl-flit/log", test_log);
    g_test_add_func("/ptl-flit/err-counter", test_err_counter);
    g_test_add_func("/ptl-flit/fber-ctl", test_fber_ctl);
    g_test_add_func("/ptl-flit/perf-ctl", test_perf_ctl);
    g_test_add_func("/ptl-flit/perf-status", test_perf_status);
    g_test_add_func("/ptl-flit/counter-wrap", test_counter_wrap);
    g_test_add_func("/ptl-flit/latency", test_latency);
    g_test_add_func("/ptl-flit/probe", test_probe);
    g_test_add_func("/ptl-flit/measure", test_measure);
    g_test_add_func("/ptl-flit/measure-found-running",
                    test_measure_found_running);
    g_test_add_func("/ptl-flit/measure-gone", test_measure_gone);
    g_test_add_func("/ptl-flit/model", test_model);
    g_test_add_func("/ptl-flit/format", test_format);
    g_test_add_func("/ptl-flit/options", test_options);
    g_test_add_func("/ptl-flit/tool-list", test_tool_list);
    g_test_add_func("/ptl-flit/tool-flit", test_tool_flit);
    g_test_add_func("/ptl-flit/tool-errors", test_tool_errors);
    r = g_test_run();
    tsys_rm_rf(top);
    g_free(top);
    g_free(sys);
    return r;
}
