/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU glue of the card's NDK DMA engine: see ndk-dma.h and docs/dma.md.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "system/dma.h"
#include "trace.h"

#include "ndk-dma.h"

/*
 * A running generator delivers its frames every GEN_TICK of virtual time
 * (and at every access to the engine): about what the nfb driver's 200 us
 * poll of the rings needs, without a timer per frame.
 */
#define NDK_DMA_GEN_TICK_NS (100 * SCALE_US)

static int64_t dma_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/*
 * Bus-master accesses through the function's address space (so bus master
 * enable and an IOMMU apply), ordered as the engine needs rather than with
 * a full barrier each as pci_dma_read/write do: one full barrier when the
 * engine starts to run (ndk_dma_begin), after which its reads see what the
 * vCPUs wrote before; and a write barrier before each write, so that a
 * frame's data is visible before its header and both before the update
 * buffer that announces them, as the driver reads them.
 */
static int ndk_dma_mem_read(void *opaque, uint64_t addr, void *buf,
                            size_t len)
{
    NdkDma *d = opaque;

    return dma_memory_read_relaxed(pci_get_address_space(d->pdev), addr, buf,
                                   len) == MEMTX_OK ? 0 : -1;
}

static int ndk_dma_mem_write(void *opaque, uint64_t addr, const void *buf,
                             size_t len)
{
    NdkDma *d = opaque;

    smp_wmb();
    return dma_memory_write_relaxed(pci_get_address_space(d->pdev), addr, buf,
                                    len) == MEMTX_OK ? 0 : -1;
}

/* The engine starts to run at virtual time now: see ndk_dma_mem_read */
static int64_t ndk_dma_begin(NdkDma *d)
{
    smp_mb();
    d->access_ns = dma_now();
    return d->access_ns;
}

static void ndk_dma_xfer(void *opaque, NdpDir dir, unsigned queue,
                         NdpXferKind kind, uint64_t addr, uint32_t bytes)
{
    NdkDma *d = opaque;
    bool write = kind == NDP_XFER_DATA_WRITE || kind == NDP_XFER_HDR_WRITE ||
                 kind == NDP_XFER_UPDATE_WRITE;

    trace_ndk_dma_xfer(dir ? "tx" : "rx", queue, kind, addr, bytes);
    if (kind == NDP_XFER_DESC_READ &&
        trace_event_get_state_backends(TRACE_NDK_DMA_DESC)) {
        /* what was fetched, so that a recording can be replayed */
        for (uint32_t i = 0; i + 8 <= bytes; i += 8) {
            uint64_t desc = 0;

            pci_dma_read(d->pdev, addr + i, &desc, 8);
            trace_ndk_dma_desc(addr + i, le64_to_cpu(desc));
        }
    }
    if (d->owner && d->owner->xfer) {
        d->owner->xfer(d->owner_opaque, d->access_ns, d->port_of[queue],
                       write, addr, bytes);
    }
}

/* Before the engine runs: the access's time, which all its work takes */
static int64_t ndk_dma_enter(NdkDma *d)
{
    if (d->owner && d->owner->enter) {
        d->owner->enter(d->owner_opaque);
    }
    /* after the owner settled: nothing it counted is later than this */
    return ndk_dma_begin(d);
}

static void ndk_dma_mmio(NdkDma *d, bool write, unsigned size)
{
    if (d->owner && d->owner->mmio) {
        d->owner->mmio(d->owner_opaque, write, size);
    }
}

static void ndk_dma_leave(NdkDma *d)
{
    if (d->owner && d->owner->leave) {
        d->owner->leave(d->owner_opaque);
    }
}

static const NdpMemOps ndk_dma_mem_ops = {
    .read = ndk_dma_mem_read,
    .write = ndk_dma_mem_write,
};

static const NdpHooks ndk_dma_hooks = {
    .xfer = ndk_dma_xfer,
};

/* After anything that may start or stop a generator (at now): its timer. */
static void ndk_dma_schedule(NdkDma *d, int64_t now)
{
    int64_t next = ndp_dma_run(d->core, now);

    if (next == INT64_MAX) {
        timer_del(d->timer);
    } else {
        timer_mod(d->timer, MAX(next, now + NDK_DMA_GEN_TICK_NS));
    }
}

static void ndk_dma_tick(void *opaque)
{
    NdkDma *d = opaque;

    ndk_dma_schedule(d, ndk_dma_enter(d));
    ndk_dma_leave(d);
}

static uint64_t ndk_dma_queue_read(NdkDma *d, NdpDir dir, hwaddr addr,
                                   unsigned size)
{
    uint64_t val;

    ndk_dma_mmio(d, false, size);
    val = ndp_dma_read(d->core, dir, addr / NDP_CTRL_SIZE,
                       addr % NDP_CTRL_SIZE, size, ndk_dma_enter(d));
    ndk_dma_leave(d);
    trace_ndk_dma_read(dir ? "tx" : "rx", addr, size, val);
    return val;
}

static void ndk_dma_queue_write(NdkDma *d, NdpDir dir, hwaddr addr,
                                uint64_t val, unsigned size)
{
    trace_ndk_dma_write(dir ? "tx" : "rx", addr, size, val);
    ndk_dma_mmio(d, true, size);
    ndp_dma_write(d->core, dir, addr / NDP_CTRL_SIZE, addr % NDP_CTRL_SIZE,
                  val, size, ndk_dma_enter(d));
    ndk_dma_leave(d);
}

static uint64_t ndk_dma_rx_read(void *opaque, hwaddr addr, unsigned size)
{
    return ndk_dma_queue_read(opaque, NDP_RX, addr, size);
}

static void ndk_dma_rx_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    ndk_dma_queue_write(opaque, NDP_RX, addr, val, size);
}

static uint64_t ndk_dma_tx_read(void *opaque, hwaddr addr, unsigned size)
{
    return ndk_dma_queue_read(opaque, NDP_TX, addr, size);
}

static void ndk_dma_tx_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    ndk_dma_queue_write(opaque, NDP_TX, addr, val, size);
}

static uint64_t ndk_dma_gls_read(void *opaque, hwaddr addr, unsigned size)
{
    NdkDma *d = opaque;
    uint64_t val;

    ndk_dma_mmio(d, false, size);
    val = ndp_gls_read(d->core, addr / NDP_GLS_SIZE, addr % NDP_GLS_SIZE,
                       size, ndk_dma_enter(d));
    ndk_dma_leave(d);
    trace_ndk_dma_read("gls", addr, size, val);
    return val;
}

static void ndk_dma_gls_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    NdkDma *d = opaque;
    int64_t now;

    trace_ndk_dma_write("gls", addr, size, val);
    ndk_dma_mmio(d, true, size);
    now = ndk_dma_enter(d);
    ndp_gls_write(d->core, addr / NDP_GLS_SIZE, addr % NDP_GLS_SIZE, val,
                  size, now);
    ndk_dma_schedule(d, now);
    ndk_dma_leave(d);
}

/*
 * 1 to 8 bytes at any address: the engine splits an access into the
 * 32-bit registers it covers, as the MI bus does.
 */
#define NDK_DMA_OPS(rd, wr) {                       \
    .read = rd,                                     \
    .write = wr,                                    \
    .endianness = DEVICE_LITTLE_ENDIAN,             \
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true }, \
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true }, \
}

static const MemoryRegionOps ndk_dma_rx_ops =
    NDK_DMA_OPS(ndk_dma_rx_read, ndk_dma_rx_write);
static const MemoryRegionOps ndk_dma_tx_ops =
    NDK_DMA_OPS(ndk_dma_tx_read, ndk_dma_tx_write);
static const MemoryRegionOps ndk_dma_gls_ops =
    NDK_DMA_OPS(ndk_dma_gls_read, ndk_dma_gls_write);

void ndk_dma_realize(NdkDma *d, PCIDevice *pdev, MemoryRegion *bar,
                     unsigned ports, unsigned queues, uint64_t dma_hz,
                     unsigned bus_bytes, const NdkDmaOwner *own,
                     void *owner_opaque)
{
    Object *owner = OBJECT(pdev);
    uint64_t nq = (uint64_t)ports * queues;

    d->pdev = pdev;
    d->queues = queues;
    for (uint64_t q = 0; q < nq && q < NDP_MAX_QUEUES; q++) {
        d->port_of[q] = q / queues;
    }
    d->owner = own;
    d->owner_opaque = owner_opaque;
    d->core = ndp_dma_new(ports, queues, dma_hz, bus_bytes, &ndk_dma_mem_ops,
                          &ndk_dma_hooks, d);
    memory_region_init_io(&d->rx, owner, &ndk_dma_rx_ops, d,
                          "ndk-pcie-telemetry-dma-rx", nq * NDP_CTRL_SIZE);
    memory_region_init_io(&d->tx, owner, &ndk_dma_tx_ops, d,
                          "ndk-pcie-telemetry-dma-tx", nq * NDP_CTRL_SIZE);
    memory_region_init_io(&d->gls, owner, &ndk_dma_gls_ops, d,
                          "ndk-pcie-telemetry-gls", ports * NDP_GLS_SIZE);
    memory_region_add_subregion(bar, NDP_BAR_RX_BASE, &d->rx);
    memory_region_add_subregion(bar, NDP_BAR_TX_BASE, &d->tx);
    memory_region_add_subregion(bar, NDP_BAR_GLS_BASE, &d->gls);
    d->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ndk_dma_tick, d);
}

void ndk_dma_unrealize(NdkDma *d, MemoryRegion *bar)
{
    if (!d->core) {
        return;
    }
    /* hot-unplug: no transfer after this */
    timer_free(d->timer);
    d->timer = NULL;
    memory_region_del_subregion(bar, &d->rx);
    memory_region_del_subregion(bar, &d->tx);
    memory_region_del_subregion(bar, &d->gls);
    ndp_dma_free(d->core);
    d->core = NULL;
    g_free(d->state);
    d->state = NULL;
    g_free(d->owner_state);
    d->owner_state = NULL;
}

void ndk_dma_reset(NdkDma *d)
{
    if (!d->core) {
        return;
    }
    timer_del(d->timer);
    ndp_dma_reset(d->core);
    /* virtual time goes on: the generators count from here */
    ndp_dma_run(d->core, ndk_dma_begin(d));
}

static int ndk_dma_pre_save(void *opaque)
{
    NdkDma *d = opaque;
    size_t len;

    /* frames made up to now are in the rings on both ends */
    ndp_dma_run(d->core, ndk_dma_begin(d));
    g_free(d->state);
    d->state = ndp_dma_save(d->core, &len);
    d->state_len = len;
    g_free(d->owner_state);
    d->owner_state = NULL;
    d->owner_state_len = 0;
    if (d->owner && d->owner->save) {
        d->owner_state = d->owner->save(d->owner_opaque, &len);
        d->owner_state_len = len;
    }
    return 0;
}

static int ndk_dma_post_load(void *opaque, int version_id)
{
    NdkDma *d = opaque;
    g_autofree char *err = ndp_dma_load(d->core, d->state, d->state_len);

    if (!err && d->owner && d->owner->load) {
        err = d->owner->load(d->owner_opaque, d->owner_state,
                             d->owner_state_len);
    }
    if (err) {
        error_report("ndk-pcie-telemetry: %s", err);
        return -EINVAL;
    }
    ndk_dma_schedule(d, ndk_dma_begin(d));
    return 0;
}

const VMStateDescription vmstate_ndk_dma = {
    .name = "ndk-pcie-telemetry/dma",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = ndk_dma_pre_save,
    .post_load = ndk_dma_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state_len, NdkDma),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, NdkDma, 0, NULL, state_len),
        VMSTATE_UINT32(owner_state_len, NdkDma),
        VMSTATE_VBUFFER_ALLOC_UINT32(owner_state, NdkDma, 0, NULL,
                                     owner_state_len),
        VMSTATE_END_OF_LIST()
    },
};
