/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of dwc-pcie-root-port: a q35 machine with the root port (and a
 * function below it or none), its configuration space through ECAM as
 * Linux's dwc_pcie_pmu reads it. The RAS DES capability found the way the
 * driver finds it, its registers, the time-based analysis of the link's
 * LTSSM time against the virtual clock (link down without a function
 * below, up with one, functions plugged and unplugged under a run, timed
 * runs), lane events injected with qom-set, reset, migration, and the
 * properties refused. Register offsets and fields are the driver's, not
 * the model's header.
 *
 * Payload counts come from the card below (pcie-link-traffic): a pattern
 * card against its frames' closed form, the DMA engine's background
 * transfers against their bytes, and the guest's BAR accesses.
 */

#include "ndk-common.h"

/* The driver's view: offsets from the capability and their fields */
#define VSEC_RAS_DES_ID         0x02
#define EVENT_CNT_CTL           0x08
#define  CNT_EVENT_SEL(e)       ((uint32_t)(e) << 16)
#define  CNT_LANE_SEL(l)        ((uint32_t)(l) << 8)
#define  CNT_STATUS             (1u << 7)
#define  CNT_ENABLE_MASK        (7u << 2)
#define  PER_EVENT_OFF          (1u << 2)
#define  PER_EVENT_ON           (3u << 2)
#define  EVENT_PER_CLEAR        1u
#define EVENT_CNT_DATA          0x0C
#define TIME_BASED_ANAL_CTL     0x10
#define  REPORT_SEL(r)          ((uint32_t)(r) << 24)
#define  DURATION_SEL(d)        ((uint32_t)(d) << 8)
#define  TIMER_START            1u
#define TIME_BASED_DATA_LOW     0x14
#define TIME_BASED_DATA_HIGH    0x18

/* Time-based events and durations */
#define EV_ONE_CYCLE            0x00
#define EV_L0                   0x03
#define EV_CFG_RCVRY            0x07
#define EV_RX_PAYLOAD           0x21
#define DUR_MANUAL              0x00
#define DUR_1MS                 0x01
#define DUR_4US                 0xFF

/* The model's choices (docs/dwc-root-port.md) */
#define RAS_DES_AT              0x200
#define RAS_DES_LEN             0x100

#define RP_ARGS "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0"
#define RP_DEVFN                QPCI_DEVFN(2, 0)
/* a function below that reports nothing: the upstream port of a switch */
#define SWITCH_BELOW            "-device x3130-upstream,id=up0,bus=rp0"
/* native PCIe hotplug on q35's root ports, instead of ACPI's */
#define NATIVE_HOTPLUG \
    "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off"

typedef struct Rp {
    QTestState *qts;
    unsigned devfn;
    uint32_t cap;               /* the capability, found as the driver does */
} Rp;

/* ------------------------------------------------------------------ */
/* Configuration space through q35's ECAM                             */

static uint64_t cfg_addr(const Rp *rp, uint32_t off)
{
    return ecam_at(0, rp->devfn, off);
}

static uint32_t rd32(const Rp *rp, uint32_t off)
{
    return qtest_readl(rp->qts, cfg_addr(rp, off));
}

static uint16_t rd16(const Rp *rp, uint32_t off)
{
    return qtest_readw(rp->qts, cfg_addr(rp, off));
}

static uint8_t rd8(const Rp *rp, uint32_t off)
{
    return qtest_readb(rp->qts, cfg_addr(rp, off));
}

static void wr32(const Rp *rp, uint32_t off, uint32_t v)
{
    qtest_writel(rp->qts, cfg_addr(rp, off), v);
}

static void wr16(const Rp *rp, uint32_t off, uint16_t v)
{
    qtest_writew(rp->qts, cfg_addr(rp, off), v);
}

static void wr8(const Rp *rp, uint32_t off, uint8_t v)
{
    qtest_writeb(rp->qts, cfg_addr(rp, off), v);
}

/* Registers of the capability */
static uint32_t reg(const Rp *rp, uint32_t off)
{
    return rd32(rp, rp->cap + off);
}

static void set_reg(const Rp *rp, uint32_t off, uint32_t v)
{
    wr32(rp, rp->cap + off, v);
}

/*
 * pci_find_vsec_capability() as Linux has it: the function's vendor must
 * be the one asked for; then the first vendor-specific extended
 * capability (ID 0x000b) whose VSEC ID matches. 0 if none.
 */
static uint32_t find_vsec(const Rp *rp, uint16_t vendor, uint16_t id)
{
    uint32_t off = 0x100;

    if (rd16(rp, PCI_VENDOR_ID) != vendor) {
        return 0;
    }
    for (unsigned n = 0; off && n < (4096 - 256) / 8; n++) {
        uint32_t h = rd32(rp, off);

        if (h == 0 || h == 0xFFFFFFFF) {
            return 0;
        }
        if ((h & 0xFFFF) == PCI_EXT_CAP_ID_VNDR &&
            (rd32(rp, off + 4) & 0xFFFF) == id) {
            return off;
        }
        off = h >> 20;
        g_assert(off == 0 || (off >= 0x100 && !(off & 3)));
    }
    return 0;
}

/* The port at devfn on a machine started with args, ECAM on */
static void rp_open_at(Rp *rp, unsigned devfn, const char *args)
{
    rp->qts = qtest_initf("-machine q35 -nodefaults %s", args);
    rp->devfn = devfn;
    ecam_on(rp->qts);
    rp->cap = find_vsec(rp, rd16(rp, PCI_VENDOR_ID), VSEC_RAS_DES_ID);
    g_assert_cmphex(rp->cap, ==, RAS_DES_AT);
}

static void rp_open(Rp *rp, const char *extra)
{
    g_autofree char *args = g_strdup_printf("%s %s", RP_ARGS, extra);

    rp_open_at(rp, RP_DEVFN, args);
}

static void vstep(const Rp *rp, int64_t ns)
{
    qtest_clock_step(rp->qts, ns);
}

/* The driver's read: high, low, high again until the high stays */
static uint64_t tba_read(const Rp *rp)
{
    uint32_t hi = reg(rp, TIME_BASED_DATA_HIGH), lo, ss;

    do {
        ss = hi;
        lo = reg(rp, TIME_BASED_DATA_LOW);
        hi = reg(rp, TIME_BASED_DATA_HIGH);
    } while (hi != ss);
    return (uint64_t)hi << 32 | lo;
}

/* The driver's add of a time-based event: report, manual, start */
static void tba_add(const Rp *rp, uint32_t event)
{
    set_reg(rp, TIME_BASED_ANAL_CTL, REPORT_SEL(event) |
            DURATION_SEL(DUR_MANUAL) | TIMER_START);
}

/* Another report select, the run going on (the start bit written as 1) */
static uint64_t tba_report(const Rp *rp, uint32_t event)
{
    set_reg(rp, TIME_BASED_ANAL_CTL, REPORT_SEL(event) | TIMER_START);
    return tba_read(rp);
}

/* The driver's stop: clear the start bit, keep the rest */
static void tba_stop(const Rp *rp)
{
    set_reg(rp, TIME_BASED_ANAL_CTL,
            reg(rp, TIME_BASED_ANAL_CTL) & ~TIMER_START);
}

static void lane_select(const Rp *rp, uint32_t event, unsigned lane,
                        uint32_t cmd)
{
    set_reg(rp, EVENT_CNT_CTL, CNT_EVENT_SEL(event) | CNT_LANE_SEL(lane) |
            cmd);
}

static char *lane_error(const Rp *rp, const char *text)
{
    return qom_set_error(qom_set_str(rp->qts, "/machine/peripheral/rp0",
                                     "lane-error", text));
}

static void lane_error_ok(const Rp *rp, const char *text)
{
    g_autofree char *err = lane_error(rp, text);

    g_assert_cmpstr(err, ==, "");
}

/* ------------------------------------------------------------------ */
/* Identity and capabilities                                          */

static void check_ext_caps(const Rp *rp)
{
    static const struct {
        uint16_t id;
        uint32_t at;
    } chain[] = {
        { PCI_EXT_CAP_ID_ERR, 0x100 }, { PCI_EXT_CAP_ID_ACS, 0x148 },
        { PCI_EXT_CAP_ID_VNDR, RAS_DES_AT },
    };
    uint32_t off = 0x100, h = 0;

    for (unsigned i = 0; i < G_N_ELEMENTS(chain); i++) {
        g_assert_cmphex(off, ==, chain[i].at);
        h = rd32(rp, off);
        g_assert_cmphex(h & 0xFFFF, ==, chain[i].id);
        off = h >> 20;
    }
    g_assert_cmphex(off, ==, 0);
    /* extended capability version 1 */
    g_assert_cmphex(h >> 16 & 0xF, ==, 1);
    /* VSEC header: ID 2, revision 4 (the driver wants 4), length 0x100 */
    g_assert_cmphex(rd32(rp, RAS_DES_AT + 4), ==,
                    VSEC_RAS_DES_ID | 4 << 16 | RAS_DES_LEN << 20);
}

static void test_identity(void)
{
    uint8_t exp = 0, ssvid = 0, pos;
    Rp rp;

    rp_open(&rp, "");
    g_assert_cmphex(rd16(&rp, PCI_VENDOR_ID), ==, 0x1ded);
    g_assert_cmphex(rd16(&rp, PCI_DEVICE_ID), ==, 0x8000);
    g_assert_cmphex(rd8(&rp, PCI_REVISION_ID), ==, 0x01);
    g_assert_cmphex(rd16(&rp, PCI_CLASS_DEVICE), ==, 0x0604);
    g_assert_cmphex(rd8(&rp, PCI_HEADER_TYPE) & 0x7F, ==,
                    PCI_HEADER_TYPE_BRIDGE);
    /* the PCIe capability: a root port, Gen4 x16 in Link Capabilities */
    for (pos = rd8(&rp, PCI_CAPABILITY_LIST); pos;
         pos = rd8(&rp, pos + 1)) {
        if (rd8(&rp, pos) == PCI_CAP_ID_SSVID) {
            ssvid = pos;
        }
        if (rd8(&rp, pos) == PCI_CAP_ID_EXP) {
            exp = pos;
        }
    }
    g_assert_cmphex(exp, ==, 0x70);
    g_assert_cmphex(rd16(&rp, exp + PCI_EXP_FLAGS) & PCI_EXP_FLAGS_TYPE, ==,
                    PCI_EXP_TYPE_ROOT_PORT << 4);
    g_assert_cmphex(rd32(&rp, exp + PCI_EXP_LNKCAP) & PCI_EXP_LNKCAP_MLW,
                    ==, 16 << 4);
    g_assert_cmphex(rd32(&rp, exp + PCI_EXP_LNKCAP) & PCI_EXP_LNKCAP_SLS,
                    ==, 4);
    g_assert_cmphex(ssvid, !=, 0);
    g_assert_cmphex(rd16(&rp, ssvid + 4), ==, 0x1ded);

    check_ext_caps(&rp);
    g_assert_cmphex(find_vsec(&rp, 0x1ded, VSEC_RAS_DES_ID), ==, RAS_DES_AT);
    /* another VSEC ID is not there; the headers are read-only */
    g_assert_cmphex(find_vsec(&rp, 0x1ded, 0x01), ==, 0);
    wr32(&rp, RAS_DES_AT, 0xFFFFFFFF);
    wr32(&rp, RAS_DES_AT + 4, 0);
    wr16(&rp, RAS_DES_AT + 2, 0);
    check_ext_caps(&rp);
    qtest_quit(rp.qts);

    /* Qualcomm's ID: found by later kernels' lists, not by 6.12's */
    rp_open(&rp, "-global dwc-pcie-root-port.vendor-id=0x17cb "
                 "-global dwc-pcie-root-port.device-id=0x0110 "
                 "-global dwc-pcie-root-port.x-width=4");
    g_assert_cmphex(rd32(&rp, PCI_VENDOR_ID), ==, 0x011017cb);
    g_assert_cmphex(find_vsec(&rp, 0x1ded, VSEC_RAS_DES_ID), ==, 0);
    g_assert_cmphex(find_vsec(&rp, 0x17cb, VSEC_RAS_DES_ID), ==, RAS_DES_AT);
    g_assert_cmphex(rd32(&rp, 0x70 + PCI_EXP_LNKCAP) & PCI_EXP_LNKCAP_MLW,
                    ==, 4 << 4);
    check_ext_caps(&rp);
    qtest_quit(rp.qts);
}

static void test_props_refused(void)
{
    static const struct {
        const char *dev, *needle;
    } bad[] = {
        { "dwc-pcie-root-port,chassis=1,slot=1,vendor-id=0", "'vendor-id'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,vendor-id=0xffff",
          "'vendor-id'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,device-id=0x10000",
          "'device-id'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,x-width=32", "'x-width'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,lane-error=lane=0,event=0x600",
          "qom-set" },
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *extra[] = { "-device", bad[i].dev, NULL };

        expect_start_refused(extra, bad[i].needle);
    }
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

static void test_registers(void)
{
    Rp rp;

    rp_open(&rp, "");
    for (uint32_t off = 8; off < RAS_DES_LEN; off += 4) {
        g_assert_cmphex(reg(&rp, off), ==, 0);
    }
    /* select fields read back; the commands and reserved bits read 0 */
    set_reg(&rp, EVENT_CNT_CTL, 0xFFFFFFFF);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==, 0x0FFF0F00);
    /* every counter is on now: the status of a real one says so */
    lane_select(&rp, 0x70C, 2, 0);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==,
                    CNT_EVENT_SEL(0x70C) | CNT_LANE_SEL(2) | CNT_STATUS);
    lane_select(&rp, 0x70C, 2, PER_EVENT_OFF);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==,
                    CNT_EVENT_SEL(0x70C) | CNT_LANE_SEL(2));
    /* all off, all cleared */
    set_reg(&rp, EVENT_CNT_CTL, 5u << 2 | 3u);
    lane_select(&rp, 0x713, 5, 0);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==,
                    CNT_EVENT_SEL(0x713) | CNT_LANE_SEL(5));
    /* the data registers are read-only */
    set_reg(&rp, EVENT_CNT_DATA, 0x12345678);
    set_reg(&rp, TIME_BASED_DATA_LOW, 0x12345678);
    set_reg(&rp, TIME_BASED_DATA_HIGH, 0x12345678);
    g_assert_cmphex(reg(&rp, EVENT_CNT_DATA), ==, 0);
    g_assert_cmphex(reg(&rp, TIME_BASED_DATA_LOW), ==, 0);
    g_assert_cmphex(reg(&rp, TIME_BASED_DATA_HIGH), ==, 0);
    /* the time-based control reads back what was written */
    set_reg(&rp, TIME_BASED_ANAL_CTL, 0xFFFFFFFE);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==, 0xFF00FF00);
    set_reg(&rp, TIME_BASED_ANAL_CTL, 0);
    /* past the modelled registers: zeros, writes ignored */
    for (uint32_t off = 0x1C; off < RAS_DES_LEN; off += 4) {
        set_reg(&rp, off, 0xFFFFFFFF);
        g_assert_cmphex(reg(&rp, off), ==, 0);
    }

    /* bytes and words, as a guest may write them */
    wr8(&rp, rp.cap + EVENT_CNT_CTL + 1, 0x05);
    wr16(&rp, rp.cap + EVENT_CNT_CTL + 2, 0x0713);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==,
                    CNT_EVENT_SEL(0x713) | CNT_LANE_SEL(5));
    wr8(&rp, rp.cap + EVENT_CNT_CTL, PER_EVENT_ON);
    g_assert_cmphex(rd8(&rp, rp.cap + EVENT_CNT_CTL), ==, CNT_STATUS);
    g_assert_cmphex(rd16(&rp, rp.cap + EVENT_CNT_CTL + 2), ==, 0x0713);
    lane_error_ok(&rp, "lane=5,event=rx_message_tlp,count=0x1234");
    g_assert_cmphex(rd16(&rp, rp.cap + EVENT_CNT_DATA), ==, 0x1234);
    g_assert_cmphex(rd8(&rp, rp.cap + EVENT_CNT_DATA + 1), ==, 0x12);
    /* the report select alone, by its byte */
    wr8(&rp, rp.cap + TIME_BASED_ANAL_CTL + 3, EV_L0);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==, REPORT_SEL(EV_L0));
    qtest_quit(rp.qts);
}

/* ------------------------------------------------------------------ */
/* LTSSM time against the virtual clock                               */

#define RUN_NS          1234567

static void test_tba_no_function(void)
{
    Rp rp;

    rp_open(&rp, "");
    vstep(&rp, 5000);
    tba_add(&rp, EV_L0);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==,
                    REPORT_SEL(EV_L0) | TIMER_START);
    vstep(&rp, RUN_NS);
    /* nothing below: the link never left detect */
    g_assert_cmpuint(tba_read(&rp), ==, 0);
    g_assert_cmpuint(tba_report(&rp, EV_CFG_RCVRY), ==, RUN_NS);
    g_assert_cmpuint(tba_report(&rp, EV_ONE_CYCLE), ==, RUN_NS);
    g_assert_cmpuint(tba_report(&rp, EV_RX_PAYLOAD), ==, 0);
    g_assert_cmpuint(tba_report(&rp, 0x04), ==, 0);        /* L1 */
    qtest_quit(rp.qts);
}

static void test_tba_function(void)
{
    uint64_t l0, rcvry;
    Rp rp;

    /* a function that reports no traffic: the link is up all the time */
    rp_open(&rp, SWITCH_BELOW);
    vstep(&rp, 5000);
    tba_add(&rp, EV_L0);
    vstep(&rp, RUN_NS);
    g_assert_cmpuint(tba_read(&rp), ==, RUN_NS);
    g_assert_cmpuint(tba_report(&rp, EV_CFG_RCVRY), ==, 0);
    /* the driver's start (the bit set again) goes on with the run */
    set_reg(&rp, TIME_BASED_ANAL_CTL,
            reg(&rp, TIME_BASED_ANAL_CTL) | TIMER_START);
    vstep(&rp, 1000);
    g_assert_cmpuint(tba_report(&rp, EV_L0), ==, RUN_NS + 1000);
    /* the driver's stop: the result stays */
    tba_stop(&rp);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==, REPORT_SEL(EV_L0));
    vstep(&rp, 77777);
    g_assert_cmpuint(tba_read(&rp), ==, RUN_NS + 1000);
    /* the next add starts from 0 */
    tba_add(&rp, EV_L0);
    g_assert_cmpuint(tba_read(&rp), ==, 0);
    vstep(&rp, 10);
    g_assert_cmpuint(tba_read(&rp), ==, 10);
    qtest_quit(rp.qts);

    /*
     * The card below: whatever it says of its link, up and down time add
     * up to the run's time, and most of a millisecond is up
     */
    rp_open(&rp, "-device ndk-pcie-telemetry,bus=rp0");
    vstep(&rp, 100000);
    tba_add(&rp, EV_L0);
    vstep(&rp, RUN_NS);
    l0 = tba_read(&rp);
    rcvry = tba_report(&rp, EV_CFG_RCVRY);
    g_test_message("card below: L0 %" PRIu64 " ns, down %" PRIu64 " ns", l0,
                   rcvry);
    g_assert_cmpuint(l0 + rcvry, ==, RUN_NS);
    g_assert_cmpuint(l0, >, RUN_NS / 2);
    qtest_quit(rp.qts);
}

/* A function plugged under a run: the link comes up then */
static void test_tba_hotplug(void)
{
    Rp rp;

    rp_open(&rp, "");
    tba_add(&rp, EV_CFG_RCVRY);
    vstep(&rp, 100000);
    qtest_qmp_device_add(rp.qts, "x3130-upstream", "up0", "{'bus': 'rp0'}");
    vstep(&rp, 250000);
    g_assert_cmpuint(tba_read(&rp), ==, 100000);
    g_assert_cmpuint(tba_report(&rp, EV_L0), ==, 250000);
    qtest_quit(rp.qts);
}

/* Unplugged by the slot's power controller (native hotplug) */
static void test_tba_unplug(void)
{
    uint16_t sltctl;
    Rp rp;

    rp_open(&rp, NATIVE_HOTPLUG " " SWITCH_BELOW);
    g_assert_cmphex(rd16(&rp, 0x70 + PCI_EXP_SLTSTA) & PCI_EXP_SLTSTA_PDS,
                    ==, PCI_EXP_SLTSTA_PDS);
    tba_add(&rp, EV_L0);
    vstep(&rp, 300000);
    sltctl = rd16(&rp, 0x70 + PCI_EXP_SLTCTL);
    sltctl &= ~PCI_EXP_SLTCTL_PIC;
    wr16(&rp, 0x70 + PCI_EXP_SLTCTL,
         sltctl | PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF);
    g_assert_cmphex(rd16(&rp, 0x70 + PCI_EXP_SLTSTA) & PCI_EXP_SLTSTA_PDS,
                    ==, 0);
    vstep(&rp, 200000);
    g_assert_cmpuint(tba_read(&rp), ==, 300000);
    g_assert_cmpuint(tba_report(&rp, EV_CFG_RCVRY), ==, 200000);
    g_assert_cmpuint(tba_report(&rp, EV_ONE_CYCLE), ==, 500000);
    qtest_quit(rp.qts);
}

/* Timed runs end by themselves, on the virtual clock */
static void test_tba_timed(void)
{
    Rp rp;

    rp_open(&rp, SWITCH_BELOW);
    set_reg(&rp, TIME_BASED_ANAL_CTL, REPORT_SEL(EV_ONE_CYCLE) |
            DURATION_SEL(DUR_4US) | TIMER_START);
    vstep(&rp, 3999);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==,
                    REPORT_SEL(EV_ONE_CYCLE) | DURATION_SEL(DUR_4US) |
                    TIMER_START);
    g_assert_cmpuint(tba_read(&rp), ==, 3999);
    vstep(&rp, 1);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL), ==,
                    REPORT_SEL(EV_ONE_CYCLE) | DURATION_SEL(DUR_4US));
    g_assert_cmpuint(tba_read(&rp), ==, 4000);
    vstep(&rp, 100000);
    g_assert_cmpuint(tba_read(&rp), ==, 4000);

    /* 1 ms of L0, read long after: the time of the run */
    set_reg(&rp, TIME_BASED_ANAL_CTL, REPORT_SEL(EV_L0) |
            DURATION_SEL(DUR_1MS) | TIMER_START);
    vstep(&rp, 5000000);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL) & TIMER_START, ==, 0);
    g_assert_cmpuint(tba_read(&rp), ==, 1000000);

    /* a reserved duration runs until stopped */
    set_reg(&rp, TIME_BASED_ANAL_CTL, REPORT_SEL(EV_ONE_CYCLE) |
            DURATION_SEL(0x07) | TIMER_START);
    vstep(&rp, 50000000);
    g_assert_cmphex(reg(&rp, TIME_BASED_ANAL_CTL) & TIMER_START, ==,
                    TIMER_START);
    g_assert_cmpuint(tba_read(&rp), ==, 50000000);
    qtest_quit(rp.qts);
}

/* Past 2^32 ns the high word counts; the driver's order reads it whole */
static void test_tba_64bit(void)
{
    const uint64_t run = 5000000000ull;
    Rp rp;

    rp_open(&rp, "");
    tba_add(&rp, EV_ONE_CYCLE);
    vstep(&rp, run);
    g_assert_cmphex(reg(&rp, TIME_BASED_DATA_HIGH), ==, 1);
    g_assert_cmphex(reg(&rp, TIME_BASED_DATA_LOW), ==, (uint32_t)run);
    g_assert_cmpuint(tba_read(&rp), ==, run);
    qtest_quit(rp.qts);
}

/* ------------------------------------------------------------------ */
/* Lane events                                                        */

static void test_lane_error(void)
{
    g_autofree char *err = NULL, *got = NULL;
    uint32_t v;
    Rp rp;

    /* nothing below: the port's own width (x8) */
    rp_open(&rp, "-global dwc-pcie-root-port.x-width=8");
    lane_error_ok(&rp, "lane=7,event=tx_ack_dllp");
    err = lane_error(&rp, "lane=8,event=tx_ack_dllp");
    g_assert_nonnull(strstr(err, "lane 8 is not below the link's width x8"));
    g_assert_nonnull(strstr(err, "'rp0'"));
    g_free(err);
    err = lane_error(&rp, "lane=1,event=rx_memory_reed");
    g_assert_nonnull(strstr(err, "no lane event 'rx_memory_reed'"));
    g_free(err);
    err = lane_error(&rp, "lane=1");
    g_assert_nonnull(strstr(err, "event missing"));
    got = qom_get_str(rp.qts, "/machine/peripheral/rp0", "lane-error");
    g_assert_cmpstr(got, ==, "lane=7,event=tx_ack_dllp,count=1");
    qtest_quit(rp.qts);

    /* an x4 card below an x16 port: the link trains to x4 */
    rp_open(&rp, "-device ndk-pcie-telemetry,bus=rp0,link-width=4");
    g_assert_cmphex(rd16(&rp, 0x70 + PCI_EXP_LNKSTA) & PCI_EXP_LNKSTA_NLW,
                    ==, 4 << PCI_EXP_LNKSTA_NLW_SHIFT);
    g_free(err);
    err = lane_error(&rp, "lane=4,event=rx_memory_read");
    g_assert_nonnull(strstr(err, "lane 4 is not below the link's width x4"));

    /*
     * Later kernels: start writes the selection with "per event on" and
     * "per clear"; a read selects with "on", reads, clears. Only the
     * counter that is on counts.
     */
    lane_select(&rp, 0x70C, 3, PER_EVENT_ON | EVENT_PER_CLEAR);
    lane_error_ok(&rp, "lane=3,event=rx_memory_read,count=5");
    lane_error_ok(&rp, "lane=2,event=rx_memory_read,count=9");
    lane_error_ok(&rp, "lane=3,event=0x70b,count=9");
    lane_select(&rp, 0x70C, 3, PER_EVENT_ON);
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 5);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL) & CNT_STATUS, ==, CNT_STATUS);
    lane_select(&rp, 0x70C, 3, PER_EVENT_ON | EVENT_PER_CLEAR);
    lane_error_ok(&rp, "event=rx_memory_read,lane=3,count=2");
    lane_select(&rp, 0x70C, 3, PER_EVENT_ON);
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 2);
    lane_select(&rp, 0x70C, 2, PER_EVENT_ON);
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 0);
    lane_select(&rp, 0x70B, 3, 0);
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 0);

    /*
     * Linux 6.12: add selects with "per event off" and "per clear";
     * start and stop OR 0x3 and 0x1 into the register unshifted, which
     * clears the counters and leaves them off: it reads 0.
     */
    lane_select(&rp, 0x602, 1, PER_EVENT_OFF | EVENT_PER_CLEAR);
    v = reg(&rp, EVENT_CNT_CTL);
    set_reg(&rp, EVENT_CNT_CTL, (v & ~CNT_ENABLE_MASK) | 0x3);
    lane_error_ok(&rp, "lane=1,event=rx_ack_dllp,count=4");
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 0);
    g_assert_cmphex(reg(&rp, EVENT_CNT_CTL), ==,
                    CNT_EVENT_SEL(0x602) | CNT_LANE_SEL(1));
    qtest_quit(rp.qts);
}

/* ------------------------------------------------------------------ */
/* Reset                                                              */

static void test_reset(void)
{
    Rp rp;

    rp_open(&rp, SWITCH_BELOW);
    lane_select(&rp, 0x700, 0, PER_EVENT_ON);
    lane_error_ok(&rp, "lane=0,event=tx_memory_write,count=3");
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 3);
    tba_add(&rp, EV_L0);
    vstep(&rp, 1000);
    qtest_qmp_assert_success(rp.qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(rp.qts, "RESET");
    ecam_on(rp.qts);
    vstep(&rp, 1000);
    for (uint32_t off = 8; off < RAS_DES_LEN; off += 4) {
        g_assert_cmphex(reg(&rp, off), ==, 0);
    }
    /* the counter is off again; the capability is where it was */
    lane_select(&rp, 0x700, 0, 0);
    lane_error_ok(&rp, "lane=0,event=tx_memory_write,count=3");
    g_assert_cmpuint(reg(&rp, EVENT_CNT_DATA), ==, 0);
    check_ext_caps(&rp);
    /* and counts from a new start */
    tba_add(&rp, EV_L0);
    vstep(&rp, 2500);
    g_assert_cmpuint(tba_read(&rp), ==, 2500);
    qtest_quit(rp.qts);
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

/*
 * rp0 with a switch below runs a 10 ms timed run of L0 from T0 and has
 * counted injected lane events; rp1, empty at first, runs a manual run
 * of link-down time from T0 and gets a switch plugged at TP. A migrates
 * at T1; B (started with both switches) carries on: the timed run ends
 * at T0 + 10 ms, rp1's down time stays what it was at TP.
 */
#define MIG_ARGS RP_ARGS " " SWITCH_BELOW " " \
    "-device dwc-pcie-root-port,id=rp1,chassis=1,slot=2,addr=03.0"
#define MIG_T0          100000
#define MIG_TP          600000
#define MIG_T1          3000000
#define MIG_RUN         10000000

static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("dwc-rp-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    Rp a0, a1, b0, b1;

    g_assert(dir);
    rp_open_at(&a0, RP_DEVFN, MIG_ARGS);
    a1 = a0;
    a1.devfn = QPCI_DEVFN(3, 0);
    g_assert_cmphex(find_vsec(&a1, 0x1ded, VSEC_RAS_DES_ID), ==, RAS_DES_AT);
    /* (the switch's upstream port is x1) */
    lane_select(&a0, 0x70C, 0, PER_EVENT_ON | EVENT_PER_CLEAR);
    lane_error_ok(&a0, "lane=0,event=rx_memory_read,count=7");
    qtest_clock_set(a0.qts, MIG_T0);
    set_reg(&a0, TIME_BASED_ANAL_CTL, REPORT_SEL(EV_L0) |
            DURATION_SEL(0x02) | TIMER_START);         /* 10 ms */
    tba_add(&a1, EV_CFG_RCVRY);
    qtest_clock_set(a0.qts, MIG_TP);
    qtest_qmp_device_add(a0.qts, "x3130-upstream", "up1", "{'bus': 'rp1'}");
    qtest_clock_set(a0.qts, MIG_T1);
    g_assert_cmpuint(tba_read(&a1), ==, MIG_TP - MIG_T0);
    qtest_qmp_assert_success(a0.qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(a0.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(a0.qts);
    qtest_quit(a0.qts);

    b0.qts = qtest_initf("-machine q35 -nodefaults %s "
                         "-device x3130-upstream,id=up1,bus=rp1 "
                         "-incoming defer", MIG_ARGS);
    qtest_qmp_assert_success(b0.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(b0.qts);
    qtest_qmp_assert_success(b0.qts, "{ 'execute': 'cont' }");
    g_assert_cmpint(qtest_clock_set(b0.qts, MIG_T1), ==, MIG_T1);
    b0.devfn = RP_DEVFN;
    b0.cap = RAS_DES_AT;
    b1 = b0;
    b1.devfn = QPCI_DEVFN(3, 0);
    /* the MCH's ECAM came with the state */
    g_assert_cmphex(find_vsec(&b0, 0x1ded, VSEC_RAS_DES_ID), ==, RAS_DES_AT);

    g_assert_cmphex(reg(&b0, TIME_BASED_ANAL_CTL), ==, REPORT_SEL(EV_L0) |
                    DURATION_SEL(0x02) | TIMER_START);
    g_assert_cmpuint(tba_read(&b0), ==, MIG_T1 - MIG_T0);
    g_assert_cmpuint(tba_read(&b1), ==, MIG_TP - MIG_T0);
    g_assert_cmpuint(tba_report(&b1, EV_L0), ==, MIG_T1 - MIG_TP);
    lane_select(&b0, 0x70C, 0, PER_EVENT_ON);
    g_assert_cmpuint(reg(&b0, EVENT_CNT_DATA), ==, 7);
    lane_error_ok(&b0, "lane=0,event=rx_memory_read");
    g_assert_cmpuint(reg(&b0, EVENT_CNT_DATA), ==, 8);

    /* the timed run ends where it would have without the migration */
    vstep(&b0, MIG_T0 + MIG_RUN - MIG_T1 - 1);
    g_assert_cmphex(reg(&b0, TIME_BASED_ANAL_CTL) & TIMER_START, ==,
                    TIMER_START);
    vstep(&b0, 1);
    g_assert_cmphex(reg(&b0, TIME_BASED_ANAL_CTL) & TIMER_START, ==, 0);
    vstep(&b0, 1000000);
    g_assert_cmpuint(tba_read(&b0), ==, MIG_RUN);
    g_assert_cmpuint(tba_report(&b1, EV_CFG_RCVRY), ==, MIG_TP - MIG_T0);
    qtest_quit(b0.qts);
    unlink(file);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* Payload from the card below                                        */

#define EV_TX_PAYLOAD           0x20

/* A manual run of `event` over ns of virtual time, from t0 on */
static uint64_t tba_run(const Rp *rp, uint32_t event, int64_t ns)
{
    uint64_t v;

    tba_add(rp, event);
    vstep(rp, ns);
    v = tba_read(rp);
    tba_stop(rp);
    g_assert_cmpuint(tba_read(rp), ==, v);
    return v;
}

/*
 * A pattern card (PCIe clock 400 MHz): RQ frames of 256 B every 10 cycles
 * (2 stalled, 4 words, 4 idle), 240 B of payload after the 16-byte header;
 * RC frames of 100 B (25 items) every 3 cycles, 88 B after the 12-byte
 * header. Over 1 ms: 40000 RQ frames (one more or less at the run's
 * edges) = 600000 units of 16 bytes, 133333.3 RC frames = 733333 units.
 */
static void test_payload_pattern(void)
{
    Rp rp;
    uint64_t rx, tx;

    rp_open(&rp, "-object telemetry-traffic-pattern,id=t0,"
            "rq-frame-bytes=256,rq-gap=4,rq-stall=2,rc-frame-bytes=100,"
            "rc-gap=1 -device ndk-pcie-telemetry,bus=rp0,traffic=t0");
    vstep(&rp, 100000);
    rx = tba_run(&rp, EV_RX_PAYLOAD, 1000000);
    tx = tba_run(&rp, EV_TX_PAYLOAD, 1000000);
    g_test_message("Rx %" PRIu64 " Tx %" PRIu64 " units of 16 B", rx, tx);
    g_assert_cmpuint(rx, >=, 600000 - 16);
    g_assert_cmpuint(rx, <=, 600000 + 15);
    g_assert_cmpuint(tx, >=, 733333 - 7);
    g_assert_cmpuint(tx, <=, 733333 + 6);
    /* an LTSSM run over the same card: the link up all the time */
    g_assert_cmpuint(tba_run(&rp, EV_L0, 500000), ==, 500000);
    qtest_quit(rp.qts);
}

/*
 * The DMA engine's background transfers: a write of 1500 B and a read of
 * 1000 B every 10 us. A run from 5 us after a slot to 5 us after the
 * hundredth slot on holds exactly 100 slots' transfers: Rx 150000 B =
 * 9375 units, Tx 100000 B = 6250 units, whatever MPS, MRRS and RCB split
 * them into.
 */
static void test_payload_dma(void)
{
    Rp rp;

    rp_open(&rp, "-m 256M -object telemetry-traffic-transfers,id=bg,"
            "interval-ns=10000,write-bytes=1500,read-bytes=1000,"
            "address=0x100000,stride=0 "
            "-device ndk-pcie-telemetry,bus=rp0,dma-queues=1,traffic=bg");
    vstep(&rp, 105000);
    g_assert_cmpuint(tba_run(&rp, EV_RX_PAYLOAD, 1000000), ==, 9375);
    vstep(&rp, 5000);
    g_assert_cmpuint(tba_run(&rp, EV_TX_PAYLOAD, 1000000), ==, 6250);
    qtest_quit(rp.qts);
}

/*
 * The guest's own accesses to the card's BAR cross the link too: a read
 * of n bytes brings n (in whole DWs) up with its completion, a write
 * takes them down. The port forwards a window to bus 1, where the card's
 * BAR0 is placed in it.
 */
#define BAR_AT  0xE0000000u

static void test_payload_bar(void)
{
    Rp rp;
    uint64_t bus1 = ecam_at(1, 0, 0) - ecam_at(0, 0, 0);
    uint64_t rx, tx;

    rp_open(&rp, "-device ndk-pcie-telemetry,bus=rp0");
    /* the port: bus 1 below it, the memory window, memory on */
    wr8(&rp, PCI_SECONDARY_BUS, 1);
    wr8(&rp, PCI_SUBORDINATE_BUS, 1);
    wr16(&rp, PCI_MEMORY_BASE, BAR_AT >> 16);
    wr16(&rp, PCI_MEMORY_LIMIT, (BAR_AT + 0x00F00000) >> 16);
    wr16(&rp, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    /* the card, device 0 of bus 1 */
    qtest_writel(rp.qts, ecam_at(0, 0, 0) + bus1 + PCI_BASE_ADDRESS_0,
                 BAR_AT);
    qtest_writew(rp.qts, ecam_at(0, 0, 0) + bus1 + PCI_COMMAND,
                 PCI_COMMAND_MEMORY);
    g_assert_cmphex(qtest_readl(rp.qts, BAR_AT), !=, 0xFFFFFFFF);
    g_assert_cmphex(qtest_readl(rp.qts, BAR_AT), !=, 0);

    /* 100 reads of 4 bytes and 50 of 8: 800 B up, 50 units */
    tba_add(&rp, EV_RX_PAYLOAD);
    for (unsigned i = 0; i < 100; i++) {
        qtest_readl(rp.qts, BAR_AT + 4 * (i % 8));
    }
    for (unsigned i = 0; i < 50; i++) {
        qtest_readq(rp.qts, BAR_AT);
    }
    rx = tba_read(&rp);
    tba_stop(&rp);
    /* 30 writes of 4 bytes and 10 of 2 (a DW each) to the read-only
     * identification: 160 B down, 10 units */
    tba_add(&rp, EV_TX_PAYLOAD);
    for (unsigned i = 0; i < 30; i++) {
        qtest_writel(rp.qts, BAR_AT, 0);
    }
    for (unsigned i = 0; i < 10; i++) {
        qtest_writew(rp.qts, BAR_AT + 2, 0);
    }
    tx = tba_read(&rp);
    tba_stop(&rp);
    g_assert_cmpuint(rx, ==, 50);
    g_assert_cmpuint(tx, ==, 10);
    qtest_quit(rp.qts);
}

/*
 * A run over a pattern card, migrated in its middle (the card's count of
 * its link, started by the run, migrates with it): Rx and Tx at the end
 * equal an unmigrated twin's.
 */
#define PAY_ARGS RP_ARGS " -object telemetry-traffic-pattern,id=t0," \
    "rq-frame-bytes=200,rq-gap=3,rc-frame-bytes=76 " \
    "-device ndk-pcie-telemetry,bus=rp0,traffic=t0"

static void test_payload_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("dwc-rp-pay-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t got[2], want[2];
    Rp a, b, twin;

    for (unsigned k = 0; k < 2; k++) {
        uint32_t ev = k ? EV_TX_PAYLOAD : EV_RX_PAYLOAD;

        rp_open_at(&twin, RP_DEVFN, PAY_ARGS);
        qtest_clock_set(twin.qts, 100000);
        tba_add(&twin, ev);
        qtest_clock_set(twin.qts, 1100000);
        want[k] = tba_read(&twin);
        qtest_quit(twin.qts);

        rp_open_at(&a, RP_DEVFN, PAY_ARGS);
        qtest_clock_set(a.qts, 100000);
        tba_add(&a, ev);
        qtest_clock_set(a.qts, 600000);
        qtest_qmp_assert_success(a.qts, "{ 'execute': 'stop' }");
        qtest_qmp_assert_success(a.qts, "{ 'execute': 'migrate', "
                                 "'arguments': { 'uri': %s } }", uri);
        wait_migration(a.qts);
        qtest_quit(a.qts);

        b.qts = qtest_initf("-machine q35 -nodefaults %s -incoming defer",
                            PAY_ARGS);
        qtest_qmp_assert_success(b.qts, "{ 'execute': 'migrate-incoming', "
                                 "'arguments': { 'uri': %s } }", uri);
        wait_migration(b.qts);
        qtest_qmp_assert_success(b.qts, "{ 'execute': 'cont' }");
        g_assert_cmpint(qtest_clock_set(b.qts, 600000), ==, 600000);
        b.devfn = RP_DEVFN;
        b.cap = RAS_DES_AT;
        qtest_clock_set(b.qts, 1100000);
        got[k] = tba_read(&b);
        qtest_quit(b.qts);
        unlink(file);
    }
    g_test_message("Rx %" PRIu64 " (twin %" PRIu64 "), Tx %" PRIu64
                   " (twin %" PRIu64 ")", got[0], want[0], got[1], want[1]);
    /* 1 ms: 400000 / 7 frames of 184 B up, 400000 / 2 of 64 B down */
    g_assert_cmpuint(want[0], >, 400000 / 7 * 184 / 16 - 20);
    g_assert_cmpuint(want[1], >, 200000 * 64 / 16 - 10);
    g_assert_cmpuint(got[0], ==, want[0]);
    g_assert_cmpuint(got[1], ==, want[1]);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/dwc-pcie-root-port/identity", test_identity);
    qtest_add_func("/dwc-pcie-root-port/props-refused", test_props_refused);
    qtest_add_func("/dwc-pcie-root-port/registers", test_registers);
    qtest_add_func("/dwc-pcie-root-port/tba/no-function",
                   test_tba_no_function);
    qtest_add_func("/dwc-pcie-root-port/tba/function", test_tba_function);
    qtest_add_func("/dwc-pcie-root-port/tba/hotplug", test_tba_hotplug);
    qtest_add_func("/dwc-pcie-root-port/tba/unplug", test_tba_unplug);
    qtest_add_func("/dwc-pcie-root-port/tba/timed", test_tba_timed);
    qtest_add_func("/dwc-pcie-root-port/tba/64bit", test_tba_64bit);
    qtest_add_func("/dwc-pcie-root-port/lane-error", test_lane_error);
    qtest_add_func("/dwc-pcie-root-port/reset", test_reset);
    qtest_add_func("/dwc-pcie-root-port/migration", test_migration);
    qtest_add_func("/dwc-pcie-root-port/payload/pattern",
                   test_payload_pattern);
    qtest_add_func("/dwc-pcie-root-port/payload/dma", test_payload_dma);
    qtest_add_func("/dwc-pcie-root-port/payload/bar", test_payload_bar);
    qtest_add_func("/dwc-pcie-root-port/payload/migration",
                   test_payload_migration);
    return g_test_run();
}
