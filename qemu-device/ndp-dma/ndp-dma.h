/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of an NDK DMA engine as CESNET's nfb driver and libnfb
 * see the controller they call Medusa (`netcope,dma_ctrl_ndp_rx`/`_tx`):
 * per queue a window of 0x80 bytes of registers, rings of 8-byte
 * descriptors in host memory, 4-byte RX headers and an update buffer the
 * engine writes its pointers to; and the NDK firmware's generator/loopback
 * switch (`cesnet,ofm,gen_loop_switch`) with its RX generator, which feed
 * the RX queues. Host memory is reached through NdpMemOps only, so the
 * engine runs the same under QEMU (pci_dma_*) and in unit tests (an array).
 *
 * Behaviour the software does not observe and NDK does not publish is
 * chosen here and written down in docs/dma.md.
 */
#ifndef NDP_DMA_H
#define NDP_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Register window of one queue's controller */
#define NDP_CTRL_SIZE           0x80u
#define NDP_REG_CONTROL         0x00    /* bit 0: 1 START, 0 STOP */
#define NDP_REG_STATUS          0x04    /* bit 0: RUNNING */
#define NDP_REG_SDP             0x10    /* software descriptor pointer */
#define NDP_REG_SHP             0x14    /* software header pointer */
#define NDP_REG_HDP             0x18    /* hardware descriptor pointer */
#define NDP_REG_HHP             0x1C    /* hardware header pointer */
#define NDP_REG_TIMEOUT         0x20
#define NDP_REG_DESC_BASE       0x40    /* 64 bit */
#define NDP_REG_HDR_BASE        0x48    /* 64 bit, RX */
#define NDP_REG_UPDATE_BASE     0x50    /* 64 bit */
#define NDP_REG_MDP             0x58    /* descriptor pointer mask */
#define NDP_REG_MHP             0x5C    /* header pointer mask */
#define NDP_REG_CNT_PKTS        0x60    /* 64 bit; a write is a command */
#define NDP_REG_CNT_BYTES       0x68
#define NDP_REG_CNT_DISC_PKTS   0x70
#define NDP_REG_CNT_DISC_BYTES  0x78

#define NDP_CONTROL_START       0x1u
#define NDP_STATUS_RUNNING      0x1u
/* commands written to NDP_REG_CNT_PKTS */
#define NDP_CNT_CMD_RESET       0u      /* clear live and sampled counters */
#define NDP_CNT_CMD_STROBE      1u      /* sample the live counters */
#define NDP_CNT_CMD_STROBE_RESET 2u     /* sample, then clear the live ones */

/* Pointers and masks are this wide; the mask probe reads it back. */
#define NDP_PTR_BITS            16
#define NDP_PTR_MASK            ((1u << NDP_PTR_BITS) - 1)
#define NDP_TIMEOUT_DEFAULT     0x800u

/* Descriptors (64 bit, little endian) */
#define NDP_DESC_TYPE_SHIFT     62
#define NDP_DESC_TYPE_UPPER     0u      /* bits 33..0: address bits 63..30 */
#define NDP_DESC_TYPE_DATA      2u
#define NDP_DESC_ADDR_MASK      0x3FFFFFFFull   /* type 2: address bits 29..0 */
#define NDP_DESC_LEN_SHIFT      32
#define NDP_DESC_META_SHIFT     48      /* 12 bits */
#define NDP_DESC_NEXT           (1ull << 61)
#define NDP_DESC_UPPER_MASK     0x3FFFFFFFFull
/* Descriptors the engine fetches in one read, at most (chosen) */
#define NDP_DESC_FETCH          16

/* RX header (4 bytes): frame length, user-header length, flags, descs */
#define NDP_HDR_SIZE            4
#define NDP_HDR_FLAGS_MASK      0x0Fu
#define NDP_HDR_FREE_DESC_SHIFT 6
/* RX headers the engine writes in one transfer, at most (chosen) */
#define NDP_HDR_BATCH           16

/* Frames the engine moves: the firmware's DMA params (frame_size_min/max) */
#define NDP_FRAME_MIN           60u
#define NDP_FRAME_MAX           0x3FFFu

/* The generator/loopback switch and its two generators */
#define NDP_GLS_SIZE            0x200u
#define NDP_GLS_MUX_A           0x00    /* 1: DMA TX looped to DMA RX */
#define NDP_GLS_MUX_B           0x04    /* 1: Ethernet RX looped to TX */
#define NDP_GLS_MUX_C           0x08    /* RX source: 0 Ethernet, 1 generator */
#define NDP_GLS_MUX_D           0x0C    /* TX source: 0 DMA TX, 1 generator */
#define NDP_GLS_GEN_RX          0x80    /* mfb_gen2dma */
#define NDP_GLS_GEN_TX          0xC0    /* mfb_gen2eth */
#define NDP_GEN_SIZE            0x40u
#define NDP_GEN_CONTROL         0x00    /* bit 0 enable, bit 1 busy, bit 4 clear */
#define NDP_GEN_LENGTH          0x04
#define NDP_GEN_CHANNEL_INCR    0x08
#define NDP_GEN_CHANNEL_MINMAX  0x0C
#define NDP_GEN_DST_MAC_LOW     0x10
#define NDP_GEN_DST_MAC_HIGH    0x14
#define NDP_GEN_SRC_MAC_LOW     0x18
#define NDP_GEN_SRC_MAC_HIGH    0x1C
#define NDP_GEN_CNT_LOW         0x20
#define NDP_GEN_CNT_HIGH        0x24
#define NDP_GEN_CTRL_ENABLE     0x01u
#define NDP_GEN_CTRL_BUSY       0x02u
#define NDP_GEN_CTRL_CLEAR      0x10u
/* the generator's frames carry this HDR_META: user header 0, ID 4 */
#define NDP_GEN_META            0x400u
/* and this EtherType (local experimental) */
#define NDP_GEN_ETHERTYPE       0x88B5u

/*
 * Where the card puts the engine in BAR0: the controllers as NDK firmware
 * does (DMA module at 0x01000000, TX 0x00200000 after RX), the switches
 * after them.
 */
#define NDP_BAR_RX_BASE         0x01000000u
#define NDP_BAR_TX_BASE         0x01200000u
#define NDP_BAR_GLS_BASE        0x01400000u
#define NDP_BAR_END(ports)      (NDP_BAR_GLS_BASE + (ports) * NDP_GLS_SIZE)

#define NDP_MAX_PORTS           16
#define NDP_MAX_QUEUES          64      /* per direction, all ports */

typedef enum NdpDir {
    NDP_RX = 0,
    NDP_TX = 1,
} NdpDir;

/*
 * Host memory as the engine's bus master sees it. Each returns 0 on
 * success and nonzero where the bus refused the access (no memory there):
 * then nothing was transferred.
 */
typedef struct NdpMemOps {
    int (*read)(void *opaque, uint64_t addr, void *buf, size_t len);
    int (*write)(void *opaque, uint64_t addr, const void *buf, size_t len);
} NdpMemOps;

/*
 * What the engine did on the bus, one transfer at a time, in the order it
 * did them: the telemetry counts these. `bytes` is the payload of a write
 * or the length asked of a read; `queue` the global queue index.
 */
typedef enum NdpXferKind {
    NDP_XFER_DESC_READ = 0,     /* descriptors fetched, 8 bytes each */
    NDP_XFER_DATA_READ = 1,     /* TX frame data read */
    NDP_XFER_DATA_WRITE = 2,    /* RX frame data written */
    NDP_XFER_HDR_WRITE = 3,     /* RX headers written, 4 bytes each */
    NDP_XFER_UPDATE_WRITE = 4,  /* update buffer written */
} NdpXferKind;

typedef struct NdpHooks {
    /* Optional: a transfer the engine made (after it succeeded). */
    void (*xfer)(void *opaque, NdpDir dir, unsigned queue, NdpXferKind kind,
                 uint64_t addr, uint32_t bytes);
    /* Optional: the RX generator of a port started or stopped. */
    void (*gen_changed)(void *opaque, unsigned port, bool running);
} NdpHooks;

/* Why a queue halted by itself (ndp_dma_queue_error; 0: it did not) */
enum {
    NDP_ERR_NONE = 0,
    NDP_ERR_DESC_READ = 1,      /* a descriptor outside host memory */
    NDP_ERR_DATA = 2,           /* frame data outside host memory */
    NDP_ERR_HDR_WRITE = 3,      /* a header outside host memory */
    NDP_ERR_UPDATE_WRITE = 4,   /* the update buffer outside host memory */
};

typedef struct NdpDma NdpDma;

/*
 * An engine with `queues` RX and as many TX queues on each of `ports` DMA
 * ports (queue q of port p is global queue p * queues + q), one switch per
 * port. The generator's time base: it makes a frame each `gen_frame_ns`
 * x (cycles a frame takes on the DMA bus of `bus_bytes` per cycle) at
 * `dma_hz`.
 */
NdpDma *ndp_dma_new(unsigned ports, unsigned queues, uint64_t dma_hz,
                    unsigned bus_bytes, const NdpMemOps *mem,
                    const NdpHooks *hooks, void *opaque);
void ndp_dma_free(NdpDma *d);

unsigned ndp_dma_queues(const NdpDma *d);       /* per direction, all ports */

/*
 * The controllers' registers of queue `queue` of a direction: offsets
 * within its window, any size of 1, 2, 4 or 8 bytes at any offset (an
 * access is split into the 32-bit registers it covers, low first; a
 * 64-bit write to SDP sets SDP and SHP before the engine looks at them).
 * `now_ns` is virtual time, for the generator feeding RX.
 */
uint64_t ndp_dma_read(NdpDma *d, NdpDir dir, unsigned queue, uint32_t off,
                      unsigned size, int64_t now_ns);
void ndp_dma_write(NdpDma *d, NdpDir dir, unsigned queue, uint32_t off,
                   uint64_t val, unsigned size, int64_t now_ns);

/* The switch of a port and its generators (offsets in its 0x200 window). */
uint64_t ndp_gls_read(NdpDma *d, unsigned port, uint32_t off, unsigned size,
                      int64_t now_ns);
void ndp_gls_write(NdpDma *d, unsigned port, uint32_t off, uint64_t val,
                   unsigned size, int64_t now_ns);

/*
 * Run the RX generators up to now_ns: frames made since the last run go to
 * their queues, or are discarded where a queue is stopped or full. Returns
 * the virtual time of the next frame of a running generator, or INT64_MAX
 * when none runs (no timer is needed then).
 */
int64_t ndp_dma_run(NdpDma *d, int64_t now_ns);

/*
 * Stop everything at once, as a reset of the card does: queues stop with
 * no further transfer, registers and counters return to their reset
 * values, the switch to its defaults, generators off.
 */
void ndp_dma_reset(NdpDma *d);

/* Why queue `queue` halted (NDP_ERR_*), 0 if it did not. */
int ndp_dma_queue_error(const NdpDma *d, NdpDir dir, unsigned queue);

/*
 * Deliver one frame to RX queue `queue` as the switch would (tests and
 * the loopback): true if it reached host memory, false if discarded.
 */
bool ndp_dma_rx_frame(NdpDma *d, unsigned queue, const uint8_t *data,
                      uint32_t len, uint16_t meta);

/*
 * Migration: the whole state as bytes (g_malloc'd), and back. Load returns
 * NULL or a g_malloc'd reason it refused (then nothing changed).
 */
void *ndp_dma_save(const NdpDma *d, size_t *len);
char *ndp_dma_load(NdpDma *d, const void *buf, size_t len);

#endif
