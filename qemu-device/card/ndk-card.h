/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the ndk-pcie-telemetry device: its state and what its three files
 * ask of each other. ndk-pcie-telemetry.c is the BAR, the clock, the link,
 * the DMA owner, realize and reset; ndk-card-config.c the PCI
 * configuration space and the properties' checks; ndk-card-migration.c the
 * saved state. Not an API.
 */
#ifndef NDK_CARD_H
#define NDK_CARD_H

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/crc32c.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "qemu/timer.h"
#include "system/cpu-timers.h"
#include "system/runstate.h"
#include "system/tcg.h"
#include "hw/pci/msi.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "qom/object.h"
#include "trace.h"

#include "ptm-core.h"
#include "ptm-sizing.h"
#include "ptm-devtree.h"
#include "ndk-dma.h"
#include "ptm-dma-traffic.h"
#include "ptm-frames.h"
#include "ptm-link.h"
#include "ptm-transfers.h"
#include "pcie-link-traffic.h"
#include "flit-pci.h"
#include "telemetry-traffic.h"
#include "pg381-core.h"

#define TYPE_NDK_PCIE_TELEMETRY "ndk-pcie-telemetry"
OBJECT_DECLARE_SIMPLE_TYPE(NdkPcieTelemetryState, NDK_PCIE_TELEMETRY)

/*
 * Default ID: QEMU's test-device vendor (as edu's 1234:11e8) and the NDK
 * device-tree VSEC ID as device; no QEMU device uses it.
 */
#define NDK_TELEMETRY_VENDOR_ID 0x1234
#define NDK_TELEMETRY_DEVICE_ID 0x0d7b

/*
 * MSI: one vector, 64-bit addresses, no per-vector masking, below the PCIe
 * capability at 0x80. The nfb driver asks for one (pci_enable_msi); the
 * block raises no interrupt.
 */
#define NDK_TELEMETRY_MSI_OFFSET 0x50
#define NDK_TELEMETRY_PCIE_OFFSET 0x80
#define NDK_TELEMETRY_FLIT_OFFSET 0x200   /* after the device-tree VSEC */

/* Highest block-offset: BAR0 stays within 256 MiB. */
#define NDK_TELEMETRY_MAX_BLOCK_OFFSET 0x0FFF0000u

/*
 * Over a source whose counts cost per window (PtmSourceOps.cost) the model
 * catches up in the background, so that no access waits for a long
 * backlog: a timer every TICK of virtual time advances it, for at most
 * SLICE of host time or half the interval, whichever is longer (under the
 * big lock: a model that costs up to half of real time keeps up), in
 * steps that cost about that at the last tick's cost, one where it can
 * (at least STEP of virtual time). The
 * interval adapts so that a tick costs about TARGET of host time (between
 * TICK_MIN and TICK_MAX): the backlog an access may find costs about that
 * much. A card whose shortest tick costs more ticks as long as a tick
 * costs at most ACCESS (the most an access should wait for a backlog),
 * and one that cannot even do that at TICK_MIN, or whose accumulator
 * cannot keep up at all (its reads wait longer in any case), at TICK_MAX:
 * it pays less per virtual second that way (every advance settles every
 * probe). While catching up costs nothing
 * (ptm_core_lazy) no timer runs.
 * A model that costs more than real time cannot keep up however often it
 * runs: a slice that ends behind doubles the interval, and BEHIND_TICKS in
 * a row that end behind at TICK_MAX (more than the periods after a
 * command or power-on, simulated delta by delta, take) stop the timer
 * until the next access, which catches up in steps of about WAIT_COST
 * each (checking for shutdown between them). An access that catches up
 * more than FREEZE stops the guest's clock meanwhile (TCG): to the guest
 * the access takes no time, and a card that costs more than real time
 * slows the guest down by what it costs instead of leaving each next
 * access a longer backlog.
 */
#define NDK_TELEMETRY_TICK_MIN_NS (10 * SCALE_MS)
#define NDK_TELEMETRY_TICK_MAX_NS (64 * SCALE_MS)
#define NDK_TELEMETRY_TARGET_NS (100 * SCALE_US)
#define NDK_TELEMETRY_ACCESS_NS (400 * SCALE_US)
#define NDK_TELEMETRY_SLICE_NS  (1 * SCALE_MS)
#define NDK_TELEMETRY_STEP_NS   (10 * SCALE_US)
#define NDK_TELEMETRY_WAIT_COST_NS (200 * SCALE_MS)
#define NDK_TELEMETRY_BEHIND_TICKS 8
/*
 * An access that finds more than this to catch up stops the guest's
 * clock while it does (see ndk_telemetry_catch_up).
 */
#define NDK_TELEMETRY_FREEZE_NS (1 * SCALE_MS)

/*
 * The PG381 performance traffic generator's 64 KiB window in BAR0, after
 * the DMA engine's switches (docs/pg381.md, "On the card")
 */
#define NDK_PG381_BASE          0x01800000u

/* PCIe fields that pci_regs.h of QEMU 10.0 does not name */
#define EXP_DEVCAP2_10BIT_TAG_COMP 0x00010000
#define EXP_DEVCAP2_10BIT_TAG_REQ  0x00020000
#define EXP_DEVCTL2_10BIT_TAG_REQ  0x1000

/* A guest access to BAR0, kept for the card's TLPs (ndk-card-tlps.c) */
#define NDK_TLP_LOG 4096
/* The addresses the card's frames write: pages from 64 GiB up, in turn */
#define NDK_TLP_ADDR_BASE   0x1000000000ull
#define NDK_TLP_ADDR_PAGES  65536
typedef struct NdkBarAccess {
    uint64_t t_ns;
    uint64_t addr;              /* guest physical */
    uint8_t size;
    bool write;
    uint8_t tag;
} NdkBarAccess;

struct NdkPcieTelemetryState {
    PCIDevice parent_obj;

    MemoryRegion bar;           /* all of BAR0; reads 0 outside the block */
    MemoryRegion block;         /* the telemetry block at block_offset */
    QEMUTimer *timer;
    uint64_t tick_ns;           /* virtual time between catch-ups */
    double host_per_virt;       /* what the last catch-up cost, ns per ns */
    Notifier shutdown;          /* sets shutting_down */
    bool shutting_down;
    /*
     * A vCPU catches a long backlog up off the big lock: while it does,
     * the core is its alone, and everything else that would touch it
     * waits for caught_up (the timer skips a tick).
     */
    bool catching_up;
    QemuCond caught_up;
    bool behind;                /* background catch-up left to accesses */
    bool steady_loss;           /* the accumulator cannot keep up at all */
    unsigned behind_ticks;      /* ticks in a row behind at TICK_MAX */
    PtmCore *core;
    uint8_t *state;             /* migration buffer of the core */
    uint32_t state_len;
    uint8_t *devtree_xz;        /* the compressed device tree */
    size_t devtree_len;
    uint16_t vsec;              /* its VSEC in config space, 0 if none */
    uint32_t devtree_crc;       /* migration: the stream's CRC-32C */

    /* properties */
    PtmConfig cfg;
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t max_payload;       /* bytes the card supports */
    bool ext_tag;               /* extended (8-bit) tags supported */
    bool tag_10bit;             /* 10-bit tag requester supported */
    char *fpga_device;
    TelemetryTraffic *traffic;
    uint32_t block_offset;      /* bytes into BAR0 */
    bool devtree;               /* offer the device-tree VSEC */
    OnOffAuto msi;              /* offer the MSI capability */
    PCIExpLinkSpeed link_speed; /* Link Capabilities and Status */
    PCIExpLinkWidth link_width;
    /* the firmware's identity in the device tree (PtmFirmwareId) */
    char *card_name;            /* NULL: by the PCI ID, set at realize */
    char *project_name;
    char *project_variant;
    char *project_version;
    uint32_t build_time;
    char *build_tool;
    char *build_author;
    char *build_revision;
    uint32_t dma_queues;        /* RX and TX queues per DMA port; 0: none */

    NdkDma dma;                 /* the DMA engine, with dma_queues */
    PtmDmaTraffic *dma_log;     /* its transfers, the block's source */
    PtmSettings settings;       /* negotiated, as last synced to the core */

    /* the PG381 traffic generator (ndk-card-pg381.c), with pg381 */
    bool pg381_present;
    bool pg381_out_of_order;    /* its IP generation parameters */
    bool pg381_data_integrity;
    Pg381Core *pg381;
    MemoryRegion pg381_mr;
    QEMUTimer *pg381_timer;     /* at its next transfer while it runs */
    uint8_t *pg381_state;       /* migration buffer: generator, then log */
    uint32_t pg381_state_len;

    /* the link as a port above counts it (pcie-link-traffic) */
    const PtmSourceOps *src_ops;    /* the block's traffic source */
    void *src_opaque;
    PtmLinkCount *link;         /* from the first time a port asked */
    uint64_t mmio_read_bytes;   /* BAR reads: completions up */
    uint64_t mmio_write_bytes;  /* BAR writes down */
    uint8_t *link_state;        /* migration buffer of the link's counts */
    uint32_t link_state_len;

    /* PCIe 6 flit mode (docs/flit.md) */
    bool flit_mode;
    uint32_t flit_ltssm_regs;
    uint32_t flit_flight_ns;
    FlitPci flit;
    uint64_t flit_origin;       /* the link's totals count from here */

    /* the last BAR accesses, as TLPs for a tracer (ndk-card-tlps.c) */
    NdkBarAccess *tlp_log;
    uint64_t tlp_log_total;
    uint8_t tlp_tag;
    /* and its frames, one by one, from where a tracer last was */
    PtmFrameWalk *tlp_frames;
    PtmLinkCount *tlp_count;    /* what the walk passed, counted */
    uint64_t tlp_counted;
    uint64_t tlp_frame_no;
};

/* ndk-card-tlps.c */
void ndk_telemetry_log_access(NdkPcieTelemetryState *s, bool write,
                              hwaddr bar_off, unsigned size);
void ndk_telemetry_tlps_reset(NdkPcieTelemetryState *s);
size_t ndk_telemetry_tlps(Object *obj, uint64_t from, uint64_t to,
                          PcieTlp *out, size_t max, uint64_t *resume);

static inline uint64_t now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* ndk-pcie-telemetry.c */
/* A guest access of `size` bytes to BAR0: a TLP on the link */
void ndk_telemetry_count_mmio(NdkPcieTelemetryState *s, bool write,
                              unsigned size);
void ndk_telemetry_quiesce(NdkPcieTelemetryState *s);
void ndk_telemetry_schedule(NdkPcieTelemetryState *s);
void ndk_telemetry_link_shape(NdkPcieTelemetryState *s,
                                     PtmProbeShape *sh);
/* The PCIe clock's cycle at virtual time t_ns */
uint64_t ndk_telemetry_pcie_cycle(NdkPcieTelemetryState *s, uint64_t t_ns);

/* ndk-card-config.c */
void ndk_telemetry_sync_settings(NdkPcieTelemetryState *s);
uint32_t ndk_telemetry_config_read(PCIDevice *pdev, uint32_t addr,
                                          int len);
void ndk_telemetry_config_write(PCIDevice *pdev, uint32_t addr,
                                       uint32_t val, int len);
bool ndk_telemetry_check_props(NdkPcieTelemetryState *s, Error **errp);
int ndk_telemetry_init_pcie(NdkPcieTelemetryState *s, Error **errp);
bool ndk_telemetry_init_msi(NdkPcieTelemetryState *s, Error **errp);
bool ndk_telemetry_init_devtree(NdkPcieTelemetryState *s,
                                       Error **errp);
void ndk_telemetry_reset_pcie(NdkPcieTelemetryState *s);
bool ndk_telemetry_init_flit(NdkPcieTelemetryState *s, Error **errp);
FlitPci *ndk_telemetry_flit_port(NdkPcieTelemetryState *s);

/* ndk-card-pg381.c */
bool ndk_pg381_check_props(NdkPcieTelemetryState *s, Error **errp);
void ndk_pg381_realize(NdkPcieTelemetryState *s);
void ndk_pg381_unrealize(NdkPcieTelemetryState *s);
void ndk_pg381_reset(NdkPcieTelemetryState *s);
/* Its transfers up to t_ns into the DMA log, before anything else at t_ns */
void ndk_pg381_advance(NdkPcieTelemetryState *s, uint64_t t_ns);
void ndk_pg381_set_pcie(NdkPcieTelemetryState *s);
extern const VMStateDescription vmstate_ndk_pg381;

/* ndk-card-migration.c */
extern const VMStateDescription vmstate_ndk_telemetry;

#endif
