/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of hisi-ptt: the RCiEP as the hisi_ptt driver probes it (IDs,
 * BAR 2, MSI, LOCATION and DEVICE_RANGE), and a trace in guest memory of
 * the card's TLPs below a covered dwc-pcie-root-port: the CPU's BAR
 * reads (a memory read down, its completion up) and writes, in both
 * record formats, through the port and requester filters; a pattern
 * card's frames as writes and completions at their period; the traced card
 * unplugged mid-trace; migration mid-trace against an unmigrated twin;
 * full buffers with their MSI; the driver's stop sequence, a buffer
 * outside memory, reset while tracing, and the properties refused.
 * Register offsets, record layouts and TLP fields are docs/ptt.md's and
 * the PCIe specification's, worked out here.
 */

#include "ndk-common.h"

#define PTT_ARGS "-device hisi-ptt,id=ptt,addr=08.0,sicl-id=2,core-id=1 " \
    "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=10.0 " \
    "-device ndk-pcie-telemetry,id=card,bus=rp0"
#define PTT_DEVFN       QPCI_DEVFN(8, 0)
#define RP_DEVFN        QPCI_DEVFN(0x10, 0)
#define PTT_BAR         0xD0000000u
#define CARD_BAR        0xE0000000u
#define BUF_RAM         0x300000u
#define BUF_SIZE        0x1000u

#define TRACE_ADDR_SIZE 0x800
#define TRACE_ADDR_LO(i) (0x810 + 8 * (i))
#define TRACE_ADDR_HI(i) (0x814 + 8 * (i))
#define TRACE_CTRL      0x850
#define TRACE_INT_STAT  0x890
#define TRACE_INT_MASK  0x894
#define TRACE_WR_STS    0x8A0
#define TRACE_STS       0x8B0
#define CTRL_EN         1u
#define CTRL_RST        2u
#define CTRL_DIR(d)     ((uint32_t)(d) << 2)
#define CTRL_TYPE(t)    ((uint32_t)(t) << 4)
#define CTRL_8DW        (1u << 14)
#define CTRL_REQ        (1u << 15)
#define CTRL_TARGET(t)  ((uint32_t)(t) << 16)

typedef struct Ptt {
    QTestState *qts;
} Ptt;

static uint32_t cfg_rd(Ptt *p, int bus, unsigned devfn, uint32_t off)
{
    return qtest_readl(p->qts, ecam_at(bus, devfn, off));
}

static uint32_t reg(Ptt *p, uint32_t off)
{
    return qtest_readl(p->qts, PTT_BAR + off);
}

static void set_reg(Ptt *p, uint32_t off, uint32_t v)
{
    qtest_writel(p->qts, PTT_BAR + off, v);
}

static void ptt_open(Ptt *p, const char *extra)
{
    p->qts = qtest_initf("-machine q35 -nodefaults %s %s", PTT_ARGS,
                         extra ? extra : "");
    ecam_on(p->qts);
    /* the PTT's BAR 2 (64-bit), memory and bus mastering */
    ecam_wr(p->qts, 0, PTT_DEVFN, PCI_BASE_ADDRESS_2, PTT_BAR, 4);
    ecam_wr(p->qts, 0, PTT_DEVFN, PCI_BASE_ADDRESS_3, 0, 4);
    ecam_wr(p->qts, 0, PTT_DEVFN, PCI_COMMAND,
            PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    /* the port forwards bus 1 and a window with the card's BAR 0 */
    ecam_wr(p->qts, 0, RP_DEVFN, PCI_SECONDARY_BUS, 1, 1);
    ecam_wr(p->qts, 0, RP_DEVFN, PCI_SUBORDINATE_BUS, 1, 1);
    ecam_wr(p->qts, 0, RP_DEVFN, PCI_MEMORY_BASE, CARD_BAR >> 16, 2);
    ecam_wr(p->qts, 0, RP_DEVFN, PCI_MEMORY_LIMIT,
            (CARD_BAR + 0x00F00000) >> 16, 2);
    ecam_wr(p->qts, 0, RP_DEVFN, PCI_COMMAND,
            PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    ecam_wr(p->qts, 1, 0, PCI_BASE_ADDRESS_0, CARD_BAR, 4);
    ecam_wr(p->qts, 1, 0, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
}

/* The driver's start: idle, reset drain, buffers, status, enable */
static void trace_start(Ptt *p, uint32_t ctrl)
{
    g_assert_cmphex(reg(p, TRACE_STS) & 1, ==, 1);
    set_reg(p, TRACE_CTRL, CTRL_RST);
    g_assert_cmphex(reg(p, TRACE_WR_STS), ==, 0);
    set_reg(p, TRACE_CTRL, 0);
    for (unsigned i = 0; i < 4; i++) {
        set_reg(p, TRACE_ADDR_LO(i), BUF_RAM + i * BUF_SIZE);
        set_reg(p, TRACE_ADDR_HI(i), 0);
        qtest_memset(p->qts, BUF_RAM + i * BUF_SIZE, 0, BUF_SIZE);
    }
    set_reg(p, TRACE_ADDR_SIZE, BUF_SIZE);
    set_reg(p, TRACE_INT_STAT, 0xF);
    set_reg(p, TRACE_INT_MASK, 0);
    set_reg(p, TRACE_CTRL, ctrl | CTRL_EN);
    g_assert_cmphex(reg(p, TRACE_STS) & 1, ==, 0);
}

/* The driver's stop: disable, mask, idle; the bytes of the buffer */
static uint32_t trace_stop(Ptt *p)
{
    set_reg(p, TRACE_CTRL, 0);
    set_reg(p, TRACE_INT_MASK, 0xF);
    g_assert_cmphex(reg(p, TRACE_STS) & 1, ==, 1);
    return reg(p, TRACE_WR_STS) & 0x0FFFFFFF;
}

static uint32_t rec(Ptt *p, uint32_t off)
{
    return qtest_readl(p->qts, BUF_RAM + off);
}

static void test_probe_view(void)
{
    Ptt p;

    ptt_open(&p, NULL);
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, PCI_VENDOR_ID), ==,
                    0xa12e19e5);
    /* BAR 2: 64-bit memory of 4 KiB */
    ecam_wr(p.qts, 0, PTT_DEVFN, PCI_BASE_ADDRESS_2, 0xFFFFFFFF, 4);
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, PCI_BASE_ADDRESS_2), ==,
                    0xFFFFF004);
    ecam_wr(p.qts, 0, PTT_DEVFN, PCI_BASE_ADDRESS_2, PTT_BAR, 4);
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, PCI_BASE_ADDRESS_0), ==, 0);
    /* no INTx pin; MSI with one vector, 64-bit */
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, PCI_INTERRUPT_LINE) >> 8 & 0xFF,
                    ==, 0);
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, 0x50) & 0xFF, ==, PCI_CAP_ID_MSI);
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, 0x50) >> 16 & 0x8E, ==, 0x80);
    /* a root complex integrated endpoint */
    g_assert_cmphex(cfg_rd(&p, 0, PTT_DEVFN, 0x70) >> 16 & 0xF0, ==,
                    PCI_EXP_TYPE_RC_END << 4);
    g_assert_cmphex(reg(&p, 0xFE8), ==, 0x00020001);
    g_assert_cmphex(reg(&p, 0xFE0), ==, 0x00FF0000);
    qtest_quit(p.qts);
}

/*
 * 4DW, outbound and inbound class A completions: a 4-byte read of the
 * card's BAR is MRd (Fmt 000, Type 0, Length 1) down and CplD (Fmt 010,
 * Type 01010, Length 1) up; a write MWr (Fmt 010, Type 0) down.
 */
static void test_trace_4dw(void)
{
    Ptt p;
    uint32_t n, dw0, tag;

    ptt_open(&p, NULL);
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(7) | CTRL_DIR(3));
    qtest_clock_step(p.qts, 1000);
    qtest_readl(p.qts, CARD_BAR + 0x4);
    qtest_clock_step(p.qts, 1000);
    qtest_writel(p.qts, CARD_BAR + 0x8, 0);
    qtest_clock_step(p.qts, 2000000);
    g_assert_cmphex(reg(&p, TRACE_WR_STS), ==, 3 * 16);
    n = trace_stop(&p);
    g_assert_cmpuint(n, ==, 3 * 16);
    /* MRd: Fmt 0, Type 0, SO 1, Length 1; DW1 requester 0, tag, BE 0/F */
    dw0 = rec(&p, 0);
    g_assert_cmphex(dw0 & 0x1FFFFF, ==, 1u << 10 | 1u << 11);
    tag = rec(&p, 4) >> 8 & 0xFF;
    g_assert_cmphex(rec(&p, 4), ==, tag << 8 | 0x0F);
    g_assert_cmphex(rec(&p, 8), ==, CARD_BAR + 4);
    /* the time: 1000 ns after the start */
    g_assert_cmphex(dw0 >> 21, ==, 1000);
    /* CplD: Fmt 2, Type 0x0A, Length 1; completer 01:00.0, 4 bytes;
     * requester 0, the same tag, lower address 4 */
    g_assert_cmphex(rec(&p, 16) & 0x1FFFFF, ==,
                    2u | 0x0Au << 2 | 1u << 10 | 1u << 11);
    g_assert_cmphex(rec(&p, 20), ==, 0x0100u << 16 | 4);
    g_assert_cmphex(rec(&p, 24), ==, tag << 8 | 4);
    /* MWr: Fmt 2, Type 0, the next tag, address 8 */
    g_assert_cmphex(rec(&p, 32) & 0x1FFFFF, ==, 2u | 1u << 10 | 1u << 11);
    g_assert_cmphex(rec(&p, 36), ==, ((tag + 1) & 0xFF) << 8 | 0x0F);
    g_assert_cmphex(rec(&p, 40), ==, CARD_BAR + 8);
    g_assert_cmphex(rec(&p, 32) >> 21, ==, 2000);
    qtest_quit(p.qts);
}

/* 8DW outbound through the requester filter of 01:00.0: MRd and MWr */
static void test_trace_8dw_requester(void)
{
    Ptt p;

    ptt_open(&p, NULL);
    trace_start(&p, CTRL_REQ | CTRL_TARGET(0x0100) | CTRL_TYPE(7) |
                CTRL_DIR(1) | CTRL_8DW);
    qtest_readw(p.qts, CARD_BAR + 0x2);       /* bytes 2-3: BE 0xC */
    qtest_writel(p.qts, CARD_BAR + 0x10, 0);
    g_assert_cmpuint(trace_stop(&p), ==, 2 * 32);
    g_assert_cmphex(rec(&p, 0), ==, 0xFFFFF800);
    g_assert_cmphex(rec(&p, 4), ==, 0);
    g_assert_cmphex(rec(&p, 8), ==, 0x00000001);     /* MRd 3DW, 1 DW */
    g_assert_cmphex(rec(&p, 12) & 0xFF, ==, 0x0C);
    g_assert_cmphex(rec(&p, 16), ==, CARD_BAR);
    g_assert_cmphex(rec(&p, 32 + 8), ==, 0x40000001); /* MWr 3DW */
    g_assert_cmphex(rec(&p, 32 + 16), ==, CARD_BAR + 0x10);
    qtest_quit(p.qts);

    /* another requester, another port: nothing */
    ptt_open(&p, NULL);
    trace_start(&p, CTRL_REQ | CTRL_TARGET(0x0200) | CTRL_TYPE(7) |
                CTRL_DIR(1) | CTRL_8DW);
    qtest_readl(p.qts, CARD_BAR);
    g_assert_cmpuint(trace_stop(&p), ==, 0);
    trace_start(&p, CTRL_TARGET(4) | CTRL_TYPE(7) | CTRL_DIR(1) | CTRL_8DW);
    qtest_readl(p.qts, CARD_BAR);
    g_assert_cmpuint(trace_stop(&p), ==, 0);
    qtest_quit(p.qts);
}

/*
 * A pattern card's frames: an RQ frame of 256 B every 4000 cycles of
 * 400 MHz (10 us) is a memory write up of 240 B (60 DW, 4DW header, the
 * card's requester ID, pages from 64 GiB on); an RC frame of 64 B every
 * 10 us a completion with 52 B down (13 DW) to the card.
 */
#define PAT_ARGS "-object telemetry-traffic-pattern,id=t0," \
    "rq-frame-bytes=256,rq-gap=3996,rq-stall=0,rc-frame-bytes=64," \
    "rc-gap=3999,rc-stall=0 -global ndk-pcie-telemetry.traffic=t0"

static void test_trace_pattern(void)
{
    Ptt p;
    uint32_t n, t0;

    ptt_open(&p, PAT_ARGS);
    /* 8DW, inbound but class A completions, posted: the writes */
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(1) | CTRL_DIR(2) | CTRL_8DW);
    qtest_clock_step(p.qts, 1000000);
    n = trace_stop(&p);
    /* 1 ms: 100 frames, one either side by the phase */
    g_assert_cmpuint(n / 32, >=, 99);
    g_assert_cmpuint(n / 32, <=, 101);
    t0 = rec(&p, 28);
    for (unsigned i = 0; i < n / 32; i++) {
        uint32_t r = i * 32;

        g_assert_cmphex(rec(&p, r), ==, 0xFFFFF800);
        g_assert_cmphex(rec(&p, r + 8), ==, 0x60000000u | 60);
        g_assert_cmphex(rec(&p, r + 12) >> 16, ==, 0x0100);
        g_assert_cmphex(rec(&p, r + 12) & 0xFF, ==, 0xFF);
        g_assert_cmphex(rec(&p, r + 16), ==, 0x10);
        g_assert_cmphex(rec(&p, r + 20), ==, i * 4096);
        g_assert_cmpuint(rec(&p, r + 28) - t0, ==, i * 10000);
    }
    /* 4DW outbound completions: CplD of 13 DW to the card */
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(4) | CTRL_DIR(1));
    qtest_clock_step(p.qts, 1000000);
    n = trace_stop(&p);
    g_assert_cmpuint(n / 16, >=, 99);
    g_assert_cmpuint(n / 16, <=, 101);
    g_assert_cmphex(rec(&p, 0) & 0x1FFFFF, ==,
                    2u | 0x0Au << 2 | 1u << 10 | 13u << 11);
    g_assert_cmphex(rec(&p, 4), ==, 52);
    g_assert_cmphex(rec(&p, 8) >> 16, ==, 0x0100);
    qtest_quit(p.qts);
}

/*
 * The traced card unplugged by its slot's power controller (native
 * hotplug) in the middle of a trace: what the PTT took before stays, the
 * trace goes on without it, QEMU lives on.
 */
static void test_unplug(void)
{
    Ptt p;
    uint32_t n, sltctl, before;

    ptt_open(&p, PAT_ARGS
             " -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off");
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(1) | CTRL_DIR(2) | CTRL_8DW);
    qtest_clock_step(p.qts, 500000);
    before = reg(&p, TRACE_WR_STS) / 32;
    g_assert_cmpuint(before, >=, 49);
    sltctl = cfg_rd(&p, 0, RP_DEVFN, 0x70 + PCI_EXP_SLTCTL) & 0xFFFF;
    sltctl &= ~PCI_EXP_SLTCTL_PIC;
    ecam_wr(p.qts, 0, RP_DEVFN, 0x70 + PCI_EXP_SLTCTL,
            sltctl | PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF, 2);
    g_assert_cmphex(cfg_rd(&p, 0, RP_DEVFN, 0x70 + PCI_EXP_SLTSTA) &
                    PCI_EXP_SLTSTA_PDS, ==, 0);
    qtest_clock_step(p.qts, 3000000);
    n = trace_stop(&p) / 32;
    g_assert_cmpuint(n, >=, before);
    g_assert_cmpuint(n, <=, before + 1);
    g_assert_true(qtest_probe_child(p.qts));
    qtest_quit(p.qts);
}

/*
 * Migrated in the middle of a trace of a pattern card: the destination
 * writes on where the source stopped, the buffers' contents with it; the
 * trace ends with the records of an unmigrated twin (the frame that was
 * open at the migration aside).
 */
static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("hisi-ptt-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint32_t twin, got, first;
    Ptt p;

    ptt_open(&p, PAT_ARGS);
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(1) | CTRL_DIR(2) | CTRL_8DW);
    qtest_clock_step(p.qts, 1500000);
    twin = trace_stop(&p) / 32 + 128 * __builtin_popcount(
        reg(&p, TRACE_INT_STAT));
    qtest_quit(p.qts);

    ptt_open(&p, PAT_ARGS);
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(1) | CTRL_DIR(2) | CTRL_8DW);
    qtest_clock_step(p.qts, 500000);
    first = rec(&p, 28);
    qtest_qmp_assert_success(p.qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(p.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(p.qts);
    qtest_quit(p.qts);
    p.qts = qtest_initf("-machine q35 -nodefaults %s %s -incoming defer",
                        PTT_ARGS, PAT_ARGS);
    qtest_qmp_assert_success(p.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(p.qts);
    qtest_qmp_assert_success(p.qts, "{ 'execute': 'cont' }");
    /* the QTest clock starts again at the destination: where it was */
    g_assert_cmpint(qtest_clock_set(p.qts, 500000), ==, 500000);
    g_assert_cmphex(reg(&p, TRACE_STS) & 1, ==, 0);
    g_assert_cmphex(rec(&p, 28), ==, first);
    qtest_clock_step(p.qts, 1000000);
    got = trace_stop(&p) / 32 + 128 * __builtin_popcount(
        reg(&p, TRACE_INT_STAT));
    g_test_message("records: %u, twin %u", got, twin);
    g_assert_cmpuint(got + 1, >=, twin);
    g_assert_cmpuint(got, <=, twin);
    qtest_quit(p.qts);
    unlink(file);
    rmdir(dir);
}

/* Full buffers: status bits, and the MSI into RAM */
static void test_buffers_and_msi(void)
{
    Ptt p;

    ptt_open(&p, NULL);
    ecam_wr(p.qts, 0, PTT_DEVFN, 0x50 + PCI_MSI_ADDRESS_LO, 0x280000, 4);
    ecam_wr(p.qts, 0, PTT_DEVFN, 0x50 + PCI_MSI_ADDRESS_HI, 0, 4);
    ecam_wr(p.qts, 0, PTT_DEVFN, 0x50 + PCI_MSI_DATA_64, 0x77, 2);
    ecam_wr(p.qts, 0, PTT_DEVFN, 0x50 + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE,
            2);
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(7) | CTRL_DIR(3));
    /* 0x1000 / 16 = 256 records fill a buffer: 128 reads */
    for (unsigned i = 0; i < 130; i++) {
        qtest_readl(p.qts, CARD_BAR);
    }
    /* (the trace takes what crossed before the instant it is asked at) */
    qtest_clock_step(p.qts, 10);
    g_assert_cmphex(reg(&p, TRACE_INT_STAT), ==, 1);
    g_assert_cmphex(qtest_readl(p.qts, 0x280000), ==, 0x77);
    g_assert_cmphex(reg(&p, TRACE_WR_STS), ==, 4 * 16);
    /* reset while tracing: idle, registers 0 (BAR set up again) */
    qtest_system_reset(p.qts);
    ecam_on(p.qts);
    ecam_wr(p.qts, 0, PTT_DEVFN, PCI_BASE_ADDRESS_2, PTT_BAR, 4);
    ecam_wr(p.qts, 0, PTT_DEVFN, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
    g_assert_cmphex(reg(&p, TRACE_STS) & 1, ==, 1);
    g_assert_cmphex(reg(&p, TRACE_CTRL), ==, 0);
    g_assert_cmphex(reg(&p, TRACE_INT_STAT), ==, 0);
    g_assert_cmphex(reg(&p, TRACE_WR_STS), ==, 0);
    qtest_quit(p.qts);
}

/* A buffer where no memory is: the trace halts, nothing is written */
static void test_bad_buffer(void)
{
    Ptt p;

    ptt_open(&p, NULL);
    trace_start(&p, CTRL_TARGET(1) | CTRL_TYPE(7) | CTRL_DIR(3));
    set_reg(&p, TRACE_ADDR_LO(0), 0xFED00000u);      /* no RAM there */
    set_reg(&p, TRACE_ADDR_HI(0), 0x100);
    qtest_readl(p.qts, CARD_BAR);
    qtest_clock_step(p.qts, 10);
    g_assert_cmphex(reg(&p, TRACE_STS) & 1, ==, 1);
    g_assert_cmphex(reg(&p, TRACE_WR_STS), ==, 0);
    g_assert_true(qtest_probe_child(p.qts));
    qtest_quit(p.qts);
}

static void test_props_refused(void)
{
    static const struct {
        const char *dev, *needle;
    } bad[] = {
        { "hisi-ptt,sicl-id=0x10000", "'sicl-id'" },
        { "hisi-ptt,range-lower=0x20,range-upper=0x10", "lower" },
        { "hisi-ptt,max-bytes-per-s=10", "'max-bytes-per-s'" },
        { "pcie-root-port,id=rp,chassis=1,slot=1 -device hisi-ptt,bus=rp",
          "root bus" },
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_auto(GStrv) extra = g_strsplit(bad[i].dev, " ", -1);
        GPtrArray *a = g_ptr_array_new();

        g_ptr_array_add(a, (gpointer)"-device");
        for (char **e = extra; *e; e++) {
            g_ptr_array_add(a, *e);
        }
        g_ptr_array_add(a, NULL);
        expect_start_refused((const char *const *)a->pdata, bad[i].needle);
        g_ptr_array_free(a, true);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/hisi-ptt/probe-view", test_probe_view);
    qtest_add_func("/hisi-ptt/trace-4dw", test_trace_4dw);
    qtest_add_func("/hisi-ptt/trace-8dw-requester", test_trace_8dw_requester);
    qtest_add_func("/hisi-ptt/trace-pattern", test_trace_pattern);
    qtest_add_func("/hisi-ptt/unplug", test_unplug);
    qtest_add_func("/hisi-ptt/migration", test_migration);
    qtest_add_func("/hisi-ptt/buffers-msi", test_buffers_and_msi);
    qtest_add_func("/hisi-ptt/bad-buffer", test_bad_buffer);
    qtest_add_func("/hisi-ptt/props-refused", test_props_refused);
    return g_test_run();
}
