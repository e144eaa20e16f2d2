/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of a DesignWare root port's RAS DES capability: the
 * lane event counters, the time-based analysis and the port's link
 * totals (see dwc-ras-des.h and docs/dwc-root-port.md).
 */
#include <string.h>
#include <glib.h>

#include "dwc-ras-des.h"
#include "ptm-bytes.h"

/* The lane events of groups 6 and 7, by ID, with the names perf uses */
static const struct {
    uint16_t id;
    const char *name;
} lane_events[DWC_LANE_EVENTS] = {
    { 0x600, "tx_ack_dllp" },
    { 0x601, "tx_update_fc_dllp" },
    { 0x602, "rx_ack_dllp" },
    { 0x603, "rx_update_fc_dllp" },
    { 0x604, "rx_nulified_tlp" },
    { 0x605, "tx_nulified_tlp" },
    { 0x606, "rx_duplicate_tl" },
    { 0x700, "tx_memory_write" },
    { 0x701, "tx_memory_read" },
    { 0x702, "tx_configuration_write" },
    { 0x703, "tx_configuration_read" },
    { 0x704, "tx_io_write" },
    { 0x705, "tx_io_read" },
    { 0x706, "tx_completion_without_data" },
    { 0x707, "tx_completion_with_data" },
    { 0x708, "tx_message_tlp" },
    { 0x709, "tx_atomic" },
    { 0x70A, "tx_tlp_with_prefix" },
    { 0x70B, "rx_memory_write" },
    { 0x70C, "rx_memory_read" },
    { 0x70F, "rx_io_write" },
    { 0x710, "rx_io_read" },
    { 0x711, "rx_completion_without_data" },
    { 0x712, "rx_completion_with_data" },
    { 0x713, "rx_message_tlp" },
    { 0x714, "rx_atomic" },
    { 0x715, "rx_tlp_with_prefix" },
    { 0x716, "tx_ccix_tlp" },
    { 0x717, "rx_ccix_tlp" },
};

#define ALL_LANES       ((uint16_t)((1u << DWC_RAS_DES_LANES) - 1))

static uint64_t sub0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

uint16_t dwc_lane_event_id(unsigned index)
{
    return index < DWC_LANE_EVENTS ? lane_events[index].id : 0;
}

const char *dwc_lane_event_name(unsigned index)
{
    return index < DWC_LANE_EVENTS ? lane_events[index].name : NULL;
}

int dwc_lane_event_by_id(uint32_t id)
{
    for (unsigned i = 0; i < DWC_LANE_EVENTS; i++) {
        if (lane_events[i].id == id) {
            return i;
        }
    }
    return -1;
}

int dwc_lane_event_by_name(const char *name)
{
    for (unsigned i = 0; i < DWC_LANE_EVENTS; i++) {
        if (!strcmp(lane_events[i].name, name)) {
            return i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Reset                                                              */

void dwc_ras_des_init(DwcRasDes *s, DwcTotalsFn *totals, void *opaque)
{
    memset(s, 0, sizeof(*s));
    s->totals = totals;
    s->opaque = opaque;
}

void dwc_ras_des_reset(DwcRasDes *s)
{
    dwc_ras_des_init(s, s->totals, s->opaque);
}

/* ------------------------------------------------------------------ */
/* Time-based analysis                                                */

static void take_totals(DwcRasDes *s, uint64_t now, DwcLinkTotals *out)
{
    memset(out, 0, sizeof(*out));
    if (s->totals) {
        s->totals(s->opaque, now, out);
    }
}

static uint64_t duration_ns(uint32_t code)
{
    switch (code) {
    case DWC_TBA_DUR_1MS:
        return 1000000ull;
    case DWC_TBA_DUR_10MS:
        return 10000000ull;
    case DWC_TBA_DUR_100MS:
        return 100000000ull;
    case DWC_TBA_DUR_1S:
        return 1000000000ull;
    case DWC_TBA_DUR_2S:
        return 2000000000ull;
    case DWC_TBA_DUR_4S:
        return 4000000000ull;
    case DWC_TBA_DUR_4US:
        return 4000ull;
    default:
        return 0;               /* manual, and the reserved codes */
    }
}

static void tba_start(DwcRasDes *s, uint64_t now)
{
    uint64_t dur = duration_ns((s->tba_ctl & DWC_TBA_DURATION_MASK) >>
                               DWC_TBA_DURATION_SHIFT);

    s->tba_ctl |= DWC_TBA_START;
    s->tba_ran = true;
    s->tba_start = now;
    s->tba_end = dur ? now + dur : 0;
    take_totals(s, now, &s->at_start);
}

/* The run ends at `at`; the totals are taken at now (>= at) */
static void tba_stop(DwcRasDes *s, uint64_t at, uint64_t now)
{
    s->tba_ctl &= ~DWC_TBA_START;
    s->tba_stop = at;
    s->tba_end = 0;
    take_totals(s, now, &s->at_stop);
}

uint64_t dwc_ras_des_deadline(const DwcRasDes *s)
{
    return (s->tba_ctl & DWC_TBA_START) && s->tba_end ? s->tba_end
                                                       : UINT64_MAX;
}

void dwc_ras_des_sync(DwcRasDes *s, uint64_t now)
{
    if (now >= dwc_ras_des_deadline(s)) {
        tba_stop(s, s->tba_end, now);
    }
}

bool dwc_ras_des_tba_running(DwcRasDes *s, uint64_t now)
{
    dwc_ras_des_sync(s, now);
    return s->tba_ctl & DWC_TBA_START;
}

/* The 64-bit result the report select asks for, at now */
static uint64_t tba_data(DwcRasDes *s, uint64_t now)
{
    uint32_t report = s->tba_ctl >> DWC_TBA_REPORT_SHIFT;
    bool running = s->tba_ctl & DWC_TBA_START;
    DwcLinkTotals cur;
    uint64_t elapsed;

    if (!s->tba_ran) {
        return 0;
    }
    elapsed = sub0(running ? now : s->tba_stop, s->tba_start);
    switch (report) {
    case DWC_TBA_ONE_CYCLE:
        return elapsed;
    case DWC_TBA_L0:
    case DWC_TBA_CFG_RCVRY:
    case DWC_TBA_TX_PCIE_PAYLOAD:
    case DWC_TBA_RX_PCIE_PAYLOAD:
        break;
    default:
        return 0;               /* L0s, L1 and CCIX never happen here */
    }
    if (running) {
        take_totals(s, now, &cur);
    } else {
        cur = s->at_stop;
    }
    switch (report) {
    case DWC_TBA_L0:
        return MIN(sub0(cur.l0_ns, s->at_start.l0_ns), elapsed);
    case DWC_TBA_CFG_RCVRY:
        return MIN(sub0(cur.down_ns, s->at_start.down_ns), elapsed);
    case DWC_TBA_TX_PCIE_PAYLOAD:
        return sub0(cur.payload_down, s->at_start.payload_down) /
               DWC_TBA_PAYLOAD_UNIT;
    default:
        return sub0(cur.payload_up, s->at_start.payload_up) /
               DWC_TBA_PAYLOAD_UNIT;
    }
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

/* The lane event index EVENT_CNT_CTL selects, -1 if none */
static int selected_event(const DwcRasDes *s)
{
    return dwc_lane_event_by_id((s->ecc & DWC_ECC_EVENT_MASK) >>
                                DWC_ECC_EVENT_SHIFT);
}

static unsigned selected_lane(const DwcRasDes *s)
{
    return (s->ecc & DWC_ECC_LANE_MASK) >> DWC_ECC_LANE_SHIFT;
}

static uint32_t reg_read(DwcRasDes *s, uint32_t reg, uint64_t now)
{
    int ev = selected_event(s);
    unsigned lane = selected_lane(s);

    switch (reg) {
    case DWC_REG_EVENT_CNT_CTL:
        return s->ecc |
               (ev >= 0 && (s->on[ev] >> lane & 1) ? DWC_ECC_STATUS : 0);
    case DWC_REG_EVENT_CNT_DATA:
        return ev >= 0 ? s->cnt[ev][lane] : 0;
    case DWC_REG_TBA_CTL:
        return s->tba_ctl;
    case DWC_REG_TBA_DATA_LO:
        return (uint32_t)tba_data(s, now);
    case DWC_REG_TBA_DATA_HI:
        return tba_data(s, now) >> 32;
    default:
        return 0;
    }
}

static void ecc_command(DwcRasDes *s, uint32_t val)
{
    int ev = selected_event(s);
    unsigned lane = selected_lane(s);
    uint32_t enable = (val & DWC_ECC_ENABLE_MASK) >> DWC_ECC_ENABLE_SHIFT;

    switch (enable) {
    case DWC_ECC_ENABLE_OFF_ONE:
        if (ev >= 0) {
            s->on[ev] &= ~(1u << lane);
        }
        break;
    case DWC_ECC_ENABLE_ON_ONE:
        if (ev >= 0) {
            s->on[ev] |= 1u << lane;
        }
        break;
    case DWC_ECC_ENABLE_OFF_ALL:
        memset(s->on, 0, sizeof(s->on));
        break;
    case DWC_ECC_ENABLE_ON_ALL:
        for (unsigned i = 0; i < DWC_LANE_EVENTS; i++) {
            s->on[i] = ALL_LANES;
        }
        break;
    default:
        break;                  /* no change */
    }
    switch (val & DWC_ECC_CLEAR_MASK) {
    case DWC_ECC_CLEAR_ONE:
        if (ev >= 0) {
            s->cnt[ev][lane] = 0;
        }
        break;
    case DWC_ECC_CLEAR_ALL:
        memset(s->cnt, 0, sizeof(s->cnt));
        break;
    default:
        break;
    }
}

/* A write of the bytes of register reg that bits (a byte mask) covers */
static void reg_write(DwcRasDes *s, uint32_t reg, uint32_t val, uint32_t bits,
                      uint64_t now)
{
    uint32_t ctl;

    switch (reg) {
    case DWC_REG_EVENT_CNT_CTL:
        /* the new selection first: the commands act on it */
        s->ecc = (s->ecc & ~(bits & DWC_ECC_RW_MASK)) |
                 (val & bits & DWC_ECC_RW_MASK);
        if (bits & 0xFF) {
            ecc_command(s, val);
        }
        break;
    case DWC_REG_TBA_CTL:
        ctl = (s->tba_ctl & ~(bits & DWC_TBA_RW_MASK)) |
              (val & bits & DWC_TBA_RW_MASK);
        if ((ctl & DWC_TBA_START) && !(s->tba_ctl & DWC_TBA_START)) {
            s->tba_ctl = ctl;
            tba_start(s, now);
        } else if (!(ctl & DWC_TBA_START) && (s->tba_ctl & DWC_TBA_START)) {
            s->tba_ctl = ctl;
            tba_stop(s, now, now);
        } else {
            /* duration and report change; a run goes on as it was */
            s->tba_ctl = ctl;
        }
        break;
    default:
        break;                  /* read-only or not modelled */
    }
}

uint32_t dwc_ras_des_read(DwcRasDes *s, uint32_t off, unsigned len,
                          uint64_t now)
{
    uint32_t val = 0;

    g_assert(len >= 1 && len <= 4);
    dwc_ras_des_sync(s, now);
    for (unsigned i = 0; i < len; ) {
        uint32_t a = off + i, reg = a & ~3u, sh = a & 3u;
        unsigned n = MIN(len - i, 4 - sh);
        uint32_t v = 0;

        if (reg >= DWC_RAS_DES_REGS && reg < DWC_RAS_DES_LEN) {
            v = reg_read(s, reg, now) >> (8 * sh);
        }
        if (n < 4) {
            v &= (1u << (8 * n)) - 1;
        }
        val |= v << (8 * i);
        i += n;
    }
    return val;
}

void dwc_ras_des_write(DwcRasDes *s, uint32_t off, uint32_t val,
                       unsigned len, uint64_t now)
{
    g_assert(len >= 1 && len <= 4);
    dwc_ras_des_sync(s, now);
    for (unsigned i = 0; i < len; ) {
        uint32_t a = off + i, reg = a & ~3u, sh = a & 3u;
        unsigned n = MIN(len - i, 4 - sh);
        uint32_t bits = (n == 4 ? ~0u : (1u << (8 * n)) - 1) << (8 * sh);

        if (reg >= DWC_RAS_DES_REGS && reg < DWC_RAS_DES_LEN) {
            reg_write(s, reg, (val >> (8 * i)) << (8 * sh), bits, now);
        }
        i += n;
    }
}

/* ------------------------------------------------------------------ */
/* Lane events                                                        */

char *dwc_ras_des_inject(DwcRasDes *s, unsigned width, unsigned lane,
                         unsigned index, uint32_t count, bool *counted)
{
    *counted = false;
    if (index >= DWC_LANE_EVENTS) {
        return g_strdup_printf("no lane event %u", index);
    }
    if (lane >= width || lane >= DWC_RAS_DES_LANES) {
        return g_strdup_printf("lane %u is not below the link's width x%u",
                               lane, width);
    }
    if (s->on[index] >> lane & 1) {
        s->cnt[index][lane] += count;
        *counted = true;
    }
    return NULL;
}

/* A whole unsigned number (decimal, or hex after 0x) up to max */
static bool parse_uint(const char *text, uint64_t max, uint64_t *out)
{
    const char *p = text;
    unsigned base = 10;
    uint64_t v = 0;

    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!*p) {
        return false;
    }
    for (; *p; p++) {
        int d = g_ascii_xdigit_value(*p);

        if (d < 0 || (unsigned)d >= base || v > (max - d) / base) {
            return false;
        }
        v = v * base + d;
    }
    *out = v;
    return true;
}

char *dwc_lane_error_parse(const char *text, DwcLaneError *out)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    bool have_lane = false, have_event = false, have_count = false;
    uint64_t v;
    int ev;

    out->lane = 0;
    out->index = 0;
    out->count = 1;
    for (unsigned i = 0; parts[i]; i++) {
        const char *eq = strchr(parts[i], '=');
        g_autofree char *key = NULL;
        const char *val;

        if (!eq) {
            return g_strdup_printf("'%s' is not key=value (lane=N,"
                                   "event=NAME,count=K)", parts[i]);
        }
        key = g_strndup(parts[i], eq - parts[i]);
        val = eq + 1;
        if (!strcmp(key, "lane") && !have_lane) {
            if (!parse_uint(val, DWC_RAS_DES_LANES - 1, &v)) {
                return g_strdup_printf("lane '%s' is not a number from 0 to "
                                       "%u", val, DWC_RAS_DES_LANES - 1);
            }
            out->lane = v;
            have_lane = true;
        } else if (!strcmp(key, "event") && !have_event) {
            ev = dwc_lane_event_by_name(val);
            if (ev < 0 && parse_uint(val, UINT16_MAX, &v)) {
                ev = dwc_lane_event_by_id(v);
            }
            if (ev < 0) {
                return g_strdup_printf("no lane event '%s' (a name such as "
                                       "rx_memory_read, or an ID of groups "
                                       "6 and 7 such as 0x70c)", val);
            }
            out->index = ev;
            have_event = true;
        } else if (!strcmp(key, "count") && !have_count) {
            if (!parse_uint(val, UINT32_MAX, &v) || !v) {
                return g_strdup_printf("count '%s' is not a number from 1 to "
                                       "4294967295", val);
            }
            out->count = v;
            have_count = true;
        } else {
            return g_strdup_printf("'%s' is %s (lane=N,event=NAME,count=K)",
                                   key, strcmp(key, "lane") &&
                                   strcmp(key, "event") &&
                                   strcmp(key, "count") ? "no key" :
                                   "given twice");
        }
    }
    if (!have_lane || !have_event) {
        return g_strdup_printf("%s missing (lane=N,event=NAME,count=K)",
                               have_lane ? "event" : "lane");
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Link sums                                                          */

void dwc_link_sum_init(DwcLinkSum *ls, uint64_t now)
{
    memset(ls, 0, sizeof(*ls));
    ls->origin = now;
    ls->since = now;
}

static void dev_add(PcieLinkTotals *a, const PcieLinkTotals *b)
{
    a->payload_up += b->payload_up;
    a->payload_down += b->payload_down;
    a->link_down_ns += b->link_down_ns;
}

void dwc_link_sum_attach(DwcLinkSum *ls, unsigned devfn, uint64_t now)
{
    g_assert(devfn < DWC_LINK_FUNCS);
    /* whatever an earlier function there left was taken when it went */
    memset(&ls->base[devfn], 0, sizeof(ls->base[devfn]));
    memset(&ls->last[devfn], 0, sizeof(ls->last[devfn]));
    if (devfn == 0 && !ls->up) {
        ls->absent_ns += sub0(now, ls->since);
        ls->up = true;
    }
}

void dwc_link_sum_detach(DwcLinkSum *ls, unsigned devfn, uint64_t now)
{
    PcieLinkTotals t;

    g_assert(devfn < DWC_LINK_FUNCS);
    t = ls->base[devfn];
    dev_add(&t, &ls->last[devfn]);
    if (devfn) {
        t.link_down_ns = 0;
    }
    dev_add(&ls->gone, &t);
    memset(&ls->base[devfn], 0, sizeof(ls->base[devfn]));
    memset(&ls->last[devfn], 0, sizeof(ls->last[devfn]));
    if (devfn == 0 && ls->up) {
        ls->up = false;
        ls->since = now;
    }
}

void dwc_link_sum_update(DwcLinkSum *ls, unsigned devfn,
                         const PcieLinkTotals *cur)
{
    PcieLinkTotals *last;

    g_assert(devfn < DWC_LINK_FUNCS);
    last = &ls->last[devfn];
    /* any total below the last one: the function restarted from 0 */
    if (cur->payload_up < last->payload_up ||
        cur->payload_down < last->payload_down ||
        cur->link_down_ns < last->link_down_ns) {
        dev_add(&ls->base[devfn], last);
    }
    *last = *cur;
}

void dwc_link_sum_totals(const DwcLinkSum *ls, uint64_t now,
                         DwcLinkTotals *out)
{
    uint64_t elapsed = sub0(now, ls->origin), down;

    out->payload_up = ls->gone.payload_up;
    out->payload_down = ls->gone.payload_down;
    for (unsigned f = 0; f < DWC_LINK_FUNCS; f++) {
        out->payload_up += ls->base[f].payload_up + ls->last[f].payload_up;
        out->payload_down += ls->base[f].payload_down +
                             ls->last[f].payload_down;
    }
    down = ls->absent_ns + ls->gone.link_down_ns +
           ls->base[0].link_down_ns + ls->last[0].link_down_ns;
    if (!ls->up) {
        down += sub0(now, ls->since);
    }
    out->down_ns = MIN(down, elapsed);
    out->l0_ns = elapsed - out->down_ns;
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

#define DWC_STATE_MAGIC         0x3153454453415244ull   /* "DRASDES1" */

static void put_totals(GByteArray *b, const DwcLinkTotals *t)
{
    ptm_put64(b, t->payload_up);
    ptm_put64(b, t->payload_down);
    ptm_put64(b, t->l0_ns);
    ptm_put64(b, t->down_ns);
}

static void get_totals(PtmReader *r, DwcLinkTotals *t)
{
    t->payload_up = ptm_get64(r);
    t->payload_down = ptm_get64(r);
    t->l0_ns = ptm_get64(r);
    t->down_ns = ptm_get64(r);
}

static void put_dev(GByteArray *b, const PcieLinkTotals *t)
{
    ptm_put64(b, t->payload_up);
    ptm_put64(b, t->payload_down);
    ptm_put64(b, t->link_down_ns);
}

static void get_dev(PtmReader *r, PcieLinkTotals *t)
{
    t->payload_up = ptm_get64(r);
    t->payload_down = ptm_get64(r);
    t->link_down_ns = ptm_get64(r);
}

static bool dev_zero(const PcieLinkTotals *t)
{
    return !(t->payload_up | t->payload_down | t->link_down_ns);
}

void *dwc_state_save(const DwcRasDes *s, const DwcLinkSum *ls, size_t *len)
{
    GByteArray *b = g_byte_array_new();
    unsigned used = 0;

    ptm_put64(b, DWC_STATE_MAGIC);
    ptm_put64(b, s->ecc);
    for (unsigned i = 0; i < DWC_LANE_EVENTS; i++) {
        ptm_put64(b, s->on[i]);
        /* two counters a word */
        for (unsigned l = 0; l < DWC_RAS_DES_LANES; l += 2) {
            ptm_put64(b, s->cnt[i][l] | (uint64_t)s->cnt[i][l + 1] << 32);
        }
    }
    ptm_put64(b, s->tba_ctl);
    ptm_put64(b, s->tba_ran);
    ptm_put64(b, s->tba_start);
    ptm_put64(b, s->tba_end);
    ptm_put64(b, s->tba_stop);
    put_totals(b, &s->at_start);
    put_totals(b, &s->at_stop);

    ptm_put64(b, ls->origin);
    ptm_put64(b, ls->up);
    ptm_put64(b, ls->since);
    ptm_put64(b, ls->absent_ns);
    put_dev(b, &ls->gone);
    for (unsigned f = 0; f < DWC_LINK_FUNCS; f++) {
        used += !dev_zero(&ls->base[f]) || !dev_zero(&ls->last[f]);
    }
    ptm_put64(b, used);
    for (unsigned f = 0; f < DWC_LINK_FUNCS; f++) {
        if (!dev_zero(&ls->base[f]) || !dev_zero(&ls->last[f])) {
            ptm_put64(b, f);
            put_dev(b, &ls->base[f]);
            put_dev(b, &ls->last[f]);
        }
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

static char *check_state(const DwcRasDes *n, const DwcLinkSum *nl)
{
    bool running = n->tba_ctl & DWC_TBA_START;

    if (n->ecc & ~DWC_ECC_RW_MASK || n->tba_ctl & ~DWC_TBA_RW_MASK) {
        return g_strdup("RAS DES state: reserved control bits set");
    }
    if (running && !n->tba_ran) {
        return g_strdup("RAS DES state: a run that never started");
    }
    if ((!running && n->tba_end) ||
        (running && n->tba_end && n->tba_end <= n->tba_start) ||
        (n->tba_ran && !running && n->tba_stop < n->tba_start)) {
        return g_strdup("RAS DES state: the run's times are out of order");
    }
    if (!nl->up && nl->since < nl->origin) {
        return g_strdup("RAS DES state: the link went down before its origin");
    }
    return NULL;
}

char *dwc_state_load(DwcRasDes *s, DwcLinkSum *ls, const void *buf,
                     size_t len)
{
    PtmReader r = { buf, len, false };
    g_autofree DwcRasDes *n = g_new0(DwcRasDes, 1);
    g_autofree DwcLinkSum *nl = g_new0(DwcLinkSum, 1);
    uint64_t v, used, prev = 0;
    char *err;

    if (ptm_get64(&r) != DWC_STATE_MAGIC || r.bad) {
        return g_strdup("RAS DES state: not a state of this capability");
    }
    n->totals = s->totals;
    n->opaque = s->opaque;
    v = ptm_get64(&r);
    n->ecc = v;
    if (v > UINT32_MAX) {
        return g_strdup("RAS DES state: reserved control bits set");
    }
    for (unsigned i = 0; i < DWC_LANE_EVENTS; i++) {
        v = ptm_get64(&r);
        if (v > ALL_LANES) {
            return g_strdup("RAS DES state: enable bits of lanes past 15");
        }
        n->on[i] = v;
        for (unsigned l = 0; l < DWC_RAS_DES_LANES; l += 2) {
            v = ptm_get64(&r);
            n->cnt[i][l] = (uint32_t)v;
            n->cnt[i][l + 1] = v >> 32;
        }
    }
    v = ptm_get64(&r);
    n->tba_ctl = v;
    if (v > UINT32_MAX) {
        return g_strdup("RAS DES state: reserved control bits set");
    }
    v = ptm_get64(&r);
    if (v > 1) {
        return g_strdup("RAS DES state: a flag is neither 0 nor 1");
    }
    n->tba_ran = v;
    n->tba_start = ptm_get64(&r);
    n->tba_end = ptm_get64(&r);
    n->tba_stop = ptm_get64(&r);
    get_totals(&r, &n->at_start);
    get_totals(&r, &n->at_stop);

    nl->origin = ptm_get64(&r);
    v = ptm_get64(&r);
    if (v > 1) {
        return g_strdup("RAS DES state: a flag is neither 0 nor 1");
    }
    nl->up = v;
    nl->since = ptm_get64(&r);
    nl->absent_ns = ptm_get64(&r);
    get_dev(&r, &nl->gone);
    used = ptm_get64(&r);
    if (used > DWC_LINK_FUNCS) {
        return g_strdup("RAS DES state: more functions than a bus has");
    }
    for (uint64_t k = 0; k < used && !r.bad; k++) {
        v = ptm_get64(&r);
        if (v >= DWC_LINK_FUNCS || (k && v <= prev)) {
            return g_strdup("RAS DES state: functions out of order");
        }
        prev = v;
        get_dev(&r, &nl->base[v]);
        get_dev(&r, &nl->last[v]);
    }
    if (r.bad || r.left) {
        return g_strdup("RAS DES state: wrong length");
    }
    err = check_state(n, nl);
    if (err) {
        return err;
    }
    *s = *n;
    *ls = *nl;
    return NULL;
}
