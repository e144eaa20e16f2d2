/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU glue of the card's NDK DMA engine (ndp-dma.h): its registers in
 * BAR0, bus-master accesses through the PCI function, the generators'
 * timer, reset and migration.
 */
#ifndef NDK_DMA_H
#define NDK_DMA_H

#include "exec/memory.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "ndp-dma.h"

/* What the card around the engine does with it (may be NULL) */
typedef struct NdkDmaOwner {
    /* before the engine runs: the card may have to settle first */
    void (*enter)(void *opaque);
    /*
     * a transfer the engine made on the bus, from DMA port `port`, during
     * the access (or tick) of virtual time t_ns: every transfer of one
     * access is made at that access's moment, as the hardware starts them
     * on the doorbell, not as QEMU's host time drifts while it models them
     */
    void (*xfer)(void *opaque, int64_t t_ns, unsigned port, bool write,
                 uint64_t addr, uint32_t bytes);
    /* after the engine ran */
    void (*leave)(void *opaque);
    /* a guest access of `size` bytes to the engine's registers */
    void (*mmio)(void *opaque, bool write, unsigned size);
    /* migration: the owner's part of the state, as bytes; and back */
    void *(*save)(void *opaque, size_t *len);
    char *(*load)(void *opaque, const void *buf, size_t len);
} NdkDmaOwner;

typedef struct NdkDma {
    PCIDevice *pdev;
    NdpDma *core;
    unsigned queues;            /* per DMA port */
    uint8_t port_of[NDP_MAX_QUEUES];    /* DMA port of each global queue */
    const NdkDmaOwner *owner;
    void *owner_opaque;
    uint8_t *owner_state;       /* migration buffer of the owner's part */
    uint32_t owner_state_len;
    MemoryRegion rx, tx, gls;
    QEMUTimer *timer;           /* runs only while a generator runs */
    int64_t access_ns;          /* the virtual time of the access running */
    uint8_t *state;             /* migration buffer */
    uint32_t state_len;
} NdkDma;

/*
 * The engine with `queues` RX and TX queues per DMA port into bar (at
 * NDP_BAR_*_BASE). The generators make frames at dma_hz on a bus of
 * bus_bytes per cycle.
 */
void ndk_dma_realize(NdkDma *d, PCIDevice *pdev, MemoryRegion *bar,
                     unsigned ports, unsigned queues, uint64_t dma_hz,
                     unsigned bus_bytes, const NdkDmaOwner *owner,
                     void *owner_opaque);
void ndk_dma_unrealize(NdkDma *d, MemoryRegion *bar);
/* A reset of the card: every queue and generator stops at once. */
void ndk_dma_reset(NdkDma *d);

extern const VMStateDescription vmstate_ndk_dma;

#endif
