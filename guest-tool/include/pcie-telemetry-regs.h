/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The register map of CESNET's PCIE_TELEMETRY_MI block, for software and
 * tests that talk to the block directly: register offsets, bit fields,
 * commands, the rules that place a counter in the counter window, and the
 * NDK device-tree VSEC that tells where the block sits.
 *
 * Plain C99, no library behind it: a test may include this header alone.
 * The same map in machine-readable form is pcie-telemetry-regs.json,
 * installed beside it ($datadir/pcie-telemetry/). Offsets are bytes from
 * the start of the block; every register is 32 bits wide and little
 * endian, the counters are 64-bit loads (or two 32-bit reads, low first).
 */
#ifndef PCIE_TELEMETRY_REGS_H
#define PCIE_TELEMETRY_REGS_H

#include <stdint.h>

/* ---------------------------------------------------------------------
 * Identity and size
 */
#define PTL_MAGIC                   0x50544C4Du     /* "PTLM" */
#define PTL_VERSION_MAJOR           2
#define PTL_VERSION_VALUE           0x00020000u     /* major 2, minor 0 */
#define PTL_BLOCK_SIZE              0x10000u        /* 64 KiB on the MI bus */
#define PTL_COMPATIBLE              "cesnet,ofm,pcie_telemetry_mi"
/* Below the counter window only address bits 7..2 are decoded. */
#define PTL_REG_DECODE_MASK         0xFCu
#define PTL_MAX_ENDPOINTS           16

/* ---------------------------------------------------------------------
 * Registers
 */
#define PTL_REG_MAGIC               0x00    /* RO */
#define PTL_REG_VERSION             0x04    /* RO */
#define PTL_REG_CFG_TOPOLOGY        0x08    /* RO */
#define PTL_REG_CFG_LAYOUT          0x0C    /* RO */
#define PTL_REG_CFG_PCIE            0x10    /* RO: the PCIe-clock probe */
#define PTL_REG_CFG_DMA             0x14    /* RO: the DMA-clock probe */
#define PTL_REG_CFG_DRAIN           0x18    /* RO */
#define PTL_REG_CNT_BASE            0x1C    /* RO: the counter window */
#define PTL_REG_COMMAND             0x20    /* WO, reads 0 */
#define PTL_REG_STATUS              0x24    /* RO */
#define PTL_REG_READ_SEL            0x28    /* RW */
#define PTL_REG_CFG_REGIONS         0x2C    /* RO */
#define PTL_REG_CFG_WIDTH           0x30    /* RO: RQ and RC region bytes */
#define PTL_REG_CFG_HIST            0x34    /* RO */
#define PTL_REG_CFG_CAPACITY        0x38    /* RO */
#define PTL_REG_CFG_WIDTH_DMA       0x3C    /* RO: UP and DOWN region bytes */
/* Live per-endpoint registers, endpoint e < 16; 0 for absent endpoints */
#define PTL_REG_PCIE_STATUS(e)      (0x40u + 4u * (e))     /* RO */
#define PTL_REG_PCIE_TAGS(e)        (0x80u + 4u * (e))     /* RO */
#define PTL_REG_PCIE_STFIFO(e)      (0xC0u + 4u * (e))     /* RO */

/* A field is (value >> SHIFT) & MASK. */
#define PTL_FIELD(value, f)  (((uint32_t)(value) >> f##_SHIFT) & f##_MASK)

/* CFG_TOPOLOGY */
#define PTL_TOPOLOGY_ENDPOINTS_SHIFT    0
#define PTL_TOPOLOGY_ENDPOINTS_MASK     0xFFu
#define PTL_TOPOLOGY_DMA_PORTS_SHIFT    8
#define PTL_TOPOLOGY_DMA_PORTS_MASK     0xFFu
#define PTL_TOPOLOGY_PROBES_SHIFT       16      /* 2 x endpoints */
#define PTL_TOPOLOGY_PROBES_MASK        0xFFu

/* CFG_LAYOUT */
#define PTL_LAYOUT_ENTRIES_SHIFT        0       /* counter window entries */
#define PTL_LAYOUT_ENTRIES_MASK         0xFFFFu
#define PTL_LAYOUT_CNT_WIDTH_SHIFT      16      /* bits per counter */
#define PTL_LAYOUT_CNT_WIDTH_MASK       0xFFu
#define PTL_LAYOUT_PER_ENDPOINT_SHIFT   24      /* counters per endpoint */
#define PTL_LAYOUT_PER_ENDPOINT_MASK    0xFFu

/* CFG_PCIE and CFG_DMA: one probe each */
#define PTL_PROBE_CHANNELS_SHIFT        0
#define PTL_PROBE_CHANNELS_MASK         0xFFu
#define PTL_PROBE_BUSES_SHIFT           8
#define PTL_PROBE_BUSES_MASK            0xFFu
#define PTL_PROBE_REGIONS_SHIFT         16      /* regions of its widest bus */
#define PTL_PROBE_REGIONS_MASK          0xFFu
#define PTL_PROBE_BRAKES_SHIFT          24      /* BRAKE reasons + bands */
#define PTL_PROBE_BRAKES_MASK           0xFFu

/* CFG_DRAIN */
#define PTL_DRAIN_PERIOD_SHIFT          0       /* 0 means 65536 */
#define PTL_DRAIN_PERIOD_MASK           0xFFFFu
#define PTL_DRAIN_ITEM_BYTES_SHIFT      16      /* bytes per MFB item */
#define PTL_DRAIN_ITEM_BYTES_MASK       0xFFu

/* CFG_REGIONS: regions of each bus, one byte each */
#define PTL_REGIONS_RQ_SHIFT            0
#define PTL_REGIONS_RQ_MASK             0xFFu
#define PTL_REGIONS_RC_SHIFT            8
#define PTL_REGIONS_RC_MASK             0xFFu
#define PTL_REGIONS_UP_SHIFT            16
#define PTL_REGIONS_UP_MASK             0xFFu
#define PTL_REGIONS_DOWN_SHIFT          24
#define PTL_REGIONS_DOWN_MASK           0xFFu

/* CFG_WIDTH (RQ, RC) and CFG_WIDTH_DMA (UP, DOWN): region bytes */
#define PTL_WIDTH_LOW_SHIFT             0       /* RQ, or UP */
#define PTL_WIDTH_LOW_MASK              0xFFFFu
#define PTL_WIDTH_HIGH_SHIFT            16      /* RC, or DOWN */
#define PTL_WIDTH_HIGH_MASK             0xFFFFu

/* CFG_HIST */
#define PTL_HIST_BANDS_SHIFT            0
#define PTL_HIST_BANDS_MASK             0xFFu
#define PTL_HIST_PCIE_SHIFT             8       /* histograms, PCIe probe */
#define PTL_HIST_PCIE_MASK              0xFFu
#define PTL_HIST_DMA_SHIFT              16      /* histograms, DMA probe */
#define PTL_HIST_DMA_MASK               0xFFu

/* CFG_CAPACITY */
#define PTL_CAPACITY_TAGS_SHIFT         0
#define PTL_CAPACITY_TAGS_MASK          0xFFFFu
#define PTL_CAPACITY_STFIFO_SHIFT       16
#define PTL_CAPACITY_STFIFO_MASK        0xFFFFu

/* COMMAND: write-only bits, any combination in one write */
#define PTL_CMD_SNAPSHOT            (1u << 0)   /* copy live to snapshot */
#define PTL_CMD_CLEAR               (1u << 1)   /* zero the counters */
#define PTL_CMD_CLEAR_FLAGS         (1u << 2)   /* STATUS bits 1 and 2 */
#define PTL_CMD_CLEAR_LOWEST        (1u << 3)   /* lowest free tags/words */

/* STATUS */
#define PTL_STATUS_BUSY             (1u << 0)   /* a command is running */
#define PTL_STATUS_LOST             (1u << 1)   /* a delta was lost, sticky */
#define PTL_STATUS_OVERRUN          (1u << 2)   /* read-out overrun, sticky */

/* READ_SEL: which copy the counter window shows */
#define PTL_READ_SEL_SNAPSHOT       0u
#define PTL_READ_SEL_LIVE           1u

/* PCIE_STATUS (the negotiated settings of endpoint e) */
#define PTL_PCIE_MPS_SHIFT              0       /* 128 << value bytes */
#define PTL_PCIE_MPS_MASK               0x7u
#define PTL_PCIE_MRRS_SHIFT             3       /* 128 << value bytes */
#define PTL_PCIE_MRRS_MASK              0x7u
#define PTL_PCIE_EXT_TAG_SHIFT          6
#define PTL_PCIE_EXT_TAG_MASK           0x1u
#define PTL_PCIE_TAG_10BIT_SHIFT        7
#define PTL_PCIE_TAG_10BIT_MASK         0x1u
#define PTL_PCIE_RCB_128_SHIFT          8       /* 1: RCB 128 B, 0: 64 B */
#define PTL_PCIE_RCB_128_MASK           0x1u
#define PTL_PCIE_LINK_UP_SHIFT          9
#define PTL_PCIE_LINK_UP_MASK           0x1u

/* PCIE_TAGS and PCIE_STFIFO: free now and lowest since the last clear */
#define PTL_FREE_NOW_SHIFT              0
#define PTL_FREE_NOW_MASK               0xFFFFu
#define PTL_FREE_LOWEST_SHIFT           16
#define PTL_FREE_LOWEST_MASK            0xFFFFu

/* ---------------------------------------------------------------------
 * The counter window: entry i at CNT_BASE + 8 i, low word first; only
 * the entry bits and bit 2 are decoded, so the window repeats every
 * ENTRIES x 8 bytes. Entries past the last endpoint read 0.
 */
#define PTL_CNT_BASE_VALUE          0x8000u
#define PTL_CNT_STRIDE              8u

static inline uint32_t ptl_cnt_offset(uint32_t cnt_base, unsigned entry)
{
    return cnt_base + PTL_CNT_STRIDE * entry;
}

/*
 * Within an endpoint (which starts at entry e x counters per endpoint) the
 * PCIe-clock probe comes first, then the DMA-clock probe at the PCIe
 * probe's channel count. A probe whose widest bus has R regions:
 *   channel 0                  cycles of the probe's clock
 *   1 + b (6 + R) + k          bus b, quantity k below
 *   1 + B (6 + R) + j          PCIe probe only (B = 2 buses): BRAKE reason
 *                              j < brake_reasons, then the histograms'
 *                              bands (tags first, then storage FIFO)
 * Buses: PCIe probe 0 = RQ, 1 = RC; DMA probe 2p = UP and 2p + 1 = DOWN
 * of DMA port p.
 */
enum ptl_bus_channel {
    PTL_CH_WORDS = 0,       /* SRC_RDY and DST_RDY */
    PTL_CH_STALL = 1,       /* SRC_RDY and not DST_RDY */
    PTL_CH_SOF = 2,         /* SOFs of moving words */
    PTL_CH_MVB = 3,         /* MVB items accepted */
    PTL_CH_MVB_STALL = 4,   /* MVB_SRC_RDY and not MVB_DST_RDY */
    PTL_CH_ITEMS = 5,       /* MFB items of open frames */
    PTL_CH_REGION0 = 6,     /* + r: cycles region r carried data */
};
#define PTL_CH_CYCLES               0u
#define PTL_CH_PER_BUS_FIXED        6u      /* + R regions per bus */

enum ptl_pcie_bus { PTL_PCIE_BUS_RQ = 0, PTL_PCIE_BUS_RC = 1 };

/* BRAKE reasons of the PCIe probe, in channel order */
enum ptl_brake_reason {
    PTL_BRAKE_NO_FREE_PCIE_TAG = 0,
    PTL_BRAKE_PCIE_TAG_NOT_READY = 1,
    PTL_BRAKE_NO_ROOM_FOR_COMPLETIONS = 2,
    PTL_BRAKE_NO_COMPLETION_HEADER_ENTRY = 3,
    PTL_BRAKE_MFB_STALLED_TOWARDS_DMA = 4,
    PTL_BRAKE_MVB_STALLED_TOWARDS_DMA = 5,
    PTL_BRAKE_REASONS = 6,
};
#define PTL_HIST_BANDS              4u
enum ptl_hist { PTL_HIST_TAGS = 0, PTL_HIST_STFIFO = 1, PTL_PCIE_HISTS = 2 };

/*
 * Band of a free value v of a resource with capacity c: 0 if v = 0,
 * 1 if v <= c/8, 2 if v <= c/2, else 3.
 */
static inline unsigned ptl_hist_band(unsigned v, unsigned c)
{
    return v == 0 ? 0 : v <= c / 8 ? 1 : v <= c / 2 ? 2 : 3;
}

/* Channel of bus b, quantity k, in a probe of R regions */
static inline unsigned ptl_bus_channel(unsigned regions, unsigned bus,
                                       unsigned k)
{
    return 1u + bus * (PTL_CH_PER_BUS_FIXED + regions) + k;
}

/* Channels of a probe: 1 + buses (6 + R) + brake channels */
static inline unsigned ptl_probe_channels(unsigned regions, unsigned buses,
                                          unsigned brakes)
{
    return 1u + buses * (PTL_CH_PER_BUS_FIXED + regions) + brakes;
}

/* Channel of BRAKE reason j of a PCIe probe of R regions */
static inline unsigned ptl_brake_channel(unsigned pcie_regions, unsigned j)
{
    return ptl_bus_channel(pcie_regions, 2, 0) + j;
}

/* Channel of band j of histogram h (PTL_HIST_TAGS, PTL_HIST_STFIFO) */
static inline unsigned ptl_band_channel(unsigned pcie_regions,
                                        unsigned brake_reasons, unsigned h,
                                        unsigned j)
{
    return ptl_brake_channel(pcie_regions, brake_reasons) +
           h * PTL_HIST_BANDS + j;
}

/*
 * Counter entry of channel ch of endpoint e: the PCIe probe's channels
 * first (dma = 0), the DMA probe's at pcie_channels (dma = 1).
 */
static inline unsigned ptl_entry(unsigned per_endpoint,
                                 unsigned pcie_channels, unsigned e,
                                 int dma, unsigned ch)
{
    return e * per_endpoint + (dma ? pcie_channels : 0) + ch;
}

/* ENTRIES: the next power of two of endpoints x counters per endpoint */
static inline unsigned ptl_entries(unsigned endpoints, unsigned per_endpoint)
{
    unsigned n = endpoints * per_endpoint, p = 1;

    while (p < n) {
        p <<= 1;
    }
    return p;
}

/* ---------------------------------------------------------------------
 * Finding the block: the NDK device tree, an XZ-compressed flattened
 * tree read word by word from a vendor-specific extended capability of
 * the card's PCIe function (extended configuration space: ECAM).
 */
#define PTL_VSEC_ID                 0x0d7b
#define PTL_VSEC_CAP_ID             0x000B  /* vendor-specific extended */
#define PTL_VSEC_REV                1
#define PTL_VSEC_LEN                0x20
/* Registers from the start of the capability */
#define PTL_VSEC_REG_CAP            0x00    /* ID 0x000B, version, next */
#define PTL_VSEC_REG_HEADER         0x04    /* ID, revision, length */
#define PTL_VSEC_REG_ENDPOINT       0x08    /* bit 31: bits 3..0 = index */
#define PTL_VSEC_REG_LENGTH         0x0C    /* bytes of the XZ stream */
#define PTL_VSEC_REG_INDEX          0x10    /* RW word index */
#define PTL_VSEC_REG_DATA           0x14    /* word <index> of the stream */
#define PTL_VSEC_HEADER_VALUE \
    ((uint32_t)PTL_VSEC_LEN << 20 | (uint32_t)PTL_VSEC_REV << 16 | PTL_VSEC_ID)
#define PTL_VSEC_ENDPOINT_VALID     0x80000000u
#define PTL_VSEC_ENDPOINT_MASK      0xFu
/* Device-tree names of the block and of the bus it sits on */
#define PTL_DT_BUS_COMPATIBLE       "netcope,bus,mi"
#define PTL_DT_BUS_RESOURCE         "PCI0,BAR0"

/* ---------------------------------------------------------------------
 * The virtual card (ndk-pcie-telemetry in QEMU): its PCI function
 */
#define PTL_QEMU_VENDOR_ID          0x1234
#define PTL_QEMU_DEVICE_ID          0x0d7b
#define PTL_QEMU_VSEC_OFFSET        0x100   /* its only extended capability */
#define PTL_QEMU_CLASS              0xff00

#endif
