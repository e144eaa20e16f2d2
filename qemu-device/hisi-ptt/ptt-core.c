/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HiSilicon PTT model (ptt-core.h). The trace is written lazily: at
 * each access, and at the glue's timer while it runs, the records of the
 * TLPs since the last time are encoded and written in one go.
 */
#include <string.h>
#include <glib.h>

#include "ptm-bytes.h"
#include "ptt-core.h"

#define PTT_STATE_MAGIC         0x3154545049534948ull  /* "HISIPTT1" */
#define PTT_WINDOW_NS           1000000u    /* the budget's window: 1 ms */
#define PTT_TLP_BATCH           16384u  /* more than a card keeps */
#define PTT_TUNE_DEFAULT        1u
#define PTT_TUNE_MAX            2u

const uint32_t ptt_tune_codes[PTT_TUNE_EVENTS] = {
    0x00030004u, 0x00040004u, 0x00050004u, 0x00060005u, 0x00070005u,
};

static const char *const ptt_tune_names[PTT_TUNE_EVENTS] = {
    "qos_tx_cpl", "qos_tx_np", "qos_tx_p", "rx_alloc_buf_level",
    "tx_alloc_buf_level",
};

const char *ptt_tune_name(unsigned i)
{
    return i < PTT_TUNE_EVENTS ? ptt_tune_names[i] : "?";
}

char *ptt_config_check(const PttConfig *cfg)
{
    if (cfg->range_lower > cfg->range_upper) {
        return g_strdup_printf("the lower root port 0x%04x is above the "
                               "upper one 0x%04x", cfg->range_lower,
                               cfg->range_upper);
    }
    if (cfg->max_bytes_per_s < PTT_REC_8DW * 1000ull) {
        return g_strdup_printf("a budget of %" G_GUINT64_FORMAT " bytes a "
                               "second holds not one record a "
                               "millisecond (at least %u)",
                               cfg->max_bytes_per_s, PTT_REC_8DW * 1000);
    }
    return NULL;
}

void ptt_init(PttCore *s, const PttConfig *cfg, PttTlpFn *tlps,
              PttDmaFn *dma, PttIrqFn *irq, void *opaque)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->tlps = tlps;
    s->dma = dma;
    s->irq = irq;
    s->opaque = opaque;
    ptt_reset(s);
}

void ptt_reset(PttCore *s)
{
    PttStats stats = s->stats;

    s->tuning_ctrl = s->tuning_data = 0;
    for (unsigned i = 0; i < PTT_TUNE_EVENTS; i++) {
        s->tune[i] = PTT_TUNE_DEFAULT;
    }
    s->addr_size = 0;
    memset(s->base, 0, sizeof(s->base));
    s->ctrl = s->int_stat = s->int_mask = 0;
    s->tracing = false;
    s->cur = s->wr = 0;
    s->from = s->t0 = s->budget_at = s->budget_used = 0;
    s->stats = stats;           /* what happened stays counted */
}

bool ptt_tracing(const PttCore *s)
{
    return s->tracing;
}

/* ------------------------------------------------------------------ */
/* Records                                                            */

bool ptt_match(uint32_t ctrl, const PttTlp *t)
{
    unsigned dir = (ctrl >> PTT_CTRL_DIR_SHIFT) & 3;
    unsigned types = (ctrl >> PTT_CTRL_TYPE_SHIFT) & 0xF;
    uint16_t target = ctrl >> PTT_CTRL_TARGET_SHIFT;
    bool in_ok, out_ok;

    if (!(types & t->tlp.type)) {
        return false;
    }
    if (ctrl & PTT_CTRL_REQ_FILTER) {
        if (t->function != target) {
            return false;
        }
    } else if (t->port > 15 || !(target & (1u << t->port))) {
        return false;
    }
    if (ctrl & PTT_CTRL_8DW) {
        /* 1 outbound, 2 inbound but CPL A, 3 inbound CPL A, 0 reserved */
        out_ok = dir == 1;
        in_ok = (dir == 2 && !(t->tlp.type == PTT_TYPE_CPL && !t->cpl_b)) ||
                (dir == 3 && t->tlp.type == PTT_TYPE_CPL && !t->cpl_b);
    } else {
        /* 0 inbound, 1 outbound, 2 both (inbound but CPL A), 3 both
         * (inbound CPL A only) */
        out_ok = dir != 0;
        in_ok = dir == 0 ||
                (dir == 2 && !(t->tlp.type == PTT_TYPE_CPL && !t->cpl_b)) ||
                (dir == 3 && t->tlp.type == PTT_TYPE_CPL && !t->cpl_b);
    }
    return t->tlp.up ? in_ok : out_ok;
}

/*
 * The 4DW record's DW0 in the bit order of perf's decoder (tools/perf/
 * util/hisi-ptt-decoder): Fmt [1:0], Type [6:2], T9 [7], T8 [8], TH [9],
 * SO [10], Length [20:11], time [31:21]. docs/ptt.md gives both orders.
 */
size_t ptt_encode(const PttTlp *t, bool dw8, uint32_t time, uint32_t *out)
{
    uint32_t h0 = t->tlp.hdr[0];

    if (dw8) {
        out[0] = PTT_8DW_MARK;
        out[1] = 0;                     /* no PASID prefix */
        memcpy(&out[2], t->tlp.hdr, sizeof(t->tlp.hdr));
        out[6] = 0;
        out[7] = time;
        return PTT_REC_8DW;
    }
    out[0] = ((h0 >> 29) & 3) |                 /* Fmt[1:0] */
             ((h0 >> 24) & 0x1F) << 2 |         /* Type */
             ((h0 >> 23) & 1) << 7 |            /* T9 */
             ((h0 >> 19) & 1) << 8 |            /* T8 */
             ((h0 >> 16) & 1) << 9 |            /* TH */
             (!((h0 >> 13) & 1)) << 10 |        /* SO: not Relaxed Ordering */
             (h0 & 0x3FF) << 11 |               /* Length */
             (time & 0x7FF) << 21;
    out[1] = t->tlp.hdr[1];
    out[2] = t->tlp.hdr[2];
    out[3] = t->tlp.hdr[3];
    return PTT_REC_4DW;
}

/* ------------------------------------------------------------------ */
/* The trace                                                          */

static uint64_t ptt_budget(const PttCore *s)
{
    return s->cfg.max_bytes_per_s / (1000000000u / PTT_WINDOW_NS);
}

static void ptt_halt(PttCore *s)
{
    s->tracing = false;
    s->stats.dma_errors++;
}

static void ptt_emit(PttCore *s, const PttTlp *t)
{
    bool dw8 = s->ctrl & PTT_CTRL_8DW;
    uint32_t rec[8];
    size_t len;

    if (s->int_stat & (1u << s->cur)) {
        s->stats.dropped_busy++;        /* not drained since it filled */
        return;
    }
    if (s->budget_used >= ptt_budget(s)) {
        s->stats.dropped_budget++;
        return;
    }
    len = ptt_encode(t, dw8, (uint32_t)(t->tlp.t_ns - s->t0), rec);
    if (s->wr + len > s->addr_size) {
        ptt_halt(s);                    /* a buffer smaller than a record */
        return;
    }
    if (!s->dma(s->opaque, s->base[s->cur] + s->wr, rec, len)) {
        ptt_halt(s);
        return;
    }
    s->wr += len;
    s->budget_used += len;
    s->stats.records++;
    if (s->wr + len > s->addr_size) {
        /* full: its status bit, the interrupt, on to the next buffer */
        s->int_stat |= 1u << s->cur;
        s->stats.buffers++;
        if (!(s->int_mask & (1u << s->cur))) {
            s->irq(s->opaque);
        }
        s->cur = (s->cur + 1) % PTT_BUFS;
        s->wr = 0;
    }
}

void ptt_sync(PttCore *s, uint64_t now)
{
    g_autofree PttTlp *batch = NULL;

    while (s->tracing && s->from < now) {
        uint64_t win = s->budget_at + PTT_WINDOW_NS, end, resume;
        size_t n;

        if (s->from >= win) {
            s->budget_at = s->from - (s->from - s->t0) % PTT_WINDOW_NS;
            s->budget_used = 0;
            continue;
        }
        end = MIN(now, win);
        if (s->budget_used >= ptt_budget(s)) {
            /* the window's budget is spent: its other TLPs are counted */
            s->stats.dropped_budget += s->tlps(s->opaque, s->from, end,
                                               NULL, 0, &resume);
            s->from = end;
            continue;
        }
        if (!batch) {
            batch = g_new(PttTlp, PTT_TLP_BATCH);
        }
        n = s->tlps(s->opaque, s->from, end, batch, PTT_TLP_BATCH, &resume);
        for (size_t i = 0; i < n && s->tracing; i++) {
            if (ptt_match(s->ctrl, &batch[i])) {
                ptt_emit(s, &batch[i]);
            }
        }
        /* where the source stopped short, on from there, never back */
        s->from = resume >= end ? end : MAX(resume, s->from + 1);
    }
    if (!s->tracing && s->from < now) {
        s->from = now;
    }
}

static void ptt_ctrl_write(PttCore *s, uint32_t val, uint64_t now)
{
    uint32_t old = s->ctrl;

    if (s->tracing && (!(val & PTT_CTRL_EN) || (val & PTT_CTRL_RST))) {
        /* what crossed up to this instant still counts, as configured */
        ptt_sync(s, now + 1);
    }
    s->ctrl = val & PTT_CTRL_RW;
    if (s->ctrl & PTT_CTRL_RST) {
        /* the reset drains at once: pointer and count to 0 */
        s->tracing = false;
        s->cur = s->wr = 0;
        return;
    }
    if (!(old & PTT_CTRL_EN) && (s->ctrl & PTT_CTRL_EN)) {
        s->tracing = true;
        s->from = s->t0 = s->budget_at = now;
        s->budget_used = 0;
    } else if (!(s->ctrl & PTT_CTRL_EN)) {
        s->tracing = false;     /* WR_STS keeps its count until RST */
    }
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

static int ptt_tune_index(uint32_t ctrl)
{
    for (unsigned i = 0; i < PTT_TUNE_EVENTS; i++) {
        if ((ctrl & 0x00FFFFFFu) == ptt_tune_codes[i]) {
            return i;
        }
    }
    return -1;
}

uint32_t ptt_read(PttCore *s, uint32_t off, uint64_t now)
{
    if (off & 3 || off >= PTT_BAR_SIZE) {
        return 0;
    }
    ptt_sync(s, now);
    switch (off) {
    case PTT_TUNING_CTRL:
        return s->tuning_ctrl;
    case PTT_TUNING_DATA:
        return s->tuning_data;
    case PTT_TRACE_ADDR_SIZE:
        return s->addr_size;
    case PTT_TRACE_CTRL:
        return s->ctrl;
    case PTT_TRACE_INT_STAT:
        return s->int_stat;
    case PTT_TRACE_INT_MASK:
        return s->int_mask;
    case PTT_TUNING_INT_STAT:
        return 0;                       /* tuning takes no time */
    case PTT_TRACE_WR_STS:
        return s->wr & 0x0FFFFFFFu;
    case PTT_TRACE_STS:
        return s->tracing ? 0 : 1;
    case PTT_DEVICE_RANGE:
        return (uint32_t)s->cfg.range_upper << 16 | s->cfg.range_lower;
    case PTT_LOCATION:
        return (uint32_t)s->cfg.sicl_id << 16 | s->cfg.core_id;
    default:
        if (off >= PTT_TRACE_ADDR_LO(0) && off < PTT_TRACE_ADDR_LO(PTT_BUFS)) {
            unsigned i = (off - PTT_TRACE_ADDR_LO(0)) / 8;

            return off & 4 ? s->base[i] >> 32 : (uint32_t)s->base[i];
        }
        return 0;
    }
}

void ptt_write(PttCore *s, uint32_t off, uint32_t val, uint64_t now)
{
    int i;

    if (off & 3 || off >= PTT_BAR_SIZE) {
        return;
    }
    ptt_sync(s, now);
    switch (off) {
    case PTT_TUNING_CTRL:
        s->tuning_ctrl = val & 0x00FFFFFFu;
        return;
    case PTT_TUNING_DATA:
        i = ptt_tune_index(s->tuning_ctrl);
        if (val == PTT_TUNING_READ) {
            /* a read request: the event's value comes back */
            s->tuning_data = i < 0 ? 0xFFFF : s->tune[i];
        } else if (i >= 0) {
            s->tune[i] = MIN(val & 0xFFFF, PTT_TUNE_MAX);
            s->tuning_data = s->tune[i];
        }
        return;
    case PTT_TRACE_ADDR_SIZE:
        s->addr_size = val;
        return;
    case PTT_TRACE_CTRL:
        ptt_ctrl_write(s, val, now);
        return;
    case PTT_TRACE_INT_STAT:
        s->int_stat &= ~val;
        return;
    case PTT_TRACE_INT_MASK:
        s->int_mask = val & 0xF;
        return;
    default:
        if (off >= PTT_TRACE_ADDR_LO(0) && off < PTT_TRACE_ADDR_LO(PTT_BUFS)) {
            unsigned b = (off - PTT_TRACE_ADDR_LO(0)) / 8;

            if (off & 4) {
                s->base[b] = (uint32_t)s->base[b] | (uint64_t)val << 32;
            } else {
                s->base[b] = (s->base[b] & ~0xFFFFFFFFull) | val;
            }
        }
        return;
    }
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

void *ptt_save(const PttCore *s, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    ptm_put64(b, PTT_STATE_MAGIC);
    ptm_put64(b, s->tuning_ctrl | (uint64_t)s->tuning_data << 32);
    for (unsigned i = 0; i < PTT_TUNE_EVENTS; i++) {
        ptm_put64(b, s->tune[i]);
    }
    ptm_put64(b, s->addr_size);
    for (unsigned i = 0; i < PTT_BUFS; i++) {
        ptm_put64(b, s->base[i]);
    }
    ptm_put64(b, s->ctrl | (uint64_t)s->int_stat << 32);
    ptm_put64(b, s->int_mask | (uint64_t)s->tracing << 32);
    ptm_put64(b, s->cur | (uint64_t)s->wr << 32);
    ptm_put64(b, s->from);
    ptm_put64(b, s->t0);
    ptm_put64(b, s->budget_at);
    ptm_put64(b, s->budget_used);
    ptm_put64(b, s->stats.records);
    ptm_put64(b, s->stats.dropped_busy);
    ptm_put64(b, s->stats.dropped_budget);
    ptm_put64(b, s->stats.buffers);
    ptm_put64(b, s->stats.dma_errors);
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ptt_load(PttCore *s, const void *buf, size_t len)
{
    PtmReader r = { .p = buf, .left = len };
    PttCore n = *s;
    uint64_t v;

    if (ptm_get64(&r) != PTT_STATE_MAGIC) {
        return g_strdup("the PTT state is not one this model saved");
    }
    v = ptm_get64(&r);
    n.tuning_ctrl = v & 0x00FFFFFFu;
    n.tuning_data = v >> 32;
    for (unsigned i = 0; i < PTT_TUNE_EVENTS; i++) {
        v = ptm_get64(&r);
        n.tune[i] = MIN(v, PTT_TUNE_MAX);
    }
    n.addr_size = ptm_get64(&r);
    for (unsigned i = 0; i < PTT_BUFS; i++) {
        n.base[i] = ptm_get64(&r);
    }
    v = ptm_get64(&r);
    n.ctrl = v & PTT_CTRL_RW;
    n.int_stat = (v >> 32) & 0xF;
    v = ptm_get64(&r);
    n.int_mask = v & 0xF;
    n.tracing = (v >> 32) & 1;
    v = ptm_get64(&r);
    n.cur = (v & 0xFFFFFFFFu) % PTT_BUFS;
    n.wr = v >> 32;
    n.from = ptm_get64(&r);
    n.t0 = ptm_get64(&r);
    n.budget_at = ptm_get64(&r);
    n.budget_used = ptm_get64(&r);
    n.stats.records = ptm_get64(&r);
    n.stats.dropped_busy = ptm_get64(&r);
    n.stats.dropped_budget = ptm_get64(&r);
    n.stats.buffers = ptm_get64(&r);
    n.stats.dma_errors = ptm_get64(&r);
    if (r.bad || r.left) {
        return g_strdup_printf("the PTT state is %zu bytes, not what this "
                               "model saves", len);
    }
    *s = n;
    return NULL;
}
