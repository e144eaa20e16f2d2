/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ndk-pcie-telemetry's PG381 performance traffic generator (pg381-core.h,
 * docs/pg381.md): its window in BAR0, host memory through the function's
 * bus mastering, its transfers into the card's DMA log (so the telemetry
 * block counts them), its timer, reset and saved state.
 */
#include "ndk-card.h"
#include "system/dma.h"

/* ---- what the generator asks of the card ------------------------ */

/*
 * One more DMA application on port 0 of the card's PTC, split by the
 * settings in force at t_ns (the card gives the generator every earlier
 * transfer before it changes them).
 */
static void ndk_pg381_transfer(void *opaque, uint64_t t_ns, bool write,
                               uint64_t addr, uint32_t bytes)
{
    NdkPcieTelemetryState *s = opaque;

    ptm_dma_traffic_add(s->dma_log, t_ns, 0, write, addr, bytes,
                        &s->settings);
}

static bool ndk_pg381_mem_valid(void *opaque, uint64_t addr, uint64_t len)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);

    if (!(pci_get_word(pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER)) {
        return false;
    }
    return len && addr + len > addr &&
           dma_memory_valid(pci_get_address_space(pdev), addr, len,
                            DMA_DIRECTION_TO_DEVICE, MEMTXATTRS_UNSPECIFIED);
}

static bool ndk_pg381_mem_write(void *opaque, uint64_t addr, const void *buf,
                                uint32_t len)
{
    return pci_dma_write(PCI_DEVICE(opaque), addr, buf, len) == MEMTX_OK;
}

static const Pg381Ops ndk_pg381_ops = {
    .transfer = ndk_pg381_transfer,
    .mem_valid = ndk_pg381_mem_valid,
    .mem_write = ndk_pg381_mem_write,
};

/* ---- its timer: one, at the next transfer the run makes --------- */

/*
 * The timer gives the log the transfers of at least this much virtual
 * time at once: a run of short requests then costs one callback per
 * batch, not one per request. Later is safe, as everything that reads
 * the log gives it the generator's transfers up to its instant first.
 */
#define NDK_PG381_BATCH_NS      (10 * SCALE_US)

static void ndk_pg381_schedule(NdkPcieTelemetryState *s)
{
    uint64_t next = pg381_next_ns(s->pg381);

    if (next == UINT64_MAX) {
        timer_del(s->pg381_timer);
    } else {
        next = MAX(next, now_ns() + NDK_PG381_BATCH_NS);
        timer_mod(s->pg381_timer, MIN(next, (uint64_t)INT64_MAX));
    }
}

void ndk_pg381_advance(NdkPcieTelemetryState *s, uint64_t t_ns)
{
    if (s->pg381) {
        pg381_advance(s->pg381, t_ns);
        ndk_pg381_schedule(s);
    }
}

/*
 * Transfers go into the log as virtual time reaches them, so that the
 * log can forget what the block counted even while nobody looks.
 */
static void ndk_pg381_tick(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    if (s->catching_up) {
        /* the block is a vCPU's alone: the log waits a tick */
        timer_mod(s->pg381_timer, now_ns() + NDK_TELEMETRY_TICK_MIN_NS);
        return;
    }
    ndk_pg381_advance(s, now_ns());
    ndk_telemetry_schedule(s);
}

/* ---- the window ------------------------------------------------- */

/*
 * 32-bit registers at 4-byte aligned offsets; an aligned 64-bit access is
 * two of them, low first; any other access reads 0 and does nothing.
 */
static uint64_t ndk_pg381_read(void *opaque, hwaddr addr, unsigned size)
{
    NdkPcieTelemetryState *s = opaque;
    uint64_t t, val = 0;

    ndk_telemetry_count_mmio(s, false, size);
    ndk_telemetry_log_access(s, false, NDK_PG381_BASE + addr, size);
    if ((size != 4 && size != 8) || addr % size) {
        return 0;
    }
    ndk_telemetry_quiesce(s);
    t = now_ns();
    val = pg381_read(s->pg381, addr, t);
    if (size == 8) {
        val |= (uint64_t)pg381_read(s->pg381, addr + 4, t) << 32;
    }
    ndk_pg381_schedule(s);
    ndk_telemetry_schedule(s);
    return val;
}

static void ndk_pg381_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    NdkPcieTelemetryState *s = opaque;
    uint64_t t;

    ndk_telemetry_count_mmio(s, true, size);
    ndk_telemetry_log_access(s, true, NDK_PG381_BASE + addr, size);
    if ((size != 4 && size != 8) || addr % size) {
        return;
    }
    ndk_telemetry_quiesce(s);
    t = now_ns();
    pg381_write(s->pg381, addr, val, t);
    if (size == 8) {
        pg381_write(s->pg381, addr + 4, val >> 32, t);
    }
    ndk_pg381_schedule(s);
    ndk_telemetry_schedule(s);
}

static const MemoryRegionOps ndk_pg381_mmio_ops = {
    .read = ndk_pg381_read,
    .write = ndk_pg381_write,
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

/* ---- the card's side -------------------------------------------- */

bool ndk_pg381_check_props(NdkPcieTelemetryState *s, Error **errp)
{
    if (!s->pg381_present) {
        if (s->pg381_out_of_order || s->pg381_data_integrity) {
            error_setg(errp, "%s: property '%s' needs 'pg381=on'",
                       TYPE_NDK_PCIE_TELEMETRY,
                       s->pg381_out_of_order ? "pg381-out-of-order"
                                             : "pg381-data-integrity");
            return false;
        }
        return true;
    }
    if (s->block_offset + PTM_BAR_SIZE > NDK_PG381_BASE &&
        s->block_offset < NDK_PG381_BASE + PG381_WINDOW) {
        error_setg(errp, "%s: property 'block-offset' is 0x%x, which "
                   "overlaps the PG381 generator of 'pg381' at 0x%08x to "
                   "0x%08x; allowed: up to 0x%08x or from 0x%08x",
                   TYPE_NDK_PCIE_TELEMETRY, s->block_offset, NDK_PG381_BASE,
                   NDK_PG381_BASE + PG381_WINDOW - 1,
                   NDK_PG381_BASE - PTM_BAR_SIZE,
                   NDK_PG381_BASE + PG381_WINDOW);
        return false;
    }
    return true;
}

/* What the function negotiated, as the DMA log's PTC takes it */
void ndk_pg381_set_pcie(NdkPcieTelemetryState *s)
{
    const PtmSettings *set = &s->settings;
    uint32_t field = set->tag_10bit ? 768 : set->ext_tag ? 256 : 32;
    Pg381Pcie p = {
        .mps = 128u << set->mps,
        .mrrs = 128u << set->mrrs,
        .rcb = set->rcb_128 ? 128 : 64,
        .tags = MIN(MIN(s->cfg.tag_capacity, 0x7FFu), field),
    };

    if (s->pg381) {
        /* reserved encodings (MPS above 4096) keep the last settings */
        pg381_set_pcie(s->pg381, &p);
    }
}

void ndk_pg381_realize(NdkPcieTelemetryState *s)
{
    Pg381Config cfg = {
        .clock_hz = s->cfg.pcie_clk_hz,
        .rq_bytes = s->cfg.pcie_rq_mfb_regions *
                    s->cfg.pcie_rq_mfb_region_bytes,
        .rc_bytes = s->cfg.pcie_rc_mfb_regions *
                    s->cfg.pcie_rc_mfb_region_bytes,
        .rq_hdr = PTM_DMA_RQ_HDR,
        .rc_hdr = PTM_DMA_RC_HDR,
        .latency_ns = PTM_DMA_LATENCY_NS,
        .out_of_order = s->pg381_out_of_order,
        .data_integrity = s->pg381_data_integrity,
    };
    g_autofree char *err = pg381_config_check(&cfg);

    if (!s->pg381_present) {
        return;
    }
    /* the card's checked properties are within the generator's ranges */
    g_assert(!err);
    s->pg381 = pg381_new(&cfg, &ndk_pg381_ops, s);
    s->pg381_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ndk_pg381_tick, s);
    memory_region_init_io(&s->pg381_mr, OBJECT(s), &ndk_pg381_mmio_ops, s,
                          "ndk-pcie-telemetry-pg381", PG381_WINDOW);
    memory_region_add_subregion(&s->bar, NDK_PG381_BASE, &s->pg381_mr);
    ndk_pg381_set_pcie(s);
}

void ndk_pg381_unrealize(NdkPcieTelemetryState *s)
{
    if (!s->pg381) {
        return;
    }
    memory_region_del_subregion(&s->bar, &s->pg381_mr);
    timer_free(s->pg381_timer);
    s->pg381_timer = NULL;
    pg381_free(s->pg381);
    s->pg381 = NULL;
    g_free(s->pg381_state);
    s->pg381_state = NULL;
}

/* A device reset: the run stops, registers and program are cleared */
void ndk_pg381_reset(NdkPcieTelemetryState *s)
{
    if (s->pg381) {
        pg381_reset(s->pg381);
        timer_del(s->pg381_timer);
        ndk_pg381_set_pcie(s);
    }
}

/* ---- migration: a subsection present only with the generator ---- */

static bool ndk_pg381_needed(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    return s->pg381 != NULL;
}

/*
 * [generator length][generator][log length][log]: the log travels here
 * when no DMA engine carries it (dma-queues=0), empty otherwise.
 */
static int ndk_pg381_pre_save(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;
    g_autofree void *gen = NULL, *log = NULL;
    size_t gen_len, log_len = 0;
    GByteArray *b = g_byte_array_new();
    uint8_t le[4];

    ndk_telemetry_quiesce(s);
    gen = pg381_save(s->pg381, &gen_len);
    if (!s->dma_queues) {
        log = ptm_dma_traffic_save(s->dma_log, &log_len);
    }
    stl_le_p(le, gen_len);
    g_byte_array_append(b, le, 4);
    g_byte_array_append(b, gen, gen_len);
    stl_le_p(le, log_len);
    g_byte_array_append(b, le, 4);
    g_byte_array_append(b, log, log_len);
    g_free(s->pg381_state);
    s->pg381_state_len = b->len;
    s->pg381_state = g_byte_array_free(b, FALSE);
    return 0;
}

static int ndk_pg381_post_load(void *opaque, int version_id)
{
    NdkPcieTelemetryState *s = opaque;
    g_autofree char *err = NULL;
    uint32_t gen_len, log_len;

    if (s->pg381_state_len < 8) {
        goto malformed;
    }
    gen_len = ldl_le_p(s->pg381_state);
    if (gen_len > s->pg381_state_len - 8) {
        goto malformed;
    }
    log_len = ldl_le_p(s->pg381_state + 4 + gen_len);
    if (log_len != s->pg381_state_len - 8 - gen_len ||
        (log_len != 0) != !s->dma_queues) {
        goto malformed;
    }
    err = pg381_load(s->pg381, s->pg381_state + 4, gen_len);
    if (!err && log_len) {
        err = ptm_dma_traffic_load(s->dma_log, s->pg381_state + 8 + gen_len,
                                   log_len);
    }
    if (err) {
        error_report("%s: PG381 generator: %s", TYPE_NDK_PCIE_TELEMETRY,
                     err);
        return -EINVAL;
    }
    ndk_pg381_set_pcie(s);
    ndk_pg381_schedule(s);
    return 0;

malformed:
    error_report("%s: malformed PG381 generator state",
                 TYPE_NDK_PCIE_TELEMETRY);
    return -EINVAL;
}

const VMStateDescription vmstate_ndk_pg381 = {
    .name = TYPE_NDK_PCIE_TELEMETRY "/pg381",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ndk_pg381_needed,
    .pre_save = ndk_pg381_pre_save,
    .post_load = ndk_pg381_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(pg381_state_len, NdkPcieTelemetryState),
        VMSTATE_VBUFFER_ALLOC_UINT32(pg381_state, NdkPcieTelemetryState, 0,
                                     NULL, pg381_state_len),
        VMSTATE_END_OF_LIST()
    },
};
