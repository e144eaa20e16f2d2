/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: the PCI(e) function's configuration space.
 * PCIE_STATUS following Device Control, the space through ECAM, the PCIe
 * capability's tag support, MSI (what the nfb driver's pci_enable_msi
 * finds), the link in Link Capabilities and Status behind a root port and
 * on the root bus, and how MSI and the link cross a migration. Expected
 * values come from the PCIe specification's field layouts and the card's
 * properties.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* PCIE_STATUS follows the function's PCIe capability                 */

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
    origin = first_cycle(n.t->t0, PCIE_HZ);
    exp = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);

    /*
     * Device Capabilities: 512-byte payloads (the default
     * max-payload-size), extended tags; 10-bit tag requester
     */
    g_assert_cmphex(qpci_config_readl(n.t->dev, exp + PCI_EXP_DEVCAP) &
                    (PCI_EXP_DEVCAP_PAYLOAD | PCI_EXP_DEVCAP_EXT_TAG), ==,
                    2 | PCI_EXP_DEVCAP_EXT_TAG);
    g_assert_cmphex(qpci_config_readl(n.t->dev, exp + PCI_EXP_DEVCAP2) &
                    EXP_DEVCAP2_10BIT_TAG, ==,
                    EXP_DEVCAP2_10BIT_TAG);

    /* power-on Device Control: MPS 128 B, MRRS 512 B (PCIe defaults) */
    devctl = qpci_config_readw(n.t->dev, exp + PCI_EXP_DEVCTL);
    g_assert_cmphex(devctl & PCI_EXP_DEVCTL_PAYLOAD, ==, 0);
    g_assert_cmphex((devctl & PCI_EXP_DEVCTL_READRQ) >> 12, ==, 2);
    st0 = status_from_config(devctl,
                             qpci_config_readw(n.t->dev, exp + PCI_EXP_DEVCTL2),
                             qpci_config_readw(n.t->dev, exp + PCI_EXP_LNKCTL));

    step_to(&n, n.t->t0 + 10000);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, 0);
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);
    /* idle source: all 256 tags and 1024 FIFO words free */
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 256 | 256 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /* new settings show after the next drain (window 1), not before */
    step_to(&n, n.t->t0 + 15000);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);
    set_pcie_settings(&n, exp, 1, 3, true, true, true);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);
    step_to(&n, cycle_ns(drain_cycle(origin, DP, 1), PCIE_HZ) - 100);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);
    step_to(&n, word_ns(origin, 1));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st1);

    /*
     * The same when nothing touched the BAR since the drain before the
     * write: the drain of window 2 (30.72 us) sampled the settings of
     * st1, so at 35 us the register still shows them.
     */
    step_to(&n, n.t->t0 + 35000);
    set_pcie_settings(&n, exp, 2, 5, false, false, false);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st1);
    step_to(&n, word_ns(origin, 3));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st2);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Configuration space through ECAM                                   */

static void test_ecam(void)
{
    uint32_t hdr, off;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    ecam_enable(n.t->bus);
    g_assert_cmphex(n.t->ecam, ==, ecam_at(0, n.t->dev->devfn, 0));

    g_assert_cmphex(qndk_ext_config_readl(n.t, PCI_VENDOR_ID), ==,
                    PTL_QEMU_DEVICE_ID << 16 | PTL_QEMU_VENDOR_ID);
    /* no function at 00:05.0 */
    g_assert_cmphex(qtest_readl(n.t->qts, ecam_at(0, QPCI_DEVFN(5, 0), 0)), ==,
                    0xFFFFFFFF);
    /* the first 256 bytes agree with the legacy configuration access */
    for (off = 0; off < 0x100; off += 4) {
        g_assert_cmphex(qndk_ext_config_readl(n.t, off), ==,
                        qpci_config_readl(n.t->dev, off));
    }

    /* the PCIe capability at 0x80: ID 0x10, version 2, an endpoint */
    g_assert_cmphex(qpci_config_readw(n.t->dev, PCI_STATUS) &
                    PCI_STATUS_CAP_LIST, ==, PCI_STATUS_CAP_LIST);
    hdr = qndk_ext_config_readl(n.t, 0x80);
    g_assert_cmphex(hdr & 0xFF, ==, PCI_CAP_ID_EXP);
    g_assert_cmphex((hdr >> 16) & PCI_EXP_FLAGS_VERS, ==, 2);
    g_assert_true(((hdr >> 20) & 0xF) == PCI_EXP_TYPE_ENDPOINT ||
                  ((hdr >> 20) & 0xF) == PCI_EXP_TYPE_RC_END);

    /* extended space: empty, or a chain of sane headers */
    off = 0x100;
    for (int i = 0; i < 64 && off; i++) {
        hdr = qndk_ext_config_readl(n.t, off);
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
    qndk_ext_config_readl(n.t, 0xFFC);
    hdr = qndk_ext_config_readl(n.t, 0x100);
    qndk_ext_config_writel(n.t, 0x100, 0xFFFFFFFF);
    qndk_ext_config_writel(n.t, 0xFFC, 0xFFFFFFFF);
    g_assert_cmphex(qndk_ext_config_readl(n.t, 0x100), ==, hdr);

    /* the function still works */
    g_assert_cmphex(qndk_ext_config_readl(n.t, 0), ==,
                    PTL_QEMU_DEVICE_ID << 16 | PTL_QEMU_VENDOR_ID);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* PCIe capability: what the card supports                            */

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
    exp = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    devcap = qpci_config_readl(n.t->dev, exp + PCI_EXP_DEVCAP);
    devcap2 = qpci_config_readl(n.t->dev, exp + PCI_EXP_DEVCAP2);
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
    devctl = qpci_config_readw(n.t->dev, exp + PCI_EXP_DEVCTL);
    g_assert_cmphex(devctl & PCI_EXP_DEVCTL_EXT_TAG, ==,
                    ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)) & (3 << 6), ==,
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
/* MSI: what the nfb driver's pci_enable_msi finds                    */

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
    check_caps(n.t->dev, q35_caps);
    check_msi_cap(n.t->dev);
    /* a system reset turns it off and clears address and data */
    msi_arm(n.t->dev);
    qtest_system_reset(n.t->qts);
    g_assert_cmphex(qpci_config_readw(n.t->dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT);
    g_assert_cmphex(qpci_config_readl(n.t->dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, 0);
    g_assert_cmphex(qpci_config_readw(n.t->dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    0);
    ndk_close(&n);

    /* a conventional PCI bus has MSI all the same */
    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0");
    check_caps(n.t->dev, pc_caps);
    check_msi_cap(n.t->dev);
    ndk_close(&n);

    /* msi=off: a card like NDK's UltraScale+ builds (no MSI) */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,msi=off");
    check_caps(n.t->dev, q35_off_caps);
    g_assert_cmphex(qpci_config_readl(n.t->dev, MSI_CAP), ==, 0);
    ndk_close(&n);
    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0,msi=off");
    check_caps(n.t->dev, none);
    ndk_close(&n);

    /*
     * The block raises no interrupt: with MSI enabled and bus mastering
     * on, snapshots, a clear and a full pattern window later nothing has
     * been written where a message would go.
     */
    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    g_assert_cmphex(qpci_config_readw(n.t->dev, PCI_COMMAND) &
                    PCI_COMMAND_MASTER, ==, PCI_COMMAND_MASTER);
    msi_arm(n.t->dev);
    g_assert_cmphex(qtest_readl(n.t->qts, MSI_TRAP), ==, 0);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    step_to(&n, word_ns(origin, 2));
    snapshot(&n, DEF_ENTRIES);
    wr(&n, PTL_REG_COMMAND,
       PTL_CMD_CLEAR | PTL_CMD_CLEAR_FLAGS | PTL_CMD_CLEAR_LOWEST);
    step_to(&n, word_ns(origin, 4));
    snapshot(&n, DEF_ENTRIES);
    g_assert_cmpuint(cnt(&n, 0), >, 0);
    g_assert_cmphex(qtest_readl(n.t->qts, MSI_TRAP), ==, 0);
    g_assert_cmphex(qpci_config_readw(n.t->dev, MSI_CAP + PCI_MSI_FLAGS), ==,
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
    check_caps(n.t->dev, q35_caps);
    check_msi_cap(n.t->dev);
    ndk_close(&n);
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,msi=on");
    check_caps(n.t->dev, q35_caps);
    check_msi_cap(n.t->dev);
    ndk_close(&n);

    /* without MSI the default and auto start without the capability */
    ndk_open(&n, "q35", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0");
    check_caps(n.t->dev, q35_off_caps);
    g_assert_cmphex(qpci_config_readl(n.t->dev, MSI_CAP), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
    ndk_open(&n, "pc", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0,"
             "msi=auto");
    check_caps(n.t->dev, none);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
    ndk_open(&n, "q35", "-cpu 486 -device ndk-pcie-telemetry,addr=04.0,"
             "msi=off");
    check_caps(n.t->dev, q35_off_caps);
    ndk_close(&n);

    /* and msi=on refuses to start, naming the property */
    expect_start_refused(on_no_apic, "'msi'");
    expect_start_refused(on_no_apic, "msi=auto");
    /* the later -machine wins over the q35 of expect_start_refused */
    expect_start_refused(on_no_apic_pc, "'msi'");
}

/* ------------------------------------------------------------------ */
/* The link: Link Capabilities and Status                             */

/* q35 with a root port at 00:03.0 whose secondary bus 1 holds the card */
#define RP_DEVFN                QPCI_DEVFN(3, 0)
#define RP_BUS                  1

/*
 * libqos's pc bus reaches bus 0 only, so the node cannot open a card
 * behind a bridge: the card's link is read through ECAM.
 */
typedef struct RootPortMachine {
    QTestState *qts;
    QPCIBus *bus;
} RootPortMachine;
/*
 * The nfb driver's set-up: the card behind a pcie-root-port (it refuses
 * the root bus). No firmware runs under qtest: give the port its bus
 * numbers, then reach the card through ECAM.
 */
static void rp_bus_up(RootPortMachine *m)
{
    QPCIDevice *rp = qpci_device_find(m->bus, RP_DEVFN);

    g_assert(rp);
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, RP_BUS);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, RP_BUS);
    g_free(rp);
    ecam_enable(m->bus);
    g_assert_cmphex(qtest_readl(m->qts, ecam_at(RP_BUS, 0, PCI_VENDOR_ID)),
                    ==, PTL_QEMU_DEVICE_ID << 16 | PTL_QEMU_VENDOR_ID);
}

static void rp_open(RootPortMachine *m, const char *port_props,
                    const char *props)
{
    m->qts = qtest_initf("-machine q35 -nodefaults "
                         "-device pcie-root-port,id=rp0,chassis=1,slot=1,"
                         "addr=03.0%s -device ndk-pcie-telemetry,bus=rp0%s",
                         port_props, props);
    m->bus = qpci_new_pc(m->qts, NULL);
    rp_bus_up(m);
}

static void rp_close(RootPortMachine *m)
{
    qpci_free_pc(m->bus);
    qtest_quit(m->qts);
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
    RootPortMachine m;

    for (size_t i = 0; i < G_N_ELEMENTS(link_cases); i++) {
        rp_open(&m, "", link_cases[i].props);
        check_link(m.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT,
                   &link_cases[i]);
        /* pcie-root-port's default x-speed=16, x-width=32 */
        check_port_link(m.qts, MIN(link_cases[i].speed, 4),
                        link_cases[i].width);
        /* a system reset changes neither */
        qtest_system_reset(m.qts);
        rp_bus_up(&m);
        check_link(m.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT,
                   &link_cases[i]);
        rp_close(&m);
    }

    rp_open(&m, ",x-speed=8,x-width=8", gen4.props);
    check_link(m.qts, ecam_at(RP_BUS, 0, 0), PCI_EXP_TYPE_ENDPOINT, &gen4);
    check_port_link(m.qts, 3, 8);
    rp_close(&m);
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
        ecam_enable(n.t->bus);
        check_link(n.t->qts, ecam_at(0, QNDK_DEVFN, 0), PCI_EXP_TYPE_RC_END,
                   &link_cases[cases[i]]);
        ndk_close(&n);
    }
}

/* ------------------------------------------------------------------ */
/* Migration of MSI and the link                                      */

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
    msi_arm(a.t->dev);
    qpci_config_writel(a.t->dev, MSI_CAP + PCI_MSI_ADDRESS_HI, 0x12);
    t0 = a.t->t0;
    t1 = a.t->now + 1000;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", ML_ARGS, uri, t0, t1);
    g_assert_cmphex(qpci_config_readw(b.t->dev, MSI_CAP + PCI_MSI_FLAGS), ==,
                    PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_ENABLE);
    g_assert_cmphex(qpci_config_readl(b.t->dev, MSI_CAP + PCI_MSI_ADDRESS_LO),
                    ==, MSI_TRAP);
    g_assert_cmphex(qpci_config_readl(b.t->dev, MSI_CAP + PCI_MSI_ADDRESS_HI),
                    ==, 0x12);
    g_assert_cmphex(qpci_config_readw(b.t->dev, MSI_CAP + PCI_MSI_DATA_64), ==,
                    MSI_DATA);
    ecam_enable(b.t->bus);
    check_link(b.t->qts, ecam_at(0, QNDK_DEVFN, 0), PCI_EXP_TYPE_RC_END,
               &lc);
    g_assert_cmphex(rd(&b, PTL_REG_MAGIC), ==, PTL_MAGIC);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/pcie-status/follows-config",
                    test_pcie_status);
    g_test_add_func("/ndk-pcie-telemetry/q35/ecam", test_ecam);
    g_test_add_func("/ndk-pcie-telemetry/pcie/ext-tag-off",
                    test_pcie_ext_tag_off);
    g_test_add_func("/ndk-pcie-telemetry/msi/capability", test_msi);
    g_test_add_func("/ndk-pcie-telemetry/msi/auto-on", test_msi_auto_on);
    g_test_add_func("/ndk-pcie-telemetry/link/root-port",
                    test_link_root_port);
    g_test_add_func("/ndk-pcie-telemetry/link/root-bus", test_link_root_bus);
    g_test_add_func("/ndk-pcie-telemetry/migration/msi-link",
                    test_msi_link_migration);

    return g_test_run();
}
