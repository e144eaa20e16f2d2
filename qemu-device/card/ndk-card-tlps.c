/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's TLPs with their headers, for a tracer above its port (the
 * HiSilicon PTT, through pcie-link-traffic's tlps method): the guest's
 * accesses to BAR0 as the link carries them. A read is a memory read
 * request down and its completion with data up, a write a posted memory
 * write down; the root complex (requester ID 0) asks, with a tag that
 * counts on. The card keeps the last NDK_TLP_LOG accesses: a tracer that
 * asks less often than that loses the oldest (docs/ptt.md).
 */
#include "ndk-card.h"

void ndk_telemetry_log_access(NdkPcieTelemetryState *s, bool write,
                              hwaddr bar_off, unsigned size)
{
    NdkBarAccess *a;

    if (!s->tlp_log) {
        return;
    }
    a = &s->tlp_log[s->tlp_log_total % NDK_TLP_LOG];
    a->t_ns = now_ns();
    a->addr = pci_get_bar_addr(PCI_DEVICE(s), 0) + bar_off;
    a->size = size;
    a->write = write;
    a->tag = s->tlp_tag++;
    s->tlp_log_total++;
}

void ndk_telemetry_tlps_reset(NdkPcieTelemetryState *s)
{
    s->tlp_log_total = 0;
    s->tlp_tag = 0;
}

/* Byte enables of the first and last DW of [addr, addr + size) */
static void ndk_tlp_bytes(uint64_t addr, unsigned size, unsigned *dws,
                          unsigned *first_be, unsigned *last_be)
{
    unsigned lead = addr & 3, end = lead + size;

    *dws = DIV_ROUND_UP(end, 4);
    if (*dws == 1) {
        *first_be = ((1u << size) - 1) << lead;
        *last_be = 0;
    } else {
        *first_be = 0xF & (0xF << lead);
        *last_be = 0xF >> (4 * *dws - end);
    }
}

/* The TLPs of one access, oldest first: 1 for a write, 2 for a read */
static unsigned ndk_tlp_of(NdkPcieTelemetryState *s, const NdkBarAccess *a,
                           PcieTlp *out)
{
    bool wide = a->addr >= (1ull << 32);
    unsigned dws, fbe, lbe;
    uint32_t dw1;

    ndk_tlp_bytes(a->addr, a->size, &dws, &fbe, &lbe);
    dw1 = (uint32_t)a->tag << 8 | lbe << 4 | fbe;   /* requester 0 */
    memset(out, 0, sizeof(*out));
    out->t_ns = a->t_ns;
    out->up = false;
    out->type = a->write ? PCIE_TLP_P : PCIE_TLP_NP;
    out->hdr[0] = pcie_tlp_dw0(a->write ? (wide ? PCIE_TLP_FMT_4DW_DATA
                                                : PCIE_TLP_FMT_3DW_DATA)
                                        : (wide ? PCIE_TLP_FMT_4DW
                                                : PCIE_TLP_FMT_3DW),
                               PCIE_TLP_TYPE_MEM, dws);
    out->hdr[1] = dw1;
    if (wide) {
        out->hdr[2] = a->addr >> 32;
        out->hdr[3] = a->addr & ~3u;
    } else {
        out->hdr[2] = a->addr & ~3u;
    }
    if (a->write) {
        return 1;
    }
    /* the completion: completer (the card), byte count, requester, tag */
    memset(&out[1], 0, sizeof(out[1]));
    out[1].t_ns = a->t_ns;
    out[1].up = true;
    out[1].type = PCIE_TLP_CPL;
    out[1].hdr[0] = pcie_tlp_dw0(PCIE_TLP_FMT_3DW_DATA, PCIE_TLP_TYPE_CPL,
                                 dws);
    out[1].hdr[1] = (uint32_t)pci_requester_id(PCI_DEVICE(s)) << 16 |
                    a->size;
    out[1].hdr[2] = (uint32_t)a->tag << 8 | (a->addr & 0x7F);
    return 2;
}

size_t ndk_telemetry_tlps(Object *obj, uint64_t from, uint64_t to,
                          PcieTlp *out, size_t max, uint64_t *resume)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);
    uint64_t first = s->tlp_log_total > NDK_TLP_LOG ?
                     s->tlp_log_total - NDK_TLP_LOG : 0;
    size_t n = 0;

    *resume = to;
    if (!s->tlp_log) {
        return 0;
    }
    for (uint64_t i = first; i < s->tlp_log_total; i++) {
        const NdkBarAccess *a = &s->tlp_log[i % NDK_TLP_LOG];
        PcieTlp two[2];
        unsigned k;

        if (a->t_ns < from || a->t_ns >= to) {
            continue;
        }
        k = ndk_tlp_of(s, a, two);
        if (!out) {
            n += k;
            continue;
        }
        if (n + k > max) {
            *resume = a->t_ns;
            break;
        }
        memcpy(&out[n], two, k * sizeof(two[0]));
        n += k;
    }
    return n;
}
