/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The transfers generator's parameters (see ptm-transfers.h). */
#include <stddef.h>
#include <string.h>
#include <glib.h>

#include "ptm-transfers.h"

#define OFF(f) offsetof(PtmTransfersParams, f)
static const PtmParamDesc transfers_params[] = {
    { "port", PTM_PARAM_U32, OFF(port), 0, PTM_MAX_DMA_PORTS - 1,
      "DMA port making the transfers" },
    { "interval-ns", PTM_PARAM_U32, OFF(interval_ns), 100, 1000000000,
      "ns from one slot (a write and a read) to the next" },
    { "write-bytes", PTM_PARAM_U32, OFF(write_bytes), 0, 1048576,
      "bytes each slot writes to the host (0: no write)" },
    { "read-bytes", PTM_PARAM_U32, OFF(read_bytes), 0, 1048576,
      "bytes each slot reads from the host (0: no read)" },
    { "address", PTM_PARAM_U32, OFF(address), 0, UINT32_MAX,
      "host address of the first slot's transfers" },
    { "stride", PTM_PARAM_U32, OFF(stride), 0, UINT32_MAX,
      "added to the address from one slot to the next (32-bit, wraps)" },
};
#undef OFF

static void transfers_defaults(void *params)
{
    *(PtmTransfersParams *)params = (PtmTransfersParams) {
        .port = 0,
        .interval_ns = 10000,
        .write_bytes = 1024,
        .read_bytes = 1024,
        .address = 0x10000000,
        .stride = 4096,
    };
}

static char *transfers_check(const void *params, const PtmGeometry *geo)
{
    const PtmTransfersParams *p = params;

    if (p->port >= geo->dma_ports) {
        return g_strdup_printf("port=%u, but the card has %u DMA port(s)",
                               p->port, geo->dma_ports);
    }
    return NULL;
}

/* The transfer log plays the slots; on its own the model is an idle link. */
static uint64_t transfers_fill(const PtmGen *gen, const void *params,
                               const PtmProbeInfo *probe, uint64_t start,
                               uint64_t max, PtmChunk *out)
{
    PtmSegment *s = out->scratch;

    memset(s, 0, sizeof(*s));
    s->cycles = max;
    s->link_up = 1;
    s->tag_free = MIN(gen->geo.tag_capacity, 0x7FFu);
    s->stfifo_free = gen->geo.stfifo_capacity;
    out->seg = s;
    out->nseg = 1;
    out->repeat = 1;
    out->id = 0;
    return max;
}

const PtmGenModel ptm_model_transfers = {
    .name = "transfers",
    .summary = "background DMA transfers beside the card's DMA engine",
    .params_size = sizeof(PtmTransfersParams),
    .params = transfers_params,
    .nparams = G_N_ELEMENTS(transfers_params),
    .defaults = transfers_defaults,
    .check = transfers_check,
    .fill = transfers_fill,
};
