/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The registers of a PCIe 6 link end in flit mode that pcie-telemetry
 * --flit decodes (docs/flit.md): the flit bits of the PCI Express
 * capability and the extended capabilities 0x0031 Physical Layer 64.0
 * GT/s, 0x0032 Flit Logging and 0x0033 Flit Performance Measurement.
 *
 * The tool's own statement of them, for real PCIe 6 devices as much as
 * for the project's models: libpci 3.9 (Debian 12) knows none of them.
 * Offsets are bytes from the start of the capability (its header at 0);
 * a field is (value >> SHIFT) & MASK, as PTL_FIELD takes it. Plain C99.
 */
#ifndef PCIE_TELEMETRY_FLIT_H
#define PCIE_TELEMETRY_FLIT_H

/* ---------------------------------------------------------------------
 * Extended capability IDs and the extended capability header
 */
#define PTL_FLIT_CAP_ID_64GT        0x0031u /* Physical Layer 64.0 GT/s */
#define PTL_FLIT_CAP_ID_LOG         0x0032u /* Flit Logging */
#define PTL_FLIT_CAP_ID_PERF        0x0033u /* Flit Performance Measurement */
#define PTL_EXT_CAP_START           0x100u  /* the first extended capability */
#define PTL_EXT_CAP_ID_MASK         0xFFFFu /* header [15:0] */
#define PTL_EXT_CAP_NEXT_SHIFT      20      /* header [31:20] */

/* ---------------------------------------------------------------------
 * The PCI Express capability (ID 0x10 in the standard list)
 */
#define PTL_PCIE_CAP_ID             0x10u
#define PTL_PCIE_FLAGS              0x02    /* PCI Express Capabilities, 16 */
#define PTL_PCIE_FLAGS_FLIT         0x8000u /* Flit Mode Supported [15] */
#define PTL_PCIE_LNKCAP             0x0C
#define PTL_PCIE_LNKCTL             0x10    /* Link Control, 16 bits */
#define PTL_PCIE_LNKCTL_FLIT_DIS    0x2000u /* Flit Mode Disable [13] */
#define PTL_PCIE_LNKSTA             0x12    /* Link Status, 16 bits */
#define PTL_PCIE_LNKSTA2            0x32    /* Link Status 2, 16 bits */
#define PTL_PCIE_LNKSTA2_FLIT       0x0400u /* Flit Mode Status [10] */

/* ---------------------------------------------------------------------
 * 0x0031 Physical Layer 64.0 GT/s
 */
#define PTL_64GT_CAP                0x04
#define PTL_64GT_CTL                0x08
#define PTL_64GT_STATUS             0x0C
#define PTL_64GT_EQ_COMPLETE        0x01u   /* Equalization Complete */
#define PTL_64GT_EQ_PHASE1          0x02u   /* Phase 1 Successful */
#define PTL_64GT_EQ_PHASE2          0x04u   /* Phase 2 Successful */
#define PTL_64GT_EQ_PHASE3          0x08u   /* Phase 3 Successful */
#define PTL_64GT_EQ_REQUEST         0x10u   /* Link Equalization Request */

/* ---------------------------------------------------------------------
 * 0x0032 Flit Logging
 */
#define PTL_FLOG_ERR1               0x04    /* Flit Error Log 1 */
#define PTL_FLOG_ERR1_VALID         0x0001u /* RW1C: a 1 drops the entry */
#define PTL_FLOG_ERR1_WIDTH_SHIFT   1       /* link width code: x1 0 .. x16 4 */
#define PTL_FLOG_ERR1_WIDTH_MASK    0x7u
#define PTL_FLOG_ERR1_OFFSET_SHIFT  4
#define PTL_FLOG_ERR1_OFFSET_MASK   0xFu
#define PTL_FLOG_ERR1_CONS_SHIFT    8       /* flits in error after it */
#define PTL_FLOG_ERR1_CONS_MASK     0x1Fu
#define PTL_FLOG_ERR1_MORE          0x2000u /* more entries wait */
#define PTL_FLOG_ERR1_UNREC         0x4000u /* unrecognized flit */
#define PTL_FLOG_ERR1_UNCOR         0x8000u /* FEC uncorrectable */
#define PTL_FLOG_ERR1_SYND_SHIFT    16      /* syndromes of group 0 */
#define PTL_FLOG_ERR1_SYND_MASK     0xFFFFu
#define PTL_FLOG_ERR2               0x08    /* Flit Error Log 2: syndromes */
#define PTL_FLOG_CNT_CTL            0x0C    /* Flit Error Counter Control, 16 */
#define PTL_FLOG_CNT_EN             0x0001u
#define PTL_FLOG_CNT_INT_EN         0x0002u
#define PTL_FLOG_CNT_EVENTS_SHIFT   2
#define PTL_FLOG_CNT_EVENTS_MASK    0x3u
#define PTL_FLOG_CNT_TRIGGER_SHIFT  4
#define PTL_FLOG_CNT_TRIGGER_MASK   0xFFu
#define PTL_FLOG_CNT_STS            0x0E    /* Flit Error Counter Status, 16 */
/*
 * docs/flit.md (and pciutils) put the width code in [2:0] and the
 * interrupt bit at [2]: the two overlap, so a counter started at x16
 * (code 4) reads as "interrupt generated" too. Decoded as documented.
 */
#define PTL_FLOG_STS_WIDTH_SHIFT    0
#define PTL_FLOG_STS_WIDTH_MASK     0x7u
#define PTL_FLOG_STS_INT            0x0008u /* RW1C; see the man page */
#define PTL_FLOG_STS_COUNT_SHIFT    8
#define PTL_FLOG_STS_COUNT_MASK     0xFFu
#define PTL_FLOG_FBER_CTL           0x10    /* FBER Measurement Control */
#define PTL_FLOG_FBER_EN            0x0001u
#define PTL_FLOG_FBER_CLEAR         0x0002u /* write-only: zeroes the counts */
#define PTL_FLOG_FBER_GRAN_SHIFT    2
#define PTL_FLOG_FBER_GRAN_MASK     0x3u
#define PTL_FLOG_FBER_FLITS         0x14    /* Status 1: the Flit Counter */
#define PTL_FLOG_FBER_INVALID       0x18    /* Status 2: invalid flits [15:0] */
#define PTL_FLOG_FBER_INVALID_MASK  0xFFFFu
#define PTL_FLOG_FBER_LANES         0x1C    /* Status 3-10: 16 bits a lane */
#define PTL_FLOG_LANES              16
#define PTL_FLOG_COUNT16_MAX        0xFFFFu /* the 16-bit counters stop there */
#define PTL_FLOG_SIZE               0x3C

/* Events to count [3:2] */
#define PTL_FLOG_EVENTS_ALL         0u      /* every flit error */
#define PTL_FLOG_EVENTS_UNCOR       1u      /* uncorrectable and unrecognized */
#define PTL_FLOG_EVENTS_COR         2u      /* correctable */
#define PTL_FLOG_EVENTS_NONE        3u

/* ---------------------------------------------------------------------
 * 0x0033 Flit Performance Measurement
 */
#define PTL_FPERF_CAP               0x04
#define PTL_FPERF_CAP_VECTOR_SHIFT  0       /* interrupt message number */
#define PTL_FPERF_CAP_VECTOR_MASK   0x3FFu
#define PTL_FPERF_CAP_LTSSM_SHIFT   10      /* LTSSM Tracking Register Count */
#define PTL_FPERF_CAP_LTSSM_MASK    0x7u
#define PTL_FPERF_CTL               0x08
#define PTL_FPERF_EN                0x00000001u
#define PTL_FPERF_TYPE_SHIFT        1       /* Flit Response Type, one-hot */
#define PTL_FPERF_TYPE_MASK         0x7u
#define PTL_FPERF_TYPE_ACK          1u      /* 001b Flit->Ack */
#define PTL_FPERF_TYPE_NAK          2u      /* 010b Flit->Nak */
#define PTL_FPERF_TYPE_REPLAY       4u      /* 100b Nak->Replay */
#define PTL_FPERF_INST_SHIFT        6       /* instances; 0: worst case */
#define PTL_FPERF_INST_MASK         0x1Fu
#define PTL_FPERF_THR_SHIFT         11      /* 100 ns steps */
#define PTL_FPERF_THR_MASK          0x7u
#define PTL_FPERF_TRACK_SHIFT       14      /* LTSSM trackers, bits 14-18 */
#define PTL_FPERF_TRACK_MASK        0x1Fu
#define PTL_FPERF_LINST_SHIFT       19      /* LTSSM instances */
#define PTL_FPERF_LINST_MASK        0x1Fu
#define PTL_FPERF_LTHR_SHIFT        24      /* 6.4 ms steps */
#define PTL_FPERF_LTHR_MASK         0x7u
#define PTL_FPERF_L1THR_SHIFT       27      /* L1.1/L1.2 threshold */
#define PTL_FPERF_L1THR_MASK        0x7u
#define PTL_FPERF_CTL_RSVDP         0xC0000030u /* [5:4], [31:30] */
#define PTL_FPERF_STATUS            0x0C
#define PTL_FPERF_LTSSM(i)          (0x10u + 4u * (i))  /* i < count */
#define PTL_FPERF_LTSSM_MAX         7       /* what the 3-bit count allows */

/* Status and every LTSSM register */
#define PTL_FST_STATUS_SHIFT        0
#define PTL_FST_STATUS_MASK         0x3u
#define PTL_FST_TRACKED_SHIFT       2       /* flits (transitions) tracked */
#define PTL_FST_TRACKED_MASK        0x1Fu
#define PTL_FST_INT                 0x80u   /* RW1C */
#define PTL_FST_COUNTER_SHIFT       8
#define PTL_FST_COUNTER_MASK        0xFFFFu
#define PTL_FST_NOT_STARTED         0u
#define PTL_FST_STARTED             1u
#define PTL_FST_DONE                2u
#define PTL_FST_OVERFLOW            3u
#define PTL_FPERF_UNIT_NS           8u      /* latency counter */
#define PTL_FLTSSM_UNIT_US          64u     /* LTSSM counter */

#endif
