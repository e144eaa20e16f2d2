/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flit-mode capabilities of one link end (flit-end.h). Everything is
 * worked out when read: the link's totals are sampled at each access and
 * the registers follow from them and from the events taken since.
 */
#include <string.h>
#include <glib.h>

#include "flit-end.h"
#include "flit-link.h"
#include "ptm-bytes.h"

#define FLIT_POLL_NS            1000000u    /* interrupt checks: 1 ms */
#define FLIT_STATE_MAGIC        0x31544c4654494c46ull /* "FLITFLT1" */

static uint32_t field(uint32_t v, unsigned shift, unsigned bits)
{
    return (v >> shift) & ((1u << bits) - 1);
}

char *flit_end_check(const FlitEndConfig *cfg)
{
    if (!flit_width_valid(cfg->width)) {
        return g_strdup_printf("a flit-mode link is x1, x2, x4, x8 or x16, "
                               "not x%u", cfg->width);
    }
    if (cfg->ltssm_regs > FLIT_LTSSM_REGS_MAX) {
        return g_strdup_printf("%u LTSSM tracking registers, allowed: 0 to "
                               "%u", cfg->ltssm_regs, FLIT_LTSSM_REGS_MAX);
    }
    if (cfg->flight_ns > 1000000u) {
        return g_strdup_printf("a flight time of %u ns, allowed: up to "
                               "1000000", cfg->flight_ns);
    }
    return NULL;
}

uint16_t flit_cap_id(FlitCap cap)
{
    static const uint16_t id[FLIT_CAPS] = {
        FLIT_CAP_ID_64GT, FLIT_CAP_ID_LOG, FLIT_CAP_ID_PERF
    };

    return id[cap];
}

uint32_t flit_cap_size(FlitCap cap, const FlitEndConfig *cfg)
{
    switch (cap) {
    case FLIT_CAP_64GT:
        return FLIT_64GT_EQ_CTL + (cfg->width < 4 ? 4 : cfg->width);
    case FLIT_CAP_LOG:
        return FLIT_LOG_SIZE;
    default:
        return FLIT_PERF_LTSSM + 4 * cfg->ltssm_regs;
    }
}

/* ------------------------------------------------------------------ */
/* The link's totals                                                  */

static uint64_t grew(uint64_t now, uint64_t last)
{
    return now >= last ? now - last : now;  /* a restart from 0 */
}

static void advance(FlitEnd *s, uint64_t now)
{
    FlitTotals t;

    s->totals(s->opaque, now, &t);
    if (s->active) {
        s->tx += grew(t.tx_payload, s->last.tx_payload);
        s->rx += grew(t.rx_payload, s->last.rx_payload);
        s->l0 += grew(t.l0_ns, s->last.l0_ns);
    }
    s->last = t;
}

/* ------------------------------------------------------------------ */
/* Flit Logging                                                       */

static bool measuring(const FlitEnd *s)
{
    return s->meas_ctl & FLIT_LOG_MEAS_EN;
}

static uint64_t flit_counter(const FlitEnd *s)
{
    uint64_t n = s->meas_flits;

    if (measuring(s)) {
        n += flit_slots(s->width, s->l0) -
             flit_slots(s->width, s->meas_l0);
    }
    return n;
}

static void meas_clear(FlitEnd *s)
{
    s->meas_flits = 0;
    s->meas_l0 = s->l0;
    s->invalid = 0;
    memset(s->lane_cnt, 0, sizeof(s->lane_cnt));
}

static void meas_ctl_write(FlitEnd *s, uint32_t val)
{
    bool was = measuring(s);

    if (val & FLIT_LOG_MEAS_CLEAR) {
        meas_clear(s);
    }
    if (was) {
        s->meas_flits = flit_counter(s);
    }
    s->meas_ctl = val & FLIT_LOG_MEAS_CTL_RW;
    s->meas_l0 = s->l0;
}

static uint32_t sat16_add(uint32_t a, uint32_t b)
{
    return a + b > 0xFFFFu ? 0xFFFFu : a + b;
}

static bool counts(const FlitEnd *s, FlitErrorKind kind)
{
    unsigned ev = field(s->cnt_ctl, FLIT_LOG_CNT_EVENTS_SHIFT, 2);

    switch (ev) {
    case FLIT_COUNT_ALL:
        return true;
    case FLIT_COUNT_UNCORRECTABLE:
        return kind != FLIT_ERR_CORRECTABLE;
    case FLIT_COUNT_CORRECTABLE:
        return kind == FLIT_ERR_CORRECTABLE;
    default:
        return false;
    }
}

static void error_count(FlitEnd *s, const FlitError *e)
{
    uint32_t n, trig;

    if (!(s->cnt_ctl & FLIT_LOG_CNT_EN) || !counts(s, e->kind)) {
        return;
    }
    n = field(s->cnt_sts, FLIT_LOG_CNT_STS_COUNT_SHIFT, 8) + e->count;
    n = n > 0xFF ? 0xFF : n;
    s->cnt_sts = (s->cnt_sts & 0x00FF) | n << FLIT_LOG_CNT_STS_COUNT_SHIFT;
    trig = field(s->cnt_ctl, FLIT_LOG_CNT_TRIGGER_SHIFT, 8);
    if ((s->cnt_ctl & FLIT_LOG_CNT_INT_EN) && n >= trig &&
        !(s->cnt_sts & FLIT_LOG_CNT_STS_INT)) {
        s->cnt_sts |= FLIT_LOG_CNT_STS_INT;
        s->irq(s->opaque);
    }
}

static void error_log(FlitEnd *s, const FlitError *e)
{
    uint32_t cons = e->count - 1 > 31 ? 31 : e->count - 1;

    if (s->log_entries++ == 0) {
        s->log1 = FLIT_LOG_ERR1_VALID |
                  flit_width_code(s->width) << FLIT_LOG_ERR1_WIDTH_SHIFT |
                  cons << FLIT_LOG_ERR1_CONS_SHIFT |
                  (e->kind == FLIT_ERR_UNRECOGNIZED ? FLIT_LOG_ERR1_UNREC
                                                    : FLIT_LOG_ERR1_UNCOR);
        s->log2 = 0;
    }
}

static uint32_t log1_read(const FlitEnd *s)
{
    if (!s->log_entries) {
        return 0;
    }
    return s->log1 | (s->log_entries > 1 ? FLIT_LOG_ERR1_MORE : 0);
}

/* ------------------------------------------------------------------ */
/* Flit Performance Measurement                                       */

static unsigned perf_type(const FlitEnd *s)
{
    return field(s->perf_ctl, FLIT_PERF_TYPE_SHIFT, 3);
}

/* The latency of each tracked event and how many there were since t0 */
static uint64_t perf_events(const FlitEnd *s, uint64_t *lat_ns)
{
    switch (perf_type(s)) {
    case FLIT_PERF_TYPE_ACK:
        *lat_ns = flit_ack_latency_ns(s->width, s->cfg.flight_ns);
        return flit_payload_flits(s->tx - s->run.tx_base);
    case FLIT_PERF_TYPE_NAK:
        *lat_ns = flit_ack_latency_ns(s->width, s->cfg.flight_ns);
        return s->naks_rx - s->run.naks_rx_base;
    case FLIT_PERF_TYPE_REPLAY:
        *lat_ns = flit_replay_latency_ns(s->width, s->cfg.flight_ns);
        return s->naks_tx - s->run.naks_tx_base;
    default:
        *lat_ns = 0;
        return 0;       /* a reserved type tracks nothing */
    }
}

/*
 * Status, tracked count and counter of a run that goes on. With a number
 * of instances N the run sums N latencies and is done; with 0 it keeps
 * the worst one until disabled. Tracked stops at 31.
 */
static uint32_t perf_status_now(const FlitEnd *s)
{
    uint32_t inst = field(s->perf_ctl, FLIT_PERF_INST_SHIFT, 5);
    uint64_t lat, n = perf_events(s, &lat);
    uint64_t units = (lat + FLIT_PERF_UNIT_NS - 1) / FLIT_PERF_UNIT_NS;
    uint64_t tracked, counter;
    uint32_t st = FLIT_ST_STARTED;

    if (inst) {
        tracked = n < inst ? n : inst;
        counter = tracked * units;
        if (tracked == inst) {
            st = FLIT_ST_DONE;
        }
    } else {
        tracked = n < 31 ? n : 31;
        counter = n ? units : 0;
    }
    if (counter > 0xFFFF) {
        return FLIT_ST_OVERFLOW;
    }
    return st | tracked << FLIT_ST_TRACKED_SHIFT |
           counter << FLIT_ST_COUNTER_SHIFT;
}

static uint32_t perf_status(FlitEnd *s)
{
    uint32_t v = s->run_on ? perf_status_now(s) : s->run.status;

    return (v & ~FLIT_ST_INT) | (s->run.status & FLIT_ST_INT);
}

static uint64_t perf_threshold_ns(const FlitEnd *s)
{
    unsigned code = field(s->perf_ctl, FLIT_PERF_THR_SHIFT, 3);

    return code >= 1 && code <= 3 ? 100ull * code : 0;
}

/* An interrupt when a tracked flit took longer than the threshold */
static void perf_check(FlitEnd *s, uint64_t now)
{
    uint64_t thr = perf_threshold_ns(s), lat, n;

    if (!s->run_on || !thr || (s->run.status & FLIT_ST_INT)) {
        return;
    }
    n = perf_events(s, &lat);
    s->checked = now;
    if (n && lat > thr) {
        s->run.status |= FLIT_ST_INT;
        s->irq(s->opaque);
    }
}

/* The i-th tracking register belongs to the i-th enabled tracker bit */
static int ltssm_reg(const FlitEnd *s, FlitLtssmEvent ev)
{
    uint32_t track = field(s->perf_ctl, FLIT_PERF_TRACK_SHIFT, 5);
    int reg;

    if (!(track & (1u << ev))) {
        return -1;
    }
    reg = __builtin_popcount(track & ((1u << ev) - 1));
    return reg < (int)s->cfg.ltssm_regs ? reg : -1;
}

static void perf_start(FlitEnd *s)
{
    s->run.status &= FLIT_ST_INT;
    s->run.t0 = s->checked = 0;
    s->run.tx_base = s->tx;
    s->run.naks_rx_base = s->naks_rx;
    s->run.naks_tx_base = s->naks_tx;
    s->run_on = true;
    for (unsigned ev = 0; ev < FLIT_LTSSM_EVENTS; ev++) {
        int r = ltssm_reg(s, ev);

        if (r >= 0) {
            s->ltssm[r] = (s->ltssm[r] & FLIT_ST_INT) | FLIT_ST_STARTED;
        }
    }
}

static void perf_stop(FlitEnd *s)
{
    uint32_t v = perf_status_now(s);

    if ((v & 3) == FLIT_ST_STARTED) {
        v = (v & ~3u) | FLIT_ST_DONE;
    }
    s->run.status = v | (s->run.status & FLIT_ST_INT);
    s->run_on = false;
    for (unsigned r = 0; r < s->cfg.ltssm_regs; r++) {
        if ((s->ltssm[r] & 3) == FLIT_ST_STARTED) {
            s->ltssm[r] = (s->ltssm[r] & ~3u) | FLIT_ST_DONE;
        }
    }
}

static void perf_ctl_write(FlitEnd *s, uint32_t val, uint64_t now)
{
    bool on = val & FLIT_PERF_EN;

    if (s->run_on && !on) {
        perf_stop(s);
    }
    s->perf_ctl = val & FLIT_PERF_CTL_RW;
    if (!s->run_on && on) {
        perf_start(s);
        s->run.t0 = now;
        s->checked = now;
    }
}

static uint64_t ltssm_threshold_ns(const FlitEnd *s, FlitLtssmEvent ev)
{
    static const uint64_t l12[8] = {
        0, 1000000000ull, 2000000000ull, 3000000000ull, 4000000000ull,
        5000000000ull, 10000000000ull, 0
    };
    unsigned code;

    if (ev <= FLIT_LTSSM_L10_L0) {
        code = field(s->perf_ctl, FLIT_PERF_LTHR_SHIFT, 3);
        return code >= 1 && code <= 3 ? 6400000ull * code : 0;
    }
    return l12[field(s->perf_ctl, FLIT_PERF_L12THR_SHIFT, 3)];
}

void flit_end_ltssm(FlitEnd *s, FlitLtssmEvent ev, uint64_t delay_ns,
                    uint64_t now)
{
    uint32_t inst = field(s->perf_ctl, FLIT_PERF_LINST_SHIFT, 5);
    uint64_t units = (delay_ns + FLIT_LTSSM_UNIT_NS - 1) / FLIT_LTSSM_UNIT_NS;
    uint64_t thr = ltssm_threshold_ns(s, ev);
    uint32_t v, n, counter;
    int r;

    advance(s, now);
    r = ltssm_reg(s, ev);
    if (!s->run_on || r < 0 || (s->ltssm[r] & 3) != FLIT_ST_STARTED) {
        return;
    }
    v = s->ltssm[r];
    n = field(v, FLIT_ST_TRACKED_SHIFT, 5);
    n += n < 31;
    counter = field(v, FLIT_ST_COUNTER_SHIFT, 16);
    if (inst) {
        units += counter;
    } else if (units < counter) {
        units = counter;
    }
    v = (v & FLIT_ST_INT) | FLIT_ST_STARTED;
    if (units > 0xFFFF) {
        v |= FLIT_ST_OVERFLOW;
    } else {
        v |= n << FLIT_ST_TRACKED_SHIFT | units << FLIT_ST_COUNTER_SHIFT;
        if (inst && n >= inst) {
            v = (v & ~3u) | FLIT_ST_DONE;
        }
    }
    if (thr && delay_ns > thr && !(v & FLIT_ST_INT)) {
        v |= FLIT_ST_INT;
        s->irq(s->opaque);
    }
    s->ltssm[r] = v;
}

/* ------------------------------------------------------------------ */
/* Events                                                             */

uint32_t flit_end_rx_errors(FlitEnd *s, const FlitError *e, uint64_t now)
{
    uint32_t naks = 0;

    advance(s, now);
    if (!s->active || !e->count) {
        return 0;
    }
    error_count(s, e);
    if (e->kind == FLIT_ERR_CORRECTABLE) {
        if (measuring(s) && e->lane < s->width) {
            s->lane_cnt[e->lane] = sat16_add(s->lane_cnt[e->lane], e->count);
        }
        return 0;
    }
    error_log(s, e);
    if (measuring(s)) {
        s->invalid = sat16_add(s->invalid, e->count);
    }
    naks = e->count;
    s->naks_tx += naks;
    perf_check(s, now);
    return naks;
}

void flit_end_naks_received(FlitEnd *s, uint32_t naks, uint64_t now)
{
    advance(s, now);
    if (s->active) {
        s->naks_rx += naks;
        perf_check(s, now);
    }
}

void flit_end_set_active(FlitEnd *s, bool active, unsigned width,
                         uint64_t now)
{
    advance(s, now);
    s->active = active;
    if (flit_width_valid(width) && width <= s->cfg.width) {
        s->width = width;
    }
}

uint64_t flit_end_deadline(const FlitEnd *s)
{
    uint64_t lat;

    if (!s->run_on || !perf_threshold_ns(s) ||
        (s->run.status & FLIT_ST_INT) || !s->active ||
        perf_type(s) != FLIT_PERF_TYPE_ACK) {
        return UINT64_MAX;      /* Naks come as events, checked then */
    }
    perf_events(s, &lat);
    if (lat <= perf_threshold_ns(s)) {
        return UINT64_MAX;      /* no flit can exceed it */
    }
    /* the first flit's Ack, then a look every millisecond */
    if (s->checked < s->run.t0 + lat) {
        return s->run.t0 + lat;
    }
    return s->checked + FLIT_POLL_NS;
}

void flit_end_sync(FlitEnd *s, uint64_t now)
{
    advance(s, now);
    perf_check(s, now);
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

static uint32_t reg_read(FlitEnd *s, FlitCap cap, uint32_t off)
{
    switch (cap) {
    case FLIT_CAP_64GT:
        return off == FLIT_64GT_STATUS && s->active ?
               FLIT_64GT_STATUS_EQ_DONE : 0;
    case FLIT_CAP_LOG:
        switch (off) {
        case FLIT_LOG_ERR1:
            return log1_read(s);
        case FLIT_LOG_ERR2:
            return s->log_entries ? s->log2 : 0;
        case FLIT_LOG_CNT_CTL:
            return s->cnt_ctl | (uint32_t)s->cnt_sts << 16;
        case FLIT_LOG_MEAS_CTL:
            return s->meas_ctl;
        case FLIT_LOG_MEAS_FLITS:
            return (uint32_t)flit_counter(s);
        case FLIT_LOG_MEAS_INVALID:
            return s->invalid;
        default:
            if (off >= FLIT_LOG_MEAS_LANES && off < FLIT_LOG_SIZE) {
                unsigned l = (off - FLIT_LOG_MEAS_LANES) / 2;

                return s->lane_cnt[l] | (uint32_t)s->lane_cnt[l + 1] << 16;
            }
            return 0;
        }
    default:
        if (off == FLIT_PERF_CAP) {
            return s->cfg.ltssm_regs << FLIT_PERF_CAP_LTSSM_SHIFT;
        }
        if (off == FLIT_PERF_CTL) {
            return s->perf_ctl;
        }
        if (off == FLIT_PERF_STATUS) {
            return perf_status(s);
        }
        if (off >= FLIT_PERF_LTSSM &&
            off < FLIT_PERF_LTSSM + 4 * s->cfg.ltssm_regs) {
            return s->ltssm[(off - FLIT_PERF_LTSSM) / 4];
        }
        return 0;
    }
}

/* A write of the bytes in mask (of the dword at off) */
static void reg_write(FlitEnd *s, FlitCap cap, uint32_t off, uint32_t val,
                      uint32_t mask, uint64_t now)
{
    uint32_t old, v;

    if (cap == FLIT_CAP_LOG) {
        switch (off) {
        case FLIT_LOG_ERR1:
            /* Valid is RW1C: the entry goes, the next one shows */
            if ((mask & val & FLIT_LOG_ERR1_VALID) && s->log_entries) {
                s->log_entries--;
            }
            return;
        case FLIT_LOG_CNT_CTL:
            if (mask & 0xFFFF) {
                old = s->cnt_ctl;
                v = ((old & ~mask) | (val & mask)) & FLIT_LOG_CNT_CTL_RW;
                if (!(old & FLIT_LOG_CNT_EN) && (v & FLIT_LOG_CNT_EN)) {
                    s->cnt_sts = (s->cnt_sts & FLIT_LOG_CNT_STS_INT) |
                                 flit_width_code(s->width);
                }
                s->cnt_ctl = v;
            }
            if (mask & val & (uint32_t)FLIT_LOG_CNT_STS_INT << 16) {
                s->cnt_sts &= ~FLIT_LOG_CNT_STS_INT;
            }
            return;
        case FLIT_LOG_MEAS_CTL:
            if (mask & 0xFF) {
                meas_ctl_write(s, (s->meas_ctl & ~mask) | (val & mask));
            }
            return;
        default:
            return;
        }
    }
    if (cap != FLIT_CAP_PERF) {
        return;                     /* 0x0031: RO and RsvdP */
    }
    if (off == FLIT_PERF_CTL) {
        perf_ctl_write(s, (s->perf_ctl & ~mask) | (val & mask), now);
    } else if (off == FLIT_PERF_STATUS) {
        if (mask & val & FLIT_ST_INT) {
            s->run.status &= ~FLIT_ST_INT;
        }
    } else if (off >= FLIT_PERF_LTSSM &&
               off < FLIT_PERF_LTSSM + 4 * s->cfg.ltssm_regs) {
        if (mask & val & FLIT_ST_INT) {
            s->ltssm[(off - FLIT_PERF_LTSSM) / 4] &= ~FLIT_ST_INT;
        }
    }
}

uint32_t flit_end_read(FlitEnd *s, FlitCap cap, uint32_t off, unsigned len,
                       uint64_t now)
{
    uint32_t dw = off & ~3u, sh = 8 * (off & 3), v;

    if (len < 1 || len > 4 || (off & 3) + len > 4 ||
        dw < 4 || dw >= flit_cap_size(cap, &s->cfg)) {
        return 0;
    }
    flit_end_sync(s, now);
    v = reg_read(s, cap, dw) >> sh;
    return len == 4 ? v : v & ((1u << (8 * len)) - 1);
}

void flit_end_write(FlitEnd *s, FlitCap cap, uint32_t off, uint32_t val,
                    unsigned len, uint64_t now)
{
    uint32_t dw = off & ~3u, sh = 8 * (off & 3), mask;

    if (len < 1 || len > 4 || (off & 3) + len > 4 ||
        dw < 4 || dw >= flit_cap_size(cap, &s->cfg)) {
        return;
    }
    flit_end_sync(s, now);
    mask = (len == 4 ? ~0u : (1u << (8 * len)) - 1) << sh;
    reg_write(s, cap, dw, val << sh, mask, now);
}

/* ------------------------------------------------------------------ */
/* Set-up, reset, migration                                           */

void flit_end_init(FlitEnd *s, const FlitEndConfig *cfg,
                   FlitTotalsFn *totals, FlitIrqFn *irq, void *opaque)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->totals = totals;
    s->irq = irq;
    s->opaque = opaque;
    s->width = cfg->width;
}

void flit_end_reset(FlitEnd *s, uint64_t now)
{
    uint32_t ltssm[FLIT_LTSSM_REGS_MAX];

    advance(s, now);
    /* the LTSSM registers are sticky (ROS, RW1CS) */
    memcpy(ltssm, s->ltssm, sizeof(ltssm));
    s->log_entries = s->log1 = s->log2 = 0;
    s->cnt_ctl = s->cnt_sts = 0;
    s->meas_ctl = 0;
    meas_clear(s);
    s->perf_ctl = 0;
    memset(&s->run, 0, sizeof(s->run));
    s->run_on = false;
    s->checked = 0;
    memcpy(s->ltssm, ltssm, sizeof(ltssm));
}

void flit_end_rebase(FlitEnd *s)
{
    memset(&s->last, 0, sizeof(s->last));
}

void *flit_end_save(const FlitEnd *s, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    ptm_put64(b, FLIT_STATE_MAGIC);
    ptm_put64(b, s->cfg.width | (uint64_t)s->cfg.ltssm_regs << 8 |
                 (uint64_t)s->cfg.flight_ns << 16);
    ptm_put64(b, s->active | (uint64_t)s->width << 8);
    ptm_put64(b, s->tx);
    ptm_put64(b, s->rx);
    ptm_put64(b, s->l0);
    ptm_put64(b, s->last.tx_payload);
    ptm_put64(b, s->last.rx_payload);
    ptm_put64(b, s->last.l0_ns);
    ptm_put64(b, s->naks_rx);
    ptm_put64(b, s->naks_tx);
    ptm_put64(b, s->log_entries);
    ptm_put64(b, s->log1 | (uint64_t)s->log2 << 32);
    ptm_put64(b, s->cnt_ctl | (uint64_t)s->cnt_sts << 16 |
                 (uint64_t)s->meas_ctl << 32);
    ptm_put64(b, s->meas_flits);
    ptm_put64(b, s->meas_l0);
    ptm_put64(b, s->invalid);
    for (unsigned l = 0; l < 16; l += 4) {
        ptm_put64(b, s->lane_cnt[l] | (uint64_t)s->lane_cnt[l + 1] << 16 |
                     (uint64_t)s->lane_cnt[l + 2] << 32 |
                     (uint64_t)s->lane_cnt[l + 3] << 48);
    }
    ptm_put64(b, s->perf_ctl | (uint64_t)s->run.status << 32);
    ptm_put64(b, s->run.t0);
    ptm_put64(b, s->run.tx_base);
    ptm_put64(b, s->run.naks_rx_base);
    ptm_put64(b, s->run.naks_tx_base);
    ptm_put64(b, s->run_on);
    ptm_put64(b, s->checked);
    for (unsigned r = 0; r < FLIT_LTSSM_REGS_MAX; r++) {
        ptm_put64(b, s->ltssm[r]);
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *flit_end_load(FlitEnd *s, const void *buf, size_t len)
{
    PtmReader r = { .p = buf, .left = len };
    FlitEnd n = *s;
    uint64_t v, cfg;

    if (ptm_get64(&r) != FLIT_STATE_MAGIC) {
        return g_strdup("the flit state is not one this model saved");
    }
    cfg = ptm_get64(&r);
    if (cfg != (s->cfg.width | (uint64_t)s->cfg.ltssm_regs << 8 |
                (uint64_t)s->cfg.flight_ns << 16)) {
        return g_strdup("the flit state comes from an end of another "
                        "width, LTSSM register count or flight time");
    }
    v = ptm_get64(&r);
    n.active = v & 1;
    n.width = v >> 8;
    if (!flit_width_valid(n.width) || n.width > s->cfg.width) {
        return g_strdup_printf("the flit state's link width x%u does not "
                               "fit this end", n.width);
    }
    n.tx = ptm_get64(&r);
    n.rx = ptm_get64(&r);
    n.l0 = ptm_get64(&r);
    n.last.tx_payload = ptm_get64(&r);
    n.last.rx_payload = ptm_get64(&r);
    n.last.l0_ns = ptm_get64(&r);
    n.naks_rx = ptm_get64(&r);
    n.naks_tx = ptm_get64(&r);
    n.log_entries = ptm_get64(&r);
    v = ptm_get64(&r);
    n.log1 = v;
    n.log2 = v >> 32;
    v = ptm_get64(&r);
    n.cnt_ctl = v & FLIT_LOG_CNT_CTL_RW;
    n.cnt_sts = v >> 16;
    n.meas_ctl = (v >> 32) & FLIT_LOG_MEAS_CTL_RW;
    n.meas_flits = ptm_get64(&r);
    n.meas_l0 = ptm_get64(&r);
    n.invalid = ptm_get64(&r) & 0xFFFF;
    for (unsigned l = 0; l < 16; l += 4) {
        v = ptm_get64(&r);
        for (unsigned i = 0; i < 4; i++) {
            n.lane_cnt[l + i] = v >> (16 * i);
        }
    }
    v = ptm_get64(&r);
    n.perf_ctl = v & FLIT_PERF_CTL_RW;
    n.run.status = v >> 32;
    n.run.t0 = ptm_get64(&r);
    n.run.tx_base = ptm_get64(&r);
    n.run.naks_rx_base = ptm_get64(&r);
    n.run.naks_tx_base = ptm_get64(&r);
    n.run_on = ptm_get64(&r);
    n.checked = ptm_get64(&r);
    for (unsigned i = 0; i < FLIT_LTSSM_REGS_MAX; i++) {
        n.ltssm[i] = ptm_get64(&r) & 0x00FFFFFFu;
    }
    if (r.bad || r.left) {
        return g_strdup_printf("the flit state is %zu bytes, not what this "
                               "model saves", len);
    }
    *s = n;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Injection                                                          */

static const char *const kind_names[FLIT_ERR_KINDS] = {
    "uncorrectable", "unrecognized", "correctable"
};

const char *flit_error_kind_name(FlitErrorKind kind)
{
    return kind < FLIT_ERR_KINDS ? kind_names[kind] : "?";
}

char *flit_error_parse(const char *text, FlitError *out)
{
    g_auto(GStrv) parts = g_strsplit(text ? text : "", ",", -1);
    bool have_lane = false;
    FlitError e = { .kind = FLIT_ERR_UNCORRECTABLE, .count = 1 };

    for (char **p = parts; *p; p++) {
        char *eq = strchr(*p, '=');
        const char *key = *p, *val;
        guint64 n;

        if (!**p) {
            continue;
        }
        if (!eq) {
            return g_strdup_printf("'%s' is no key=value", *p);
        }
        *eq = 0;
        val = eq + 1;
        if (!strcmp(key, "kind")) {
            unsigned k;

            for (k = 0; k < FLIT_ERR_KINDS; k++) {
                if (!strcmp(val, kind_names[k])) {
                    break;
                }
            }
            if (k == FLIT_ERR_KINDS) {
                return g_strdup_printf("kind '%s': allowed: uncorrectable, "
                                       "unrecognized, correctable", val);
            }
            e.kind = k;
        } else if (!strcmp(key, "count") || !strcmp(key, "lane")) {
            if (!g_ascii_string_to_unsigned(val, 10, 0, UINT32_MAX, &n, NULL) ||
                (!strcmp(key, "count") && n == 0)) {
                return g_strdup_printf("%s '%s' is no number%s", key, val,
                                       !strcmp(key, "count") ?
                                       " from 1 to 4294967295" : "");
            }
            if (!strcmp(key, "count")) {
                e.count = n;
            } else {
                e.lane = n;
                have_lane = true;
            }
        } else {
            return g_strdup_printf("unknown key '%s' (kind, count, lane)",
                                   key);
        }
    }
    if (e.kind == FLIT_ERR_CORRECTABLE && !have_lane) {
        return g_strdup("a correctable error names its lane (lane=N)");
    }
    if (e.kind != FLIT_ERR_CORRECTABLE && have_lane) {
        return g_strdup("only a correctable error has a lane");
    }
    if (e.lane > 15) {
        return g_strdup_printf("lane %u: a link has at most 16", e.lane);
    }
    *out = e;
    return NULL;
}
