/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the QTest programs of ndk-pcie-telemetry share: a card on the
 * libqos node (qos/ndk-telemetry.h) with short accessors, the clock
 * arithmetic of the default card, and the QMP, migration and start-up
 * helpers.
 *
 * The expected values of every program come from the facts about the
 * real block (register values, layout rules, drain and snapshot timing)
 * and from arithmetic done in the tests, never from reading the device
 * once and asserting it back.
 *
 * Clocks of the defaults: PCIe 400 MHz (2.5 ns), DMA 200 MHz (5 ns), MI
 * 100 MHz (10 ns); DRAIN_PERIOD 4096, so window 0 of a probe's cycle
 * counter covers its cycles [0, 4095) and window k >= 1 the cycles
 * [4096 k - 1, 4096 (k + 1) - 1). The other channels' windows end a few
 * cycles later, by the slot they are read out in (ch_edge in ndk-sim.h),
 * and all but the MVB channels and the histogram bands miss cycle 0, the
 * reset's last (ch_first).
 *
 * Environment (tests/qtest/run-qtest.sh sets both):
 *   QTEST_QEMU_BINARY  the QEMU with the device
 *   PTM_SAMPLE_PLUGIN  path of the sample traffic plugin the project's build
 *                      makes, build/traffic-gen/plugins/ptm-sample-plugin.so
 */
#ifndef NDK_COMMON_H
#define NDK_COMMON_H

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "qobject/qdict.h"

#include "ndk-telemetry.h"

/* BAR0 of a card with the block at offset 0: the block alone */
#define NDK_BAR_SIZE            PTL_BLOCK_SIZE

/* Clocks and generics of the defaults */
#define PCIE_HZ                 400000000ull
#define DMA_HZ                  200000000ull
#define MI_HZ                   100000000ull
#define MI_NS                   QNDK_MI_NS_DEFAULT
#define NS_PER_S                1000000000ull
#define DP                      4096
#define ITEM_BYTES              4
#define DEF_ENTRIES             64

/* Counter entry e of a block whose window is at the default CNT_BASE */
#define CNT(e)                  ptl_cnt_offset(PTL_CNT_BASE_VALUE, (e))

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

extern const char *const bus_name[4];      /* RQ, RC, UP, DOWN */

/* Entry of channel k of bus i of RQ, RC, UP, DOWN */
unsigned bus_ch(unsigned i, unsigned k);

/*
 * PCIe fields that pci_regs.h of QEMU 10.0 does not name: 10-bit tag
 * requester supported (Device Capabilities 2) and enabled (Control 2)
 */
#define EXP_DEVCAP2_10BIT_TAG   0x00020000
#define EXP_DEVCTL2_10BIT_TAG   0x1000

/* Where the node puts q35's ECAM */
#define ECAM_BASE               QNDK_Q35_ECAM_BASE

/* ------------------------------------------------------------------ */
/* A QEMU with the card, on the libqos node                             */

/*
 * A card: the node's object. ndk_close() quits its QEMU whether the node
 * started it (qndk_start) or the test did (an incoming migration, a
 * hot-plugged card).
 */
typedef struct Ndk {
    QNdkTelemetry *t;
} Ndk;

/*
 * Start "-machine MACHINE -nodefaults EXTRA" and open the only function
 * with these IDs on the node; BAR0 must be a 32-bit, non-prefetchable
 * memory BAR of bar_size bytes. Virtual time moves only when the test
 * steps it: t->t0 is the time the device was realized and reset.
 */
void ndk_open_bar(Ndk *n, const char *machine, int vendor, int device,
                  uint64_t bar_size, const char *extra);
void ndk_open_ids(Ndk *n, const char *machine, int vendor, int device,
                  const char *extra);
void ndk_open(Ndk *n, const char *machine, const char *extra);
/* the card's own IDs, BAR0 of bar_size bytes */
void ndk_open_sized(Ndk *n, const char *machine, uint64_t bar_size,
                    const char *extra);
/*
 * The only card on bus, hot-plugged at now into a QEMU of the caller's
 * (t->t0 = now, no step); ndk_close() frees bus and quits its QEMU.
 */
void ndk_open_plugged(Ndk *n, QPCIBus *bus, int64_t now, uint64_t bar_size);
void ndk_close(Ndk *n);
/* functions with these IDs on bus */
unsigned ndk_count_functions(QPCIBus *bus, int vendor, int device);

/* to time t exactly (not before now) */
void step_to(Ndk *n, int64_t t);
void step(Ndk *n, int64_t ns);
/* The next multiple of the MI period at or after t */
int64_t mi_edge(int64_t t);

/* registers, from the start of the block */
uint32_t rd(Ndk *n, uint32_t off);
void wr(Ndk *n, uint32_t off, uint32_t val);
uint64_t rdq(Ndk *n, uint32_t off);
/* Counter e from its two 32-bit words, low first */
uint64_t cnt(Ndk *n, unsigned e);
void read_counters(Ndk *n, unsigned entries, uint64_t *out);
/* BAR0 at offset off, wherever the block is */
uint32_t bar_rd(Ndk *n, uint64_t off);
void bar_wr(Ndk *n, uint64_t off, uint32_t val);
uint64_t bar_rdq(Ndk *n, uint64_t off);

/* Wait (in MI cycles) until BUSY drops; returns the cycles waited. */
unsigned wait_busy(Ndk *n, unsigned max_cycles);
/*
 * SNAPSHOT, BUSY from the second MI cycle, and its end (a sweep of
 * entries); unlike qndk_snapshot() READ_SEL stays as it is.
 */
void snapshot(Ndk *n, unsigned entries);
void check_counters(const char *what, const uint64_t *got,
                    const uint64_t *exp, unsigned entries);

/* ------------------------------------------------------------------ */
/* Clock arithmetic                                                     */

/* Cycle of a clock of hz running at virtual time t (its last edge) */
uint64_t cycle_at(int64_t t, uint64_t hz);
/* First cycle at or after virtual time t: a probe's cycle 0 after reset */
uint64_t first_cycle(int64_t t, uint64_t hz);
/* Virtual time of cycle c, rounded up to a whole ns */
int64_t cycle_ns(uint64_t c, uint64_t hz);
/* Absolute cycle of the drain that ends window k of a probe */
uint64_t drain_cycle(uint64_t origin, uint64_t dp, uint64_t k);
/*
 * Whole windows a probe has drained by time t. t must be well inside a
 * window: at least 3 us after the last drain, so that its deltas have
 * reached the counters, and 1 us before the next one.
 */
uint64_t windows_by(int64_t t, uint64_t origin, uint64_t hz, uint64_t dp);
/*
 * Virtual time from which the live registers show what drain k of the
 * default PCIe probe with this origin sent.
 */
int64_t word_ns(uint64_t origin, uint64_t k);
/*
 * Half a PCIe window after the drain of PCIe window k - 1 of a card reset
 * at 0 (10240 k - 2.5 ns): mid-window for the DMA probe as well, whose
 * drains fall at 20480 j - 5 ns.
 */
int64_t mid_window(const Ndk *n, unsigned k);
/* Exact cycle counters of a default card reset at t0, read at t */
void check_cycles(const char *what, const uint64_t *c, int64_t t0,
                  int64_t t);

/* ------------------------------------------------------------------ */
/* The register file and the PCIe capability                            */

typedef struct RegExpect {
    uint32_t off;
    uint32_t val;
} RegExpect;

/*
 * The values FACTS.md lists for the defaults, before the first drain; the
 * first DEFAULT_CFG_REGS of them never change.
 */
#define DEFAULT_CFG_REGS 13
#define DEFAULT_REGS     15
extern const RegExpect default_regs[DEFAULT_REGS];

/* PCIE_STATUS as Device Control, Device Control 2 and Link Control say */
uint32_t status_from_config(uint16_t devctl, uint16_t devctl2,
                            uint16_t lnkctl);
/* Negotiate these settings in the capability at exp */
void set_pcie_settings(Ndk *n, uint8_t exp, unsigned mps, unsigned mrrs,
                       bool ext_tag, bool tag10, bool rcb);

/* ECAM address of (bus, devfn, off) under q35 */
uint64_t ecam_at(int bus, int devfn, uint32_t off);
/* q35's ECAM on at ECAM_BASE again (a system reset turns it off) */
void ecam_enable(QPCIBus *bus);
/* The same without a libqos bus: MCH's PCIEXBAR through 0xcf8/0xcfc */
void ecam_on(QTestState *qts);
/* A configuration write of len 1, 2 or 4 bytes through ECAM */
void ecam_wr(QTestState *qts, int bus, int devfn, uint32_t off, uint32_t v,
             int len);

/* ------------------------------------------------------------------ */
/* QMP, files, QEMUs that must not start                                */

QDict *qom_set_int(QTestState *qts, const char *path, const char *prop,
                   int64_t val);
void qom_set_ok(QTestState *qts, const char *path, const char *prop,
                int64_t val);
/* INT64_MIN if qom-get fails */
int64_t qom_get_int(QTestState *qts, const char *path, const char *prop);
QDict *qom_set_str(QTestState *qts, const char *path, const char *prop,
                   const char *val);
/* The message of a refused qom-set, "" if it was taken; frees rsp. */
char *qom_set_error(QDict *rsp);
char *qom_get_str(QTestState *qts, const char *path, const char *prop);

char *write_tmp(const char *dir, const char *name, const char *text);

/*
 * QEMU started with the arguments extra (NULL-terminated) after a q35
 * machine must exit with an error whose text contains needle.
 */
void expect_start_refused(const char *const *extra, const char *needle);
/* QEMU with the device must exit with an error that names the property. */
void expect_refused(const char *props, const char *name);

/* ------------------------------------------------------------------ */
/* Migration                                                            */

void wait_migration(QTestState *qts);
/* Stop A, migrate it into the file at uri and quit it. */
void migrate_out(Ndk *a, const char *uri);
/*
 * Start B with the same command line as A, load the file at uri, continue
 * it at t1 and open the card as it came with the state (its BAR and
 * enable, and on q35 the MCH's ECAM).
 */
void migrate_in(Ndk *b, const char *machine, const char *args,
                const char *uri, int64_t t0, int64_t t1);

/* ------------------------------------------------------------------ */
/* Traffic objects                                                      */

/* telemetry-traffic-random with props on a default card */
char *random_args(const char *props);

#define PTC_ARGS \
    "-object telemetry-traffic-ptc,id=t0 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0"

/*
 * The settings the ptc tests negotiate in Device Control right after the
 * start, before the first drain, so that every window is counted with
 * them: MPS 256 B (1), MRRS 512 B (2), extended tags, no 10-bit tags, RCB
 * 64 B. PCIE_STATUS then reads 1 | 2 << 3 | 1 << 6 | link up << 9.
 */
#define PTC_STATUS      (1u | 2u << 3 | 1u << 6 | 1u << 9)

void ptc_open(Ndk *n, const char *args);

#endif
