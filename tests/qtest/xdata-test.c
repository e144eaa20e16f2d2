/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of dw-xdata-pcie below a dwc-pcie-root-port on q35: the function
 * as the dw-xdata-pcie driver probes it (16c3:edda, BAR 0, the link it
 * negotiated), the driver's write test and read test with its perf
 * measurement against the link-rate rule over clock_step, the port's RAS
 * DES Rx and Tx payload counting the same bytes, the driver's stop with
 * STATUS done at the end of the burst, a system reset mid-test,
 * migration of a running test, the function on q35's root bus, and the
 * properties refused. The expected counts are docs/xdata.md's rule worked
 * out here: 8 GT/s x4 is 8000 x 4 x 128 / 130 / 8 link bytes a us; a
 * write TLP of 256 bytes takes 256 + 12 + 8, a read request of 512 bytes
 * comes back as two completions of 256 + 12 + 8.
 */

#include "ndk-common.h"

#define XD_ARGS "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1," \
    "addr=10.0,x-speed=16,x-width=8 " \
    "-device dw-xdata-pcie,id=xd,bus=rp0,link-speed=8,link-width=4"
#define RP_DEVFN        QPCI_DEVFN(0x10, 0)
#define XD_BDF          (1 << 8)        /* bus 1, device 0 */
#define XD_EXP          0x70
#define RP_EXP          0x70            /* the port's PCIe capability */
#define WINDOW          0xE0000000u     /* libqos's first BAR on pc */

/* The driver's registers and values (drivers/misc/dw-xdata-pcie.c) */
#define ADDR_LSB        0x00
#define ADDR_MSB        0x04
#define BURST_CNT       0x08
#define CONTROL         0x0C
#define PATTERN         0x10
#define STATUS          0x14
#define RAM_ADDR        0x18
#define RAM_PORT        0x1C
#define PERF_CONTROL    0x58
#define WR_CNT_LSB      0x100
#define RD_CNT_LSB      0x108
#define STATUS_DONE     1u
#define CTRL_DOORBELL   (1u << 0)
#define CTRL_WRITE      (1u << 1)
#define CTRL_PATTERN_INC (1u << 16)
#define CTRL_NO_ADDR_INC (1u << 18)
#define PERF_ENABLE     (1u << 5)
#define BURST_REPEAT    (1u << 31)
#define BURST_VALUE     0x1001u
#define EP_MEM_OFFSET   0x8000000u

/* The port's RAS DES time-based analysis (docs/dwc-root-port.md) */
#define RAS_DES         0x200
#define TBA_CTL         (RAS_DES + 0x10)
#define TBA_LOW         (RAS_DES + 0x14)
#define TBA_HIGH        (RAS_DES + 0x18)
#define TX_PAYLOAD      0x20
#define RX_PAYLOAD      0x21

#define MS              1000000ll

/* 8 GT/s x4: link bytes a ns = RATE_NUM / RATE_DEN */
#define RATE_NUM        (8000ull * 4 * 128)
#define RATE_DEN        (130ull * 8000)
#define WRITE_WIRE      (256 + 12 + 8)
#define READ_WIRE       (512 + 2 * (12 + 8))

typedef struct Xd {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint64_t bar_addr;
    unsigned reads, writes;     /* BAR accesses since the port's run */
    int64_t t;                  /* virtual time: it moves only by step */
} Xd;

static uint32_t xd_rd(Xd *x, uint32_t off)
{
    x->reads++;
    return qpci_io_readl(x->dev, x->bar, off);
}

static void xd_wr(Xd *x, uint32_t off, uint32_t v)
{
    x->writes++;
    qpci_io_writel(x->dev, x->bar, off, v);
}

static int64_t xd_step(Xd *x, int64_t ns)
{
    x->t = qtest_clock_step(x->qts, ns);
    return x->t;
}

static void xd_step_to(Xd *x, int64_t t)
{
    g_assert_cmpint(qtest_clock_set(x->qts, t), ==, t);
    x->t = t;
}

/* Transfers of `wire` link bytes done in ns at 8 GT/s x4 */
static uint64_t xfers(int64_t ns, uint64_t wire)
{
    return (uint64_t)ns * RATE_NUM / (RATE_DEN * wire);
}

/* The port forwards bus 1 and a window with BAR 0; BAR 0 by libqos */
static void xd_setup(Xd *x, int bdf)
{
    uint64_t size;

    ecam_enable(x->bus);
    if (bdf == XD_BDF) {
        ecam_wr(x->qts, 0, RP_DEVFN, PCI_SECONDARY_BUS, 1, 1);
        ecam_wr(x->qts, 0, RP_DEVFN, PCI_SUBORDINATE_BUS, 1, 1);
        ecam_wr(x->qts, 0, RP_DEVFN, PCI_MEMORY_BASE, WINDOW >> 16, 2);
        ecam_wr(x->qts, 0, RP_DEVFN, PCI_MEMORY_LIMIT,
                (WINDOW + 0x00F00000) >> 16, 2);
        ecam_wr(x->qts, 0, RP_DEVFN, PCI_COMMAND,
                PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    }
    g_free(x->dev);
    x->dev = qpci_device_find(x->bus, bdf);
    g_assert_nonnull(x->dev);
    x->bar = qpci_iomap(x->dev, 0, &size);
    g_assert_cmpuint(size, ==, 0x1000);
    x->bar_addr = qpci_config_readl(x->dev, PCI_BASE_ADDRESS_0) & ~0xFu;
    qpci_device_enable(x->dev);
}

static void xd_open_bdf(Xd *x, const char *args, int bdf)
{
    memset(x, 0, sizeof(*x));
    x->qts = qtest_initf("-machine q35 -nodefaults %s", args);
    x->bus = qpci_new_pc(x->qts, NULL);
    xd_setup(x, bdf);
}

static void xd_open(Xd *x)
{
    xd_open_bdf(x, XD_ARGS, XD_BDF);
}

static void xd_close(Xd *x)
{
    g_free(x->dev);
    qpci_free_pc(x->bus);
    qtest_quit(x->qts);
}

/* MPS and MRRS in Device Control, as Linux programs them */
static void xd_settings(Xd *x, unsigned mps, unsigned mrrs)
{
    uint16_t ctl = qpci_config_readw(x->dev, XD_EXP + PCI_EXP_DEVCTL);

    ctl &= ~(PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ);
    ctl |= ctz32(mps / 128) << 5 | ctz32(mrrs / 128) << 12;
    qpci_config_writew(x->dev, XD_EXP + PCI_EXP_DEVCTL, ctl);
}

/* ------------------------------------------------------------------ */
/* The driver's sequences                                             */

static void drv_probe(Xd *x)
{
    uint64_t target = x->bar_addr + EP_MEM_OFFSET;

    xd_wr(x, RAM_ADDR, 0);
    xd_wr(x, RAM_PORT, 0);
    xd_wr(x, ADDR_LSB, (uint32_t)target);
    xd_wr(x, ADDR_MSB, target >> 32);
}

static void drv_stop(Xd *x)
{
    uint32_t burst = xd_rd(x, BURST_CNT);

    if (burst & BURST_REPEAT) {
        xd_wr(x, BURST_CNT, burst & ~BURST_REPEAT);
    }
}

/* Start; returns the virtual time of the doorbell */
static int64_t drv_start(Xd *x, bool write, uint32_t len_dw)
{
    int64_t t;

    drv_stop(x);
    xd_wr(x, STATUS, 0);
    xd_wr(x, BURST_CNT, BURST_REPEAT | BURST_VALUE);
    xd_wr(x, PATTERN, 0);
    t = x->t;
    xd_wr(x, CONTROL, CTRL_DOORBELL | CTRL_PATTERN_INC | CTRL_NO_ADDR_INC |
       len_dw << 2 | (write ? CTRL_WRITE : 0));
    /* usleep_range(100, 150), then the status: not done */
    xd_step(x, 100000);
    g_assert_cmphex(xd_rd(x, STATUS) & STATUS_DONE, ==, 0);
    return t;
}

static uint64_t drv_meas(Xd *x, bool write)
{
    uint32_t lsb = write ? WR_CNT_LSB : RD_CNT_LSB;
    uint64_t v;

    xd_wr(x, PERF_CONTROL, 0);
    v = (uint64_t)xd_rd(x, lsb + 4) << 32;
    v |= xd_rd(x, lsb);
    xd_wr(x, PERF_CONTROL, PERF_ENABLE);
    return v;
}

static uint64_t drv_rate(uint64_t m1, uint64_t m0, uint64_t ns)
{
    uint64_t rate = (m1 - m0) * 1000000000ull >> 20;

    return (rate + ns / 2) / ns;
}

/* ------------------------------------------------------------------ */
/* The port above                                                     */

static void tba_start(Xd *x, unsigned report)
{
    ecam_wr(x->qts, 0, RP_DEVFN, TBA_CTL, report << 24 | 1, 4);
    x->reads = x->writes = 0;
}

/* The run so far, of report (the run goes on), in bytes as perf shows */
static uint64_t tba_bytes(Xd *x, unsigned report)
{
    uint64_t lo, hi;

    ecam_wr(x->qts, 0, RP_DEVFN, TBA_CTL, report << 24 | 1, 4);
    hi = qtest_readl(x->qts, ecam_at(0, RP_DEVFN, TBA_HIGH));
    lo = qtest_readl(x->qts, ecam_at(0, RP_DEVFN, TBA_LOW));
    g_assert_cmphex(qtest_readl(x->qts, ecam_at(0, RP_DEVFN, TBA_HIGH)), ==,
                    hi);
    return (hi << 32 | lo) * 16;
}

/* ------------------------------------------------------------------ */

static void test_probe_view(void)
{
    Xd x;
    uint32_t bar;

    xd_open(&x);
    g_assert_cmphex(qpci_config_readl(x.dev, PCI_VENDOR_ID), ==, 0xedda16c3);
    g_assert_cmphex(qpci_config_readw(x.dev, PCI_CLASS_DEVICE), ==, 0x00ff);
    /* BAR 0: 32-bit memory of 4 KiB, the only BAR */
    qpci_config_writel(x.dev, PCI_BASE_ADDRESS_0, 0xFFFFFFFF);
    bar = qpci_config_readl(x.dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(bar, ==, 0xFFFFF000);
    qpci_config_writel(x.dev, PCI_BASE_ADDRESS_0, x.bar_addr);
    g_assert_cmphex(qpci_config_readl(x.dev, PCI_BASE_ADDRESS_1), ==, 0);
    /*
     * a PCIe endpoint: Max_Payload_Size 256 supported, MPS 128 and MRRS
     * 512 after reset
     */
    g_assert_cmphex(qpci_config_readb(x.dev, XD_EXP), ==, PCI_CAP_ID_EXP);
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_FLAGS) &
                    PCI_EXP_FLAGS_TYPE, ==, PCI_EXP_TYPE_ENDPOINT << 4);
    g_assert_cmphex(qpci_config_readl(x.dev, XD_EXP + PCI_EXP_DEVCAP) &
                    PCI_EXP_DEVCAP_PAYLOAD, ==, 1);
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_DEVCTL) &
                    (PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ), ==,
                    2 << 12);
    /*
     * its link x4 at 8 GT/s, below a port of x8 at 16: x4 at 8 GT/s at
     * both ends
     */
    g_assert_cmphex(qpci_config_readl(x.dev, XD_EXP + PCI_EXP_LNKCAP) &
                    (PCI_EXP_LNKCAP_SLS | PCI_EXP_LNKCAP_MLW), ==, 3 | 4 << 4);
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_LNKSTA) &
                    (PCI_EXP_LNKSTA_CLS | PCI_EXP_LNKSTA_NLW), ==, 3 | 4 << 4);
    g_assert_cmphex(qtest_readw(x.qts, ecam_at(0, RP_DEVFN, RP_EXP +
                                               PCI_EXP_LNKSTA)) &
                    (PCI_EXP_LNKSTA_CLS | PCI_EXP_LNKSTA_NLW), ==, 3 | 4 << 4);
    /* nothing in BAR 0 but the registers */
    g_assert_cmphex(xd_rd(&x, 0x800), ==, 0);
    g_assert_cmphex(xd_rd(&x, 0xFFC), ==, 0);
    xd_close(&x);

    /* a port narrower and slower than the function: the port's */
    xd_open_bdf(&x, "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,"
                "addr=10.0,x-speed=5,x-width=2 "
                "-device dw-xdata-pcie,bus=rp0,link-speed=8,link-width=4",
                XD_BDF);
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_LNKSTA) &
                    (PCI_EXP_LNKSTA_CLS | PCI_EXP_LNKSTA_NLW), ==, 2 | 2 << 4);
    xd_close(&x);
}

/*
 * echo 1 > write; cat write: MPS 256, so transfers of 64 dwords, each a
 * TLP of 276 link bytes; the driver's counters and MB/s, and the port's
 * Rx payload over the same time, with the driver's BAR reads beside it.
 */
static void test_write_test(void)
{
    Xd x;
    int64_t t0, t1;
    uint64_t m0, m1, bytes;

    xd_open(&x);
    xd_settings(&x, 256, 512);
    drv_probe(&x);
    tba_start(&x, RX_PAYLOAD);
    m0 = drv_meas(&x, true);
    g_assert_cmpuint(m0, ==, 0);
    t0 = drv_start(&x, true, 256 / 4);
    t1 = xd_step(&x, 100 * MS);
    m1 = drv_meas(&x, true);
    bytes = xfers(t1 - t0, WRITE_WIRE) * 256;
    g_test_message("write: %" PRIu64 " bytes in %" PRId64 " ns", bytes,
                   t1 - t0);
    g_assert_cmpuint(m1 - m0, ==, bytes);
    /* 3.938 x 256 / 276 GB/s: 3483.8 MiB/s over 100 ms (+ 100 us) */
    g_assert_cmpuint(drv_rate(m1, m0, t1 - t0), ==, 3484);
    /* the port: the payload up, beside the 4-byte BAR reads, 16 a unit */
    g_assert_cmpuint(tba_bytes(&x, RX_PAYLOAD), ==,
                     (bytes + 4 * x.reads) / 16 * 16);
    /* down only the driver's register writes */
    g_assert_cmpuint(tba_bytes(&x, TX_PAYLOAD), ==, 4 * x.writes / 16 * 16);
    /* the read counter stayed */
    g_assert_cmpuint(drv_meas(&x, false), ==, 0);
    xd_close(&x);
}

/* echo 1 > read: MRRS 512 (128 dwords), two completions of 256 each */
static void test_read_test(void)
{
    Xd x;
    int64_t t0, t1;
    uint64_t m0, m1, bytes;

    xd_open(&x);
    xd_settings(&x, 256, 512);
    drv_probe(&x);
    m0 = drv_meas(&x, false);
    tba_start(&x, TX_PAYLOAD);
    t0 = drv_start(&x, false, 512 / 4);
    t1 = xd_step(&x, 100 * MS);
    m1 = drv_meas(&x, false);
    bytes = xfers(t1 - t0, READ_WIRE) * 512;
    g_assert_cmpuint(m1 - m0, ==, bytes);
    g_assert_cmpuint(drv_rate(m1, m0, t1 - t0), ==, 3484);
    g_assert_cmpuint(tba_bytes(&x, TX_PAYLOAD), ==,
                     (bytes + 4 * x.writes) / 16 * 16);
    g_assert_cmpuint(tba_bytes(&x, RX_PAYLOAD), ==, 4 * x.reads / 16 * 16);
    /* a write test after it: the read counter stops at the doorbell */
    t0 = drv_start(&x, true, 256 / 4);
    m0 = drv_meas(&x, false);
    xd_step(&x, 10 * MS);
    g_assert_cmpuint(drv_meas(&x, false), ==, m0);
    xd_close(&x);
}

/*
 * echo 0 > write: the burst in progress (of 4097 transfers) ends the
 * test, and STATUS done rises at the last transfer's end, to the ns.
 */
static void test_stop(void)
{
    Xd x;
    int64_t t0, ts, t_end;
    uint64_t done, end;

    xd_open(&x);
    xd_settings(&x, 256, 512);
    drv_meas(&x, true);
    t0 = drv_start(&x, true, 256 / 4);
    ts = xd_step(&x, MS - 100000);
    drv_stop(&x);
    done = xfers(ts - t0, WRITE_WIRE);
    end = (done / BURST_VALUE + 1) * BURST_VALUE;
    /* the first ns at which end transfers of 276 bytes are through */
    t_end = t0 + (end * WRITE_WIRE * RATE_DEN + RATE_NUM - 1) / RATE_NUM;
    g_test_message("%" PRIu64 " transfers at the stop, the end after %"
                   PRIu64 " at %" PRId64 " ns", done, end, t_end);
    g_assert_cmpint(t_end, >, ts);
    xd_step_to(&x, t_end - 1);
    g_assert_cmphex(xd_rd(&x, STATUS), ==, 0);
    xd_step_to(&x, t_end);
    g_assert_cmphex(xd_rd(&x, STATUS), ==, STATUS_DONE);
    xd_step(&x, 10 * MS);
    g_assert_cmpuint(drv_meas(&x, true), ==, end * 256);
    xd_wr(&x, STATUS, 0);
    g_assert_cmphex(xd_rd(&x, STATUS), ==, 0);
    xd_close(&x);
}

/* A system reset mid-test: registers, counters and traffic to 0 */
static void test_reset(void)
{
    Xd x;

    xd_open(&x);
    drv_probe(&x);
    drv_meas(&x, true);
    drv_start(&x, true, 128 / 4);
    xd_step(&x, MS);
    g_assert_cmpuint(drv_meas(&x, true), >, 0);
    qtest_system_reset(x.qts);
    xd_setup(&x, XD_BDF);
    for (uint32_t off = 0; off < 0x110; off += 4) {
        g_assert_cmphex(xd_rd(&x, off), ==, 0);
    }
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_DEVCTL) &
                    (PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ), ==,
                    2 << 12);
    /* no test runs: over 1 ms the port sees the BAR reads alone */
    tba_start(&x, RX_PAYLOAD);
    xd_wr(&x, PERF_CONTROL, PERF_ENABLE);
    xd_step(&x, MS);
    g_assert_cmpuint(xd_rd(&x, WR_CNT_LSB), ==, 0);
    g_assert_cmpuint(tba_bytes(&x, RX_PAYLOAD), ==, 4 * x.reads / 16 * 16);
    xd_close(&x);
}

/*
 * Migrated 10 ms into a write test: the destination counts on from the
 * same doorbell as if nothing had happened.
 */
static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("dw-xdata-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    int64_t t0, tm;
    uint64_t bar;
    Xd x;

    xd_open(&x);
    xd_settings(&x, 256, 512);
    drv_meas(&x, true);
    t0 = drv_start(&x, true, 256 / 4);
    tm = xd_step(&x, 10 * MS);
    bar = x.bar_addr;
    qtest_qmp_assert_success(x.qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(x.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(x.qts);
    xd_close(&x);

    memset(&x, 0, sizeof(x));
    x.qts = qtest_initf("-machine q35 -nodefaults %s -incoming defer",
                        XD_ARGS);
    qtest_qmp_assert_success(x.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(x.qts);
    qtest_qmp_assert_success(x.qts, "{ 'execute': 'cont' }");
    /* the QTest clock starts again at the destination: where it was */
    xd_step_to(&x, tm);
    x.bus = qpci_new_pc(x.qts, NULL);
    x.dev = qpci_device_find(x.bus, XD_BDF);
    g_assert_nonnull(x.dev);
    x.bar = (QPCIBar) { .addr = bar };
    g_assert_cmphex(qpci_config_readl(x.dev, PCI_BASE_ADDRESS_0), ==, bar);
    xd_step(&x, 40 * MS);
    g_assert_cmpuint(drv_meas(&x, true), ==,
                     xfers(tm + 40 * MS - t0, WRITE_WIRE) * 256);
    g_assert_cmphex(xd_rd(&x, BURST_CNT), ==, BURST_REPEAT | BURST_VALUE);
    xd_close(&x);
    unlink(file);
    rmdir(dir);
}

/* On q35's root bus: the function's own link, 2.5 GT/s x1, MPS 128 */
static void test_root_bus(void)
{
    Xd x;
    int64_t t0, t1;

    xd_open_bdf(&x, "-device dw-xdata-pcie,addr=08.0,link-speed=2_5,"
                "link-width=1", QPCI_DEVFN(8, 0));
    g_assert_cmphex(qpci_config_readw(x.dev, XD_EXP + PCI_EXP_LNKSTA) &
                    (PCI_EXP_LNKSTA_CLS | PCI_EXP_LNKSTA_NLW), ==, 1 | 1 << 4);
    drv_meas(&x, true);
    t0 = drv_start(&x, true, 128 / 4);
    t1 = xd_step(&x, MS);
    /* 0.25 link bytes a ns, 148 a transfer of 128 */
    g_assert_cmpuint(drv_meas(&x, true), ==, (t1 - t0) / 4 / 148 * 128);
    xd_close(&x);
}

static void test_props_refused(void)
{
    static const struct {
        const char *dev, *needle;
    } bad[] = {
        { "dw-xdata-pcie,max-payload-size=100", "'max-payload-size'" },
        { "dw-xdata-pcie,max-payload-size=8192", "'max-payload-size'" },
        { "dw-xdata-pcie,link-speed=3", "link-speed" },
        { "dw-xdata-pcie,link-width=3", "link-width" },
        { "pci-bridge,id=b,chassis_nr=1 -device dw-xdata-pcie,bus=b",
          "PCIe bus" },
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_auto(GStrv) extra = g_strsplit(bad[i].dev, " ", -1);
        g_autoptr(GPtrArray) a = g_ptr_array_new();

        g_ptr_array_add(a, (gpointer)"-device");
        for (char **e = extra; *e; e++) {
            g_ptr_array_add(a, *e);
        }
        g_ptr_array_add(a, NULL);
        expect_start_refused((const char *const *)a->pdata, bad[i].needle);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/dw-xdata-pcie/probe-view", test_probe_view);
    qtest_add_func("/dw-xdata-pcie/write-test", test_write_test);
    qtest_add_func("/dw-xdata-pcie/read-test", test_read_test);
    qtest_add_func("/dw-xdata-pcie/stop", test_stop);
    qtest_add_func("/dw-xdata-pcie/reset", test_reset);
    qtest_add_func("/dw-xdata-pcie/migration", test_migration);
    qtest_add_func("/dw-xdata-pcie/root-bus", test_root_bus);
    qtest_add_func("/dw-xdata-pcie/props-refused", test_props_refused);
    return g_test_run();
}
