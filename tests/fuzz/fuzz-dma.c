/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the NDK DMA engine (ndp-dma.c) under whatever a guest can
 * do. The input is a program: register accesses of any size at any
 * offset of the queues' and the switches' windows, bytes written into the
 * small host memory (descriptors, chains, upper addresses pointing
 * anywhere), frames offered to RX queues, virtual time moving on (the RX
 * generators), resets and a migration round trip. Host memory is 64 KiB
 * in the middle of a 64-bit bus: most addresses a descriptor names are
 * refused. Checked after every step: the engine never touches memory
 * outside what the bus grants (the host refuses it, ASan sees overruns),
 * every pointer register stays within its 16 bits, a stopped queue moves
 * nothing, and its state survives a save and load unchanged.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndp-dma.h"

#define MEM_BASE    0x40000000ull
#define MEM_SIZE    0x10000u
#define PORTS       2
#define QUEUES      2

typedef struct Host {
    uint8_t mem[MEM_SIZE];
} Host;

static int host_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    Host *h = opaque;

    if (addr < MEM_BASE || len > MEM_SIZE ||
        addr - MEM_BASE > MEM_SIZE - len) {
        return -1;
    }
    memcpy(buf, h->mem + (addr - MEM_BASE), len);
    return 0;
}

static int host_write(void *opaque, uint64_t addr, const void *buf,
                      size_t len)
{
    Host *h = opaque;

    if (addr < MEM_BASE || len > MEM_SIZE ||
        addr - MEM_BASE > MEM_SIZE - len) {
        return -1;
    }
    memcpy(h->mem + (addr - MEM_BASE), buf, len);
    return 0;
}

static const NdpMemOps host_ops = { host_read, host_write };

#include "fuzz-input.h"

/* An address: mostly inside the memory, sometimes anywhere */
static uint64_t take_addr(Input *in)
{
    uint8_t how = take(in, 1);

    if (how < 200) {
        return MEM_BASE + take(in, 2);
    }
    return take(in, 8);
}

static void check_queues(NdpDma *d, int64_t now)
{
    static const uint32_t ptrs[] = {
        NDP_REG_SDP, NDP_REG_SHP, NDP_REG_HDP, NDP_REG_HHP, NDP_REG_MDP,
        NDP_REG_MHP,
    };

    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned q = 0; q < ndp_dma_queues(d); q++) {
            for (unsigned i = 0; i < G_N_ELEMENTS(ptrs); i++) {
                if (ndp_dma_read(d, dir, q, ptrs[i], 4, now) >
                    NDP_PTR_MASK) {
                    abort();
                }
            }
            if (ndp_dma_read(d, dir, q, NDP_REG_STATUS, 4, now) > 1) {
                abort();
            }
        }
    }
}

/* Saved, loaded into a fresh engine and saved again: the same bytes. */
static void check_round_trip(NdpDma *d, Host *h)
{
    size_t len, len2;
    g_autofree void *st = ndp_dma_save(d, &len);
    g_autofree void *st2 = NULL;
    NdpDma *e = ndp_dma_new(PORTS, QUEUES, 200000000, 64, &host_ops, NULL,
                            h);
    g_autofree char *err = ndp_dma_load(e, st, len);

    if (err) {
        fprintf(stderr, "fuzz-dma: a saved state was refused: %s\n", err);
        abort();
    }
    st2 = ndp_dma_save(e, &len2);
    if (len2 != len || memcmp(st, st2, len)) {
        abort();
    }
    ndp_dma_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size };
    Host *h = g_new0(Host, 1);
    NdpDma *d = ndp_dma_new(PORTS, QUEUES, 200000000, 64, &host_ops, NULL, h);
    int64_t now = 0;
    unsigned steps = 0;

    while (in.left && steps++ < 4096) {
        uint8_t op = take(&in, 1);
        unsigned dir = op >> 7 & 1;
        unsigned q = (op >> 4 & 7) % (PORTS * QUEUES + 1);
        unsigned sz = 1u << (take(&in, 1) & 3);

        switch (op & 0xF) {
        case 0: case 1: case 2: case 3: {           /* register write */
            uint32_t off = take(&in, 1) & 0x7F;

            ndp_dma_write(d, dir, q, off, take(&in, 8), sz, now);
            break;
        }
        case 4:                                     /* register read */
            ndp_dma_read(d, dir, q, take(&in, 1) & 0x7F, sz, now);
            break;
        case 5: {                                   /* a base register */
            static const uint32_t bases[] = {
                NDP_REG_DESC_BASE, NDP_REG_HDR_BASE, NDP_REG_UPDATE_BASE,
            };

            ndp_dma_write(d, dir, q, bases[take(&in, 1) % 3], take_addr(&in),
                          8, now);
            break;
        }
        case 6: {                                   /* a descriptor */
            uint32_t at = take(&in, 2) & (MEM_SIZE - 8);
            uint64_t desc = take(&in, 8);

            if (desc >> 62 == 2 && (desc & 0xFF) < 0xC0) {
                /* mostly data descriptors into the memory */
                desc = (desc & ~0x3FFFFFFFull) |
                       ((MEM_BASE + take(&in, 2)) & 0x3FFFFFFF);
            } else if (desc >> 62 == 0 && (desc & 1)) {
                desc = MEM_BASE >> 30;
            }
            memcpy(h->mem + at, &desc, 8);
            break;
        }
        case 7: {                                   /* a frame for RX */
            uint32_t len = take(&in, 2) & 0x3FFF;
            g_autofree uint8_t *f = g_malloc0(len + 1);

            ndp_dma_rx_frame(d, q, f, len, take(&in, 2));
            break;
        }
        case 8: case 9: {                           /* switch register */
            uint32_t off = take(&in, 2) & 0x1FF;

            ndp_gls_write(d, q % PORTS, off, take(&in, 4), sz, now);
            break;
        }
        case 10:
            ndp_gls_read(d, q % PORTS, take(&in, 2) & 0x1FF, sz, now);
            break;
        case 11:                                    /* time */
            now += take(&in, 3);
            ndp_dma_run(d, now);
            break;
        case 12:
            ndp_dma_reset(d);
            break;
        case 13: {                                  /* migrate */
            size_t len;
            g_autofree void *st = ndp_dma_save(d, &len);
            g_autofree char *err = ndp_dma_load(d, st, len);

            if (err) {
                abort();
            }
            break;
        }
        case 14: {                                  /* a state from input */
            uint32_t len = take(&in, 2) & 0xFFF;
            g_autofree uint8_t *st = g_malloc0(len + 1);

            for (uint32_t i = 0; i < len; i++) {
                st[i] = take(&in, 1);
            }
            g_free(ndp_dma_load(d, st, len));
            break;
        }
        default: {                                  /* START a queue */
            ndp_dma_write(d, dir, q, NDP_REG_MDP, take(&in, 1), 4, now);
            ndp_dma_write(d, dir, q, NDP_REG_MHP, take(&in, 1), 4, now);
            ndp_dma_write(d, dir, q, NDP_REG_CONTROL, 1, 4, now);
            break;
        }
        }
        check_queues(d, now);
    }
    check_round_trip(d, h);
    ndp_dma_free(d);
    g_free(h);
    return 0;
}
