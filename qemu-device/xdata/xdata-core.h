/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of the Synopsys DesignWare xData traffic generator, the
 * block in BAR 0 of a DesignWare PCIe endpoint prototype that Linux's
 * dw-xdata-pcie driver programs (docs/xdata.md):
 *   test      a doorbell starts a write test (memory writes up the link)
 *             or a read test (read requests up, completions down) of
 *             transfers of the control register's length, continuous
 *             while the burst count's repeat bit is set; clearing it ends
 *             the test after the burst in progress, and sets STATUS done
 *   counters  the payload bytes written and read, 64 bits each, counting
 *             while the perf control's enable bit is set
 * Transfers are paced by the link alone, in closed form over virtual
 * time: no data moves and nothing runs between accesses. Plain C and
 * GLib.
 */
#ifndef XDATA_CORE_H
#define XDATA_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcie-link-totals.h"

#define XDATA_BAR_SIZE          0x1000u

/* BAR 0 registers, as drivers/misc/dw-xdata-pcie.c names them */
#define XDATA_ADDR_LSB          0x000u
#define XDATA_ADDR_MSB          0x004u
#define XDATA_BURST_CNT         0x008u
#define XDATA_CONTROL           0x00Cu
#define XDATA_PATTERN           0x010u
#define XDATA_STATUS            0x014u
#define XDATA_RAM_ADDR          0x018u
#define XDATA_RAM_PORT          0x01Cu
#define XDATA_PERF_CONTROL      0x058u
#define XDATA_WR_CNT_LSB        0x100u
#define XDATA_WR_CNT_MSB        0x104u
#define XDATA_RD_CNT_LSB        0x108u
#define XDATA_RD_CNT_MSB        0x10Cu

#define XDATA_STATUS_DONE       (1u << 0)
#define XDATA_CTRL_DOORBELL     (1u << 0)       /* reads 0 */
#define XDATA_CTRL_WRITE        (1u << 1)
#define XDATA_CTRL_LEN_SHIFT    2               /* [13:2] in dwords */
#define XDATA_CTRL_LEN_MASK     (0xFFFu << XDATA_CTRL_LEN_SHIFT)
#define XDATA_CTRL_PATTERN_INC  (1u << 16)
#define XDATA_CTRL_NO_ADDR_INC  (1u << 18)
#define XDATA_CTRL_RW           (XDATA_CTRL_WRITE | XDATA_CTRL_LEN_MASK | \
                                 XDATA_CTRL_PATTERN_INC | \
                                 XDATA_CTRL_NO_ADDR_INC)
#define XDATA_PERF_ENABLE       (1u << 5)
#define XDATA_BURST_REPEAT      (1u << 31)
#define XDATA_BURST_COUNT_MASK  0x7FFFFFFFu

/* A test's end in transfers while the repeat bit holds it open */
#define XDATA_NO_END            UINT64_MAX

/* The link a test runs on, as the function negotiated it */
typedef struct XdataLink {
    uint32_t speed_mts;         /* 2500, 5000, 8000, 16000, 32000, 64000 */
    uint32_t width;             /* lanes: 1 to 32 */
    uint32_t mps;               /* Max_Payload_Size: 128 to 4096 bytes */
    uint32_t mrrs;              /* Max_Read_Request_Size: 128 to 4096 */
} XdataLink;

/* The link as of now: asked at each doorbell */
typedef void XdataLinkFn(void *opaque, XdataLink *out);

/*
 * One transfer (length x 4 bytes) as the link carries it, the terms of
 * the closed form (docs/xdata.md, "The link rate"): transfers complete
 * every wire / rate ns, rate = rate_num / rate_den link bytes a ns.
 */
typedef struct XdataShape {
    uint64_t rate_num, rate_den;
    uint32_t payload;           /* bytes a transfer moves */
    uint32_t requests;          /* read requests up (0 in a write test) */
    uint32_t tlps;              /* TLPs with its payload: writes or CplDs */
    uint32_t wire_up, wire_down;    /* link bytes it takes each way */
    uint32_t wire;              /* the busier way's, which paces the test */
} XdataShape;

/* The test started by the last doorbell; the fields are the model's */
typedef struct XdataTest {
    bool started;               /* a doorbell since reset */
    bool write;                 /* latched from CONTROL */
    bool addr64;                /* ADDR_MSB was nonzero: 4DW headers */
    bool done_cleared;          /* STATUS done written 0 after the end */
    uint32_t control;           /* CONTROL at the doorbell */
    XdataLink link;             /* the link at the doorbell */
    XdataShape shape;           /* derived from the three above */
    uint64_t t0;                /* the doorbell */
    uint64_t end;               /* transfers; XDATA_NO_END while repeat */
    uint64_t t_end;             /* when they are done; UINT64_MAX: never */
} XdataTest;

/* The state; the fields are the model's, not an API. */
typedef struct XdataCore {
    XdataLinkFn *link_fn;
    void *opaque;

    uint32_t addr_lsb, addr_msb, burst, control, pattern;
    uint32_t ram_addr, ram_port, perf;
    XdataTest test;
    uint64_t base_wr, base_rd;  /* payload of the tests before this one */
    uint64_t acc_wr, acc_rd;    /* counted over earlier enabled spans */
    uint64_t snap_wr, snap_rd;  /* payload so far at the last enable */
    uint64_t bar_up, bar_down;  /* the CPU's BAR accesses on the link */
} XdataCore;

/* NULL if the link is one the model runs, else why not (g_free it) */
char *xdata_link_check(const XdataLink *l);
/* The closed form's terms of a transfer of len_dw dwords on link l */
void xdata_shape(const XdataLink *l, bool write, uint32_t len_dw,
                 bool addr64, XdataShape *out);
/* Payload bytes a second of a running test, rounded down */
uint64_t xdata_payload_per_s(const XdataShape *sh);

void xdata_init(XdataCore *s, XdataLinkFn *link_fn, void *opaque);
/* Power-on and every reset alike: registers, test and counts to 0 */
void xdata_reset(XdataCore *s);

/*
 * Accesses of 1, 2, 4 or 8 bytes at any offset of BAR 0, at virtual time
 * now (ns, never earlier than an earlier call's). Bytes the block does
 * not define read 0 and ignore writes. xdata_write returns true when the
 * write rang the doorbell.
 */
uint64_t xdata_read(XdataCore *s, uint32_t off, unsigned size, uint64_t now);
bool xdata_write(XdataCore *s, uint32_t off, unsigned size, uint64_t val,
                 uint64_t now);

/* A test runs at now: started, not yet at its end */
bool xdata_running(const XdataCore *s, uint64_t now);
/* The test of the last doorbell, or NULL if none since reset */
const XdataTest *xdata_test(const XdataCore *s);

/*
 * What crossed the link since reset, as of now: up the payload of the
 * write tests and of the completions of the CPU's BAR reads, down the
 * completions of the read tests and the CPU's BAR writes.
 */
void xdata_totals(const XdataCore *s, uint64_t now, PcieLinkTotals *out);

void *xdata_save(const XdataCore *s, size_t *len);
char *xdata_load(XdataCore *s, const void *buf, size_t len);

#endif
