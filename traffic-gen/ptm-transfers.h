/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The transfers generator: background DMA transfers that the card's
 * transfer log (ptm-dma-traffic.h) plays beside the DMA engine's own, so
 * that both share the buses through the same PTC model. It describes no
 * signals itself; a card takes it only together with its DMA engine.
 *
 * Slot k (k = 1, 2, ...) falls interval-ns after slot k - 1 (slot 0 at
 * virtual time 0, nothing in it) and holds a write of write-bytes, then a
 * read of read-bytes, both of DMA port `port` at host address
 * address + (k - 1) x stride (32-bit, wrapping). The parameters in force at
 * a slot's time are those of its PCIe cycle.
 */
#ifndef PTM_TRANSFERS_H
#define PTM_TRANSFERS_H

#include "ptm-gen.h"

typedef struct PtmTransfersParams {
    uint32_t port;              /* DMA port making the transfers */
    uint32_t interval_ns;       /* from one slot to the next */
    uint32_t write_bytes;       /* each slot's write, 0: none */
    uint32_t read_bytes;        /* each slot's read, 0: none */
    uint32_t address;           /* host address of the first slot */
    uint32_t stride;            /* added to it per slot */
} PtmTransfersParams;

extern const PtmGenModel ptm_model_transfers;

#endif
