/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the replay generator (ptm-trace.c): the ports of
 * PCIE_TELEMETRY_MI as a trace names them, the samples read from a trace,
 * the store of a trace's runs, and the tokenizer the VCD reader
 * (ptm-vcd.c) and the text reader (ptm-replay.c) share. Not an API.
 */
#ifndef PTM_TRACE_H
#define PTM_TRACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ptm-count.h"
#include "ptm-gen.h"

#define PROBES          (2 * PTM_MAX_ENDPOINTS)
#define PROBE_INDEX(e, d) (2 * (e) + (d))
#define DMA_CLOCK       PTM_MAX_ENDPOINTS   /* clock slot of DMA_CLK */

typedef enum PortKind {
    PK_ARRAY,           /* slv_array_t: a vector per endpoint */
    PK_EPVEC,           /* std_logic_vector: a bit per endpoint */
    PK_SCALAR,          /* std_logic shared by all endpoints */
} PortKind;

enum {
    PORT_PCIE_CLK, PORT_PCIE_SOF, PORT_PCIE_EOF, PORT_PCIE_EOF_POS,
    PORT_PCIE_SRC_RDY, PORT_PCIE_DST_RDY, PORT_BRAKE, PORT_STFIFO_FREE,
    PORT_TAG_FREE, PORT_MPS, PORT_MRRS, PORT_EXT_TAG, PORT_TAG_10B,
    PORT_RCB, PORT_LINK_UP,
    PORT_DMA_CLK, PORT_DMA_SOF, PORT_DMA_EOF, PORT_DMA_EOF_POS,
    PORT_DMA_SRC_RDY, PORT_DMA_DST_RDY, PORT_MVB_VLD, PORT_MVB_SRC_RDY,
    PORT_MVB_DST_RDY, PORT_PCIE_RESET, PORT_DMA_RESET,
    NPORTS
};

typedef struct PortDesc {
    const char *name;           /* lower case, as matched */
    PortKind kind;
    PtmDomain dom;
} PortDesc;

typedef struct Shape {
    unsigned endpoints;
    unsigned buses[2];          /* per domain */
    unsigned regions[2];        /* regions of the probe: the wider bus */
    unsigned pos_width[2];      /* bits of one EOF_POS field */
    uint16_t tags_idle, stfifo_idle;
} Shape;

enum {
    SET_MPS = 1, SET_MRRS = 2, SET_EXT_TAG = 4, SET_TAG_10B = 8, SET_RCB = 16,
};

typedef struct SampleBus {
    uint16_t sof, eof, vld;
    uint8_t src, dst, msrc, mdst;
    uint8_t pos[PTM_MAX_REGIONS];
} SampleBus;

/* One cycle of one probe while it is read. */
typedef struct Sample {
    uint8_t brake, link, set_mask;
    uint8_t reset;                  /* the probe's own reset is held */
    PtmSettings set;                /* the fields set_mask names */
    uint16_t tags, stfifo;
    SampleBus bus[PTM_MAX_BUSES];
} Sample;

typedef struct Probe {
    unsigned buses, regions, stride;
    uint8_t *pool;              /* distinct packed samples */
    uint32_t nsamp, capsamp;
    uint64_t *end;              /* run i: cycles [end[i-1], end[i]) */
    uint32_t *idx;              /* its sample */
    uint32_t nruns, capruns;
    uint32_t *hash;             /* sample + 1 per slot, while reading */
    uint32_t hcap;
    struct Blocks *blk;         /* prefix sums, made when first counted */
    uint64_t *rst;              /* held resets: [rst[2i], rst[2i+1]) */
    uint32_t nrst;
} Probe;

/* the same as ptm-replay.h's, which this store lies below */
typedef struct PtmReplayTrace PtmReplayTrace;

struct PtmReplayTrace {
    gint ref;
    Shape sh;
    Probe probe[PROBES];
    uint64_t xz_cycles;
};

typedef struct Rd {
    const char *path;
    const char *p, *end;
    unsigned line;
} Rd;

extern const PortDesc ptm_port_tab[NPORTS];

bool ptm_port_is_clock(unsigned port);
int ptm_port_find(const char *lower);
unsigned ptm_port_width(const Shape *sh, unsigned port, char *why, size_t len);
void ptm_sample_idle(const Shape *sh, Sample *s);
void ptm_trace_push(Probe *p, uint32_t s, uint64_t n);
uint32_t ptm_trace_add(PtmReplayTrace *t, unsigned e, PtmDomain d, Sample *s,
                       uint64_t n);
G_GNUC_PRINTF(3, 4)
char *ptm_rd_error(const char *path, unsigned line, const char *fmt, ...);
bool ptm_rd_token(Rd *r, const char **tok, size_t *len);
bool ptm_tok_is(const char *t, size_t n, const char *s);
bool ptm_parse_u64(const char *s, size_t n, uint64_t *v);

/* The store's own steps, for the readers and the model above it. */
void ptm_trace_shape_init(Shape *sh, const PtmGeometry *geo);
PtmReplayTrace *ptm_trace_new(const PtmGeometry *geo);
void ptm_trace_finish(PtmReplayTrace *t);
void ptm_trace_unpack_segment(const uint8_t *in, unsigned B, unsigned R,
                              PtmSegment *seg);
void ptm_trace_unpack_settings(const uint8_t *in, PtmSettings *set);
uint64_t ptm_trace_probe_cycles(const Probe *p);
/* The run holding cycle k < ptm_trace_probe_cycles(p); hint: look there. */
uint32_t ptm_trace_probe_find(const Probe *p, uint64_t k, uint32_t hint);
uint64_t ptm_trace_run_start(const Probe *p, uint32_t i);
const uint8_t *ptm_trace_run_sample(const Probe *p, uint32_t i);

#endif
