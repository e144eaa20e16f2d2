/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qgraph nodes for x86_64/q35, which QEMU's libqos lacks: the machine,
 * its host bridge and a pci-bus whose configuration accesses go through
 * ECAM (MMCONFIG), so that extended configuration space is reachable.
 * Nothing runs firmware under qtest, so the bus turns the MCH's
 * PCIEXBAR on itself (256 MiB at QNDK_Q35_ECAM_BASE) through CF8/CFC.
 */
#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/qgraph.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "tests/qtest/libqos/malloc-pc.h"

#include "ndk-telemetry.h"

typedef struct QPCIBusQ35 {
    QPCIBusPC pc;           /* port I/O and memory as on pc */
    uint64_t ecam;
} QPCIBusQ35;

typedef struct Q35Host {
    QOSGraphObject obj;
    QPCIBusQ35 pci;
} Q35Host;

typedef struct QX86Q35Machine {
    QOSGraphObject obj;
    QGuestAllocator alloc;
    Q35Host host;
} QX86Q35Machine;

static uint64_t ecam_addr(QPCIBus *bus, int devfn, uint8_t off)
{
    QPCIBusQ35 *q = container_of(bus, QPCIBusQ35, pc.bus);

    return q->ecam + ((uint64_t)devfn << 12 | off);
}

static uint8_t ecam_readb(QPCIBus *bus, int devfn, uint8_t off)
{
    return qtest_readb(bus->qts, ecam_addr(bus, devfn, off));
}

static uint16_t ecam_readw(QPCIBus *bus, int devfn, uint8_t off)
{
    return qtest_readw(bus->qts, ecam_addr(bus, devfn, off));
}

static uint32_t ecam_readl(QPCIBus *bus, int devfn, uint8_t off)
{
    return qtest_readl(bus->qts, ecam_addr(bus, devfn, off));
}

static void ecam_writeb(QPCIBus *bus, int devfn, uint8_t off, uint8_t v)
{
    qtest_writeb(bus->qts, ecam_addr(bus, devfn, off), v);
}

static void ecam_writew(QPCIBus *bus, int devfn, uint8_t off, uint16_t v)
{
    qtest_writew(bus->qts, ecam_addr(bus, devfn, off), v);
}

static void ecam_writel(QPCIBus *bus, int devfn, uint8_t off, uint32_t v)
{
    qtest_writel(bus->qts, ecam_addr(bus, devfn, off), v);
}

static void *q35_bus_get_driver(void *obj, const char *interface)
{
    QPCIBusQ35 *q = obj;

    if (!g_strcmp0(interface, "pci-bus")) {
        return &q->pc.bus;
    }
    fprintf(stderr, "%s not present in pci-bus-q35\n", interface);
    g_assert_not_reached();
}

static void q35_bus_init(QPCIBusQ35 *q, QTestState *qts,
                         QGuestAllocator *alloc)
{
    QPCIDevice *mch;

    qpci_init_pc(&q->pc, qts, alloc);
    /* still CF8/CFC here: switch ECAM on in the MCH (bus 0, devfn 0) */
    mch = qpci_device_find(&q->pc.bus, 0);
    g_assert_nonnull(mch);
    g_assert_cmphex(qpci_config_readw(mch, PCI_VENDOR_ID), ==, 0x8086);
    qpci_config_writel(mch, QNDK_Q35_PCIEXBAR + 4, 0);
    qpci_config_writel(mch, QNDK_Q35_PCIEXBAR,
                       (uint32_t)QNDK_Q35_ECAM_BASE | 1);
    g_free(mch);
    q->ecam = QNDK_Q35_ECAM_BASE;

    q->pc.bus.config_readb = ecam_readb;
    q->pc.bus.config_readw = ecam_readw;
    q->pc.bus.config_readl = ecam_readl;
    q->pc.bus.config_writeb = ecam_writeb;
    q->pc.bus.config_writew = ecam_writew;
    q->pc.bus.config_writel = ecam_writel;
    q->pc.obj.get_driver = q35_bus_get_driver;
}

static QOSGraphObject *q35_host_get_device(void *obj, const char *device)
{
    Q35Host *host = obj;

    if (!g_strcmp0(device, "pci-bus-q35")) {
        return &host->pci.pc.obj;
    }
    fprintf(stderr, "%s not present in q35-pcihost\n", device);
    g_assert_not_reached();
}

static void q35_destructor(QOSGraphObject *obj)
{
    QX86Q35Machine *m = (QX86Q35Machine *)obj;

    alloc_destroy(&m->alloc);
}

static void *q35_get_driver(void *obj, const char *interface)
{
    QX86Q35Machine *m = obj;

    if (!g_strcmp0(interface, "memory")) {
        return &m->alloc;
    }
    fprintf(stderr, "%s not present in x86_64/q35\n", interface);
    g_assert_not_reached();
}

static QOSGraphObject *q35_get_device(void *obj, const char *device)
{
    QX86Q35Machine *m = obj;

    if (!g_strcmp0(device, "q35-pcihost")) {
        return &m->host.obj;
    }
    fprintf(stderr, "%s not present in x86_64/q35\n", device);
    g_assert_not_reached();
}

static void *q35_create_machine(QTestState *qts)
{
    QX86Q35Machine *m = g_new0(QX86Q35Machine, 1);

    m->obj.get_device = q35_get_device;
    m->obj.get_driver = q35_get_driver;
    m->obj.destructor = q35_destructor;
    pc_alloc_init(&m->alloc, qts, ALLOC_NO_FLAGS);
    m->host.obj.get_device = q35_host_get_device;
    q35_bus_init(&m->host.pci, qts, &m->alloc);
    return &m->obj;
}

static void q35_register_nodes(void)
{
    qos_node_create_machine("x86_64/q35", q35_create_machine);
    qos_node_contains("x86_64/q35", "q35-pcihost", NULL);
    qos_node_create_driver("q35-pcihost", NULL);
    qos_node_contains("q35-pcihost", "pci-bus-q35", NULL);
    qos_node_create_driver("pci-bus-q35", NULL);
    qos_node_produces("pci-bus-q35", "pci-bus");
}

libqos_init(q35_register_nodes);
