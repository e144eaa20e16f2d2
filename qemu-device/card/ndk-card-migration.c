/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ndk-pcie-telemetry's saved state: the block's, the traffic's, the DMA
 * engine's and the link's, with the checks that both ends are one card.
 */
#include "ndk-card.h"

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
    ndk_pg381_advance(s, now_ns());
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

static bool ndk_telemetry_flit_needed(void *opaque)
{
    NdkPcieTelemetryState *s = opaque;

    return flit_pci_present(&s->flit);
}

/* The flit-mode capabilities' state */
static const VMStateDescription vmstate_ndk_telemetry_flit = {
    .name = TYPE_NDK_PCIE_TELEMETRY "/flit",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ndk_telemetry_flit_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(flit_origin, NdkPcieTelemetryState),
        VMSTATE_STRUCT(flit, NdkPcieTelemetryState, 1, vmstate_flit_pci,
                       FlitPci),
        VMSTATE_END_OF_LIST()
    }
};

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

const VMStateDescription vmstate_ndk_telemetry = {
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
        &vmstate_ndk_telemetry_flit,
        &vmstate_ndk_pg381,
        NULL
    },
};
