/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block's registers: identity and layout, readings (SNAPSHOT, wait,
 * read-out), commands, and the difference of two readings.
 *
 * BAR accesses of one reading, E endpoints with C counters each:
 *   1 write   READ_SEL = 0 (posted; cheaper than reading it first, and
 *             correct whatever another program left there)
 *   1 write   COMMAND = SNAPSHOT (posted)
 *   n reads   STATUS until BUSY is clear; the last one also gives the flags,
 *             which are exactly those of the snapshot just taken
 *   E*C loads the counters of the existing endpoints (64-bit; two 32-bit
 *             reads when the accessor has no 64-bit load)
 *   3*E reads PCIE_STATUS, PCIE_TAGS, PCIE_STFIFO
 * With the default card: 2 + n + 48 + 3 = 53 + n (n is 1 on a real card,
 * whose MI read takes longer than the 1.29 us of BUSY, more when the reader
 * is faster). The reference reads the whole window (64 entries) and STATUS
 * again for the flags: 1 + n + 64 + 3 + 1 = 69 + n.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcie-telemetry.h"

#define ALL_ONES         0xFFFFFFFFu
/*
 * Polls of STATUS before giving up even when the clock does not advance
 * (a broken now_ns must not hang the reader); a real MI read takes about a
 * microsecond, so the 1 s timeout comes first.
 */
#define MAX_POLLS        (1u << 24)

struct ptl_block {
    ptl_regs_ops ops;
    void *opaque;
    ptl_layout lay;
    unsigned nread;             /* counters of the existing endpoints */
};

static uint32_t rd32(const ptl_block *b, uint32_t off)
{
    return b->ops.read32(b->opaque, off);
}

static void wr32(const ptl_block *b, uint32_t off, uint32_t val)
{
    b->ops.write32(b->opaque, off, val);
}

static uint64_t now_ns(const ptl_block *b)
{
    struct timespec ts;

    if (b->ops.now_ns) {
        return b->ops.now_ns(b->opaque);
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ptl_err gone(ptl_error *err)
{
    return ptl_set_error(err, PTL_E_GONE, "card not responding (registers "
                         "read all ones): removed, reset or powered off");
}

/* Fields of the configuration registers; see FACTS.md and ptm-core.h. */
static ptl_err decode_layout(const ptl_block *b, ptl_layout *l,
                             ptl_error *err)
{
    uint32_t topo = rd32(b, PTL_REG_CFG_TOPOLOGY);
    uint32_t layout = rd32(b, PTL_REG_CFG_LAYOUT);
    uint32_t pcie = rd32(b, PTL_REG_CFG_PCIE), dma = rd32(b, PTL_REG_CFG_DMA);
    uint32_t drain = rd32(b, PTL_REG_CFG_DRAIN);
    uint32_t regions = rd32(b, PTL_REG_CFG_REGIONS);
    uint32_t width = rd32(b, PTL_REG_CFG_WIDTH), hist = rd32(b, PTL_REG_CFG_HIST);
    uint32_t cap = rd32(b, PTL_REG_CFG_CAPACITY);
    uint32_t wdma = rd32(b, PTL_REG_CFG_WIDTH_DMA);
    unsigned pcie_ch, dma_ch, hist_ch;

    l->cnt_base = rd32(b, PTL_REG_CNT_BASE);
    if (topo == ALL_ONES || layout == ALL_ONES) {
        return gone(err);
    }
    l->endpoints = PTL_FIELD(topo, PTL_TOPOLOGY_ENDPOINTS);
    l->dma_ports = PTL_FIELD(topo, PTL_TOPOLOGY_DMA_PORTS);
    l->probes = PTL_FIELD(topo, PTL_TOPOLOGY_PROBES);
    l->entries = PTL_FIELD(layout, PTL_LAYOUT_ENTRIES);
    l->cnt_width = PTL_FIELD(layout, PTL_LAYOUT_CNT_WIDTH);
    l->pcie_channels = PTL_FIELD(pcie, PTL_PROBE_CHANNELS);
    l->pcie_buses = PTL_FIELD(pcie, PTL_PROBE_BUSES);
    l->pcie_regions = PTL_FIELD(pcie, PTL_PROBE_REGIONS);
    l->pcie_brakes = PTL_FIELD(pcie, PTL_PROBE_BRAKES);
    l->dma_channels = PTL_FIELD(dma, PTL_PROBE_CHANNELS);
    l->dma_buses = PTL_FIELD(dma, PTL_PROBE_BUSES);
    l->dma_regions = PTL_FIELD(dma, PTL_PROBE_REGIONS);
    l->dma_brakes = PTL_FIELD(dma, PTL_PROBE_BRAKES);
    l->drain_period = PTL_FIELD(drain, PTL_DRAIN_PERIOD);
    if (!l->drain_period) {
        l->drain_period = 65536;
    }
    l->item_bytes = PTL_FIELD(drain, PTL_DRAIN_ITEM_BYTES);
    l->rq_regions = PTL_FIELD(regions, PTL_REGIONS_RQ);
    l->rc_regions = PTL_FIELD(regions, PTL_REGIONS_RC);
    l->up_regions = PTL_FIELD(regions, PTL_REGIONS_UP);
    l->down_regions = PTL_FIELD(regions, PTL_REGIONS_DOWN);
    l->rq_bytes = PTL_FIELD(width, PTL_WIDTH_LOW);
    l->rc_bytes = PTL_FIELD(width, PTL_WIDTH_HIGH);
    l->up_bytes = PTL_FIELD(wdma, PTL_WIDTH_LOW);
    l->down_bytes = PTL_FIELD(wdma, PTL_WIDTH_HIGH);
    l->hist_bands = PTL_FIELD(hist, PTL_HIST_BANDS);
    l->pcie_hists = PTL_FIELD(hist, PTL_HIST_PCIE);
    l->dma_hists = PTL_FIELD(hist, PTL_HIST_DMA);
    l->tag_capacity = PTL_FIELD(cap, PTL_CAPACITY_TAGS);
    l->stfifo_capacity = PTL_FIELD(cap, PTL_CAPACITY_STFIFO);

    if (l->endpoints < 1 || l->endpoints > PTL_MAX_ENDPOINTS) {
        return ptl_set_error(err, PTL_E_INTERNAL, "the block reports %u "
                             "PCIe endpoints, supported: 1 to %u",
                             l->endpoints, PTL_MAX_ENDPOINTS);
    }
    if (l->pcie_buses != 2 || l->dma_buses != 2 * l->dma_ports) {
        return ptl_set_error(err, PTL_E_INTERNAL, "unsupported layout: %u "
                             "PCIe-side and %u DMA-side buses for %u DMA "
                             "ports (expected 2 and 2 per port)",
                             l->pcie_buses, l->dma_buses, l->dma_ports);
    }
    if (l->rq_regions > l->pcie_regions || l->rc_regions > l->pcie_regions ||
        l->up_regions > l->dma_regions || l->down_regions > l->dma_regions) {
        return ptl_set_error(err, PTL_E_INTERNAL, "inconsistent layout: bus "
                             "regions %u/%u/%u/%u exceed the probes' %u/%u",
                             l->rq_regions, l->rc_regions, l->up_regions,
                             l->down_regions, l->pcie_regions,
                             l->dma_regions);
    }
    hist_ch = l->hist_bands * l->pcie_hists;
    if (hist_ch > l->pcie_brakes) {
        return ptl_set_error(err, PTL_E_INTERNAL, "inconsistent layout: %u "
                             "histogram bands but %u BRAKE channels",
                             hist_ch, l->pcie_brakes);
    }
    l->brake_reasons = l->pcie_brakes - hist_ch;
    if (l->cnt_width < 33 || l->cnt_width > 64) {
        return ptl_set_error(err, PTL_E_INTERNAL, "unsupported counter "
                             "width %u (supported: 33 to 64)", l->cnt_width);
    }
    if (l->item_bytes == 0) {
        return ptl_set_error(err, PTL_E_INTERNAL, "the block reports MFB "
                             "items of 0 bytes");
    }
    /*
     * The 8-bit channel fields wrap on large cards (the real block does not
     * guard them), so the channel counts come from buses, regions and BRAKE
     * channels; the fields only have to agree modulo 256.
     */
    pcie_ch = 1 + l->pcie_buses * (6 + l->pcie_regions) + l->pcie_brakes;
    dma_ch = 1 + l->dma_buses * (6 + l->dma_regions) + l->dma_brakes;
    if ((pcie_ch & 0xFF) != l->pcie_channels ||
        (dma_ch & 0xFF) != l->dma_channels ||
        ((pcie_ch + dma_ch) & 0xFF) != ((layout >> 24) & 0xFF)) {
        return ptl_set_error(err, PTL_E_INTERNAL, "inconsistent layout: "
                             "CFG_PCIE/CFG_DMA/CFG_LAYOUT give %u/%u/%u "
                             "channels, the buses and regions %u/%u/%u",
                             l->pcie_channels, l->dma_channels,
                             (layout >> 24) & 0xFF, pcie_ch, dma_ch,
                             pcie_ch + dma_ch);
    }
    l->pcie_channels = pcie_ch;
    l->dma_channels = dma_ch;
    l->per_endpoint = pcie_ch + dma_ch;
    if (l->entries == 0 || l->cnt_base % 8 || l->cnt_base < 0x100 ||
        (uint64_t)l->cnt_base + 8ull * l->entries > PTL_BLOCK_SIZE) {
        return ptl_set_error(err, PTL_E_BAR, "counter window of %u entries "
                             "at 0x%x does not fit the 64 KiB block",
                             l->entries, l->cnt_base);
    }
    if ((uint64_t)l->endpoints * l->per_endpoint > l->entries) {
        return ptl_set_error(err, PTL_E_INTERNAL, "inconsistent layout: %u "
                             "endpoints of %u counters need more than the "
                             "%u entries", l->endpoints, l->per_endpoint,
                             l->entries);
    }
    return PTL_OK;
}

ptl_err ptl_block_open(const ptl_regs_ops *ops, void *opaque,
                       ptl_block **out, ptl_error *err)
{
    ptl_block *b;
    ptl_err rc;

    *out = NULL;
    if (!ops || !ops->read32 || !ops->write32) {
        return ptl_set_error(err, PTL_E_INTERNAL, "no register accessors");
    }
    b = calloc(1, sizeof(*b));
    if (!b) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    b->ops = *ops;
    b->opaque = opaque;
    b->lay.magic = rd32(b, PTL_REG_MAGIC);
    if (b->lay.magic == ALL_ONES) {
        rc = gone(err);
        goto fail;
    }
    if (b->lay.magic != PTL_MAGIC) {
        rc = ptl_set_error(err, PTL_E_MAGIC, "no telemetry block here: MAGIC "
                           "reads 0x%08x, expected 0x%08x", b->lay.magic,
                           PTL_MAGIC);
        goto fail;
    }
    b->lay.version = rd32(b, PTL_REG_VERSION);
    if (b->lay.version >> 16 != PTL_VERSION_MAJOR) {
        rc = ptl_set_error(err, PTL_E_VERSION, "unsupported block version "
                           "%u.%u (0x%08x); supported: major %u",
                           b->lay.version >> 16, b->lay.version & 0xFFFF,
                           b->lay.version, PTL_VERSION_MAJOR);
        goto fail;
    }
    rc = decode_layout(b, &b->lay, err);
    if (rc) {
        goto fail;
    }
    b->nread = b->lay.endpoints * b->lay.per_endpoint;
    *out = b;
    return PTL_OK;

fail:
    free(b);
    return rc;
}

void ptl_block_close(ptl_block *b)
{
    free(b);
}

const ptl_layout *ptl_block_layout(const ptl_block *b)
{
    return &b->lay;
}

ptl_reading *ptl_reading_new(const ptl_layout *lay)
{
    ptl_reading *r = calloc(1, sizeof(*r));

    if (!r) {
        return NULL;
    }
    r->entries = lay->entries;
    r->endpoints = lay->endpoints;
    r->counters = calloc(lay->entries, sizeof(*r->counters));
    r->pcie_status = calloc(lay->endpoints, sizeof(uint32_t));
    r->tags = calloc(lay->endpoints, sizeof(uint32_t));
    r->stfifo = calloc(lay->endpoints, sizeof(uint32_t));
    if (!r->counters || !r->pcie_status || !r->tags || !r->stfifo) {
        ptl_reading_free(r);
        return NULL;
    }
    return r;
}

void ptl_reading_free(ptl_reading *r)
{
    if (!r) {
        return;
    }
    free(r->counters);
    free(r->pcie_status);
    free(r->tags);
    free(r->stfifo);
    free(r);
}

/* Poll STATUS while BUSY; *status gets the last value read. */
static ptl_err wait_busy(ptl_block *b, uint64_t start, uint32_t *status,
                         const char *what, ptl_error *err)
{
    for (unsigned polls = 0;; polls++) {
        uint32_t s = rd32(b, PTL_REG_STATUS);

        if (s == ALL_ONES) {
            return gone(err);
        }
        if (!(s & PTL_STATUS_BUSY)) {
            *status = s;
            return PTL_OK;
        }
        if (now_ns(b) - start > PTL_BUSY_TIMEOUT_NS || polls >= MAX_POLLS) {
            return ptl_set_error(err, PTL_E_BUSY, "the block stayed BUSY "
                                 "for more than 1 s after %s", what);
        }
    }
}

ptl_err ptl_block_read(ptl_block *b, ptl_reading *r, ptl_error *err)
{
    const ptl_layout *l = &b->lay;
    uint64_t t0, t1, mask;
    uint32_t status;
    ptl_err rc;

    if (r->entries != l->entries || r->endpoints != l->endpoints) {
        return ptl_set_error(err, PTL_E_INTERNAL, "reading made for another "
                             "layout");
    }
    mask = l->cnt_width >= 64 ? UINT64_MAX : (1ull << l->cnt_width) - 1;
    wr32(b, PTL_REG_READ_SEL, 0);
    /*
     * The interval is timed at the SNAPSHOT itself: a posted write is
     * issued between the two clock reads.
     */
    t0 = now_ns(b);
    wr32(b, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    t1 = now_ns(b);
    r->t_ns = t0 + (t1 - t0) / 2;
    rc = wait_busy(b, t1, &status, "SNAPSHOT", err);
    if (rc) {
        return rc;
    }
    r->status = status;
    for (unsigned i = 0; i < b->nread; i++) {
        uint32_t off = l->cnt_base + 8 * i;
        uint64_t v;

        if (b->ops.read64) {
            v = b->ops.read64(b->opaque, off);
        } else {
            v = rd32(b, off);
            v |= (uint64_t)rd32(b, off + 4) << 32;
        }
        /*
         * bits above CNT_WIDTH read 0 on a block that answers; the
         * remaining check below covers CNT_WIDTH 64
         */
        if (v & ~mask) {
            return gone(err);
        }
        r->counters[i] = v;
    }
    for (unsigned e = 0; e < l->endpoints; e++) {
        r->pcie_status[e] = rd32(b, PTL_REG_PCIE_STATUS(e));
        r->tags[e] = rd32(b, PTL_REG_PCIE_TAGS(e));
        r->stfifo[e] = rd32(b, PTL_REG_PCIE_STFIFO(e));
        /* PCIE_STATUS has 10 bits: all ones is a vanished card */
        if (r->pcie_status[e] == ALL_ONES) {
            return gone(err);
        }
    }
    return PTL_OK;
}

ptl_err ptl_block_clear(ptl_block *b, ptl_error *err)
{
    uint32_t status;
    uint64_t t;

    /*
     * As the reference's clear: the counters, the sticky flags and the
     * lowest values in one write, so that the next reading starts afresh.
     */
    t = now_ns(b);
    wr32(b, PTL_REG_COMMAND,
         PTL_CMD_CLEAR | PTL_CMD_CLEAR_FLAGS | PTL_CMD_CLEAR_LOWEST);
    return wait_busy(b, t, &status, "CLEAR", err);
}

ptl_err ptl_block_clear_flags(ptl_block *b, bool lowest_too, ptl_error *err)
{
    /*
     * One posted write and no read back: PCIe keeps a later read behind it,
     * and the next reading's STATUS polls notice a vanished card.
     */
    wr32(b, PTL_REG_COMMAND, PTL_CMD_CLEAR_FLAGS | (lowest_too ? PTL_CMD_CLEAR_LOWEST : 0));
    return PTL_OK;
}

uint32_t ptl_block_status(ptl_block *b)
{
    return rd32(b, PTL_REG_STATUS);
}

void ptl_reading_diff(const ptl_layout *lay, const ptl_reading *earlier,
                      const ptl_reading *later, ptl_reading *out)
{
    uint64_t mask = lay->cnt_width >= 64 ? UINT64_MAX
                                         : (1ull << lay->cnt_width) - 1;
    unsigned n = later->entries;

    if (earlier->entries < n) {
        n = earlier->entries;
    }
    for (unsigned i = 0; i < n; i++) {
        out->counters[i] = (later->counters[i] - earlier->counters[i]) & mask;
    }
    out->t_ns = later->t_ns;
    out->status = later->status;
    if (out != later) {
        for (unsigned e = 0; e < later->endpoints && e < out->endpoints;
             e++) {
            out->pcie_status[e] = later->pcie_status[e];
            out->tags[e] = later->tags[e];
            out->stfifo[e] = later->stfifo[e];
        }
    }
}
