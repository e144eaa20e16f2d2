/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reading decoded into the reference reader's data model, and the
 * figures of one bus.
 *
 * Channels of endpoint e start at e x per_endpoint. The PCIe probe:
 *   0                      cycles
 *   1 + b (6 + R) + k      bus b (0 RQ, 1 RC), k as in enum below
 *   1 + 2 (6 + R) + k      BRAKE k: the reasons, then the histogram bands
 * The DMA probe follows at pcie_channels: 0 cycles, bus 2p UP and 2p + 1
 * DOWN of port p, same per-bus layout with its own R.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

static bool fill_bus(ptl_bus *bus, const uint64_t *ch, unsigned nregions,
                     unsigned region_bytes)
{
    bus->words = ch[PTL_CH_WORDS];
    bus->backpressure = ch[PTL_CH_STALL];
    bus->transactions = ch[PTL_CH_SOF];
    bus->mvb = ch[PTL_CH_MVB];
    bus->mvb_backpressure = ch[PTL_CH_MVB_STALL];
    bus->items = ch[PTL_CH_ITEMS];
    bus->nregions = nregions;
    bus->region_bytes = region_bytes;
    bus->regions = calloc(nregions + 1, sizeof(uint64_t));
    if (!bus->regions) {
        return false;
    }
    for (unsigned r = 0; r < nregions; r++) {
        bus->regions[r] = ch[PTL_CH_REGION0 + r];
    }
    return true;
}

static bool decode_endpoint(const ptl_layout *l, const ptl_reading *rd,
                            unsigned e, ptl_endpoint *ep)
{
    const uint64_t *pc = rd->counters + (size_t)e * l->per_endpoint;
    const uint64_t *dc = pc + l->pcie_channels;
    const uint64_t *brk = pc + ptl_brake_channel(l->pcie_regions, 0);
    uint32_t s = rd->pcie_status[e];

    ep->index = e;
    ep->mps = 128u << PTL_FIELD(s, PTL_PCIE_MPS);
    ep->mrrs = 128u << PTL_FIELD(s, PTL_PCIE_MRRS);
    ep->ext_tag = PTL_FIELD(s, PTL_PCIE_EXT_TAG);
    ep->tag_10b = PTL_FIELD(s, PTL_PCIE_TAG_10BIT);
    ep->rcb = PTL_FIELD(s, PTL_PCIE_RCB_128) ? 128 : 64;
    ep->link_up = PTL_FIELD(s, PTL_PCIE_LINK_UP);
    ep->tags_free = PTL_FIELD(rd->tags[e], PTL_FREE_NOW);
    ep->tags_free_min = PTL_FIELD(rd->tags[e], PTL_FREE_LOWEST);
    ep->stfifo_free = PTL_FIELD(rd->stfifo[e], PTL_FREE_NOW);
    ep->stfifo_free_min = PTL_FIELD(rd->stfifo[e], PTL_FREE_LOWEST);
    ep->pcie_cycles = pc[0];
    ep->dma_cycles = dc[0];

    ep->nbrakes = l->brake_reasons;
    ep->nhists = l->pcie_hists;
    ep->nbands = l->hist_bands;
    ep->brakes = calloc(ep->nbrakes + 1, sizeof(uint64_t));
    ep->hists = calloc((size_t)ep->nhists * ep->nbands + 1, sizeof(uint64_t));
    ep->nbuses = 2 + 2 * l->dma_ports;
    ep->buses = calloc(ep->nbuses, sizeof(ptl_bus));
    if (!ep->brakes || !ep->hists || !ep->buses) {
        return false;
    }
    memcpy(ep->brakes, brk, ep->nbrakes * sizeof(uint64_t));
    memcpy(ep->hists, brk + ep->nbrakes,
           ep->nhists * ep->nbands * sizeof(uint64_t));

    for (unsigned b = 0; b < ep->nbuses; b++) {
        ptl_bus *bus = &ep->buses[b];
        const uint64_t *ch;
        unsigned nreg, bytes;

        if (b < 2) {
            bus->kind = b ? PTL_BUS_RC : PTL_BUS_RQ;
            bus->pcie_clk = true;
            ch = pc + ptl_bus_channel(l->pcie_regions, b, 0);
            nreg = b ? l->rc_regions : l->rq_regions;
            bytes = b ? l->rc_bytes : l->rq_bytes;
            strcpy(bus->name, b ? "PCIe -> PTC (RC)" : "PTC -> PCIe (RQ)");
        } else {
            unsigned db = b - 2;

            bus->port = db / 2;
            bus->kind = db & 1 ? PTL_BUS_DOWN : PTL_BUS_UP;
            bus->has_mvb = true;
            bus->dma_up = !(db & 1);
            ch = dc + ptl_bus_channel(l->dma_regions, db, 0);
            nreg = db & 1 ? l->down_regions : l->up_regions;
            bytes = db & 1 ? l->down_bytes : l->up_bytes;
            if (db & 1) {
                snprintf(bus->name, sizeof(bus->name), "PTC -> DMA%u (DOWN)",
                         bus->port);
            } else {
                snprintf(bus->name, sizeof(bus->name), "DMA%u -> PTC (UP)",
                         bus->port);
            }
        }
        if (!fill_bus(bus, ch, nreg, bytes)) {
            return false;
        }
    }
    return true;
}

ptl_data *ptl_data_decode(const ptl_layout *lay, const ptl_reading *r)
{
    ptl_data *d = calloc(1, sizeof(*d));

    if (!d) {
        return NULL;
    }
    d->busy = r->status & PTL_STATUS_BUSY;
    d->lost_deltas = r->status & PTL_STATUS_LOST;
    d->readout_overrun = r->status & PTL_STATUS_OVERRUN;
    d->config = *lay;
    d->nendpoints = lay->endpoints;
    d->endpoints = calloc(d->nendpoints ? d->nendpoints : 1,
                          sizeof(ptl_endpoint));
    if (!d->endpoints) {
        free(d);
        return NULL;
    }
    for (unsigned e = 0; e < d->nendpoints; e++) {
        if (!decode_endpoint(lay, r, e, &d->endpoints[e])) {
            ptl_data_free(d);
            return NULL;
        }
    }
    return d;
}

void ptl_data_free(ptl_data *d)
{
    if (!d) {
        return;
    }
    for (unsigned e = 0; e < d->nendpoints; e++) {
        ptl_endpoint *ep = &d->endpoints[e];

        if (ep->buses) {
            for (unsigned b = 0; b < ep->nbuses; b++) {
                free(ep->buses[b].regions);
            }
        }
        free(ep->buses);
        free(ep->brakes);
        free(ep->hists);
    }
    free(d->endpoints);
    free(d->port);
    free(d);
}

/* num / den x scale; NAN for a zero denominator */
static double ratio(double num, double den, double scale)
{
    return den > 0 ? num / den * scale : NAN;
}

void ptl_bus_compute(const ptl_endpoint *ep, const ptl_bus *bus,
                     unsigned item_bytes, double seconds,
                     ptl_bus_figures *f, double *region_pct_buf)
{
    double cycles = bus->pcie_clk ? (double)ep->pcie_cycles
                                  : (double)ep->dma_cycles;
    double bytes = (double)bus->items * item_bytes;
    double used = 0;

    for (unsigned r = 0; r < bus->nregions; r++) {
        used += (double)bus->regions[r];
        if (region_pct_buf) {
            region_pct_buf[r] = ratio((double)bus->regions[r], cycles, 100);
        }
    }
    f->region_pct = region_pct_buf;
    f->used_pct = ratio(used, cycles * bus->nregions, 100);
    f->words_pct = ratio((double)bus->words, cycles, 100);
    f->mfb_stall_pct = ratio((double)bus->backpressure, cycles, 100);
    f->mvb_stall_pct = bus->has_mvb
        ? ratio((double)bus->mvb_backpressure, cycles, 100) : NAN;
    if (seconds > 0) {
        f->gbps = bytes * 8 / seconds / 1e9;
        f->mpps = (double)(bus->has_mvb ? bus->mvb : bus->transactions) /
                  seconds / 1e6;
    } else {
        f->gbps = NAN;
        f->mpps = NAN;
    }
    /* signed: a snapshot edge can put a SOF in without its MVB item */
    f->rd_pct = bus->dma_up
        ? ratio((double)bus->mvb - (double)bus->transactions,
                (double)bus->mvb, 100) : NAN;
    f->avg_bytes = ratio(bytes, (double)bus->transactions, 1);
}
