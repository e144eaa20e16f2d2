/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos driver for ndk-pcie-telemetry: the virtual CESNET NDK card whose
 * BAR0 holds the PCIE_TELEMETRY_MI block.
 *
 * Two ways in:
 *  - qgraph: the node "ndk-pcie-telemetry" consumes "pci-bus" and
 *    produces "ndk-pcie-telemetry-if", a QNdkTelemetry; qos_add_test()
 *    tests get it as their object (x86_64/pc and x86_64/q35, the latter
 *    from qos/q35-machine.c with an ECAM pci-bus);
 *  - plain libqtest: qndk_start() boots a machine with the card and
 *    returns the same object; qndk_open() takes one on a QPCIBus a test
 *    made itself.
 * Either way the test then uses the functions below. Register names and
 * the counter layout are those of pcie-telemetry-regs.h.
 *
 * Virtual time moves only when the test steps it: qndk_step() and the
 * waits of qndk_snapshot()/qndk_clear() step the clock, register accesses
 * do not. BUSY rises from the second MI cycle after a command.
 */
#ifndef NDK_QOS_TELEMETRY_H
#define NDK_QOS_TELEMETRY_H

#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci.h"
#include "tests/qtest/libqos/qgraph.h"
#include "pcie-telemetry-regs.h"
#include "pcie-telemetry.h"

#define QNDK_DEVFN              QPCI_DEVFN(4, 0)
/* Where the q35 pieces of this driver put ECAM when firmware did not */
#define QNDK_Q35_ECAM_BASE      0xb0000000ull
#define QNDK_Q35_PCIEXBAR       0x60
#define QNDK_MI_NS_DEFAULT      10      /* the card's default 100 MHz */
/*
 * Virtual time a ptl now_ns() call adds: about one MI read on a real
 * host. It must be at least two MI cycles, or the library's first STATUS
 * poll after SNAPSHOT comes before BUSY rises and it reads the snapshot
 * copy before the sweep.
 */
#define QNDK_POLL_NS_DEFAULT    1000

/* The layout read from the configuration registers */
typedef struct QNdkLayout {
    unsigned endpoints, dma_ports;
    unsigned entries, cnt_width, per_endpoint;
    unsigned pcie_channels, pcie_regions, dma_channels, dma_regions;
    unsigned brake_reasons, drain_period;
    uint32_t cnt_base;
} QNdkLayout;

/* A bus of an endpoint, as the counter layout numbers them */
typedef enum QNdkBusKind {
    QNDK_RQ, QNDK_RC, QNDK_UP, QNDK_DOWN,
} QNdkBusKind;

typedef struct QNdkTelemetry {
    QOSGraphObject obj;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint64_t bar_size;
    uint64_t block;         /* offset of the block in BAR0 */
    uint64_t ecam;          /* ECAM address of the function, 0: none */
    int64_t mi_ns;          /* MI period the waits step by */
    int64_t poll_ns;        /* virtual time each ptl now_ns() call adds */
    QNdkLayout lay;
    int64_t t0;             /* virtual time at the start, before any step */
    int64_t now;            /* virtual time now (see qndk_step) */
    /* qndk_start()'s own pieces */
    bool owns_machine;
} QNdkTelemetry;

/* ---- starting ---- */

/*
 * Boot "-machine MACHINE -nodefaults EXTRA" (EXTRA holds the card's
 * -device and any -object), find the first function with the card's IDs
 * and qndk_open() it. MACHINE "q35" gives ECAM (extended configuration
 * space, the device-tree VSEC); "pc" has none. Fails the test if there is
 * no card.
 */
QNdkTelemetry *qndk_start(const char *machine, const char *extra_fmt, ...)
    G_GNUC_PRINTF(2, 3);
/* The same for the function with these IDs (0, 0: the card's defaults) */
QNdkTelemetry *qndk_start_ids(const char *machine, uint16_t vendor,
                              uint16_t device, const char *extra_fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* Quit the QEMU of qndk_start() and free everything. */
void qndk_stop(QNdkTelemetry *t);

/*
 * On a bus of the caller's: find the index-th function with these IDs
 * (0, 0: the card's defaults), enable it, map BAR0, reach its extended
 * configuration space through ECAM where the machine has it (on q35 it
 * turns ECAM on at QNDK_Q35_ECAM_BASE if the MCH has it off) and find the
 * block's offset in BAR0 from the device tree (0 without one). NULL if
 * there is no such function.
 */
QNdkTelemetry *qndk_open(QPCIBus *bus, uint16_t vendor, uint16_t device,
                         unsigned index);
/*
 * qndk_open() for a caller that knows the time: the clock is not stepped,
 * t->t0 = t->now = now_ns (a card hot-plugged at now_ns; set t->t0 when
 * the card's reset lies earlier). With as_is, BAR0 and the command
 * register stay as they are (no enable, no new address; bar_size reads
 * 0): a card whose state came with an incoming migration.
 */
QNdkTelemetry *qndk_open_at(QPCIBus *bus, uint16_t vendor, uint16_t device,
                            unsigned index, int64_t now_ns, bool as_is);
/* Free what qndk_open() made; the bus and QEMU stay. */
void qndk_close(QNdkTelemetry *t);

/* ---- registers (offsets from the start of the block) ---- */

uint32_t qndk_readl(QNdkTelemetry *t, uint32_t off);
void qndk_writel(QNdkTelemetry *t, uint32_t off, uint32_t val);
/* one 8-byte load */
uint64_t qndk_readq(QNdkTelemetry *t, uint32_t off);
/* read the configuration registers again into t->lay */
void qndk_read_layout(QNdkTelemetry *t);

/* ---- virtual time ---- */

/*
 * Now, in ns of the virtual clock, as the node last stepped it: qtest can
 * read the clock only by moving it, so step through these functions (or
 * store what qtest_clock_step() returned into t->now). Opening a card
 * steps 1 ns to learn the time (t->now = t->t0 + 1).
 */
int64_t qndk_now(QNdkTelemetry *t);
/* step ns forward; returns the new time */
int64_t qndk_step(QNdkTelemetry *t, int64_t ns);
/* step to time t_ns (not before now) */
int64_t qndk_step_to(QNdkTelemetry *t, int64_t t_ns);

/* ---- commands ---- */

/*
 * Step one MI cycle at a time while STATUS shows BUSY, at most
 * max_cycles; returns the cycles stepped (fails the test past max).
 */
unsigned qndk_wait_busy(QNdkTelemetry *t, unsigned max_cycles);
/*
 * READ_SEL = snapshot copy, SNAPSHOT, step past the two MI cycles before
 * BUSY shows and wait for it to drop; returns STATUS then.
 */
uint32_t qndk_snapshot(QNdkTelemetry *t);
/* CLEAR and wait; returns STATUS then */
uint32_t qndk_clear(QNdkTelemetry *t);
/* COMMAND clear flags (and the lowest values); a posted write */
void qndk_clear_flags(QNdkTelemetry *t, bool lowest_too);
uint32_t qndk_status(QNdkTelemetry *t);

/* ---- counters ---- */

/* counter entry i of the copy READ_SEL selects, as one 8-byte load */
uint64_t qndk_counter(QNdkTelemetry *t, unsigned entry);
/* entries [0, n) into out */
void qndk_counters(QNdkTelemetry *t, uint64_t *out, unsigned n);
/* entry of endpoint e's PCIe (dma false) or DMA probe channel ch */
unsigned qndk_entry(QNdkTelemetry *t, unsigned e, bool dma, unsigned ch);
/*
 * Quantity k (PTL_CH_WORDS ... PTL_CH_REGION0 + r) of a bus: RQ and RC of
 * the PCIe probe, UP and DOWN of DMA port `port`.
 */
unsigned qndk_bus_entry(QNdkTelemetry *t, unsigned e, QNdkBusKind bus,
                        unsigned port, unsigned k);
uint64_t qndk_bus_counter(QNdkTelemetry *t, unsigned e, QNdkBusKind bus,
                          unsigned port, unsigned k);
/* cycles of endpoint e's PCIe (dma false) or DMA clock */
uint64_t qndk_cycles(QNdkTelemetry *t, unsigned e, bool dma);
/* cycles BRAKE reason j (enum ptl_brake_reason) was set */
uint64_t qndk_brake(QNdkTelemetry *t, unsigned e, unsigned reason);
/* band j of histogram h (PTL_HIST_TAGS, PTL_HIST_STFIFO) */
uint64_t qndk_band(QNdkTelemetry *t, unsigned e, unsigned h, unsigned j);

/* ---- configuration space, device tree ---- */

/*
 * The ECAM window of a q35 MCH (devfn 0 of bus 0), turned on at
 * QNDK_Q35_ECAM_BASE if it is off, as after a system reset; its base, 0
 * on a machine without one. qndk_open() calls it.
 */
uint64_t qndk_q35_ecam(QPCIBus *bus);
/* extended configuration space (any offset < 4096); needs ECAM */
bool qndk_has_ecam(QNdkTelemetry *t);
uint32_t qndk_ext_config_readl(QNdkTelemetry *t, uint32_t off);
void qndk_ext_config_writel(QNdkTelemetry *t, uint32_t off, uint32_t val);
/*
 * The device tree from the VSEC at 0x100: the XZ stream read word by word
 * and decompressed (the word index is left as it was); NULL without ECAM
 * or VSEC. g_free() the result.
 */
void *qndk_devtree(QNdkTelemetry *t, size_t *size);

/* ---- the traffic object ---- */

/*
 * qom-set PROP of /objects/ID to the JSON value VALUE_JSON ("3",
 * "\"frames\"", "true"); returns NULL on success, else QEMU's error
 * message (g_free() it).
 */
char *qndk_traffic_set(QNdkTelemetry *t, const char *id, const char *prop,
                       const char *value_json);

/* ---- libpcie-telemetry over qtest ---- */

/*
 * Register accessors for ptl_block_open(ops, t, ...): reads and writes
 * are qtest accesses to the block; now_ns() steps the virtual clock by
 * t->poll_ns (1 us by default) and returns it, so the library's
 * BUSY polls and timeouts run on virtual time.
 */
extern const ptl_regs_ops qndk_ptl_ops;

#endif
