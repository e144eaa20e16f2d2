/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of the RAS DES capability (debug, error injection and
 * statistics) of a Synopsys DesignWare PCIe root port: the vendor-specific
 * extended capability (VSEC ID 2, revision 4) whose event counters and
 * time-based analysis Linux's dwc_pcie_pmu perf driver reads. It models
 * the statistics registers the driver uses:
 *
 *   0x08  EVENT_CNT_CTL   clear [1:0] and enable [4:2] commands, status
 *                         [7], lane select [11:8], event select [27:16]
 *   0x0C  EVENT_CNT_DATA  the selected 32-bit lane event counter
 *   0x10  TBA_CTL         timer start [0], duration [15:8], report [31:24]
 *   0x14  TBA_DATA_LO     the time-based analysis result, bits 31..0
 *   0x18  TBA_DATA_HI     bits 63..32
 *
 * The time-based analysis counts on virtual nanoseconds (one count a
 * nanosecond) what a traffic source reports about the link below the
 * port; lane events happen only when injected. docs/dwc-root-port.md
 * describes every register and the choices made where the hardware's
 * behaviour is not published.
 *
 * The second half, DwcLinkSum, turns the totals of the functions below a
 * port (which restart at every reset of a function and vanish with it)
 * into the port's own monotonic totals.
 */
#ifndef DWC_RAS_DES_H
#define DWC_RAS_DES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcie-link-totals.h"

/* The capability: extended capability ID 0x000b (vendor-specific) */
#define DWC_RAS_DES_VSEC_ID     0x0002u
#define DWC_RAS_DES_VSEC_REV    4u
#define DWC_RAS_DES_LEN         0x100u  /* bytes, headers included */
/* The VSEC header dword at +4: ID [15:0], revision [19:16], length [31:20] */
#define DWC_RAS_DES_VSEC_HDR \
    (DWC_RAS_DES_VSEC_ID | DWC_RAS_DES_VSEC_REV << 16 | DWC_RAS_DES_LEN << 20)
/* Offsets below this are the two headers, which the PCI layer serves */
#define DWC_RAS_DES_REGS        0x08u

/* Registers, offsets from the start of the capability */
#define DWC_REG_EVENT_CNT_CTL   0x08u
#define DWC_REG_EVENT_CNT_DATA  0x0Cu
#define DWC_REG_TBA_CTL         0x10u
#define DWC_REG_TBA_DATA_LO     0x14u
#define DWC_REG_TBA_DATA_HI     0x18u

/* EVENT_CNT_CTL */
#define DWC_ECC_CLEAR_MASK      0x3u        /* write-only command */
#define DWC_ECC_CLEAR_ONE       0x1u        /* the selected counter */
#define DWC_ECC_CLEAR_ALL       0x3u
#define DWC_ECC_ENABLE_SHIFT    2
#define DWC_ECC_ENABLE_MASK     (0x7u << DWC_ECC_ENABLE_SHIFT) /* write-only */
#define DWC_ECC_ENABLE_OFF_ONE  0x1u        /* the selected counter off */
#define DWC_ECC_ENABLE_ON_ONE   0x3u
#define DWC_ECC_ENABLE_OFF_ALL  0x5u
#define DWC_ECC_ENABLE_ON_ALL   0x7u
#define DWC_ECC_STATUS          (1u << 7)   /* the selected counter is on */
#define DWC_ECC_LANE_SHIFT      8
#define DWC_ECC_LANE_MASK       (0xFu << DWC_ECC_LANE_SHIFT)
#define DWC_ECC_EVENT_SHIFT     16          /* group [27:24], event [23:16] */
#define DWC_ECC_EVENT_MASK      (0xFFFu << DWC_ECC_EVENT_SHIFT)
/* the bits that are stored and read back (STATUS is computed) */
#define DWC_ECC_RW_MASK         (DWC_ECC_LANE_MASK | DWC_ECC_EVENT_MASK)

/* TBA_CTL */
#define DWC_TBA_START           0x1u
#define DWC_TBA_DURATION_SHIFT  8
#define DWC_TBA_DURATION_MASK   (0xFFu << DWC_TBA_DURATION_SHIFT)
#define DWC_TBA_REPORT_SHIFT    24
#define DWC_TBA_REPORT_MASK     (0xFFu << DWC_TBA_REPORT_SHIFT)
#define DWC_TBA_RW_MASK \
    (DWC_TBA_START | DWC_TBA_DURATION_MASK | DWC_TBA_REPORT_MASK)

/* Duration codes; any other code runs until stopped, as manual does */
#define DWC_TBA_DUR_MANUAL      0x00u
#define DWC_TBA_DUR_1MS         0x01u
#define DWC_TBA_DUR_10MS        0x02u
#define DWC_TBA_DUR_100MS       0x03u
#define DWC_TBA_DUR_1S          0x04u
#define DWC_TBA_DUR_2S          0x05u
#define DWC_TBA_DUR_4S          0x06u
#define DWC_TBA_DUR_4US         0xFFu

/* Report codes: group 0 counts nanoseconds, group 1 16-byte units */
#define DWC_TBA_ONE_CYCLE       0x00u       /* every nanosecond */
#define DWC_TBA_TX_L0S          0x01u
#define DWC_TBA_RX_L0S          0x02u
#define DWC_TBA_L0              0x03u
#define DWC_TBA_L1              0x04u
#define DWC_TBA_L1_1            0x05u
#define DWC_TBA_L1_2            0x06u
#define DWC_TBA_CFG_RCVRY       0x07u       /* here: the link was down */
#define DWC_TBA_TX_RX_L0S       0x08u
#define DWC_TBA_L1_AUX          0x09u
#define DWC_TBA_TX_PCIE_PAYLOAD 0x20u       /* port -> device */
#define DWC_TBA_RX_PCIE_PAYLOAD 0x21u       /* device -> port */
#define DWC_TBA_TX_CCIX_PAYLOAD 0x22u
#define DWC_TBA_RX_CCIX_PAYLOAD 0x23u
#define DWC_TBA_PAYLOAD_UNIT    16u         /* bytes per count */

/* Lane event counters: lane select is 4 bits wide */
#define DWC_RAS_DES_LANES       16u
#define DWC_LANE_EVENTS         29u         /* of groups 6 and 7 */

/*
 * What a traffic source reports about the link below the port, cumulative
 * from any origin of its choice (the unit subtracts), as of a virtual time.
 * l0_ns + down_ns need not add up to the time since the origin; each is
 * taken as it comes and bounded by the elapsed time when reported.
 */
typedef struct DwcLinkTotals {
    uint64_t payload_up;        /* TLP payload bytes device -> port (Rx) */
    uint64_t payload_down;      /* TLP payload bytes port -> device (Tx) */
    uint64_t l0_ns;             /* time the link was up */
    uint64_t down_ns;           /* time it was down: detect, training */
} DwcLinkTotals;

typedef void DwcTotalsFn(void *opaque, uint64_t now_ns, DwcLinkTotals *out);

/* The capability's state; the fields are the model's, not an API. */
typedef struct DwcRasDes {
    DwcTotalsFn *totals;
    void *opaque;

    uint32_t ecc;                   /* EVENT_CNT_CTL's select fields */
    uint32_t cnt[DWC_LANE_EVENTS][DWC_RAS_DES_LANES];
    uint16_t on[DWC_LANE_EVENTS];   /* enabled lanes, a bit each */

    uint32_t tba_ctl;               /* START is 1 while a run goes on */
    bool tba_ran;                   /* a run was started since the reset */
    uint64_t tba_start;             /* virtual ns */
    uint64_t tba_end;               /* the run's end if timed, else 0 */
    uint64_t tba_stop;              /* when the last run ended */
    DwcLinkTotals at_start, at_stop;
} DwcRasDes;

void dwc_ras_des_init(DwcRasDes *s, DwcTotalsFn *totals, void *opaque);
/*
 * Power-on, hot and warm reset of the port alike: every register and
 * counter to 0, every counter off, the timer stopped, its data 0.
 */
void dwc_ras_des_reset(DwcRasDes *s);

/*
 * An access at offset off of the capability, len 1 to 4 bytes at any
 * alignment (a dword-crossing access is split), at virtual time now.
 * Bytes below DWC_RAS_DES_REGS and past the modelled registers read 0
 * and ignore writes; bytes past DWC_RAS_DES_LEN are no part of it.
 * A write of part of a register changes only the bytes it covers, and
 * the commands in byte 0 (clear, enable, start) act only when it is
 * written.
 */
uint32_t dwc_ras_des_read(DwcRasDes *s, uint32_t off, unsigned len,
                          uint64_t now);
void dwc_ras_des_write(DwcRasDes *s, uint32_t off, uint32_t val,
                       unsigned len, uint64_t now);

/*
 * The end of a timed run that is going on, UINT64_MAX if none: the
 * caller runs dwc_ras_des_sync() then (every access syncs as well).
 */
uint64_t dwc_ras_des_deadline(const DwcRasDes *s);
void dwc_ras_des_sync(DwcRasDes *s, uint64_t now);
/* The time-based analysis runs (its START bit as read at now) */
bool dwc_ras_des_tba_running(DwcRasDes *s, uint64_t now);

/* Lane events: 0 to DWC_LANE_EVENTS - 1 in the order of their IDs */
uint16_t dwc_lane_event_id(unsigned index);
const char *dwc_lane_event_name(unsigned index);
/* The index of an event ID or name ("rx_memory_read"), -1 if none */
int dwc_lane_event_by_id(uint32_t id);
int dwc_lane_event_by_name(const char *name);

/*
 * count events of lane event `index` on lane `lane` of a link of width
 * lanes: the counter of that event and lane counts them if it is on
 * (modulo 2^32). Returns NULL, with *counted set, or a g_malloc'd reason
 * it refused (a lane not below width, an unknown event).
 */
char *dwc_ras_des_inject(DwcRasDes *s, unsigned width, unsigned lane,
                         unsigned index, uint32_t count, bool *counted);

/*
 * An injection as text, "lane=N,event=NAME,count=K" in any order: NAME an
 * event name or ID (decimal or 0x hex), count 1 to 2^32 - 1, 1 if left
 * out. Returns NULL or a g_malloc'd reason it refused.
 */
typedef struct DwcLaneError {
    unsigned lane;
    unsigned index;             /* dwc_lane_event_* */
    uint32_t count;
} DwcLaneError;

char *dwc_lane_error_parse(const char *text, DwcLaneError *out);

/* ------------------------------------------------------------------ */
/* The port's totals from those of the functions below it             */

#define DWC_LINK_FUNCS          256u

/*
 * What one function below the port reports since its last reset is a
 * PcieLinkTotals. Function 0 (devfn 0) is the link's owner: while it is absent the link
 * is down (detect), and its link_down_ns is the link's down time while it
 * is present. Payload is summed over all functions. A function's totals
 * that fall below what it last reported mean it was reset: what it had
 * counted until then is kept. A function that goes away keeps what it
 * last reported.
 */
typedef struct DwcLinkSum {
    uint64_t origin;            /* virtual ns the sums start at */
    bool up;                    /* function 0 is present */
    uint64_t since;             /* function 0 absent from then on */
    uint64_t absent_ns;         /* closed spans without function 0 */
    PcieLinkTotals gone;          /* of functions gone */
    PcieLinkTotals base[DWC_LINK_FUNCS];  /* of a function's earlier lives */
    PcieLinkTotals last[DWC_LINK_FUNCS];  /* what it last reported */
} DwcLinkSum;

void dwc_link_sum_init(DwcLinkSum *ls, uint64_t now);
/* Function devfn appears or goes away at now */
void dwc_link_sum_attach(DwcLinkSum *ls, unsigned devfn, uint64_t now);
void dwc_link_sum_detach(DwcLinkSum *ls, unsigned devfn, uint64_t now);
/* What function devfn reports now */
void dwc_link_sum_update(DwcLinkSum *ls, unsigned devfn,
                         const PcieLinkTotals *cur);
/* The port's totals at now, from what the functions reported last */
void dwc_link_sum_totals(const DwcLinkSum *ls, uint64_t now,
                         DwcLinkTotals *out);

/* ------------------------------------------------------------------ */
/* Migration                                                          */

/*
 * The capability and the link sums as bytes (g_malloc'd, little endian),
 * and back: load returns NULL or a g_malloc'd reason it refused (and then
 * changed nothing). The callbacks of s stay as they are.
 */
void *dwc_state_save(const DwcRasDes *s, const DwcLinkSum *ls, size_t *len);
char *dwc_state_load(DwcRasDes *s, DwcLinkSum *ls, const void *buf,
                     size_t len);

#endif
