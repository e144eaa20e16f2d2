/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of HiSilicon's PCIe Tune and Trace device (PTT), the
 * RCiEP whose BAR 2 Linux's hisi_ptt driver programs (docs/ptt.md):
 *   tune    five link events (QoS weights, buffer levels), 0 to 2 each,
 *           read and written through TUNING_CTRL/TUNING_DATA
 *   trace   the headers of the TLPs that cross the root ports it covers,
 *           filtered by port or requester, type and direction, written
 *           as 4DW or 8DW records into four guest buffers in turn, an
 *           interrupt status bit (and the MSI) per full buffer
 * The device's glue gives it the TLPs (PttTlpFn), guest memory writes
 * (PttDmaFn) and its interrupt (PttIrqFn). Plain C and GLib.
 */
#ifndef PTT_CORE_H
#define PTT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcie-tlp.h"

#define PTT_BAR_SIZE            0x1000u

/* BAR 2 registers */
#define PTT_TUNING_CTRL         0x000u  /* code [15:0], sub [23:16] */
#define PTT_TUNING_DATA         0x004u  /* value [15:0]; 0xFFFFFFFF: read */
#define PTT_TRACE_ADDR_SIZE     0x800u
#define PTT_TRACE_ADDR_LO(i)    (0x810u + 8 * (i))
#define PTT_TRACE_ADDR_HI(i)    (0x814u + 8 * (i))
#define PTT_TRACE_CTRL          0x850u
#define PTT_TRACE_INT_STAT      0x890u  /* a bit a full buffer, W1C */
#define PTT_TRACE_INT_MASK      0x894u
#define PTT_TUNING_INT_STAT     0x898u  /* bit 0: busy */
#define PTT_TRACE_WR_STS        0x8A0u  /* [27:0] bytes in the buffer */
#define PTT_TRACE_STS           0x8B0u  /* bit 0: idle */
#define PTT_DEVICE_RANGE        0xFE0u  /* upper BDF [31:16], lower [15:0] */
#define PTT_LOCATION            0xFE8u  /* SICL [31:16], core [15:0] */

#define PTT_BUFS                4u
#define PTT_TUNING_READ         0xFFFFFFFFu

/* TRACE_CTRL */
#define PTT_CTRL_EN             (1u << 0)
#define PTT_CTRL_RST            (1u << 1)
#define PTT_CTRL_DIR_SHIFT      2       /* [3:2] */
#define PTT_CTRL_TYPE_SHIFT     4       /* [7:4] */
#define PTT_CTRL_8DW            (1u << 14)
#define PTT_CTRL_REQ_FILTER     (1u << 15)
#define PTT_CTRL_TARGET_SHIFT   16      /* [31:16] */
#define PTT_CTRL_RW             0xFFFFC0FFu

/* TLP types of the type field: bit for bit PcieTlp's types */
#define PTT_TYPE_P              PCIE_TLP_P
#define PTT_TYPE_NP             PCIE_TLP_NP
#define PTT_TYPE_CPL            PCIE_TLP_CPL

#define PTT_REC_4DW             16u
#define PTT_REC_8DW             32u
/* DW0 of an 8DW record: bits 31:11 all ones */
#define PTT_8DW_MARK            0xFFFFF800u

/* The five tune events: code | sub << 16, as the driver writes them */
#define PTT_TUNE_EVENTS         5u
extern const uint32_t ptt_tune_codes[PTT_TUNE_EVENTS];

/* A TLP that crossed a covered root port */
typedef struct PttTlp {
    PcieTlp tlp;                /* time, header, type; up: inbound */
    bool cpl_b;                 /* an inbound completion of class B */
    uint8_t port;               /* its root port's core port id: 0 to 15 */
    uint16_t function;          /* the endpoint function it belongs to */
} PttTlp;

/*
 * The TLPs that crossed in [from, to), in time order, at most max into
 * out; returns how many and sets *resume to where a next call goes on
 * (to when all were given).
 */
typedef size_t PttTlpFn(void *opaque, uint64_t from, uint64_t to,
                        PttTlp *out, size_t max, uint64_t *resume);
/* Writes len bytes at guest address addr; false if it is no memory */
typedef bool PttDmaFn(void *opaque, uint64_t addr, const void *buf,
                      size_t len);
typedef void PttIrqFn(void *opaque);

typedef struct PttConfig {
    uint16_t sicl_id, core_id;          /* LOCATION */
    uint16_t range_lower, range_upper;  /* DEVICE_RANGE: root port BDFs */
    /*
     * Record bytes a virtual second the model writes at most; past it
     * records are dropped and counted (docs/ptt.md)
     */
    uint64_t max_bytes_per_s;
} PttConfig;

typedef struct PttStats {
    uint64_t records;           /* written */
    uint64_t dropped_busy;      /* the next buffer was not drained */
    uint64_t dropped_budget;    /* past max_bytes_per_s */
    uint64_t buffers;           /* filled */
    uint64_t dma_errors;        /* writes to no memory: the trace halted */
} PttStats;

/* The state; the fields are the model's, not an API. */
typedef struct PttCore {
    PttConfig cfg;
    PttTlpFn *tlps;
    PttDmaFn *dma;
    PttIrqFn *irq;
    void *opaque;

    uint32_t tuning_ctrl, tuning_data;
    uint16_t tune[PTT_TUNE_EVENTS];

    uint32_t addr_size;
    uint64_t base[PTT_BUFS];
    uint32_t ctrl;
    uint32_t int_stat, int_mask;
    bool tracing;               /* EN set and not halted */
    uint32_t cur;               /* the buffer being written */
    uint32_t wr;                /* bytes in it */
    uint64_t from;              /* TLPs are taken from here on */
    uint64_t t0;                /* the trace's start: its time base */
    uint64_t budget_at;         /* the budget's window: start */
    uint64_t budget_used;       /* bytes in it */
    PttStats stats;
} PttCore;

char *ptt_config_check(const PttConfig *cfg);
void ptt_init(PttCore *s, const PttConfig *cfg, PttTlpFn *tlps,
              PttDmaFn *dma, PttIrqFn *irq, void *opaque);
/* Power-on and every reset alike */
void ptt_reset(PttCore *s);

/* 32-bit accesses at 4-byte aligned offsets; others read 0, do nothing */
uint32_t ptt_read(PttCore *s, uint32_t off, uint64_t now);
void ptt_write(PttCore *s, uint32_t off, uint32_t val, uint64_t now);

/* Writes the records of the TLPs up to now (every access does as well) */
void ptt_sync(PttCore *s, uint64_t now);
bool ptt_tracing(const PttCore *s);

/* The record of a TLP in either format; returns its bytes */
size_t ptt_encode(const PttTlp *t, bool dw8, uint32_t time, uint32_t *out);
/* Does the trace as configured in ctrl take the TLP? */
bool ptt_match(uint32_t ctrl, const PttTlp *t);

const char *ptt_tune_name(unsigned i);

void *ptt_save(const PttCore *s, size_t *len);
char *ptt_load(PttCore *s, const void *buf, size_t len);

#endif
