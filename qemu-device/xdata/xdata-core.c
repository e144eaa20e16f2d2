/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DesignWare xData model (xdata-core.h). A test is a start time and a
 * transfer period; the transfers done by any instant, the counters and
 * the link's totals follow from it in closed form at each access.
 */
#include <string.h>
#include <glib.h>

#include "ptm-bytes.h"
#include "xdata-core.h"

#define XDATA_STATE_MAGIC       0x3130304154414458ull  /* "XDATA001" */
#define XDATA_TLP_FRAMING       8u      /* STP (or token), LCRC */
#define XDATA_HDR_3DW           12u
#define XDATA_HDR_4DW           16u
#define XDATA_CPL_HDR           12u

typedef unsigned __int128 u128;

/* ------------------------------------------------------------------ */
/* The link rate                                                      */

char *xdata_link_check(const XdataLink *l)
{
    static const uint32_t speeds[] = { 2500, 5000, 8000, 16000, 32000, 64000 };
    bool speed_ok = false;

    for (unsigned i = 0; i < G_N_ELEMENTS(speeds); i++) {
        speed_ok |= l->speed_mts == speeds[i];
    }
    if (!speed_ok) {
        return g_strdup_printf("a link speed of %u MT/s is none of 2500, "
                               "5000, 8000, 16000, 32000 or 64000",
                               l->speed_mts);
    }
    if (l->width < 1 || l->width > 32) {
        return g_strdup_printf("a link of x%u is not x1 to x32", l->width);
    }
    if (l->mps < 128 || l->mps > 4096 || (l->mps & (l->mps - 1))) {
        return g_strdup_printf("a Max_Payload_Size of %u is not a power of "
                               "2 from 128 to 4096", l->mps);
    }
    if (l->mrrs < 128 || l->mrrs > 4096 || (l->mrrs & (l->mrrs - 1))) {
        return g_strdup_printf("a Max_Read_Request_Size of %u is not a "
                               "power of 2 from 128 to 4096", l->mrrs);
    }
    return NULL;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

void xdata_shape(const XdataLink *l, bool write, uint32_t len_dw,
                 bool addr64, XdataShape *out)
{
    /* 8b/10b to 5 GT/s, 128b/130b to 32 GT/s, flits (236 of 256) at 64 */
    uint32_t enc_n = 8, enc_d = 10, framing = XDATA_TLP_FRAMING;
    uint32_t hdr = addr64 ? XDATA_HDR_4DW : XDATA_HDR_3DW;
    uint32_t len = len_dw * 4;

    memset(out, 0, sizeof(*out));
    if (l->speed_mts >= 64000) {
        enc_n = 236;
        enc_d = 256;
        framing = 0;            /* a flit's CRC and FEC cover its TLPs */
    } else if (l->speed_mts >= 8000) {
        enc_n = 128;
        enc_d = 130;
    }
    /* bytes a ns: MT/s x lanes x coding / (8 bits x 1000 ns a us) */
    out->rate_num = (uint64_t)l->speed_mts * l->width * enc_n;
    out->rate_den = (uint64_t)enc_d * 8000;
    if (!len) {
        return;
    }
    out->payload = len;
    if (write) {
        /* memory writes of MPS, the last shorter */
        out->tlps = div_up(len, l->mps);
        out->wire_up = len + out->tlps * (hdr + framing);
    } else {
        /* read requests of MRRS, each answered by completions of MPS */
        uint32_t last = len - (div_up(len, l->mrrs) - 1) * l->mrrs;

        out->requests = div_up(len, l->mrrs);
        out->tlps = (out->requests - 1) * div_up(l->mrrs, l->mps) +
                    div_up(last, l->mps);
        out->wire_up = out->requests * (hdr + framing);
        out->wire_down = len + out->tlps * (XDATA_CPL_HDR + framing);
    }
    out->wire = MAX(out->wire_up, out->wire_down);
}

uint64_t xdata_payload_per_s(const XdataShape *sh)
{
    if (!sh->wire) {
        return 0;
    }
    return (u128)sh->payload * sh->rate_num * 1000000000u /
           ((u128)sh->rate_den * sh->wire);
}

/* ------------------------------------------------------------------ */
/* The test in closed form                                            */

/* Transfers done by now */
static uint64_t xdata_xfers(const XdataTest *t, uint64_t now)
{
    u128 n;

    if (!t->started || !t->shape.wire || now <= t->t0) {
        return 0;
    }
    n = (u128)(now - t->t0) * t->shape.rate_num /
        ((u128)t->shape.rate_den * t->shape.wire);
    return n < t->end ? (uint64_t)n : t->end;
}

/* The instant transfer n is done: the first t with n transfers by t */
static uint64_t xdata_time_of(const XdataTest *t, uint64_t n)
{
    u128 d, num = t->shape.rate_num;

    if (n == XDATA_NO_END) {
        return UINT64_MAX;
    }
    if (!n || !t->shape.wire) {
        return t->t0;
    }
    d = ((u128)n * t->shape.rate_den * t->shape.wire + num - 1) / num;
    return d >= UINT64_MAX - t->t0 ? UINT64_MAX - 1 : t->t0 + (uint64_t)d;
}

static void xdata_set_end(XdataTest *t, uint64_t end)
{
    t->end = end;
    t->t_end = xdata_time_of(t, end);
}

bool xdata_running(const XdataCore *s, uint64_t now)
{
    return s->test.started && now < s->test.t_end;
}

const XdataTest *xdata_test(const XdataCore *s)
{
    return s->test.started ? &s->test : NULL;
}

/* Payload written and read by now, over every test since reset */
static uint64_t xdata_bytes(const XdataCore *s, bool write, uint64_t now)
{
    const XdataTest *t = &s->test;
    uint64_t b = write ? s->base_wr : s->base_rd;

    if (t->started && t->write == write) {
        b += xdata_xfers(t, now) * t->shape.payload;
    }
    return b;
}

static uint64_t xdata_counter(const XdataCore *s, bool write, uint64_t now)
{
    uint64_t acc = write ? s->acc_wr : s->acc_rd;

    if (s->perf & XDATA_PERF_ENABLE) {
        acc += xdata_bytes(s, write, now) - (write ? s->snap_wr : s->snap_rd);
    }
    return acc;
}

static void xdata_doorbell(XdataCore *s, uint64_t now)
{
    XdataTest *t = &s->test;
    uint32_t count = s->burst & XDATA_BURST_COUNT_MASK;

    /* the test that runs ends here, with what it has done */
    s->base_wr = xdata_bytes(s, true, now);
    s->base_rd = xdata_bytes(s, false, now);
    memset(t, 0, sizeof(*t));
    t->started = true;
    t->control = s->control;
    t->write = s->control & XDATA_CTRL_WRITE;
    t->addr64 = s->addr_msb != 0;
    s->link_fn(s->opaque, &t->link);
    xdata_shape(&t->link, t->write,
                (s->control & XDATA_CTRL_LEN_MASK) >> XDATA_CTRL_LEN_SHIFT,
                t->addr64, &t->shape);
    t->t0 = now;
    if (!t->shape.payload) {
        xdata_set_end(t, 0);    /* nothing to move: done at once */
    } else {
        xdata_set_end(t, s->burst & XDATA_BURST_REPEAT ? XDATA_NO_END
                                                       : count);
    }
}

/*
 * The repeat bit decides while the test runs: set, it goes on; cleared,
 * it ends with the burst in progress (count transfers from the start).
 */
static void xdata_burst_write(XdataCore *s, uint32_t val, uint64_t now)
{
    bool was = s->burst & XDATA_BURST_REPEAT;
    bool rep = val & XDATA_BURST_REPEAT;
    XdataTest *t = &s->test;

    s->burst = val;
    if (!xdata_running(s, now) || was == rep) {
        return;
    }
    if (rep) {
        xdata_set_end(t, XDATA_NO_END);
    } else if (t->end == XDATA_NO_END) {
        uint64_t x = xdata_xfers(t, now);
        uint32_t count = val & XDATA_BURST_COUNT_MASK;
        u128 end = count ? ((u128)x / count + 1) * count : x;

        xdata_set_end(t, end < XDATA_NO_END ? (uint64_t)end
                                            : XDATA_NO_END - 1);
    }
}

static void xdata_perf_write(XdataCore *s, uint32_t val, uint64_t now)
{
    bool was = s->perf & XDATA_PERF_ENABLE, on = val & XDATA_PERF_ENABLE;

    if (!was && on) {
        s->snap_wr = xdata_bytes(s, true, now);
        s->snap_rd = xdata_bytes(s, false, now);
    } else if (was && !on) {
        s->acc_wr = xdata_counter(s, true, now);
        s->acc_rd = xdata_counter(s, false, now);
    }
    s->perf = val & XDATA_PERF_ENABLE;
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

void xdata_init(XdataCore *s, XdataLinkFn *link_fn, void *opaque)
{
    memset(s, 0, sizeof(*s));
    s->link_fn = link_fn;
    s->opaque = opaque;
    xdata_reset(s);
}

void xdata_reset(XdataCore *s)
{
    XdataLinkFn *fn = s->link_fn;
    void *opaque = s->opaque;

    memset(s, 0, sizeof(*s));
    s->link_fn = fn;
    s->opaque = opaque;
    s->test.t_end = UINT64_MAX;
}

static uint32_t xdata_status(const XdataCore *s, uint64_t now)
{
    const XdataTest *t = &s->test;

    return t->started && now >= t->t_end && !t->done_cleared
           ? XDATA_STATUS_DONE : 0;
}

static uint32_t xdata_reg_read(const XdataCore *s, uint32_t off, uint64_t now)
{
    switch (off) {
    case XDATA_ADDR_LSB:
        return s->addr_lsb;
    case XDATA_ADDR_MSB:
        return s->addr_msb;
    case XDATA_BURST_CNT:
        return s->burst;
    case XDATA_CONTROL:
        return s->control;
    case XDATA_PATTERN:
        return s->pattern;
    case XDATA_STATUS:
        return xdata_status(s, now);
    case XDATA_RAM_ADDR:
        return s->ram_addr;
    case XDATA_RAM_PORT:
        return s->ram_port;
    case XDATA_PERF_CONTROL:
        return s->perf;
    case XDATA_WR_CNT_LSB:
        return (uint32_t)xdata_counter(s, true, now);
    case XDATA_WR_CNT_MSB:
        return xdata_counter(s, true, now) >> 32;
    case XDATA_RD_CNT_LSB:
        return (uint32_t)xdata_counter(s, false, now);
    case XDATA_RD_CNT_MSB:
        return xdata_counter(s, false, now) >> 32;
    default:
        return 0;
    }
}

static uint32_t merge(uint32_t old, uint32_t val, uint32_t mask)
{
    return (old & ~mask) | (val & mask);
}

/* The bytes of mask of the register at off take val's; true: doorbell */
static bool xdata_reg_write(XdataCore *s, uint32_t off, uint32_t val,
                            uint32_t mask, uint64_t now)
{
    switch (off) {
    case XDATA_ADDR_LSB:
        s->addr_lsb = merge(s->addr_lsb, val, mask);
        break;
    case XDATA_ADDR_MSB:
        s->addr_msb = merge(s->addr_msb, val, mask);
        break;
    case XDATA_BURST_CNT:
        xdata_burst_write(s, merge(s->burst, val, mask), now);
        break;
    case XDATA_CONTROL:
        s->control = merge(s->control, val, mask) & XDATA_CTRL_RW;
        if (mask & val & XDATA_CTRL_DOORBELL) {
            xdata_doorbell(s, now);
            return true;
        }
        break;
    case XDATA_PATTERN:
        s->pattern = merge(s->pattern, val, mask);
        break;
    case XDATA_STATUS:
        /* done is cleared by writing it 0, and only once it is set */
        if ((mask & XDATA_STATUS_DONE) && !(val & XDATA_STATUS_DONE) &&
            xdata_status(s, now)) {
            s->test.done_cleared = true;
        }
        break;
    case XDATA_RAM_ADDR:
        s->ram_addr = merge(s->ram_addr, val, mask);
        break;
    case XDATA_RAM_PORT:
        s->ram_port = merge(s->ram_port, val, mask);
        break;
    case XDATA_PERF_CONTROL:
        xdata_perf_write(s, merge(s->perf, val, mask), now);
        break;
    default:
        break;                  /* the counters and the rest: ignored */
    }
    return false;
}

/* The link bytes of an access: the whole dwords it spans */
static uint32_t xdata_span_bytes(uint32_t off, unsigned size)
{
    return ((off + size - 1) / 4 - off / 4 + 1) * 4;
}

static bool xdata_access_ok(uint32_t off, unsigned size)
{
    return (size == 1 || size == 2 || size == 4 || size == 8) &&
           off < XDATA_BAR_SIZE && size <= XDATA_BAR_SIZE - off;
}

uint64_t xdata_read(XdataCore *s, uint32_t off, unsigned size, uint64_t now)
{
    uint64_t v = 0;
    uint32_t word = 0, at = UINT32_MAX;

    if (!xdata_access_ok(off, size)) {
        return 0;
    }
    for (unsigned i = 0; i < size; i++) {
        uint32_t o = off + i;

        if ((o & ~3u) != at) {
            at = o & ~3u;
            word = xdata_reg_read(s, at, now);
        }
        v |= (uint64_t)(word >> 8 * (o & 3) & 0xFF) << 8 * i;
    }
    s->bar_up += xdata_span_bytes(off, size);
    return v;
}

bool xdata_write(XdataCore *s, uint32_t off, unsigned size, uint64_t val,
                 uint64_t now)
{
    bool rang = false;
    uint32_t end;

    if (!xdata_access_ok(off, size)) {
        return false;
    }
    s->bar_down += xdata_span_bytes(off, size);
    /* each dword it touches in turn, with the bytes it covers there */
    end = off + size;
    for (uint32_t at = off & ~3u; at < end; at += 4) {
        uint32_t w = 0, mask = 0;

        for (unsigned b = 0; b < 4; b++) {
            if (at + b >= off && at + b < end) {
                w |= (uint32_t)(val >> 8 * (at + b - off) & 0xFF) << 8 * b;
                mask |= 0xFFu << 8 * b;
            }
        }
        rang |= xdata_reg_write(s, at, w, mask, now);
    }
    return rang;
}

void xdata_totals(const XdataCore *s, uint64_t now, PcieLinkTotals *out)
{
    out->payload_up = xdata_bytes(s, true, now) + s->bar_up;
    out->payload_down = xdata_bytes(s, false, now) + s->bar_down;
    out->link_down_ns = 0;
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

void *xdata_save(const XdataCore *s, size_t *len)
{
    GByteArray *b = g_byte_array_new();
    const XdataTest *t = &s->test;

    ptm_put64(b, XDATA_STATE_MAGIC);
    ptm_put64(b, s->addr_lsb | (uint64_t)s->addr_msb << 32);
    ptm_put64(b, s->burst | (uint64_t)s->control << 32);
    ptm_put64(b, s->pattern | (uint64_t)s->ram_addr << 32);
    ptm_put64(b, s->ram_port | (uint64_t)s->perf << 32);
    ptm_put64(b, t->started | t->write << 1 | t->addr64 << 2 |
              t->done_cleared << 3);
    ptm_put64(b, t->control);
    ptm_put64(b, t->link.speed_mts | (uint64_t)t->link.width << 32);
    ptm_put64(b, t->link.mps | (uint64_t)t->link.mrrs << 32);
    ptm_put64(b, t->t0);
    ptm_put64(b, t->end);
    ptm_put64(b, s->base_wr);
    ptm_put64(b, s->base_rd);
    ptm_put64(b, s->acc_wr);
    ptm_put64(b, s->acc_rd);
    ptm_put64(b, s->snap_wr);
    ptm_put64(b, s->snap_rd);
    ptm_put64(b, s->bar_up);
    ptm_put64(b, s->bar_down);
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *xdata_load(XdataCore *s, const void *buf, size_t len)
{
    PtmReader r = { .p = buf, .left = len };
    XdataCore n = *s;
    XdataTest *t = &n.test;
    uint64_t v, flags;

    if (ptm_get64(&r) != XDATA_STATE_MAGIC) {
        return g_strdup("the xData state is not one this model saved");
    }
    v = ptm_get64(&r);
    n.addr_lsb = v;
    n.addr_msb = v >> 32;
    v = ptm_get64(&r);
    n.burst = v;
    n.control = (v >> 32) & XDATA_CTRL_RW;
    v = ptm_get64(&r);
    n.pattern = v;
    n.ram_addr = v >> 32;
    v = ptm_get64(&r);
    n.ram_port = v;
    n.perf = (v >> 32) & XDATA_PERF_ENABLE;
    flags = ptm_get64(&r);
    memset(t, 0, sizeof(*t));
    t->started = flags & 1;
    t->write = flags & 2;
    t->addr64 = flags & 4;
    t->done_cleared = flags & 8;
    t->control = ptm_get64(&r) & XDATA_CTRL_RW;
    v = ptm_get64(&r);
    t->link.speed_mts = v;
    t->link.width = v >> 32;
    v = ptm_get64(&r);
    t->link.mps = v;
    t->link.mrrs = v >> 32;
    t->t0 = ptm_get64(&r);
    t->end = ptm_get64(&r);
    n.base_wr = ptm_get64(&r);
    n.base_rd = ptm_get64(&r);
    n.acc_wr = ptm_get64(&r);
    n.acc_rd = ptm_get64(&r);
    n.snap_wr = ptm_get64(&r);
    n.snap_rd = ptm_get64(&r);
    n.bar_up = ptm_get64(&r);
    n.bar_down = ptm_get64(&r);
    if (r.bad || r.left) {
        return g_strdup_printf("the xData state is %zu bytes, not what this "
                               "model saves", len);
    }
    if (flags > 0xF) {
        return g_strdup_printf("the xData state has test flags 0x%"
                               G_GINT64_MODIFIER "x, not 0 to 0xf", flags);
    }
    if (t->started) {
        g_autofree char *why = xdata_link_check(&t->link);

        if (why) {
            return g_strdup_printf("the xData state's test runs on %s", why);
        }
        if (t->write != !!(t->control & XDATA_CTRL_WRITE)) {
            return g_strdup("the xData state's test direction is not its "
                            "control's");
        }
        xdata_shape(&t->link, t->write,
                    (t->control & XDATA_CTRL_LEN_MASK) >> XDATA_CTRL_LEN_SHIFT,
                    t->addr64, &t->shape);
        xdata_set_end(t, t->shape.payload ? t->end : 0);
    } else {
        if (flags || t->t0 || t->end || t->control || t->link.speed_mts ||
            t->link.width || t->link.mps || t->link.mrrs) {
            return g_strdup("the xData state has a test it never started");
        }
        t->t_end = UINT64_MAX;
    }
    *s = n;
    return NULL;
}
