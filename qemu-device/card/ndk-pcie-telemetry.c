/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ndk-pcie-telemetry: a PCI(e) function whose BAR0 is CESNET's
 * PCIE_TELEMETRY_MI block, for developing and testing NDK software without
 * an FPGA. The block itself is modelled in ptm-core.c without QEMU; this
 * file and ndk-card-config.c and ndk-card-migration.c beside it are the
 * glue: this one the BAR, the clock, the link and the DMA engine's owner,
 * properties, realize and reset (ndk-card.h).
 *
 * docs/ndk-pcie-telemetry.md in the project describes the device.
 */
#include "ndk-card.h"

static void ndk_telemetry_link_advance(NdkPcieTelemetryState *s,
                                       uint64_t t_ns);

/*
 * A guest access to BAR0 is a TLP on the link: a write carries its bytes
 * down, a read's completion carries them up, in whole DWs.
 */
void ndk_telemetry_count_mmio(NdkPcieTelemetryState *s, bool write,
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
void ndk_telemetry_quiesce(NdkPcieTelemetryState *s)
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
    NdkPcieTelemetryState *s = opaque;

    ndk_telemetry_count_mmio(opaque, false, size);
    ndk_telemetry_log_access(s, false, s->block_offset + addr, size);
    /* the bytes past the block's end read 0 */
    return ndk_telemetry_block_read(opaque, addr,
                                    MIN(size, PTM_BAR_SIZE - addr));
}

static void ndk_telemetry_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    NdkPcieTelemetryState *s = opaque;

    ndk_telemetry_count_mmio(opaque, true, size);
    ndk_telemetry_log_access(s, true, s->block_offset + addr, size);
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
    ndk_telemetry_log_access(s, false, addr, size);
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
    ndk_telemetry_log_access(s, true, addr, size);
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

void ndk_telemetry_schedule(NdkPcieTelemetryState *s)
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

    /* the generator's transfers up to t, before the block counts them */
    ndk_pg381_advance(s, t);
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
    ndk_pg381_advance(s, t);
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
/* A live change of the traffic: catch up, then apply from the next window. */
static void ndk_telemetry_traffic_sync(void *card, uint64_t *now,
                                       uint64_t *from)
{
    NdkPcieTelemetryState *s = card;

    ndk_telemetry_quiesce(s);
    *now = now_ns();
    ndk_pg381_advance(s, *now);
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

uint64_t ndk_telemetry_pcie_cycle(NdkPcieTelemetryState *s, uint64_t t_ns)
{
    return (uint64_t)((unsigned __int128)t_ns * s->cfg.pcie_clk_hz /
                      NANOSECONDS_PER_SECOND);
}

/*
 * The probe whose buses the link's count reads: endpoint 0's PCIe probe,
 * without its BRAKE and histogram channels, which the link does not need
 * (a source counts them only where the shape has them).
 */
void ndk_telemetry_link_shape(NdkPcieTelemetryState *s,
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
        ndk_pg381_advance(s, t_ns);
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

    /* the log takes transfers in time order: the generator's first */
    ndk_pg381_advance(s, t_ns);
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
    if (s->dma_queues || s->pg381_present) {
        /* the block counts the card's own DMA (engine and generator) */
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
    if (!ndk_telemetry_init_flit(s, errp)) {
        g_free(s->devtree_xz);
        s->devtree_xz = NULL;
        msi_uninit(pdev);
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
        flit_pci_exit(&s->flit);
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
                                       MAX(s->dma_queues ?
                                           NDP_BAR_END(s->cfg.dma_ports) : 0,
                                           s->pg381_present ?
                                           NDK_PG381_BASE + PG381_WINDOW :
                                           0))));
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
    ndk_pg381_realize(s);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar);
    s->tlp_log = g_new0(NdkBarAccess, NDK_TLP_LOG);

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
    ndk_pg381_unrealize(s);
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
    flit_pci_exit(&s->flit);
    ndk_telemetry_tlps_reset(s);
    g_free(s->tlp_log);
    s->tlp_log = NULL;
    msi_uninit(pdev);
}

/* A device reset is the MI reset: the counter memory survives it. */
static void ndk_telemetry_reset_hold(Object *obj, ResetType type)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    trace_ptm_reset(type == RESET_TYPE_COLD);
    ndk_telemetry_quiesce(s);
    /* what the generator made before the reset is on the buses */
    ndk_pg381_advance(s, now_ns());
    ptm_core_reset(s->core, now_ns());
    ndk_dma_reset(&s->dma);
    ndk_pg381_reset(s);
    if (s->dma_log) {
        /* what was on the buses is gone with the reset */
        ptm_dma_traffic_reset(s->dma_log, now_ns());
    }
    flit_pci_reset(&s->flit);       /* samples the link before it */
    ndk_telemetry_tlps_reset(s);
    ndk_telemetry_link_reset(s);
    if (flit_pci_present(&s->flit)) {
        s->flit_origin = now_ns();
        flit_end_rebase(&s->flit.end);
    }
    ndk_telemetry_reset_pcie(s);
    ndk_telemetry_sync_settings(s);
    ndk_telemetry_schedule(s);
}

/* After the reset the link trains again with the port above */
static void ndk_telemetry_reset_exit(Object *obj, ResetType type)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);
    FlitPci *port = ndk_telemetry_flit_port(s);

    if (port && flit_pci_present(&s->flit)) {
        flit_pci_link_train(port, &s->flit);
    }
}

static FlitPci *ndk_telemetry_flit_end(Object *obj)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    return flit_pci_present(&s->flit) ? &s->flit : NULL;
}

static char *ndk_telemetry_get_flit_error(Object *obj, Error **errp)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    return g_strdup(s->flit.last_error ? s->flit.last_error : "");
}

static void ndk_telemetry_set_flit_error(Object *obj, const char *value,
                                         Error **errp)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);

    if (!DEVICE(obj)->realized) {
        error_setg(errp, "%s: 'flit-error' injects into a running card: "
                   "set it with qom-set", TYPE_NDK_PCIE_TELEMETRY);
        return;
    }
    flit_pci_inject(&s->flit, ndk_telemetry_flit_port(s), value,
                    TYPE_NDK_PCIE_TELEMETRY, errp);
}

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
    DEFINE_PROP_BOOL("pg381", NdkPcieTelemetryState, pg381_present, false),
    DEFINE_PROP_BOOL("pg381-out-of-order", NdkPcieTelemetryState,
                     pg381_out_of_order, false),
    DEFINE_PROP_BOOL("pg381-data-integrity", NdkPcieTelemetryState,
                     pg381_data_integrity, false),
    DEFINE_PROP_ON_OFF_AUTO("msi", NdkPcieTelemetryState, msi,
                            ON_OFF_AUTO_AUTO),
    /* the Gen3 x16 endpoint of NDK on the AMD Alveo U200 */
    DEFINE_PROP_PCIE_LINK_SPEED("link-speed", NdkPcieTelemetryState,
                                link_speed, PCIE_LINK_SPEED_8),
    DEFINE_PROP_PCIE_LINK_WIDTH("link-width", NdkPcieTelemetryState,
                                link_width, PCIE_LINK_WIDTH_16),
    DEFINE_PROP_BOOL("flit-mode", NdkPcieTelemetryState, flit_mode, false),
    DEFINE_PROP_UINT32("flit-ltssm-regs", NdkPcieTelemetryState,
                       flit_ltssm_regs, 5),
    DEFINE_PROP_UINT32("flit-flight-ns", NdkPcieTelemetryState,
                       flit_flight_ns, 10),
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
    rc->phases.exit = ndk_telemetry_reset_exit;
    PCIE_LINK_TRAFFIC_CLASS(oc)->totals = ndk_telemetry_link_totals;
    PCIE_LINK_TRAFFIC_CLASS(oc)->tlps = ndk_telemetry_tlps;
    PCIE_FLIT_LINK_CLASS(oc)->flit = ndk_telemetry_flit_end;
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
    object_class_property_set_description(oc, "pg381",
        "an AMD/Xilinx PG381 performance AXI traffic generator at BAR0 "
        "offset 0x01800000 (64 KiB; BAR0 grows to 32 MiB): its host-memory "
        "reads and writes go through the card's PTC and the telemetry "
        "counts them (docs/pg381.md)");
    object_class_property_set_description(oc, "pg381-out-of-order",
        "the PG381 generator's latency mode, an IP generation parameter: "
        "out of order (128 requests outstanding in all, axi_id auto_incr) "
        "instead of in order (509 a channel, constant axi_id)");
    object_class_property_set_description(oc, "pg381-data-integrity",
        "the PG381 generator's data-integrity IP generation parameter "
        "(reported in its PARAMS register; reads are not checked)");
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
    object_class_property_add_str(oc, "flit-error",
                                  ndk_telemetry_get_flit_error,
                                  ndk_telemetry_set_flit_error);
    object_class_property_set_description(oc, "flit-error",
        "inject flit errors into what the card receives: \"kind=K,count=N"
        "[,lane=L]\" (K uncorrectable, unrecognized or correctable, which "
        "names its lane); the uncorrectable and unrecognized ones are "
        "Nak'd and replayed; reads back the last injection taken");
    object_class_property_set_description(oc, "flit-mode",
        "PCIe 6.0 flit mode (needs link-speed=64 and a PCIe bus): Flit Mode "
        "Supported, the Physical Layer 64.0 GT/s, Flit Logging and Flit "
        "Performance Measurement capabilities; the link runs in flit mode "
        "below a dwc-pcie-root-port with flit-mode=on");
    object_class_property_set_description(oc, "flit-ltssm-regs",
        "LTSSM Tracking Register Count of Flit Performance Measurement, 0 "
        "to 5");
    object_class_property_set_description(oc, "flit-flight-ns",
        "one-way time on the wire in ns (the link model's latencies)");
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
        "(default: idle, link up); with dma-queues or pg381 only a "
        "telemetry-traffic-transfers object, background beside the card's "
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
        { TYPE_PCIE_FLIT_LINK },
        { }
    },
};

static void ndk_telemetry_register_types(void)
{
    type_register_static(&ndk_telemetry_info);
}

type_init(ndk_telemetry_register_types)
