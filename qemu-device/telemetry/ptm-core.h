/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of CESNET's PCIE_TELEMETRY_MI block: register file, the
 * per-endpoint probes with their drain windows and delta FIFOs, and the
 * single MI-clock accumulator with its live and snapshot counter copies.
 *
 * Time enters only as nanoseconds of a virtual clock; the model computes
 * what each clock domain did up to that moment when it is asked, so the
 * result depends on the sequence of (time, access) pairs alone.
 */
#ifndef PTM_CORE_H
#define PTM_CORE_H

#include "ptm-types.h"
#include "ptm-count.h"

#define PTM_MAGIC           0x50544C4Du
#define PTM_VERSION         0x00020000u

/* Register offsets */
#define PTM_REG_MAGIC        0x00
#define PTM_REG_VERSION      0x04
#define PTM_REG_CFG_TOPOLOGY 0x08
#define PTM_REG_CFG_LAYOUT   0x0C
#define PTM_REG_CFG_PCIE     0x10
#define PTM_REG_CFG_DMA      0x14
#define PTM_REG_CFG_DRAIN    0x18
#define PTM_REG_CNT_BASE     0x1C
#define PTM_REG_COMMAND      0x20
#define PTM_REG_STATUS       0x24
#define PTM_REG_READ_SEL     0x28
#define PTM_REG_CFG_REGIONS  0x2C
#define PTM_REG_CFG_WIDTH    0x30
#define PTM_REG_CFG_HIST     0x34
#define PTM_REG_CFG_CAPACITY 0x38
#define PTM_REG_CFG_WIDTH_DMA 0x3C
#define PTM_REG_PCIE_STATUS  0x40
#define PTM_REG_PCIE_TAGS    0x80
#define PTM_REG_PCIE_STFIFO  0xC0

/* ---- the block ---- */

/* cfg must be valid (ptm_config_check). The counter memory starts zeroed. */
PtmCore *ptm_core_new(const PtmConfig *cfg);
void ptm_core_free(PtmCore *core);
const PtmLayout *ptm_core_layout(const PtmCore *core);
/* The shape of endpoint e's probe of domain d, as sources are given it. */
void ptm_core_probe_shape(const PtmCore *core, unsigned e, PtmDomain d,
                          PtmProbeShape *sh);
void ptm_core_geometry(const PtmCore *core, PtmGeometry *geo);

/*
 * The reference evaluation: every window counted at its drain, every delta
 * carried with its value and added by the accumulator, as the RTL does it.
 * Slow; the oracle the fast evaluation is tested against. Set it before
 * anything runs.
 */
void ptm_core_set_reference(PtmCore *core, bool on);

/* The traffic source; NULL ops = idle with the link up. */
void ptm_core_set_source(PtmCore *core, const PtmSourceOps *ops, void *opaque);
/*
 * Settings of endpoint e as the host negotiated them from now_ns on; the
 * drains sample them. The model first catches up to now_ns, so drains
 * before that moment keep the settings they saw.
 */
void ptm_core_set_settings(PtmCore *core, uint64_t now_ns, unsigned e,
                           const PtmSettings *s);

/* Power-on: counter memory zeroed, then everything as after an MI reset. */
void ptm_core_power_on(PtmCore *core, uint64_t now_ns);
/* MI reset: probes, FIFOs, flags, READ_SEL and live registers restart. */
void ptm_core_reset(PtmCore *core, uint64_t now_ns);
/* MI_RESET held for `cycles` MI cycles from now (ptm_core_reset: 1). */
void ptm_core_mi_reset(PtmCore *core, uint64_t now_ns, unsigned cycles);

/* Bring every clock domain up to now_ns (optional: accesses do it too). */
void ptm_core_advance(PtmCore *core, uint64_t now_ns);
/*
 * The same for work in the background: over a timing that repeats, when
 * enough whole periods are left to jump, it stops at the last whole period
 * before now_ns, so that no part of a period is simulated delta by delta
 * only to be simulated again up to the next access.
 */
void ptm_core_advance_coarse(PtmCore *core, uint64_t now_ns);
/* The virtual time up to which the model has evaluated the block. */
uint64_t ptm_core_done_ns(const PtmCore *core);
/*
 * Whether catching up over any stretch of virtual time now costs about
 * the same as over a short one: the source counts in closed form (it
 * declares PTM_COST_RANGE) and the timing of drains and deltas repeats (no
 * delta lost, no command running). While it does, nothing needs to run
 * until the next access.
 */
bool ptm_core_lazy(const PtmCore *core);

/* BAR accesses: any size 1..8, any alignment, little endian. */
uint64_t ptm_core_read(PtmCore *core, uint64_t now_ns, uint32_t addr,
                       unsigned size);
void ptm_core_write(PtmCore *core, uint64_t now_ns, uint32_t addr,
                    uint64_t val, unsigned size);

/*
 * The PCIe cycle (since virtual time 0) with which endpoint 0's PCIe probe
 * starts its next drain window after now_ns: where a live change of the
 * traffic takes effect.
 */
uint64_t ptm_core_next_pcie_window(const PtmCore *core, uint64_t now_ns);

/* MI cycle of a moment, and the BUSY window of the last command. */
uint64_t ptm_core_mi_cycle(const PtmCore *core, uint64_t now_ns);
uint64_t ptm_core_busy_until(const PtmCore *core);
/* Raw counter e of the live (snapshot = false) or snapshot copy. */
uint64_t ptm_core_counter(const PtmCore *core, bool snapshot, unsigned e);
/* Deltas lost so far (diagnostics; the guest sees only the flag). */
uint64_t ptm_core_lost_deltas(const PtmCore *core);
/* Deltas applied by the accumulator so far (diagnostics). */
uint64_t ptm_core_applied_deltas(const PtmCore *core);


/* Migration: the whole dynamic state as a byte string. */
void *ptm_core_save(const PtmCore *core, size_t *len);
/* Returns NULL on success, else a message to g_free(). */
char *ptm_core_load(PtmCore *core, const void *buf, size_t len);

#endif
