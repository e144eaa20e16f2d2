/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of the flit-mode capabilities that one end of a PCIe 6
 * link carries (docs/flit.md):
 *   0x0031 Physical Layer 64.0 GT/s   equalization status once trained
 *   0x0032 Flit Logging               the flit error log, the flit error
 *                                     counter, FBER measurement with the
 *                                     Flit Counter of received flits
 *   0x0033 Flit Performance           Flit->Ack, Flit->Nak and Nak->Replay
 *          Measurement                latency, LTSSM transition trackers
 * Register offsets are from the start of each capability; the first
 * dword (the extended capability header) is the PCI layer's and reads 0
 * here. The model counts on virtual nanoseconds what its end's link
 * reports (FlitTotalsFn) while the link is in flit mode; flit errors,
 * Naks and LTSSM transitions arrive as events.
 */
#ifndef FLIT_END_H
#define FLIT_END_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLIT_CAP_ID_64GT        0x0031u
#define FLIT_CAP_ID_LOG         0x0032u
#define FLIT_CAP_ID_PERF        0x0033u
#define FLIT_CAP_VER            1u

typedef enum FlitCap {
    FLIT_CAP_64GT,
    FLIT_CAP_LOG,
    FLIT_CAP_PERF,
    FLIT_CAPS
} FlitCap;

/* 0x0031: Physical Layer 64.0 GT/s */
#define FLIT_64GT_CAP           0x04u
#define FLIT_64GT_CTL           0x08u
#define FLIT_64GT_STATUS        0x0Cu
#define FLIT_64GT_EQ_CTL        0x10u   /* a byte a lane */
#define FLIT_64GT_STATUS_EQ_DONE 0x0Fu  /* complete, phases 1, 2, 3 */

/* 0x0032: Flit Logging */
#define FLIT_LOG_ERR1           0x04u
#define FLIT_LOG_ERR1_VALID     (1u << 0)           /* RW1CS */
#define FLIT_LOG_ERR1_WIDTH_SHIFT 1
#define FLIT_LOG_ERR1_CONS_SHIFT 8                  /* [12:8] */
#define FLIT_LOG_ERR1_MORE      (1u << 13)
#define FLIT_LOG_ERR1_UNREC     (1u << 14)
#define FLIT_LOG_ERR1_UNCOR     (1u << 15)
#define FLIT_LOG_ERR2           0x08u
#define FLIT_LOG_CNT_CTL        0x0Cu   /* 16 bits */
#define FLIT_LOG_CNT_EN         (1u << 0)
#define FLIT_LOG_CNT_INT_EN     (1u << 1)
#define FLIT_LOG_CNT_EVENTS_SHIFT 2                 /* [3:2] */
#define FLIT_LOG_CNT_TRIGGER_SHIFT 4                /* [11:4] */
#define FLIT_LOG_CNT_CTL_RW     0x0FFFu
#define FLIT_LOG_CNT_STS        0x0Eu   /* 16 bits */
#define FLIT_LOG_CNT_STS_INT    (1u << 3)           /* RW1C */
#define FLIT_LOG_CNT_STS_COUNT_SHIFT 8              /* [15:8] */
#define FLIT_LOG_MEAS_CTL       0x10u
#define FLIT_LOG_MEAS_EN        (1u << 0)
#define FLIT_LOG_MEAS_CLEAR     (1u << 1)           /* reads 0 */
#define FLIT_LOG_MEAS_GRAN_SHIFT 2                  /* [3:2] */
#define FLIT_LOG_MEAS_CTL_RW    0x0Du
#define FLIT_LOG_MEAS_FLITS     0x14u   /* Flit Counter, 32 bits */
#define FLIT_LOG_MEAS_INVALID   0x18u   /* [15:0] */
#define FLIT_LOG_MEAS_LANES     0x1Cu   /* two 16-bit lane counters a dword */
#define FLIT_LOG_SIZE           0x3Cu

/* Events to count of the flit error counter (docs/flit.md) */
#define FLIT_COUNT_ALL          0u
#define FLIT_COUNT_UNCORRECTABLE 1u
#define FLIT_COUNT_CORRECTABLE  2u

/* 0x0033: Flit Performance Measurement */
#define FLIT_PERF_CAP           0x04u
#define FLIT_PERF_CAP_LTSSM_SHIFT 10                /* [12:10] HwInit */
#define FLIT_PERF_CTL           0x08u
#define FLIT_PERF_EN            (1u << 0)
#define FLIT_PERF_TYPE_SHIFT    1                   /* [3:1] one-hot */
#define FLIT_PERF_TYPE_ACK      1u
#define FLIT_PERF_TYPE_NAK      2u
#define FLIT_PERF_TYPE_REPLAY   4u
#define FLIT_PERF_INST_SHIFT    6                   /* [10:6] */
#define FLIT_PERF_THR_SHIFT     11                  /* [13:11] 100 ns */
#define FLIT_PERF_TRACK_SHIFT   14                  /* [18:14] */
#define FLIT_PERF_LINST_SHIFT   19                  /* [23:19] */
#define FLIT_PERF_LTHR_SHIFT    24                  /* [26:24] 6.4 ms */
#define FLIT_PERF_L12THR_SHIFT  27                  /* [29:27] */
#define FLIT_PERF_CTL_RW        0x3FFFFFCFu         /* [5:4] RsvdP */
#define FLIT_PERF_STATUS        0x0Cu
#define FLIT_PERF_LTSSM         0x10u   /* 4 bytes a tracking register */
/* Status, and each LTSSM register: [1:0] [6:2] [7] [23:8] */
#define FLIT_ST_IDLE            0u
#define FLIT_ST_STARTED         1u
#define FLIT_ST_DONE            2u
#define FLIT_ST_OVERFLOW        3u
#define FLIT_ST_TRACKED_SHIFT   2
#define FLIT_ST_INT             (1u << 7)
#define FLIT_ST_COUNTER_SHIFT   8
#define FLIT_PERF_UNIT_NS       8u
#define FLIT_LTSSM_UNIT_NS      64000u
#define FLIT_LTSSM_REGS_MAX     5u

/* LTSSM transitions the trackers follow, in the order of their bits */
typedef enum FlitLtssmEvent {
    FLIT_LTSSM_L0_RECOVERY,     /* bit 14 */
    FLIT_LTSSM_L0P_UP,          /* bit 15 */
    FLIT_LTSSM_L10_L0,          /* bit 16 */
    FLIT_LTSSM_L11_L0,          /* bit 17 */
    FLIT_LTSSM_L12_L0,          /* bit 18 */
    FLIT_LTSSM_EVENTS
} FlitLtssmEvent;

/*
 * What an end's link carried, cumulative from any origin of the caller's
 * choice, as of a virtual time; a value that goes down is taken as a
 * restart from 0 (a reset of the function that reports it).
 */
typedef struct FlitTotals {
    uint64_t tx_payload;        /* TLP payload bytes this end sent */
    uint64_t rx_payload;        /* and received */
    uint64_t l0_ns;             /* time the link was in L0 */
} FlitTotals;

typedef void FlitTotalsFn(void *opaque, uint64_t now, FlitTotals *out);
/* The end signals its interrupt (the capability's vector) */
typedef void FlitIrqFn(void *opaque);

typedef struct FlitEndConfig {
    unsigned width;             /* most lanes: 1, 2, 4, 8 or 16 */
    unsigned ltssm_regs;        /* LTSSM Tracking Register Count, 0 to 5 */
    uint32_t flight_ns;         /* one-way time on the wire */
} FlitEndConfig;

/* Injected flit errors in what an end receives */
typedef enum FlitErrorKind {
    FLIT_ERR_UNCORRECTABLE,     /* FEC could not correct: Nak, replay */
    FLIT_ERR_UNRECOGNIZED,      /* an unrecognized flit: Nak, replay */
    FLIT_ERR_CORRECTABLE,       /* FEC corrected it on one lane */
    FLIT_ERR_KINDS
} FlitErrorKind;

typedef struct FlitError {
    FlitErrorKind kind;
    unsigned lane;              /* correctable only */
    uint32_t count;             /* consecutive flits */
} FlitError;

typedef struct FlitPerfRun {
    uint32_t status;            /* the register as last worked out */
    uint64_t t0;                /* when Enable went 0 -> 1 */
    uint64_t tx_base, naks_rx_base, naks_tx_base;
} FlitPerfRun;

/* One end's state; the fields are the model's, not an API. */
typedef struct FlitEnd {
    FlitEndConfig cfg;
    FlitTotalsFn *totals;
    FlitIrqFn *irq;
    void *opaque;

    bool active;                /* the link runs in flit mode */
    unsigned width;             /* at the width it trained to */
    /* the link's totals while in flit mode, and the last sample */
    uint64_t tx, rx, l0;
    FlitTotals last;
    uint64_t naks_rx;           /* Naks for flits this end sent */
    uint64_t naks_tx;           /* Naks this end sent (replays awaited) */

    /* Flit Logging */
    uint32_t log_entries;       /* logged errors not yet cleared */
    uint32_t log1, log2;        /* the oldest entry */
    uint16_t cnt_ctl, cnt_sts;
    uint32_t meas_ctl;
    uint64_t meas_flits;        /* Flit Counter when measuring stopped */
    uint64_t meas_l0;           /* l0 when measuring (re)started */
    uint32_t invalid;
    uint16_t lane_cnt[16];

    /* Flit Performance Measurement */
    uint32_t perf_ctl;
    FlitPerfRun run;
    bool run_on;
    uint64_t checked;           /* interrupt checks done up to here */
    uint32_t ltssm[FLIT_LTSSM_REGS_MAX];
} FlitEnd;

/*
 * Refuses a configuration (g_malloc'd reason) or returns NULL. Then
 * flit_end_init sets the end up as at power-on, link not in flit mode.
 */
char *flit_end_check(const FlitEndConfig *cfg);
void flit_end_init(FlitEnd *s, const FlitEndConfig *cfg,
                   FlitTotalsFn *totals, FlitIrqFn *irq, void *opaque);
/* A conventional reset: all but the sticky LTSSM registers */
void flit_end_reset(FlitEnd *s, uint64_t now);
/* The totals restart from 0 (after a sample taken before) */
void flit_end_rebase(FlitEnd *s);

/* Bytes of a capability in configuration space, header included */
uint32_t flit_cap_size(FlitCap cap, const FlitEndConfig *cfg);
uint16_t flit_cap_id(FlitCap cap);

/*
 * An access at offset off of a capability, len 1 to 4 bytes, within one
 * dword, at virtual time now. Offsets past the registers read 0 and
 * ignore writes.
 */
uint32_t flit_end_read(FlitEnd *s, FlitCap cap, uint32_t off, unsigned len,
                       uint64_t now);
void flit_end_write(FlitEnd *s, FlitCap cap, uint32_t off, uint32_t val,
                    unsigned len, uint64_t now);

/*
 * The link trained: in flit mode or not, at width lanes (at most the
 * end's own; another value keeps the width it had)
 */
void flit_end_set_active(FlitEnd *s, bool active, unsigned width,
                         uint64_t now);

/*
 * Flit errors in what this end received: logged, counted and, for the
 * kinds that need a replay, Nak'd. Returns the Naks sent, which the far
 * end takes with flit_end_naks_received.
 */
uint32_t flit_end_rx_errors(FlitEnd *s, const FlitError *e, uint64_t now);
void flit_end_naks_received(FlitEnd *s, uint32_t naks, uint64_t now);

/* An LTSSM transition that took delay_ns, ending at now */
void flit_end_ltssm(FlitEnd *s, FlitLtssmEvent ev, uint64_t delay_ns,
                    uint64_t now);

/*
 * When the next interrupt check is due (UINT64_MAX: none): a latency
 * measurement with a threshold waits for traffic to give it a flit.
 * flit_end_sync runs the check (every access does as well).
 */
uint64_t flit_end_deadline(const FlitEnd *s);
void flit_end_sync(FlitEnd *s, uint64_t now);

/* "kind=uncorrectable|unrecognized|correctable,count=K,lane=N" */
char *flit_error_parse(const char *text, FlitError *out);
const char *flit_error_kind_name(FlitErrorKind kind);

/* Migration: the state as bytes (g_free), and back (NULL or reason) */
void *flit_end_save(const FlitEnd *s, size_t *len);
char *flit_end_load(FlitEnd *s, const void *buf, size_t len);

#endif
