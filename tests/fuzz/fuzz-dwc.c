/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the DesignWare root port's RAS DES capability
 * (dwc-ras-des.c) under whatever a guest and the port can do. The input
 * is a program: accesses of 1 to 4 bytes at any offset of the capability,
 * virtual time moving on (a timed run ends at its deadline, as the port's
 * timer ends it), injections of any lane and event into links of any
 * width, functions below coming, going and reporting any totals, resets,
 * injection texts, states loaded from the input, and migration round
 * trips. Checked after every step: reserved bits and unmodelled bytes
 * read 0, an injection is refused exactly when its lane is not below the
 * width, L0 and link-down time add up to the run's time, the link's sums
 * add up to the time since their origin, and a state survives a save and
 * load unchanged.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwc-ras-des.h"

#include "fuzz-input.h"

static void fail(const char *what)
{
    fprintf(stderr, "fuzz-dwc: %s\n", what);
    abort();
}

static void link_totals(void *opaque, uint64_t now, DwcLinkTotals *out)
{
    dwc_link_sum_totals(opaque, now, out);
}

static uint64_t result(DwcRasDes *s, uint64_t now)
{
    return (uint64_t)dwc_ras_des_read(s, DWC_REG_TBA_DATA_HI, 4, now) << 32 |
           dwc_ras_des_read(s, DWC_REG_TBA_DATA_LO, 4, now);
}

/* The result under report r, on a copy: the run itself is left alone */
static uint64_t result_as(const DwcRasDes *s, uint32_t r, uint64_t now)
{
    DwcRasDes c = *s;

    c.tba_ctl = (c.tba_ctl & ~DWC_TBA_REPORT_MASK) |
                r << DWC_TBA_REPORT_SHIFT;
    return result(&c, now);
}

/*
 * trusted: the run (if any) started in this program, not in a state
 * loaded from the input, whose totals at start and stop may be anything
 */
static void check(DwcRasDes *s, const DwcLinkSum *ls, uint64_t now,
                  bool trusted)
{
    uint32_t ecc = dwc_ras_des_read(s, DWC_REG_EVENT_CNT_CTL, 4, now);
    uint32_t ctl = dwc_ras_des_read(s, DWC_REG_TBA_CTL, 4, now);
    uint64_t one, l0, down;
    DwcLinkTotals t;

    if (ecc & ~(DWC_ECC_RW_MASK | DWC_ECC_STATUS) ||
        ctl & ~DWC_TBA_RW_MASK) {
        fail("reserved control bits read 1");
    }
    for (uint32_t off = 0; off < DWC_RAS_DES_LEN; off += 4) {
        if ((off < DWC_RAS_DES_REGS || off > DWC_REG_TBA_DATA_HI) &&
            dwc_ras_des_read(s, off, 4, now)) {
            fail("an unmodelled register reads nonzero");
        }
    }
    one = result_as(s, DWC_TBA_ONE_CYCLE, now);
    l0 = result_as(s, DWC_TBA_L0, now);
    down = result_as(s, DWC_TBA_CFG_RCVRY, now);
    if (trusted && l0 + down != one) {
        fail("L0 and link-down time do not add up to the run's");
    }
    if (trusted && s->tba_ran && one > now - s->tba_start) {
        fail("a run longer than the time since its start");
    }
    dwc_link_sum_totals(ls, now, &t);
    if (t.l0_ns + t.down_ns != now - ls->origin) {
        fail("the link's sums do not add up to the time since their origin");
    }
}

/* Saved, loaded into fresh ones and saved again: the same bytes */
static void round_trip(DwcRasDes *s, DwcLinkSum *ls, uint64_t now)
{
    size_t len, len2;
    g_autofree void *st = dwc_state_save(s, ls, &len);
    g_autofree void *st2 = NULL;
    g_autofree DwcLinkSum *ls2 = g_new0(DwcLinkSum, 1);
    g_autofree char *err = NULL;
    DwcRasDes s2;

    dwc_link_sum_init(ls2, 0);
    dwc_ras_des_init(&s2, link_totals, ls2);
    err = dwc_state_load(&s2, ls2, st, len);
    if (err) {
        fprintf(stderr, "fuzz-dwc: a saved state was refused: %s\n", err);
        abort();
    }
    st2 = dwc_state_save(&s2, ls2, &len2);
    if (len != len2 || memcmp(st, st2, len)) {
        fail("a state changed in a save and load");
    }
    if (result(s, now) != result(&s2, now)) {
        fail("a loaded state reads another result");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size };
    DwcLinkSum *ls = g_new0(DwcLinkSum, 1);
    DwcRasDes s;
    uint64_t now = 0;
    unsigned steps = 0;
    bool trusted = true;

    dwc_link_sum_init(ls, 0);
    dwc_ras_des_init(&s, link_totals, ls);
    while (in.left && steps++ < 512) {
        uint8_t op = take(&in, 1);

        switch (op % 10) {
        case 0: case 1: case 2: {                   /* a write */
            uint32_t off = take(&in, 1);
            unsigned len = 1 + take(&in, 1) % 4;
            bool was = dwc_ras_des_tba_running(&s, now);

            dwc_ras_des_write(&s, off, take(&in, 4), len, now);
            if (!was && dwc_ras_des_tba_running(&s, now)) {
                trusted = true;
            }
            break;
        }
        case 3: {                                   /* a read */
            uint32_t off = take(&in, 1);
            unsigned len = 1 + take(&in, 1) % 4;
            uint32_t v = dwc_ras_des_read(&s, off, len, now);

            if (len < 4 && v >> (8 * len)) {
                fail("a narrow read returned more bytes");
            }
            break;
        }
        case 4: {                                   /* time moves on */
            uint64_t to = now + (take(&in, 3) << (op >> 4 & 7));
            uint64_t end = dwc_ras_des_deadline(&s);

            if (end <= to) {
                dwc_ras_des_sync(&s, end);
            }
            now = to;
            break;
        }
        case 5: {                                   /* an injection */
            unsigned width = take(&in, 1) % 33;
            unsigned lane = take(&in, 1) % 20;
            unsigned index = take(&in, 1) % (DWC_LANE_EVENTS + 2);
            uint32_t count = take(&in, 4);
            bool counted;
            g_autofree char *err = dwc_ras_des_inject(&s, width, lane, index,
                                                      count, &counted);

            if (!err != (lane < width && lane < DWC_RAS_DES_LANES &&
                         index < DWC_LANE_EVENTS)) {
                fail("an injection taken or refused against its width");
            }
            break;
        }
        case 6: {                                   /* functions below */
            unsigned devfn = take(&in, 1);
            PcieLinkTotals d;

            if (op & 0x80) {
                dwc_link_sum_detach(ls, devfn, now);
            } else if (op & 0x40) {
                dwc_link_sum_attach(ls, devfn, now);
            } else {
                d.payload_up = take(&in, 4);
                d.payload_down = take(&in, 4);
                d.link_down_ns = take(&in, 3);
                dwc_link_sum_update(ls, devfn, &d);
            }
            break;
        }
        case 7:
            dwc_ras_des_reset(&s);
            trusted = true;
            break;
        case 8: {                                   /* a state or a text */
            size_t n = take(&in, 2);
            g_autofree char *text = NULL;
            g_autofree char *err = NULL;
            DwcLaneError e;

            n = MIN(n, in.left);
            text = g_strndup((const char *)in.p, n);

            if (op & 0x80) {
                err = dwc_state_load(&s, ls, in.p, n);
                trusted = trusted && err;
            } else {
                err = dwc_lane_error_parse(text, &e);
                if (!err && (e.lane >= DWC_RAS_DES_LANES ||
                             e.index >= DWC_LANE_EVENTS || !e.count)) {
                    fail("a text taken with values out of range");
                }
            }
            in.p += n;
            in.left -= n;
            /* a loaded state may hold any times: go on from the latest */
            now = MAX(now, MAX(MAX(s.tba_start, s.tba_stop),
                               MAX(ls->origin, ls->since)));
            dwc_ras_des_sync(&s, now);
            break;
        }
        default:
            round_trip(&s, ls, now);
            break;
        }
        check(&s, ls, now, trusted);
    }
    round_trip(&s, ls, now);
    g_free(ls);
    return 0;
}
