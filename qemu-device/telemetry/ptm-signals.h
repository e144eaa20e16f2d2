/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signal interface of the PCIE_TELEMETRY_MI model: how a traffic source
 * describes, cycle by cycle, what one probe of the block observes.
 *
 * The block has two probes per PCIe endpoint. The PCIe-clock probe watches
 * bus 0 (RQ, PTC -> PCIe) and bus 1 (RC, PCIe -> PTC), the six BRAKE
 * reasons, the free PCIe tags and the free storage-FIFO words. The DMA-clock
 * probe watches, for every DMA port p, bus 2p (UP, DMA -> PTC) and bus 2p+1
 * (DOWN, PTC -> DMA), each with its MVB.
 *
 * A source describes a span of cycles as a chunk: a list of segments, each a
 * run of identical cycles, and the whole list played `repeat` times. Idle
 * stretches, trains of identical words and repeated frames therefore cost
 * one segment each, not one call per cycle. The description must be a pure
 * function of (probe, cycle): the core may ask for any span in any order and
 * must get the same signals for the same cycles.
 */
#ifndef PTM_SIGNALS_H
#define PTM_SIGNALS_H

#include <stdbool.h>
#include <stdint.h>

#define PTM_MAX_ENDPOINTS   16
#define PTM_MAX_REGIONS     16      /* regions of one MFB bus */
#define PTM_MAX_DMA_PORTS   16
#define PTM_MAX_BUSES       (2 * PTM_MAX_DMA_PORTS)
#define PTM_BRAKES          6       /* BRAKE reasons of the PCIe probe */
#define PTM_HIST_BANDS      4
#define PTM_HISTS           2       /* tags, storage FIFO */
#define PTM_CHUNK_SEGMENTS  256

typedef enum PtmDomain {
    PTM_DOMAIN_PCIE = 0,
    PTM_DOMAIN_DMA = 1,
} PtmDomain;

/* BRAKE reasons, bit numbers of PtmSegment.brake. */
enum {
    PTM_BRAKE_NO_TAG = 0,           /* pool of free tags too small */
    PTM_BRAKE_TAG_NOT_READY = 1,    /* tag FIFO had no tag ready */
    PTM_BRAKE_NO_STFIFO = 2,        /* no room in the storage FIFO */
    PTM_BRAKE_NO_CPLH = 3,          /* no completion header credit */
    PTM_BRAKE_MFB_DOWN = 4,         /* MFB held before the DMA split */
    PTM_BRAKE_MVB_DOWN = 5,         /* MVB held before the DMA split */
};

/* What one MFB bus (and its MVB) carries in one cycle. Bit r is region r. */
typedef struct PtmBusCycle {
    uint16_t sof;
    uint16_t eof;
    uint16_t mvb_vld;
    uint8_t src_rdy;                /* 0 or 1 */
    uint8_t dst_rdy;
    uint8_t mvb_src_rdy;            /* tie to 0 on buses without an MVB */
    uint8_t mvb_dst_rdy;
    uint8_t eof_pos[PTM_MAX_REGIONS];   /* item of the EOF, valid with eof */
} PtmBusCycle;

/* A run of `cycles` identical cycles of one probe. */
typedef struct PtmSegment {
    uint64_t cycles;                /* >= 1 */
    uint32_t brake;                 /* PCIe probe only: bit k = reason k */
    uint16_t tag_free;              /* PCIe probe only: free tags (11 bit) */
    uint16_t stfifo_free;           /* PCIe probe only: free FIFO words */
    uint8_t link_up;                /* PCIe probe only */
    PtmBusCycle bus[PTM_MAX_BUSES]; /* only the probe's buses are read */
} PtmSegment;

typedef struct PtmChunk {
    uint64_t repeat;                /* >= 1: the list is played this often */
    unsigned nseg;                  /* 1 .. PTM_CHUNK_SEGMENTS */
    /*
     * The segments: the caller's scratch of PTM_CHUNK_SEGMENTS, or, if the
     * source prefers, segments of its own that stay unchanged until its
     * next call (no copying of cached descriptions).
     */
    PtmSegment *seg;
    PtmSegment *scratch;            /* owned by whoever made the chunk */
    /*
     * 0, or an identifier of the segment list: a source promises that
     * every list it gives the same probe under the same id is the same,
     * so the core may count it once and reuse the counts.
     */
    uint64_t id;
} PtmChunk;

/* A chunk with its scratch segments; seg points at the scratch. */
PtmChunk *ptm_chunk_new(void);
void ptm_chunk_free(PtmChunk *ch);

/* Settings negotiated with the host, as PCIE_STATUS reports them. */
typedef struct PtmSettings {
    uint8_t mps;                    /* Device Control encoding: 128 << mps */
    uint8_t mrrs;                   /* 128 << mrrs */
    bool ext_tag;
    bool tag_10bit;
    bool rcb_128;                   /* read completion boundary 128 B */
} PtmSettings;

/* The card as a source sees it. */
typedef struct PtmGeometry {
    unsigned endpoints;
    unsigned dma_ports;
    unsigned rq_regions, rc_regions, up_regions, down_regions;
    unsigned rq_region_bytes, rc_region_bytes;
    unsigned up_region_bytes, down_region_bytes;
    unsigned item_bytes;
    unsigned drain_period;
    unsigned tag_capacity;
    unsigned stfifo_capacity;
    uint64_t pcie_hz, dma_hz, mi_hz;
} PtmGeometry;

/* One probe as a source sees it. */
typedef struct PtmProbeInfo {
    unsigned endpoint;
    PtmDomain domain;
    unsigned buses;                 /* 2 or 2 x DMA ports */
    unsigned regions;               /* regions of the probe (the wider bus) */
    unsigned bus_regions[PTM_MAX_BUSES];    /* regions the bus really has */
    unsigned bus_items[PTM_MAX_BUSES];      /* items per region */
    uint64_t hz;
    PtmSettings settings;           /* the endpoint's, as the card has them */
} PtmProbeInfo;

/* Static description of one probe, enough to count its channels. */
typedef struct PtmProbeShape {
    PtmProbeInfo info;
    unsigned channels;
    unsigned brakes;                /* BRAKE channels incl. bands: 14 or 0 */
    unsigned eof_pos_mask;
    unsigned tag_capacity;
    unsigned stfifo_capacity;
} PtmProbeShape;

/* What counting carries from one cycle to the next. */
typedef struct PtmCountState {
    uint32_t open;                  /* bit b: a frame is open on bus b */
    uint16_t tag_min, stfifo_min;   /* over the current window */
    uint16_t tag_last, stfifo_last; /* the last counted cycle */
    uint8_t link_last;
} PtmCountState;

/*
 * What counting a span costs a source (PtmSourceOps.cost): a few range
 * queries however long the span (O(1) or O(log n)), or time that grows
 * with it (per drain window, decision block or turn of a loop).
 */
typedef enum PtmCost {
    PTM_COST_WINDOW = 0,
    PTM_COST_RANGE = 1,
} PtmCost;

typedef struct PtmSourceOps {
    /*
     * Describe the cycles [start, start + n) of a probe, 1 <= n <= max,
     * in *out and return n. `start` counts cycles of the probe's clock from
     * virtual time 0. A source that sets repeat > 1 must make the described
     * span equal to repeat x the list's cycles.
     */
    uint64_t (*fill)(void *opaque, const PtmProbeInfo *probe,
                     uint64_t start, uint64_t max, PtmChunk *out);
    /*
     * Optional. Count the cycles [start, end) of a probe into acc and *st
     * exactly as counting fill's chunks for them from state *st would
     * (ptm_count_chunk), in time that does not grow with the span where
     * the source can. Return false, changing nothing, where it cannot: the
     * core then counts fill's chunks. Asked for an empty span (start ==
     * end; st and acc may be NULL), it tells whether it counts at all.
     */
    bool (*count)(void *opaque, const PtmProbeShape *probe, uint64_t start,
                  uint64_t end, PtmCountState *st, uint64_t *acc);
    /*
     * Optional. At each drain of endpoint e's PCIe probe (PCIe cycle
     * `cycle`), *set holds what the card's PCI function negotiated; a
     * source whose endpoints negotiated otherwise changes it. Like fill,
     * a pure function of its arguments.
     */
    void (*settings)(void *opaque, unsigned endpoint, uint64_t cycle,
                     PtmSettings *set);
    /*
     * Optional (NULL: never). Whether the probe's own reset (PCIE_RESET of
     * its endpoint, or DMA_RESET) is held over the cycles [start,
     * start + n), 1 <= n <= max: set *held and return n. A pure function
     * of its arguments, like fill. While held, the probe does what the
     * RTL does in reset; its windows start again when the reset ends.
     */
    uint64_t (*reset)(void *opaque, const PtmProbeInfo *probe,
                      uint64_t start, uint64_t max, bool *held);
    /*
     * Optional (NULL: PTM_COST_WINDOW). What count() costs over a long
     * span now. Only a PTM_COST_RANGE source lets the model stay idle
     * while nobody reads the card; over any other the device counts in
     * the background as virtual time passes, so that no access waits for
     * a long backlog.
     */
    PtmCost (*cost)(void *opaque);
    /*
     * Optional (NULL: none). A period of the probe's traffic around cycle
     * `cycle`: P > 0 and a span [*from, *until) holding `cycle` such that
     * fill describes cycle x + P as it describes x wherever both lie in
     * the span, and no reset is held in it; *id names the span's traffic
     * (the same id, the same traffic from the span's start on). 0 where
     * the source knows none, with *until (if above `cycle`) where it may
     * know one again. The core then counts a long stretch of windows from
     * one period of them, span by span.
     */
    uint64_t (*period)(void *opaque, const PtmProbeInfo *probe,
                       uint64_t cycle, uint64_t *from, uint64_t *until,
                       uint64_t *id);
    /*
     * Optional (NULL: none). A name, nonzero, of the probe's cycles
     * [start, start + *len), 1 <= *len <= max (as far as the name
     * reaches), that the source gives every span of the probe with the
     * same description; 0 where it has none. The core reuses what it
     * counted of a span so named.
     */
    uint64_t (*span_id)(void *opaque, const PtmProbeInfo *probe,
                        uint64_t start, uint64_t max, uint64_t *len);
    /*
     * Optional (NULL: span_id piece by piece). The names of [start, end)
     * at once: the pieces span_id gives one after another from start,
     * each as far as its name reaches, in ids[] and lens[]; their number,
     * or 0 if more than max are needed or one has no name.
     */
    unsigned (*span_ids)(void *opaque, const PtmProbeInfo *probe,
                         uint64_t start, uint64_t end, uint64_t *ids,
                         uint64_t *lens, unsigned max);
} PtmSourceOps;

#endif
