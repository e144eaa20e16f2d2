/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of one AMD/Xilinx Performance AXI Traffic Generator
 * (PG381) on the NDK card: its program of host-memory reads and writes
 * runs through the card's PTC, and its counters (requests, beats, lasts,
 * responses, cycles to done, latency best/worst/sum) say how fast and
 * how long those transfers take. docs/pg381.md describes it all.
 *
 * Registers, in the 64 KiB window of one generator (bits 20:16 of
 * PG381's addresses select the generator; the card has one):
 *   PG381's     status 0x2000-0x22E8 (RO), config 0x4000-0x42D8 (RW),
 *               at PG381's offsets
 *   the card's  0x6000-0x6013: identity, parameters, error detail
 *               0x8000-0xFFFF (bit 15, PG381's instruction RAM): the
 *               program, 512 instructions of 16 words each, the fields
 *               of PG381's CSV columns (PG381's own binary encoding of
 *               its instruction RAM is not public)
 *
 * Counters are functions of virtual time: every access evaluates them
 * at its instant in closed form, one instruction at a time (no timer per
 * request). The glue gives the model host memory (Pg381Ops) and takes
 * the transfers it makes, in time order, when it calls pg381_advance().
 */
#ifndef PG381_CORE_H
#define PG381_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PG381_WINDOW            0x10000u    /* one generator's window */

/* ---- PG381's status registers (read only) ------------------------ */
#define PG381_RBEAT             0x2014u
#define PG381_ARREQ             0x2018u
#define PG381_RLAST             0x201Cu
#define PG381_RBW_EFF_CLK       0x2020u
#define PG381_RWORST            0x2024u
#define PG381_RBEST             0x2028u
#define PG381_RAVG              0x202Cu     /* the sum; avg = sum / ARREQ */
#define PG381_AWREQ             0x2030u
#define PG381_WLAST             0x2034u
#define PG381_BRESP             0x2038u
#define PG381_WRBEAT            0x203Cu
#define PG381_WBW_EFF_CLK       0x2040u
#define PG381_WWORST            0x2044u
#define PG381_WBEST             0x2048u
#define PG381_WAVG              0x204Cu     /* the sum */
#define PG381_FLOW_EMPTY        0x2050u
#define PG381_DI_ERR            0x2054u
#define PG381_BRESP_EXOKAY      0x20D0u
#define PG381_BRESP_SLVERR      0x20D4u
#define PG381_BRESP_DECERR      0x20D8u
#define PG381_RRESP_EXOKAY      0x219Cu
#define PG381_RRESP_SLVERR      0x21A0u
#define PG381_RRESP_DECERR      0x21A4u
#define PG381_AXI_VLD_RDY_STATS 0x21B0u
#define PG381_CAPTURE_ALL       0x2234u     /* a read latches the copies */
/* the copy of the register at 0x2000 + 4k is at 0x2238 + 4k (chosen) */
#define PG381_AL_BASE           0x2238u
#define PG381_AL_COUNT          41u
#define PG381_STATUS_BASE       0x2000u
/* counts in the capture window (the card's choice of the four) */
#define PG381_WIN_AWREQ         0x22DCu
#define PG381_WIN_WRBEAT        0x22E0u
#define PG381_WIN_ARREQ         0x22E4u
#define PG381_WIN_RBEAT         0x22E8u

/* FLOW_EMPTY */
#define PG381_FE_DONE           (1u << 9)   /* 200 cycles after both */
#define PG381_FE_WR_DONE        (1u << 8)
#define PG381_FE_RD_DONE        (1u << 7)
#define PG381_FE_ERROR          (1u << 4)
#define PG381_FE_EMPTY          (7u << 10)  /* instruction RAM, FIFOs */

/* ---- PG381's configuration registers (read/write) ---------------- */
#define PG381_SOFT_RST          0x4000u     /* bit 0, active low */
#define PG381_START             0x4004u     /* bit 0: 1 starts */
#define PG381_CREDIT_FLOW0      0x4008u     /* kept, no effect */
#define PG381_CREDIT_FLOW1      0x400Cu
#define PG381_OUTSTND_RESP_LIMIT 0x4010u    /* 12 bits, reset 0xFFF */
#define PG381_CAPTURE_ENABLE    0x42D0u
#define PG381_CAPTURE_START     0x42D4u     /* START_ADDR: cycles after START */
#define PG381_CAPTURE_END       0x42D8u     /* END_ADDR */

#define PG381_DONE_DELAY        200u        /* cycles from both channels */
#define PG381_INORDER_MAX       509u        /* outstanding a channel */
#define PG381_OOO_MAX           128u        /* outstanding in all */

/* ---- the card's own registers (read only) ------------------------ */
#define PG381_CARD_ID           0x6000u     /* PG381_CARD_MAGIC */
#define PG381_CARD_PARAMS       0x6004u     /* bit 0 out of order, 1 DI */
#define PG381_CARD_CLOCK        0x6008u     /* the generator's clock, Hz */
#define PG381_CARD_ERROR        0x600Cu     /* see PG381_ERR_* */
#define PG381_CARD_PROG_LEN     0x6010u     /* instructions up to LAST */
#define PG381_CARD_MAGIC        0x50473831u /* "PG81" */
/* CARD_ERROR: bit 31 set, reason [19:16], instruction [8:0] */
#define PG381_ERR_VALID         (1u << 31)
#define PG381_ERR_REASON_SHIFT  16

/* Why a program stopped (CARD_ERROR's reason) */
enum {
    PG381_ERR_NONE = 0,
    PG381_ERR_NO_LAST,          /* no LAST in 512: too many instructions */
    PG381_ERR_ZERO,             /* a count of 0 (requests, loop) */
    PG381_ERR_TOO_LONG,         /* > 65536 requests, > 4096 bytes, size */
    PG381_ERR_LIMIT,            /* limit 0, more tags than the card has */
    PG381_ERR_ID,               /* ID type not the latency mode's */
    PG381_ERR_LOOP,             /* nested, unpaired or unclosed loop */
    PG381_ERR_BURST,            /* a burst other than INCR */
    PG381_ERR_ADDR,             /* a request past high_addr */
    PG381_ERR_MEMORY,           /* not guest memory */
    PG381_ERR_CMD,              /* an unknown command */
};

/* ---- the card's program block: the instruction RAM --------------- */
#define PG381_RAM               0x8000u
#define PG381_INSTRS            512u
#define PG381_INSTR_WORDS       16u
#define PG381_INSTR_BYTES       (4u * PG381_INSTR_WORDS)
#define PG381_INSTR(k)          (PG381_RAM + PG381_INSTR_BYTES * (k))
/* word offsets in an instruction */
#define PG381_I_CMD             0x00u
#define PG381_I_COUNT           0x04u   /* requests; WAIT: clocks */
#define PG381_I_DELAY           0x08u   /* start_delay, clocks */
#define PG381_I_AXI             0x0Cu   /* len, size, burst, lock, cache, ... */
#define PG381_I_ID_USER         0x10u   /* axi_id [15:0], axi_user [23:16] */
#define PG381_I_PATTERN         0x14u   /* wdata_pat_value */
#define PG381_I_BASE            0x18u   /* base_addr, 64 bits, low first */
#define PG381_I_HIGH            0x20u   /* high_addr */
#define PG381_I_OFFSET          0x28u   /* axi_addr_offset */
#define PG381_I_INCR            0x30u   /* addr_incr_by */
#define PG381_I_LOOP            0x38u   /* loop_count [15:0], incr [31:16] */
/* I_CMD bits */
#define PG381_CMD_MASK          3u      /* PG381's encoding: */
#define PG381_CMD_READ          0u
#define PG381_CMD_WRITE         1u
#define PG381_CMD_WAIT          2u
#define PG381_C_LAST            (1u << 2)
#define PG381_C_LOOP_START      (1u << 3)
#define PG381_C_LOOP_END        (1u << 4)
#define PG381_C_ID_INCR         (1u << 5)   /* axi_id auto_incr */
#define PG381_C_ADDR_AUTO       (1u << 6)   /* addr_incr_by auto_incr */
#define PG381_C_WAIT_SHIFT      8           /* [9:8] */
#define PG381_C_DI              (1u << 12)  /* data_integrity enabled */
#define PG381_C_PAT_SHIFT       13          /* [14:13] wdata_pattern */
/* WAIT's options */
#define PG381_WAIT_CLOCKS       0u      /* COUNT clocks */
#define PG381_WAIT_WR           1u      /* all_wr_resp */
#define PG381_WAIT_RD           2u      /* all_rd_resp */
#define PG381_WAIT_WR_RD        3u      /* all_wr_rd_resp */
/* wdata_pattern */
#define PG381_PAT_CONSTANT      0u      /* the 32-bit value, repeated */
#define PG381_PAT_ADDR          1u      /* same_as_addr: a word its address */
/* AXI bursts */
#define PG381_BURST_FIXED       0u
#define PG381_BURST_INCR        1u
#define PG381_BURST_WRAP        2u

#define PG381_MAX_REQUESTS      65536u
#define PG381_MAX_BYTES         4096u

/* One instruction: PG381's CSV columns as fields */
typedef struct Pg381Instr {
    uint8_t cmd;                /* PG381_CMD_* */
    bool last, loop_start, loop_end;
    bool id_incr, addr_auto, data_integrity;
    uint8_t wait;               /* PG381_WAIT_* */
    uint8_t pattern;            /* PG381_PAT_* */
    uint32_t count;             /* txn_count; WAIT: clocks */
    uint32_t start_delay;
    uint8_t len, size, burst, lock, cache, prot, qos, region, user;
    uint16_t id;
    uint32_t pattern_value;
    uint64_t base, high, offset, incr;
    uint16_t loop_count, loop_incr;
} Pg381Instr;

void pg381_instr_encode(const Pg381Instr *in, uint32_t w[PG381_INSTR_WORDS]);
void pg381_instr_decode(const uint32_t w[PG381_INSTR_WORDS], Pg381Instr *out);
/* Bytes of one request: (len + 1) << size */
uint32_t pg381_instr_bytes(const Pg381Instr *in);

/* ---- what the glue gives ------------------------------------------ */

/* The card: the generator's clock and the PTC it goes through */
typedef struct Pg381Config {
    uint64_t clock_hz;          /* the card's PCIe clock */
    uint32_t rq_bytes;          /* bytes a cycle on RQ (regions x bytes) */
    uint32_t rc_bytes;          /* bytes a cycle on RC */
    uint32_t rq_hdr, rc_hdr;    /* PTM_DMA_RQ_HDR, PTM_DMA_RC_HDR */
    uint32_t latency_ns;        /* PTM_DMA_LATENCY_NS */
    bool out_of_order;          /* latency mode (IP generation parameter) */
    bool data_integrity;        /* IP generation parameter (reported) */
} Pg381Config;

/* What the function negotiated, and the card's free tags; taken at START */
typedef struct Pg381Pcie {
    uint32_t mps, mrrs, rcb;    /* bytes */
    uint32_t tags;              /* min(card's tag capacity, tag field) */
} Pg381Pcie;

/*
 * A host-memory transfer the generator made at t_ns: a write of `bytes`
 * at addr or a read of them. Given in time order (pg381_advance()).
 */
typedef void Pg381TransferFn(void *opaque, uint64_t t_ns, bool write,
                             uint64_t addr, uint32_t bytes);
/* Whether [addr, addr + len) is guest memory */
typedef bool Pg381MemValidFn(void *opaque, uint64_t addr, uint64_t len);
/* Writes the data of a write request; false if it is no memory */
typedef bool Pg381MemWriteFn(void *opaque, uint64_t addr, const void *buf,
                             uint32_t len);

typedef struct Pg381Ops {
    Pg381TransferFn *transfer;  /* NULL: the transfers are not wanted */
    Pg381MemValidFn *mem_valid; /* NULL: every address is memory */
    Pg381MemWriteFn *mem_write; /* NULL: writes carry no data */
} Pg381Ops;

typedef struct Pg381Core Pg381Core;

/* A reason the card cannot have this configuration, or NULL */
char *pg381_config_check(const Pg381Config *cfg);
char *pg381_pcie_check(const Pg381Pcie *p);

Pg381Core *pg381_new(const Pg381Config *cfg, const Pg381Ops *ops,
                     void *opaque);
void pg381_free(Pg381Core *s);

/* Power-on and every reset of the card: registers and program cleared */
void pg381_reset(Pg381Core *s);

/* The settings the next START takes (the run keeps its own) */
void pg381_set_pcie(Pg381Core *s, const Pg381Pcie *p);

/*
 * 32-bit accesses at 4-byte aligned offsets of the window at virtual
 * time now_ns (never before an earlier access's); others read 0.
 */
uint32_t pg381_read(Pg381Core *s, uint32_t off, uint64_t now_ns);
void pg381_write(Pg381Core *s, uint32_t off, uint32_t val, uint64_t now_ns);

/*
 * Gives the transfers made up to and with now_ns (and writes their
 * data), in time order, and nothing later. Every access does it too.
 */
void pg381_advance(Pg381Core *s, uint64_t now_ns);

/*
 * A time at or before the next transfer not yet given (calling
 * pg381_advance() then gives it or moves this on); UINT64_MAX: none
 * will come, or the ops want none.
 */
uint64_t pg381_next_ns(Pg381Core *s);

/* Writes a program into the instruction RAM (as the guest would) */
void pg381_load_program(Pg381Core *s, const Pg381Instr *prog, unsigned n,
                        uint64_t now_ns);

/* Migration: the state as bytes (g_malloc'd); load refuses with a reason */
void *pg381_save(Pg381Core *s, size_t *len);
char *pg381_load(Pg381Core *s, const void *buf, size_t len);

#endif
