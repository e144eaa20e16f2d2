/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ndk-pcie-telemetry: a PCI(e) function whose BAR0 is CESNET's
 * PCIE_TELEMETRY_MI block, for developing and testing NDK software without
 * an FPGA. The block itself is modelled in ptm-core.c without QEMU; this
 * file is the glue: properties, BAR, MSI and PCIe capabilities, the NDK
 * device-tree VSEC, clock, reset, migration and trace events.
 *
 * docs/ndk-pcie-telemetry.md in the project describes the device.
 */
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
#include "ptm-devtree.h"
#include "ndk-dma.h"
#include "ptm-dma-traffic.h"
#include "ptm-link.h"
#include "ptm-transfers.h"
#include "pcie-link-traffic.h"
#include "telemetry-traffic.h"

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

/* PCIe fields that pci_regs.h of QEMU 10.0 does not name */
#define EXP_DEVCAP2_10BIT_TAG_COMP 0x00010000
#define EXP_DEVCAP2_10BIT_TAG_REQ  0x00020000
#define EXP_DEVCTL2_10BIT_TAG_REQ  0x1000

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

    /* the link as a port above counts it (pcie-link-traffic) */
    const PtmSourceOps *src_ops;    /* the block's traffic source */
    void *src_opaque;
    PtmLinkCount *link;         /* from the first time a port asked */
    uint64_t mmio_read_bytes;   /* BAR reads: completions up */
    uint64_t mmio_write_bytes;  /* BAR writes down */
    uint8_t *link_state;        /* migration buffer of the link's counts */
    uint32_t link_state_len;
};

static uint64_t now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void ndk_telemetry_schedule(NdkPcieTelemetryState *s);
static void ndk_telemetry_link_advance(NdkPcieTelemetryState *s,
                                       uint64_t t_ns);

/*
 * A guest access to BAR0 is a TLP on the link: a write carries its bytes
 * down, a read's completion carries them up, in whole DWs.
 */
static void ndk_telemetry_count_mmio(NdkPcieTelemetryState *s, bool write,
                                     unsigned size)
{
    uint64_t dws = ROUND_UP(size, 4);

    if (write) {
        s->mmio_write_bytes += dws;
    } else {
        s->mmio_read_bytes += dws;
    }
}

/*
 * QEMU hands an MMIO access that crosses from one region into the next to
 * the region it starts in, whole. The card's MI bus decodes every byte by
 * its own address: bytes outside the block read 0 and are not written,
 * bytes inside reach the block, whichever side the access starts on. So
 * both regions pass on the part [addr, addr + size) of the block's
 * [0, PTM_BAR_SIZE) that an access covers, and only that.
 */
static bool ndk_telemetry_catch_up(NdkPcieTelemetryState *s, uint64_t t);

/* Wait (with the big lock) until no vCPU catches up off it. */
static void ndk_telemetry_quiesce(NdkPcieTelemetryState *s)
{
    while (s->catching_up) {
        qemu_cond_wait_bql(&s->caught_up);
    }
}

static uint64_t ndk_telemetry_block_read(NdkPcieTelemetryState *s,
                                         hwaddr addr, unsigned size)
{
    uint64_t t, val;

    ndk_telemetry_quiesce(s);
    t = now_ns();
    if (!ndk_telemetry_catch_up(s, t)) {
        return 0;
    }
    val = ptm_core_read(s->core, t, addr, size);
    ndk_telemetry_schedule(s);
    trace_ptm_mmio_read(addr, size, val);
    return val;
}

static void ndk_telemetry_block_write(NdkPcieTelemetryState *s, hwaddr addr,
                                      uint64_t val, unsigned size)
{
    uint64_t t;

    ndk_telemetry_quiesce(s);
    t = now_ns();
    trace_ptm_mmio_write(addr, size, val);
    if (!ndk_telemetry_catch_up(s, t)) {
        return;
    }
    ptm_core_write(s->core, t, addr, val, size);
    ndk_telemetry_schedule(s);
    /* COMMAND and its aliases below the counter window */
    if (addr < PTM_CNT_BASE && (addr & 0xFC) == PTM_REG_COMMAND &&
        (val & 0xF)) {
        trace_ptm_command(val & 0xF, ptm_core_mi_cycle(s->core, t),
                          ptm_core_busy_until(s->core));
    }
}

static uint64_t ndk_telemetry_read(void *opaque, hwaddr addr, unsigned size)
{
    ndk_telemetry_count_mmio(opaque, false, size);
    /* the bytes past the block's end read 0 */
    return ndk_telemetry_block_read(opaque, addr,
                                    MIN(size, PTM_BAR_SIZE - addr));
}

static void ndk_telemetry_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    ndk_telemetry_count_mmio(opaque, true, size);
    ndk_telemetry_block_write(opaque, addr, val,
                              MIN(size, PTM_BAR_SIZE - addr));
}

static const MemoryRegionOps ndk_telemetry_mmio_ops = {
    .read = ndk_telemetry_read,
    .write = ndk_telemetry_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/*
 * BAR0 outside the block: nothing decodes there on the card's MI bus. An
 * access that runs on into the block reaches it with those bytes.
 */
static uint64_t ndk_telemetry_unused_read(void *opaque, hwaddr addr,
                                          unsigned size)
{
    NdkPcieTelemetryState *s = opaque;
    hwaddr off = s->block_offset;

    trace_ptm_bar_unused(addr, size, 0);
    ndk_telemetry_count_mmio(s, false, size);
    if (addr < off && addr + size > off) {
        return ndk_telemetry_block_read(s, 0, addr + size - off)
               << 8 * (off - addr);
    }
    return 0;
}

static void ndk_telemetry_unused_write(void *opaque, hwaddr addr,
                                       uint64_t val, unsigned size)
{
    NdkPcieTelemetryState *s = opaque;
    hwaddr off = s->block_offset;

    trace_ptm_bar_unused(addr, size, 1);
    ndk_telemetry_count_mmio(s, true, size);
    if (addr < off && addr + size > off) {
        ndk_telemetry_block_write(s, 0, val >> 8 * (off - addr),
                                  addr + size - off);
    }
}

static const MemoryRegionOps ndk_telemetry_unused_ops = {
    .read = ndk_telemetry_unused_read,
    .write = ndk_telemetry_unused_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/* Arm the catch-up timer while the model needs it, stop it otherwise. */
/*
 * The DMA engine's transfer log forgets what the block has counted, with
 * a margin of 2 ms (the block settles a drain window's cycles again at
 * most, 82 us at the longest).
 */
#define NDK_TELEMETRY_DMA_LOG_KEEP_NS (2 * SCALE_MS)

static void ndk_telemetry_prune_dma_log(NdkPcieTelemetryState *s)
{
    uint64_t done = ptm_core_done_ns(s->core);

    if (s->dma_log && done > NDK_TELEMETRY_DMA_LOG_KEEP_NS) {
        /* a port's count of the link reads the log too */
        ndk_telemetry_link_advance(s, done - NDK_TELEMETRY_DMA_LOG_KEEP_NS);
        ptm_dma_traffic_prune(s->dma_log,
                              done - NDK_TELEMETRY_DMA_LOG_KEEP_NS);
    }
}

static void ndk_telemetry_schedule(NdkPcieTelemetryState *s)
{
    if (!s->timer) {
        return;
    }
    if (s->dma_log) {
        /* transfers still on the buses keep the background count going */
        ptm_dma_traffic_set_now(s->dma_log, now_ns());
    }
    if ((ptm_core_lazy(s->core) &&
         !(s->dma_log && ptm_dma_traffic_holds(s->dma_log))) || s->behind) {
        timer_del(s->timer);
    } else if (!timer_pending(s->timer)) {
        timer_mod(s->timer, now_ns() + s->tick_ns);
    }
}

/*
 * Advance the model towards t until host time `stop`, in steps that cost
 * about step_cost at the last measured cost but span at least
 * min_step (short ranges cost extra: a range that ends inside a source's
 * decision block, or one too short to jump over periods of the timing
 * after a command). Returns the virtual time reached and measures the
 * cost.
 */
static uint64_t ndk_telemetry_advance_until(NdkPcieTelemetryState *s,
                                            uint64_t t, int64_t stop,
                                            uint64_t min_step,
                                            int64_t step_cost)
{
    uint64_t from = ptm_core_done_ns(s->core), at = from;
    int64_t begin = get_clock();
    unsigned steps = 0;

    while (at < t) {
        uint64_t step = t - at;

        if (s->host_per_virt * step > step_cost) {
            step = MAX((uint64_t)(step_cost / s->host_per_virt), min_step);
        }
        at = MIN(t, at + step);
        steps++;
        ptm_core_advance_coarse(s->core, at);
        if (ptm_core_lazy(s->core)) {
            ptm_core_advance(s->core, t);
            at = t;
            break;
        }
        if (get_clock() >= stop) {
            break;
        }
    }
    if (at > from) {
        s->host_per_virt = (double)MAX(get_clock() - begin, 1) / (at - from);
    }
    trace_ptm_catch_up(from, at, t, get_clock() - begin, steps);
    return at;
}

/*
 * Before an access: a backlog longer than the timer's longest interval
 * (the model could not keep up) is caught up slice by slice, off the big
 * lock, so that the main loop (monitor, timers, signals) and the other
 * vCPUs run meanwhile and only this access waits; it gives up,
 * unperformed, when QEMU is asked to shut down, so that SIGTERM ends it
 * at once however long the wait would be.
 */
static bool ndk_telemetry_catch_up(NdkPcieTelemetryState *s, uint64_t t)
{
    bool locked = bql_locked(), done = true;
    uint64_t backlog = t - MIN(t, ptm_core_done_ns(s->core));
    bool freeze;

    s->behind = false;
    s->behind_ticks = 0;
    if (ptm_core_lazy(s->core) || backlog <= NDK_TELEMETRY_FREEZE_NS) {
        return true;
    }
    /*
     * The guest's clock stands still meanwhile (TCG without icount, where
     * it follows the host's): the access takes no virtual time, so a card
     * that costs more than real time slows the guest down instead of
     * leaving every next access a longer backlog.
     */
    freeze = locked && tcg_enabled() && !icount_enabled() &&
             runstate_is_running();
    if (freeze) {
        cpu_disable_ticks();
    }
    if (backlog <= NDK_TELEMETRY_TICK_MAX_NS) {
        ptm_core_advance(s->core, t);
        if (freeze && runstate_is_running()) {
            cpu_enable_ticks();
        }
        return true;
    }
    s->catching_up = true;
    if (locked) {
        bql_unlock();
    }
    while (ndk_telemetry_advance_until(s, t, get_clock() +
                                       NDK_TELEMETRY_WAIT_COST_NS,
                                       NDK_TELEMETRY_STEP_NS,
                                       NDK_TELEMETRY_WAIT_COST_NS) < t) {
        if (qemu_shutdown_requested_get() != SHUTDOWN_CAUSE_NONE ||
            qatomic_read(&s->shutting_down)) {
            trace_ptm_access_abandoned(t, ptm_core_done_ns(s->core));
            done = false;
            break;
        }
    }
    if (locked) {
        bql_lock();
    }
    /* (a VM stopped meanwhile keeps its clock stopped: vm_start runs it) */
    if (freeze && runstate_is_running()) {
        cpu_enable_ticks();
    }
    s->catching_up = false;
    qemu_cond_broadcast(&s->caught_up);
    return done;
}

/*
 * The main loop takes a shutdown request (and clears it) before it stops
 * the vCPUs: a vCPU still waiting for a catch-up learns of it here.
 */
static void ndk_telemetry_shutdown_notify(Notifier *n, void *data)
{
    NdkPcieTelemetryState *s = container_of(n, NdkPcieTelemetryState,
                                            shutdown);

    qatomic_set(&s->shutting_down, true);
}

static void ndk_telemetry_tick(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;
    uint64_t t, from;
    int64_t slice = MAX(NDK_TELEMETRY_SLICE_NS, (int64_t)s->tick_ns / 2);
    uint64_t at;

    if (s->catching_up) {
        /* a vCPU's wait does this work now: look again a tick later */
        timer_mod(s->timer, now_ns() + s->tick_ns);
        return;
    }
    t = now_ns();
    from = ptm_core_done_ns(s->core);
    /*
     * (one step per tick where the slice allows it: every advance settles
     * every probe's counts, so two steps cost more than one of both)
     */
    at = ndk_telemetry_advance_until(s, t, get_clock() + slice,
                                     NDK_TELEMETRY_STEP_NS, slice);
    ndk_telemetry_prune_dma_log(s);

    if (at < t && s->tick_ns >= NDK_TELEMETRY_TICK_MAX_NS &&
        ++s->behind_ticks >= NDK_TELEMETRY_BEHIND_TICKS) {
        /*
         * Behind at the longest interval, tick after tick (not only the
         * periods after a command, simulated delta by delta): slices of
         * short steps would cost more than the long steps of the next
         * access's wait; leave the rest to it.
         */
        s->behind = true;
        timer_del(s->timer);
        return;
    } else if (at < t) {
        s->tick_ns = MIN(2 * s->tick_ns, NDK_TELEMETRY_TICK_MAX_NS);
    } else if (at > from) {
        s->behind_ticks = 0;
        /* the interval that would have cost TARGET, halfway towards it */
        uint64_t want = (uint64_t)(NDK_TELEMETRY_TARGET_NS /
                                   s->host_per_virt);
        uint64_t bound = (uint64_t)(NDK_TELEMETRY_ACCESS_NS /
                                    s->host_per_virt);

        if (want < NDK_TELEMETRY_TICK_MIN_NS) {
            /*
             * dearer: as long as an access's wait stays bounded, or long
             * (an overloaded card's reads wait longer in any case, and it
             * pays per advance: the longest)
             */
            want = bound >= NDK_TELEMETRY_TICK_MIN_NS && !s->steady_loss
                   ? bound : NDK_TELEMETRY_TICK_MAX_NS;
        }
        want = MIN(want, NDK_TELEMETRY_TICK_MAX_NS);
        s->tick_ns = (s->tick_ns + want) / 2;
    }
    ndk_telemetry_schedule(s);
}

/* What the function negotiated, from its PCIe capability */
static PtmSettings ndk_telemetry_settings(NdkPcieTelemetryState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    PtmSettings set = { .mps = 0, .mrrs = 2 };

    if (pci_is_express(pdev) && pdev->exp.exp_cap) {
        uint8_t *cap = pdev->config + pdev->exp.exp_cap;
        uint16_t devctl = pci_get_word(cap + PCI_EXP_DEVCTL);
        uint16_t devctl2 = pci_get_word(cap + PCI_EXP_DEVCTL2);
        uint16_t lnkctl = pci_get_word(cap + PCI_EXP_LNKCTL);

        set.mps = (devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5;
        set.mrrs = (devctl & PCI_EXP_DEVCTL_READRQ) >> 12;
        set.ext_tag = !!(devctl & PCI_EXP_DEVCTL_EXT_TAG);
        set.tag_10bit = !!(devctl2 & EXP_DEVCTL2_10BIT_TAG_REQ);
        set.rcb_128 = !!(lnkctl & PCI_EXP_LNKCTL_RCB);
    }
    return set;
}

static void ndk_telemetry_sync_settings(NdkPcieTelemetryState *s)
{
    PtmSettings set = ndk_telemetry_settings(s);

    /* the DMA engine's transfers are split by them too */
    s->settings = set;
    if (s->dma_log) {
        ptm_dma_traffic_set_settings(s->dma_log, now_ns(), &set);
    }
    /* every endpoint of the block reports what this function negotiated */
    for (unsigned e = 0; e < s->cfg.pcie_endpoints; e++) {
        ptm_core_set_settings(s->core, now_ns(), e, &set);
    }
}

/*
 * The data register of the device-tree VSEC returns word <index> of the
 * stream; it is computed here so that config space only holds the index,
 * which migrates with the rest of it.
 */
static uint32_t ndk_telemetry_config_read(PCIDevice *pdev, uint32_t addr,
                                          int len)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(pdev);
    uint32_t val = pci_default_read_config(pdev, addr, len);
    uint32_t data = s->vsec + PTM_VSEC_REG_DATA;
    uint32_t index, word;

    if (!s->vsec || !ranges_overlap(addr, len, data, 4)) {
        return val;
    }
    index = pci_get_long(pdev->config + s->vsec + PTM_VSEC_REG_INDEX);
    word = ptm_devtree_word(s->devtree_xz, s->devtree_len, index);
    trace_ptm_devtree_read(index, word);
    for (int i = 0; i < len; i++) {
        if (addr + i >= data && addr + i < data + 4) {
            val = deposit32(val, 8 * i, 8, word >> (8 * (addr + i - data)));
        }
    }
    return val;
}

static void ndk_telemetry_config_write(PCIDevice *pdev, uint32_t addr,
                                       uint32_t val, int len)
{
    ndk_telemetry_quiesce(NDK_PCIE_TELEMETRY(pdev));
    pci_default_write_config(pdev, addr, val, len);
    ndk_telemetry_sync_settings(NDK_PCIE_TELEMETRY(pdev));
}

/* The identity strings: printable ASCII of bounded length. */
static bool ndk_telemetry_check_id(NdkPcieTelemetryState *s, Error **errp)
{
    const struct {
        const char *name;
        const char *value;
    } props[] = {
        { "card-name", s->card_name },
        { "project-name", s->project_name },
        { "project-variant", s->project_variant },
        { "project-version", s->project_version },
        { "build-tool", s->build_tool },
        { "build-author", s->build_author },
        { "build-revision", s->build_revision },
    };

    for (size_t i = 0; i < ARRAY_SIZE(props); i++) {
        g_autofree char *why = NULL;

        if (!props[i].value) {
            continue;
        }
        why = ptm_devtree_check_string(props[i].value);
        if (why) {
            error_setg(errp, "%s: property '%s' %s; allowed: up to %d "
                       "printable ASCII characters (0x20 to 0x7e), empty "
                       "leaves it out of the device tree",
                       TYPE_NDK_PCIE_TELEMETRY, props[i].name, why,
                       PTM_FW_STRING_MAX);
            return false;
        }
    }
    return true;
}


/* Whether the traffic object is background transfers of the DMA engine */
static bool ndk_telemetry_background(NdkPcieTelemetryState *s)
{
    return s->traffic &&
           TELEMETRY_TRAFFIC_GET_CLASS(s->traffic)->model ==
           &ptm_model_transfers;
}
static bool ndk_telemetry_check_props(NdkPcieTelemetryState *s, Error **errp)
{
    g_autofree char *err = ptm_config_check(&s->cfg);

    if (err) {
        error_setg(errp, "%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return false;
    }
    if (s->vendor_id > 0xFFFF || s->vendor_id == 0 ||
        s->vendor_id == 0xFFFF) {
        error_setg(errp, "%s: property 'vendor-id' is 0x%x, allowed: 0x0001 "
                   "to 0xfffe", TYPE_NDK_PCIE_TELEMETRY, s->vendor_id);
        return false;
    }
    if (s->device_id > 0xFFFF) {
        error_setg(errp, "%s: property 'device-id' is 0x%x, allowed: 0x0000 "
                   "to 0xffff", TYPE_NDK_PCIE_TELEMETRY, s->device_id);
        return false;
    }
    if (s->max_payload < 128 || s->max_payload > 4096 ||
        !is_power_of_2(s->max_payload)) {
        error_setg(errp, "%s: property 'max-payload-size' is %u, allowed: "
                   "128, 256, 512, 1024, 2048 or 4096",
                   TYPE_NDK_PCIE_TELEMETRY, s->max_payload);
        return false;
    }
    if (!s->fpga_device ||
        (strcmp(s->fpga_device, "AGILEX") &&
         strcmp(s->fpga_device, "STRATIX10") &&
         strcmp(s->fpga_device, "ULTRASCALE") &&
         strcmp(s->fpga_device, "7SERIES"))) {
        error_setg(errp, "%s: property 'device' is '%s', allowed: AGILEX, "
                   "STRATIX10, ULTRASCALE or 7SERIES", TYPE_NDK_PCIE_TELEMETRY,
                   s->fpga_device ? s->fpga_device : "");
        return false;
    }
    if (!ndk_telemetry_check_id(s, errp)) {
        return false;
    }
    if (s->block_offset % 0x1000 ||
        s->block_offset > NDK_TELEMETRY_MAX_BLOCK_OFFSET) {
        error_setg(errp, "%s: property 'block-offset' is 0x%x, allowed: a "
                   "multiple of 0x1000 from 0 to 0x%08x",
                   TYPE_NDK_PCIE_TELEMETRY, s->block_offset,
                   NDK_TELEMETRY_MAX_BLOCK_OFFSET);
        return false;
    }
    if ((uint64_t)s->dma_queues * s->cfg.dma_ports > NDP_MAX_QUEUES) {
        error_setg(errp, "%s: property 'dma-queues' is %u, allowed: 0 to %u "
                   "(at most %u RX and %u TX queues over all %u DMA ports)",
                   TYPE_NDK_PCIE_TELEMETRY, s->dma_queues,
                   NDP_MAX_QUEUES / s->cfg.dma_ports, NDP_MAX_QUEUES,
                   NDP_MAX_QUEUES, s->cfg.dma_ports);
        return false;
    }
    if (s->dma_queues && s->traffic && !ndk_telemetry_background(s)) {
        error_setg(errp, "%s: property 'traffic' is a %s, which cannot be "
                   "combined with 'dma-queues': a card with a DMA engine "
                   "counts the engine's own transfers, with background "
                   "transfers of a telemetry-traffic-transfers object at "
                   "most", TYPE_NDK_PCIE_TELEMETRY,
                   object_get_typename(OBJECT(s->traffic)));
        return false;
    }
    if (!s->dma_queues && s->traffic && ndk_telemetry_background(s)) {
        error_setg(errp, "%s: property 'traffic' is a "
                   "telemetry-traffic-transfers, background transfers of "
                   "the DMA engine, which needs 'dma-queues' of at least 1",
                   TYPE_NDK_PCIE_TELEMETRY);
        return false;
    }
    if (s->dma_queues && s->block_offset + PTM_BAR_SIZE > NDP_BAR_RX_BASE &&
        s->block_offset < NDP_BAR_END(s->cfg.dma_ports)) {
        error_setg(errp, "%s: property 'block-offset' is 0x%x, which "
                   "overlaps the DMA engine of 'dma-queues' at 0x%08x to "
                   "0x%08x; allowed: up to 0x%08x or from 0x%08x",
                   TYPE_NDK_PCIE_TELEMETRY, s->block_offset, NDP_BAR_RX_BASE,
                   NDP_BAR_END(s->cfg.dma_ports) - 1,
                   NDP_BAR_RX_BASE - PTM_BAR_SIZE,
                   ROUND_UP(NDP_BAR_END(s->cfg.dma_ports), 0x1000));
        return false;
    }
    return true;
}

static int ndk_telemetry_init_pcie(NdkPcieTelemetryState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *cap, *wmask;
    int pos;

    pos = pcie_endpoint_cap_init(pdev, NDK_TELEMETRY_PCIE_OFFSET);
    if (pos < 0) {
        error_setg(errp, "%s: cannot add the PCIe capability",
                   TYPE_NDK_PCIE_TELEMETRY);
        return pos;
    }
    cap = pdev->config + pos;
    wmask = pdev->wmask + pos;
    /* what the card supports (QEMU sets Extended Tag on its own) */
    pci_long_test_and_clear_mask(cap + PCI_EXP_DEVCAP,
                                 PCI_EXP_DEVCAP_PAYLOAD |
                                 PCI_EXP_DEVCAP_EXT_TAG);
    pci_long_test_and_set_mask(cap + PCI_EXP_DEVCAP,
                               ctz32(s->max_payload / 128) |
                               (s->ext_tag ? PCI_EXP_DEVCAP_EXT_TAG : 0));
    if (s->tag_10bit) {
        /* a 10-bit tag requester must also complete 10-bit tags */
        pci_long_test_and_set_mask(cap + PCI_EXP_DEVCAP2,
                                   EXP_DEVCAP2_10BIT_TAG_REQ |
                                   EXP_DEVCAP2_10BIT_TAG_COMP);
    }
    /* what the host programs */
    pci_word_test_and_set_mask(wmask + PCI_EXP_DEVCTL,
                               PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ |
                               (s->ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0));
    if (s->tag_10bit) {
        pci_word_test_and_set_mask(wmask + PCI_EXP_DEVCTL2,
                                   EXP_DEVCTL2_10BIT_TAG_REQ);
    }
    pci_word_test_and_set_mask(wmask + PCI_EXP_LNKCTL, PCI_EXP_LNKCTL_RCB);
    /*
     * The link: QEMU trains none, so Link Status reports the card's
     * maximum speed and width as if the slot offered both.
     */
    pcie_cap_fill_link_ep_usp(pdev, s->link_width, s->link_speed);
    return pos;
}

/*
 * MSI for the driver's pci_enable_msi. It is part of configuration space
 * (migrated, reset by the PCI core); the block never signals it. With
 * msi=auto a machine without working MSI (msi_init's -ENOTSUP) gets a card
 * without the capability, as with msi=off; msi=on refuses such a machine.
 */
static bool ndk_telemetry_init_msi(NdkPcieTelemetryState *s, Error **errp)
{
    Error *err = NULL;
    int ret;

    if (s->msi == ON_OFF_AUTO_OFF) {
        return true;
    }
    ret = msi_init(PCI_DEVICE(s), NDK_TELEMETRY_MSI_OFFSET, 1, true, false,
                   &err);
    if (ret == -ENOTSUP && s->msi == ON_OFF_AUTO_AUTO) {
        error_free(err);
        return true;
    }
    if (ret < 0) {
        error_setg(errp, "%s: property 'msi' is on, but %s; use msi=auto "
                   "or msi=off", TYPE_NDK_PCIE_TELEMETRY,
                   error_get_pretty(err));
        error_free(err);
        return false;
    }
    return true;
}

/*
 * The NDK device-tree VSEC, where the NDK driver looks for the firmware's
 * device tree: header, endpoint index, length, then the word index
 * (read/write) and the data word (see ndk_telemetry_config_read).
 */
static bool ndk_telemetry_init_devtree(NdkPcieTelemetryState *s,
                                       Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    g_autofree char *err = NULL;
    uint8_t *cap;

    PtmFirmwareId id = {
        .card_name = s->card_name,
        .project_name = s->project_name,
        .project_variant = s->project_variant,
        .project_version = s->project_version,
        .build_time = s->build_time,
        .build_tool = s->build_tool,
        .build_author = s->build_author,
        .build_revision = s->build_revision,
    };
    PtmDevtreeDma dma = {
        .ports = s->cfg.dma_ports,
        .queues = s->dma_queues,
        .rx_base = NDP_BAR_RX_BASE,
        .tx_base = NDP_BAR_TX_BASE,
        .gls_base = NDP_BAR_GLS_BASE,
    };

    s->devtree_xz = ptm_devtree_build_dma(&id, &dma, s->block_offset,
                                          PTM_VERSION, s->cfg.pcie_endpoints,
                                          &s->devtree_len, &err);
    if (!s->devtree_xz) {
        error_setg(errp, "%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return false;
    }
    s->vsec = PTM_VSEC_OFFSET;
    pcie_add_capability(pdev, PTM_VSEC_CAP_ID, PTM_VSEC_CAP_VER, s->vsec,
                        PTM_VSEC_SIZE);
    cap = pdev->config + s->vsec;
    pci_set_long(cap + PTM_VSEC_REG_HEADER, PTM_VSEC_HEADER);
    /* this function is PCIe endpoint 0 of the card */
    pci_set_long(cap + PTM_VSEC_REG_ENDPOINT, PTM_VSEC_ENDPOINT_VALID | 0);
    pci_set_long(cap + PTM_VSEC_REG_LENGTH, s->devtree_len);
    pci_set_long(pdev->wmask + s->vsec + PTM_VSEC_REG_INDEX, 0xFFFFFFFF);
    return true;
}

/* Power-on values of the fields the host negotiates. */
static void ndk_telemetry_reset_pcie(NdkPcieTelemetryState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *cap;

    if (s->vsec) {
        pci_set_long(pdev->config + s->vsec + PTM_VSEC_REG_INDEX, 0);
    }
    if (!pci_is_express(pdev) || !pdev->exp.exp_cap) {
        return;
    }
    cap = pdev->config + pdev->exp.exp_cap;
    pci_word_test_and_clear_mask(cap + PCI_EXP_DEVCTL,
                                 PCI_EXP_DEVCTL_PAYLOAD |
                                 PCI_EXP_DEVCTL_READRQ |
                                 PCI_EXP_DEVCTL_EXT_TAG);
    /*
     * 512-byte read requests; extended tags on where supported, as
     * PCIe 4.0 and later devices come up
     */
    pci_word_test_and_set_mask(cap + PCI_EXP_DEVCTL,
                               2 << 12 |
                               (s->ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0));
    pci_word_test_and_clear_mask(cap + PCI_EXP_DEVCTL2,
                                 EXP_DEVCTL2_10BIT_TAG_REQ);
    pci_word_test_and_clear_mask(cap + PCI_EXP_LNKCTL, PCI_EXP_LNKCTL_RCB);
}

/* A live change of the traffic: catch up, then apply from the next window. */
static void ndk_telemetry_traffic_sync(void *card, uint64_t *now,
                                       uint64_t *from)
{
    NdkPcieTelemetryState *s = card;

    ndk_telemetry_quiesce(s);
    *now = now_ns();
    ptm_core_advance(s->core, *now);
    *from = ptm_core_next_pcie_window(s->core, *now);
    ndk_telemetry_schedule(s);
}

/*
 * A card whose accumulator cannot keep up loses deltas, as the firmware
 * would: accepted, but said once, with the drain period that avoids it.
 */
static void ndk_telemetry_warn_sizing(NdkPcieTelemetryState *s)
{
    g_autofree char *fix = NULL;
    PtmSizing sz;

    ptm_config_sizing(&s->cfg, &sz);
    s->steady_loss = sz.steady_loss;
    if (!sz.steady_loss && !sz.pause_loss) {
        return;
    }
    fix = sz.safe_drain_period
          ? g_strdup_printf("drain-period=%u is the smallest that avoids it",
                            sz.safe_drain_period)
          : g_strdup_printf("no drain-period up to %u avoids it",
                            PTM_MAX_DRAIN_PERIOD);
    if (sz.steady_loss) {
        warn_report("ndk-pcie-telemetry: accumulator load %.2f at "
                    "drain-period=%u: the card loses deltas all the time "
                    "(STATUS bit 1); %s", sz.load, s->cfg.drain_period, fix);
    } else {
        warn_report("ndk-pcie-telemetry: accumulator load %.2f at "
                    "drain-period=%u: a SNAPSHOT's pause overflows the "
                    "FIFOs and loses deltas (STATUS bit 1); %s", sz.load,
                    s->cfg.drain_period, fix);
    }
}

/* ---- the link, as a port above counts it ------------------------ */

static uint64_t ndk_telemetry_pcie_cycle(NdkPcieTelemetryState *s,
                                         uint64_t t_ns)
{
    return (uint64_t)((unsigned __int128)t_ns * s->cfg.pcie_clk_hz /
                      NANOSECONDS_PER_SECOND);
}

/*
 * The probe whose buses the link's count reads: endpoint 0's PCIe probe,
 * without its BRAKE and histogram channels, which the link does not need
 * (a source counts them only where the shape has them).
 */
static void ndk_telemetry_link_shape(NdkPcieTelemetryState *s,
                                     PtmProbeShape *sh)
{
    ptm_core_probe_shape(s->core, 0, PTM_DOMAIN_PCIE, sh);
    if (s->src_ops == ptm_dma_traffic_ops()) {
        sh->brakes = 0;
    }
}

/* Count the link's traffic up to t_ns, if a port has asked for it. */
static void ndk_telemetry_link_advance(NdkPcieTelemetryState *s,
                                       uint64_t t_ns)
{
    if (s->link) {
        /* the engine's log drives the link up, always */
        ptm_link_advance(s->link, s->src_ops, s->src_opaque,
                         ndk_telemetry_pcie_cycle(s, t_ns),
                         s->src_ops == ptm_dma_traffic_ops());
    }
}

/*
 * pcie-link-traffic: what crossed the link since the card's last reset.
 * The traffic of endpoint 0's PCIe probe (the function's own link) is
 * counted from the first time a port asks (a port takes differences),
 * the guest's BAR accesses from the reset.
 */
static void ndk_telemetry_link_totals(Object *obj, uint64_t now,
                                      PcieLinkTotals *out)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);
    PtmLinkTotals t = { 0 };

    ndk_telemetry_quiesce(s);
    if (!s->link && s->src_ops) {
        PtmProbeShape sh;

        ndk_telemetry_link_shape(s, &sh);
        s->link = ptm_link_new(&sh, s->cfg.mfb_item_bytes,
                               ndk_telemetry_pcie_cycle(s, now));
    }
    ndk_telemetry_link_advance(s, now);
    if (s->link) {
        ptm_link_totals(s->link, &t);
    }
    out->payload_up = t.payload_up + s->mmio_read_bytes;
    out->payload_down = t.payload_down + s->mmio_write_bytes;
    out->link_down_ns = (uint64_t)((unsigned __int128)t.down_cycles *
                                   NANOSECONDS_PER_SECOND /
                                   s->cfg.pcie_clk_hz);
}

/* A reset: the link's counts start again (a port sums across). */
static void ndk_telemetry_link_reset(NdkPcieTelemetryState *s)
{
    ptm_link_free(s->link);
    s->link = NULL;
    s->mmio_read_bytes = 0;
    s->mmio_write_bytes = 0;
}

/*
 * The DMA engine's side of the card: it runs only while no vCPU catches
 * the block up off the big lock, its transfers go into the log the block
 * counts, and the log forgets what the block has counted.
 */
static void ndk_telemetry_dma_enter(void *opaque)
{
    ndk_telemetry_quiesce(opaque);
}

static void ndk_telemetry_dma_xfer(void *opaque, int64_t t_ns, unsigned port,
                                   bool write, uint64_t addr, uint32_t bytes)
{
    NdkPcieTelemetryState *s = opaque;

    ptm_dma_traffic_add(s->dma_log, t_ns, port, write, addr, bytes,
                        &s->settings);
}

static void ndk_telemetry_dma_leave(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    ndk_telemetry_prune_dma_log(s);
    ndk_telemetry_schedule(s);
}

static void *ndk_telemetry_dma_save(void *opaque, size_t *len)
{
    NdkPcieTelemetryState *s = opaque;

    return ptm_dma_traffic_save(s->dma_log, len);
}

static char *ndk_telemetry_dma_load(void *opaque, const void *buf,
                                    size_t len)
{
    NdkPcieTelemetryState *s = opaque;

    return ptm_dma_traffic_load(s->dma_log, buf, len);
}

static void ndk_telemetry_dma_mmio(void *opaque, bool write, unsigned size)
{
    ndk_telemetry_count_mmio(opaque, write, size);
}

static const NdkDmaOwner ndk_telemetry_dma_owner = {
    .mmio = ndk_telemetry_dma_mmio,
    .enter = ndk_telemetry_dma_enter,
    .xfer = ndk_telemetry_dma_xfer,
    .leave = ndk_telemetry_dma_leave,
    .save = ndk_telemetry_dma_save,
    .load = ndk_telemetry_dma_load,
};

/*
 * The block's traffic source: a generator, or the DMA engine's transfer
 * log (playing a transfers generator's slots as background), or none (an
 * idle link). Nothing is left attached when it fails.
 */
static bool ndk_telemetry_init_source(NdkPcieTelemetryState *s, Error **errp)
{
    PtmGeometry geo;
    void *opaque = NULL;

    ptm_core_geometry(s->core, &geo);
    if (s->dma_queues) {
        /* the block counts the card's own DMA */
        s->dma_log = ptm_dma_traffic_new(&geo);
        if (s->traffic) {
            if (!telemetry_traffic_attach(s->traffic, &geo,
                                          ndk_telemetry_traffic_sync, s,
                                          &opaque, errp)) {
                ptm_dma_traffic_free(s->dma_log);
                s->dma_log = NULL;
                return false;
            }
            ptm_dma_traffic_set_background(s->dma_log, opaque);
        }
        s->src_ops = ptm_dma_traffic_ops();
        s->src_opaque = s->dma_log;
    } else if (s->traffic) {
        s->src_ops = telemetry_traffic_attach(s->traffic, &geo,
                                              ndk_telemetry_traffic_sync, s,
                                              &opaque, errp);
        if (!s->src_ops) {
            return false;
        }
        s->src_opaque = opaque;
    }
    if (s->src_ops) {
        ptm_core_set_source(s->core, s->src_ops, s->src_opaque);
    }
    return true;
}

/*
 * Virtual time a copy of an overloaded card runs at realize to see
 * whether its traffic is counted in bulk (see ptm_config_lossy_bulk).
 */
#define NDK_TELEMETRY_LOSSY_CHECK_NS (24 * SCALE_MS)

/*
 * A card whose accumulator loses deltas all the time costs, over a source
 * that cannot be counted in bulk there, more host time than virtual time
 * passes: its reads would wait ever longer. Refused, with the drain
 * period that avoids the losses.
 */
static bool ndk_telemetry_check_lossy(NdkPcieTelemetryState *s, Error **errp)
{
    g_autofree char *fix = NULL;
    uint64_t single, all;
    PtmSizing sz;

    if (!s->steady_loss || !s->src_ops || s->dma_log ||
        ptm_config_lossy_bulk(&s->cfg, s->src_ops, s->src_opaque,
                              NDK_TELEMETRY_LOSSY_CHECK_NS, &single, &all)) {
        return true;
    }
    ptm_config_sizing(&s->cfg, &sz);
    fix = sz.safe_drain_period
          ? g_strdup_printf("use drain-period=%u or more (no deltas lost)",
                            sz.safe_drain_period)
          : g_strdup_printf("no drain-period up to %u avoids the losses",
                            PTM_MAX_DRAIN_PERIOD);
    error_setg(errp, "ndk-pcie-telemetry: traffic '%s' cannot be counted in "
               "bulk on a card that loses deltas all the time "
               "(drain-period=%u, accumulator load %.2f): %" PRIu64 " of "
               "%" PRIu64 " drain windows of its first %u ms are counted one "
               "by one, which costs more than real time; %s, or give the "
               "traffic a period (docs/ndk-pcie-telemetry.md, "
               "\"Evaluation\")",
               object_get_canonical_path_component(OBJECT(s->traffic)),
               s->cfg.drain_period, sz.load, single, all,
               (unsigned)(NDK_TELEMETRY_LOSSY_CHECK_NS / SCALE_MS), fix);
    return false;
}

static void ndk_telemetry_realize(PCIDevice *pdev, Error **errp)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(pdev);
    uint8_t *conf = pdev->config;

    if (!ndk_telemetry_check_props(s, errp)) {
        return;
    }
    ndk_telemetry_warn_sizing(s);
    pci_config_set_vendor_id(conf, s->vendor_id);
    pci_config_set_device_id(conf, s->device_id);
    if (!s->card_name) {
        /* what the nfb driver calls a card of this ID (qom-get shows it) */
        s->card_name = g_strdup(ptm_devtree_card_name(s->vendor_id,
                                                      s->device_id));
    }

    if (pci_bus_is_express(pci_get_bus(pdev))) {
        if (ndk_telemetry_init_pcie(s, errp) < 0) {
            return;
        }
    } else {
        /* on a conventional bus the function has no PCIe capability */
        pdev->cap_present &= ~QEMU_PCI_CAP_EXPRESS;
    }
    /* the VSEC lives in extended config space, which only PCIe has */
    if (s->devtree && pci_is_express(pdev) &&
        !ndk_telemetry_init_devtree(s, errp)) {
        return;
    }

    if (!ndk_telemetry_init_msi(s, errp)) {
        g_free(s->devtree_xz);
        s->devtree_xz = NULL;
        return;
    }

    s->core = ptm_core_new(&s->cfg);
    if (!ndk_telemetry_init_source(s, errp) ||
        !ndk_telemetry_check_lossy(s, errp)) {
        if (s->src_ops && s->traffic) {
            telemetry_traffic_detach(s->traffic);
        }
        s->src_ops = NULL;
        ptm_core_free(s->core);
        s->core = NULL;
        g_free(s->devtree_xz);
        s->devtree_xz = NULL;
        msi_uninit(pdev);
        return;
    }
    /* configuration loads the FPGA: the counter memory starts zeroed */
    ptm_core_power_on(s->core, now_ns());
    ndk_telemetry_reset_pcie(s);
    ndk_telemetry_sync_settings(s);

    /* BAR0 is the smallest power of two that holds the block (and DMA) */
    memory_region_init_io(&s->bar, OBJECT(s), &ndk_telemetry_unused_ops, s,
                          "ndk-pcie-telemetry-bar0",
                          pow2ceil(MAX((uint64_t)s->block_offset +
                                       PTM_BAR_SIZE,
                                       s->dma_queues ?
                                       NDP_BAR_END(s->cfg.dma_ports) : 0)));
    memory_region_init_io(&s->block, OBJECT(s), &ndk_telemetry_mmio_ops, s,
                          "ndk-pcie-telemetry-block", PTM_BAR_SIZE);
    memory_region_add_subregion(&s->bar, s->block_offset, &s->block);
    if (s->dma_queues) {
        /* the generators' frames cross the DMA side's UP bus */
        ndk_dma_realize(&s->dma, pdev, &s->bar, s->cfg.dma_ports,
                        s->dma_queues, s->cfg.dma_clk_hz,
                        s->cfg.dma_up_mfb_regions *
                        s->cfg.dma_up_mfb_region_bytes,
                        &ndk_telemetry_dma_owner, s);
    }
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar);

    s->tick_ns = NDK_TELEMETRY_TICK_MIN_NS;
    s->shutdown.notify = ndk_telemetry_shutdown_notify;
    qemu_register_shutdown_notifier(&s->shutdown);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ndk_telemetry_tick, s);
    timer_mod(s->timer, now_ns() + NDK_TELEMETRY_TICK_MIN_NS);
}

static void ndk_telemetry_exit(PCIDevice *pdev)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(pdev);

    /* hot-unplug waits for a read that catches up */
    ndk_telemetry_quiesce(s);
    /* the block's region holds a reference to the device: drop it */
    memory_region_del_subregion(&s->bar, &s->block);
    ndk_dma_unrealize(&s->dma, &s->bar);
    if (s->timer) {
        timer_free(s->timer);
        s->timer = NULL;
        notifier_remove(&s->shutdown);
    }
    if (s->traffic) {
        telemetry_traffic_detach(s->traffic);
    }
    ptm_core_free(s->core);
    s->core = NULL;
    ndk_telemetry_link_reset(s);
    g_free(s->link_state);
    s->link_state = NULL;
    ptm_dma_traffic_free(s->dma_log);
    s->dma_log = NULL;
    s->src_ops = NULL;
    s->src_opaque = NULL;
    g_free(s->state);
    s->state = NULL;
    g_free(s->devtree_xz);
    s->devtree_xz = NULL;
    msi_uninit(pdev);
}

/* A device reset is the MI reset: the counter memory survives it. */
static void ndk_telemetry_reset_hold(Object *obj, ResetType type)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    trace_ptm_reset(type == RESET_TYPE_COLD);
    ndk_telemetry_quiesce(s);
    ptm_core_reset(s->core, now_ns());
    ndk_dma_reset(&s->dma);
    if (s->dma_log) {
        /* what was on the buses is gone with the reset */
        ptm_dma_traffic_reset(s->dma_log, now_ns());
    }
    ndk_telemetry_link_reset(s);
    ndk_telemetry_reset_pcie(s);
    ndk_telemetry_sync_settings(s);
    ndk_telemetry_schedule(s);
}

/*
 * The migration buffer: the core's state, then the traffic generator's
 * (its parameter history), each preceded by its length (little endian).
 */
static void put_part(GByteArray *b, const void *part, size_t len)
{
    uint8_t le[4];

    stl_le_p(le, len);
    g_byte_array_append(b, le, 4);
    g_byte_array_append(b, part, len);
}

/* CRC-32C of the device tree's stream; 0 without one. */
static uint32_t ndk_telemetry_devtree_crc(NdkPcieTelemetryState *s)
{
    if (!s->devtree_xz) {
        return 0;
    }
    return crc32c(0xFFFFFFFF, s->devtree_xz, s->devtree_len);
}

static int ndk_telemetry_pre_save(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;
    GByteArray *b = g_byte_array_new();
    g_autofree void *core = NULL, *gen = NULL;
    size_t core_len, gen_len = 0;

    /* caught up to now, so the destination starts with no backlog */
    ndk_telemetry_quiesce(s);
    ptm_core_advance(s->core, now_ns());
    core = ptm_core_save(s->core, &core_len);
    if (s->traffic) {
        gen = telemetry_traffic_save(s->traffic, &gen_len);
    }
    put_part(b, core, core_len);
    put_part(b, gen, gen_len);
    g_free(s->state);
    s->state_len = b->len;
    s->state = g_byte_array_free(b, FALSE);
    s->devtree_crc = ndk_telemetry_devtree_crc(s);
    return 0;
}

static int ndk_telemetry_post_load(void *opaque, int version_id)
{
    NdkPcieTelemetryState *s = opaque;
    g_autofree char *err = NULL;
    uint32_t core_len, gen_len;

    /* [core length][core state][generator length][generator state] */
    if (s->state_len < 8) {
        goto malformed;
    }
    core_len = ldl_le_p(s->state);
    if (core_len > s->state_len - 8) {
        goto malformed;
    }
    gen_len = ldl_le_p(s->state + 4 + core_len);
    if (gen_len != s->state_len - 8 - core_len) {
        goto malformed;
    }
    /*
     * The guest may read the tree again: its bytes come from the
     * properties, and only its length is in configuration space
     */
    if (s->devtree_crc != ndk_telemetry_devtree_crc(s)) {
        err = g_strdup("the device tree differs between the two ends "
                       "(its properties: block-offset, pcie-endpoints, "
                       "devtree and the firmware identity, e.g. build-tool)");
    } else {
        err = ptm_core_load(s->core, s->state + 4, core_len);
    }
    if (!err && (gen_len != 0) != (s->traffic != NULL)) {
        err = g_strdup("the traffic= property differs between the two ends");
    }
    if (!err && s->traffic) {
        err = telemetry_traffic_load(s->traffic, s->state + 8 + core_len,
                                     gen_len);
    }
    if (err) {
        error_report("%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return -EINVAL;
    }
    ndk_telemetry_sync_settings(s);
    ndk_telemetry_schedule(s);
    return 0;

malformed:
    error_report("%s: malformed migration state", TYPE_NDK_PCIE_TELEMETRY);
    return -EINVAL;
}

static bool ndk_telemetry_dma_needed(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    return s->dma_queues != 0;
}

static const VMStateDescription vmstate_ndk_telemetry_dma = {
    .name = TYPE_NDK_PCIE_TELEMETRY "/dma-engine",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ndk_telemetry_dma_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(dma, NdkPcieTelemetryState, 1, vmstate_ndk_dma,
                       NdkDma),
        VMSTATE_END_OF_LIST()
    },
};

static bool ndk_telemetry_link_needed(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    return s->link || s->mmio_read_bytes || s->mmio_write_bytes;
}

static int ndk_telemetry_link_pre_save(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;
    size_t len = 0;

    g_free(s->link_state);
    s->link_state = NULL;
    if (s->link) {
        s->link_state = ptm_link_save(s->link, &len);
    }
    s->link_state_len = len;
    return 0;
}

static int ndk_telemetry_link_post_load(void *opaque, int version_id)
{
    NdkPcieTelemetryState *s = opaque;
    g_autofree char *err = NULL;

    ptm_link_free(s->link);
    s->link = NULL;
    if (s->link_state_len) {
        PtmProbeShape sh;

        ndk_telemetry_link_shape(s, &sh);
        s->link = ptm_link_new(&sh, s->cfg.mfb_item_bytes, 0);
        err = ptm_link_load(s->link, s->link_state, s->link_state_len);
    }
    if (err) {
        error_report("%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return -EINVAL;
    }
    return 0;
}

/* What a port above has counted of the link so far */
static const VMStateDescription vmstate_ndk_telemetry_link = {
    .name = TYPE_NDK_PCIE_TELEMETRY "/link",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ndk_telemetry_link_needed,
    .pre_save = ndk_telemetry_link_pre_save,
    .post_load = ndk_telemetry_link_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(mmio_read_bytes, NdkPcieTelemetryState),
        VMSTATE_UINT64(mmio_write_bytes, NdkPcieTelemetryState),
        VMSTATE_UINT32(link_state_len, NdkPcieTelemetryState),
        VMSTATE_VBUFFER_ALLOC_UINT32(link_state, NdkPcieTelemetryState, 0,
                                     NULL, link_state_len),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_ndk_telemetry = {
    .name = TYPE_NDK_PCIE_TELEMETRY,
    /*
     * 2: configuration space gained MSI and the link's speed and width,
     * the tree its identity (checked by CRC); a stream of version 1 is
     * refused as such, not as a config mismatch
     */
    .version_id = 2,
    .minimum_version_id = 2,
    .pre_save = ndk_telemetry_pre_save,
    .post_load = ndk_telemetry_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, NdkPcieTelemetryState),
        VMSTATE_UINT32(state_len, NdkPcieTelemetryState),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, NdkPcieTelemetryState, 0, NULL,
                                     state_len),
        VMSTATE_TIMER_PTR(timer, NdkPcieTelemetryState),
        VMSTATE_UINT32(devtree_crc, NdkPcieTelemetryState),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_ndk_telemetry_dma,
        &vmstate_ndk_telemetry_link,
        NULL
    },
};

#define CFG(f) cfg.f
static const Property ndk_telemetry_properties[] = {
    DEFINE_PROP_UINT32("pcie-endpoints", NdkPcieTelemetryState,
                       CFG(pcie_endpoints), 1),
    DEFINE_PROP_UINT32("dma-ports", NdkPcieTelemetryState, CFG(dma_ports), 1),
    DEFINE_PROP_UINT32("pcie-rq-mfb-regions", NdkPcieTelemetryState,
                       CFG(pcie_rq_mfb_regions), 2),
    DEFINE_PROP_UINT32("pcie-rc-mfb-regions", NdkPcieTelemetryState,
                       CFG(pcie_rc_mfb_regions), 2),
    DEFINE_PROP_UINT32("dma-up-mfb-regions", NdkPcieTelemetryState,
                       CFG(dma_up_mfb_regions), 2),
    DEFINE_PROP_UINT32("dma-down-mfb-regions", NdkPcieTelemetryState,
                       CFG(dma_down_mfb_regions), 2),
    DEFINE_PROP_UINT32("pcie-rq-mfb-region-bytes", NdkPcieTelemetryState,
                       CFG(pcie_rq_mfb_region_bytes), 32),
    DEFINE_PROP_UINT32("pcie-rc-mfb-region-bytes", NdkPcieTelemetryState,
                       CFG(pcie_rc_mfb_region_bytes), 32),
    DEFINE_PROP_UINT32("dma-up-mfb-region-bytes", NdkPcieTelemetryState,
                       CFG(dma_up_mfb_region_bytes), 32),
    DEFINE_PROP_UINT32("dma-down-mfb-region-bytes", NdkPcieTelemetryState,
                       CFG(dma_down_mfb_region_bytes), 32),
    DEFINE_PROP_UINT32("mfb-item-bytes", NdkPcieTelemetryState,
                       CFG(mfb_item_bytes), 4),
    DEFINE_PROP_UINT32("pcie-eof-pos-width", NdkPcieTelemetryState,
                       CFG(pcie_eof_pos_width), 3),
    DEFINE_PROP_UINT32("dma-eof-pos-width", NdkPcieTelemetryState,
                       CFG(dma_eof_pos_width), 3),
    DEFINE_PROP_UINT32("cnt-width", NdkPcieTelemetryState, CFG(cnt_width), 48),
    DEFINE_PROP_UINT32("drain-period", NdkPcieTelemetryState,
                       CFG(drain_period), 4096),
    DEFINE_PROP_UINT32("tag-capacity", NdkPcieTelemetryState,
                       CFG(tag_capacity), 256),
    DEFINE_PROP_UINT32("stfifo-capacity", NdkPcieTelemetryState,
                       CFG(stfifo_capacity), 1024),
    DEFINE_PROP_STRING("device", NdkPcieTelemetryState, fpga_device),
    DEFINE_PROP_UINT64("pcie-clk-freq", NdkPcieTelemetryState,
                       CFG(pcie_clk_hz), 400000000),
    DEFINE_PROP_UINT64("dma-clk-freq", NdkPcieTelemetryState,
                       CFG(dma_clk_hz), 200000000),
    DEFINE_PROP_UINT64("mi-clk-freq", NdkPcieTelemetryState,
                       CFG(mi_clk_hz), 100000000),
    DEFINE_PROP_UINT32("vendor-id", NdkPcieTelemetryState, vendor_id,
                       NDK_TELEMETRY_VENDOR_ID),
    DEFINE_PROP_UINT32("device-id", NdkPcieTelemetryState, device_id,
                       NDK_TELEMETRY_DEVICE_ID),
    DEFINE_PROP_UINT32("max-payload-size", NdkPcieTelemetryState, max_payload,
                       512),
    DEFINE_PROP_BOOL("ext-tag", NdkPcieTelemetryState, ext_tag, true),
    DEFINE_PROP_BOOL("tag-10bit", NdkPcieTelemetryState, tag_10bit, true),
    DEFINE_PROP_UINT32("block-offset", NdkPcieTelemetryState, block_offset, 0),
    DEFINE_PROP_BOOL("devtree", NdkPcieTelemetryState, devtree, true),
    DEFINE_PROP_UINT32("dma-queues", NdkPcieTelemetryState, dma_queues, 0),
    DEFINE_PROP_ON_OFF_AUTO("msi", NdkPcieTelemetryState, msi,
                            ON_OFF_AUTO_AUTO),
    /* the Gen3 x16 endpoint of NDK on the AMD Alveo U200 */
    DEFINE_PROP_PCIE_LINK_SPEED("link-speed", NdkPcieTelemetryState,
                                link_speed, PCIE_LINK_SPEED_8),
    DEFINE_PROP_PCIE_LINK_WIDTH("link-width", NdkPcieTelemetryState,
                                link_width, PCIE_LINK_WIDTH_16),
    DEFINE_PROP_STRING("card-name", NdkPcieTelemetryState, card_name),
    DEFINE_PROP_STRING("project-name", NdkPcieTelemetryState, project_name),
    DEFINE_PROP_STRING("project-variant", NdkPcieTelemetryState,
                       project_variant),
    DEFINE_PROP_STRING("project-version", NdkPcieTelemetryState,
                       project_version),
    DEFINE_PROP_UINT32("build-time", NdkPcieTelemetryState, build_time,
                       PTM_MODEL_BUILD_TIME),
    DEFINE_PROP_STRING("build-tool", NdkPcieTelemetryState, build_tool),
    DEFINE_PROP_STRING("build-author", NdkPcieTelemetryState, build_author),
    DEFINE_PROP_STRING("build-revision", NdkPcieTelemetryState,
                       build_revision),
    DEFINE_PROP_LINK("traffic", NdkPcieTelemetryState, traffic,
                     TYPE_TELEMETRY_TRAFFIC, TelemetryTraffic *),
};

static void ndk_telemetry_instance_init(Object *obj)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    /* the string default of a qdev property cannot be static */
    s->fpga_device = g_strdup("AGILEX");
    s->project_name = g_strdup(PTM_MODEL_PROJECT_NAME);
    s->project_version = g_strdup(PTM_MODEL_VERSION);
    /* the same in every QEMU version (see PTM_MODEL_BUILD_TOOL) */
    s->build_tool = g_strdup(PTM_MODEL_BUILD_TOOL);
    s->build_author = g_strdup(PTM_MODEL_BUILD_AUTHOR);
    /* 4 KiB of configuration space; realize drops it on a PCI bus */
    PCI_DEVICE(obj)->cap_present |= QEMU_PCI_CAP_EXPRESS;
    qemu_cond_init(&s->caught_up);
}

static void ndk_telemetry_instance_finalize(Object *obj)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    qemu_cond_destroy(&s->caught_up);
}

static void ndk_telemetry_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = ndk_telemetry_realize;
    pc->exit = ndk_telemetry_exit;
    pc->config_read = ndk_telemetry_config_read;
    pc->config_write = ndk_telemetry_config_write;
    pc->vendor_id = NDK_TELEMETRY_VENDOR_ID;
    pc->device_id = NDK_TELEMETRY_DEVICE_ID;
    pc->class_id = PCI_CLASS_OTHERS;
    pc->revision = 0;
    rc->phases.hold = ndk_telemetry_reset_hold;
    PCIE_LINK_TRAFFIC_CLASS(oc)->totals = ndk_telemetry_link_totals;
    dc->desc = "CESNET NDK PCIE_TELEMETRY_MI block (virtual)";
    dc->vmsd = &vmstate_ndk_telemetry;
    device_class_set_props(dc, ndk_telemetry_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);

    object_class_property_set_description(oc, "pcie-endpoints",
        "PCIE_ENDPOINTS: monitored PCIe endpoints, 1 to 16");
    object_class_property_set_description(oc, "dma-ports",
        "DMA_PORTS: DMA ports per endpoint, 1 to 16 (at most 255 channels "
        "per endpoint)");
    object_class_property_set_description(oc, "cnt-width",
        "CNT_WIDTH: bits of the wide counters, 33 to 64");
    object_class_property_set_description(oc, "drain-period",
        "DRAIN_PERIOD: cycles between probe read-outs, a power of two, "
        "at least 64 for the default probes, at most 32768");
    object_class_property_set_description(oc, "tag-capacity",
        "TAG_CAPACITY: PCIe tags of the PTC, 1 to 2047");
    object_class_property_set_description(oc, "stfifo-capacity",
        "STFIFO_CAPACITY: storage FIFO words, 1 to 65535");
    object_class_property_set_description(oc, "mfb-item-bytes",
        "MFB_ITEM_BYTES: bytes per MFB item");
    object_class_property_set_description(oc, "pcie-clk-freq",
        "PCIe clock in Hz (default 400 MHz)");
    object_class_property_set_description(oc, "dma-clk-freq",
        "DMA clock in Hz (default 200 MHz)");
    object_class_property_set_description(oc, "mi-clk-freq",
        "MI clock in Hz (default 100 MHz)");
    object_class_property_set_description(oc, "vendor-id",
        "PCI vendor ID (default 0x1234; CESNET cards use 0x18ec)");
    object_class_property_set_description(oc, "device-id",
        "PCI device ID (default 0x0d7b; 0xc000 is the generic NDK design)");
    object_class_property_set_description(oc, "max-payload-size",
        "largest MPS the card supports, in bytes (Device Capabilities)");
    object_class_property_set_description(oc, "ext-tag",
        "the card supports extended (8-bit) tags");
    object_class_property_set_description(oc, "tag-10bit",
        "the card supports 10-bit tags as requester");
    object_class_property_set_description(oc, "block-offset",
        "bytes from the start of BAR0 to the block, a multiple of 0x1000 up "
        "to 0x0fff0000 (BAR0 grows to the next power of two)");
    object_class_property_set_description(oc, "dma-queues",
        "RX and TX queues of the NDK DMA engine (Medusa, as the nfb driver "
        "sees it) per DMA port, with a generator/loopback switch per port; "
        "0 (default): no DMA engine. At most 64 queues of each direction");
    object_class_property_set_description(oc, "devtree",
        "offer the NDK device tree in a VSEC (PCIe bus only)");
    object_class_property_set_description(oc, "msi",
        "offer an MSI capability (1 vector, 64-bit) for the nfb driver's "
        "pci_enable_msi: auto when the machine supports MSI, on or refuse "
        "to start, off never; the block raises no interrupt");
    object_class_property_set_description(oc, "link-speed",
        "Link Capabilities and Status speed in GT/s: 2_5, 5, 8, 16, 32 or "
        "64 (8 = PCIe Gen3)");
    object_class_property_set_description(oc, "link-width",
        "Link Capabilities and Status width in lanes: 1, 2, 4, 8, 12, 16 "
        "or 32");
    object_class_property_set_description(oc, "card-name",
        "device tree /firmware card-name (default: the nfb driver's name "
        "for the PCI ID, e.g. COMBO-GENERIC for 18ec:c000, otherwise "
        PTM_MODEL_CARD_NAME "); empty leaves it out");
    object_class_property_set_description(oc, "project-name",
        "device tree /firmware project-name (default " PTM_MODEL_PROJECT_NAME
        "); empty leaves it out");
    object_class_property_set_description(oc, "project-variant",
        "device tree /firmware project-variant (default empty: left out)");
    object_class_property_set_description(oc, "project-version",
        "device tree /firmware project-version (default " PTM_MODEL_VERSION
        ", the model's version); empty leaves it out");
    object_class_property_set_description(oc, "build-time",
        "device tree /firmware build-time, seconds since 1970-01-01 UTC "
        "(the default is 2026-12-02 12:42:14 UTC, when the model's version "
        "was set)");
    object_class_property_set_description(oc, "build-tool",
        "device tree /firmware build-tool (default \"" PTM_MODEL_BUILD_TOOL
        "\", the same in every QEMU version); empty leaves it out");
    object_class_property_set_description(oc, "build-author",
        "device tree /firmware build-author (default \""
        PTM_MODEL_BUILD_AUTHOR "\"); empty leaves it out");
    object_class_property_set_description(oc, "build-revision",
        "device tree /firmware build-revision (default empty: left out)");
    object_class_property_set_description(oc, "traffic",
        "id of a telemetry-traffic-* object driving the signals "
        "(default: idle, link up); with dma-queues only a "
        "telemetry-traffic-transfers object, background beside the engine's "
        "own transfers");
}

static const TypeInfo ndk_telemetry_info = {
    .name = TYPE_NDK_PCIE_TELEMETRY,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(NdkPcieTelemetryState),
    .instance_init = ndk_telemetry_instance_init,
    .instance_finalize = ndk_telemetry_instance_finalize,
    .class_init = ndk_telemetry_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { TYPE_PCIE_LINK_TRAFFIC },
        { }
    },
};

static void ndk_telemetry_register_types(void)
{
    type_register_static(&ndk_telemetry_info);
}

type_init(ndk_telemetry_register_types)
