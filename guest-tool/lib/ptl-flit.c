/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCIe 6 flit mode of a card and the ports above it (docs/flit.md): the
 * PCI Express capability's flit bits and the capabilities 0x0031 Physical
 * Layer 64.0 GT/s, 0x0032 Flit Logging and 0x0033 Flit Performance
 * Measurement, decoded from raw register values, read and measured over
 * an interval through any ptl_config_ops (libpci's through ptl_config on
 * a host, an array in the unit tests).
 *
 * What a measurement writes, and only when the function had it off: FBER
 * Measurement Control (Enable with Clear at every start, the value found
 * at the end) and Flit Performance Measurement Control (Enable 0, then 1
 * for Flit->Ack, the value found at the end). Nothing else: the error
 * log's Valid, the error counter and the RW1C interrupt bits are left as
 * they are.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcie-telemetry.h"
#include "ptl-pci-flit.h"

/* libpci's names (or ours where it has none) and the tool's must agree */
_Static_assert(PCI_EXT_CAP_ID_64GT == PTL_FLIT_CAP_ID_64GT, "0x0031");
_Static_assert(PCI_EXT_CAP_ID_FLIT_LOG == PTL_FLIT_CAP_ID_LOG, "0x0032");
_Static_assert(PCI_EXT_CAP_ID_FLIT_PM == PTL_FLIT_CAP_ID_PERF, "0x0033");
_Static_assert(PCI_EXP_FLAGS_FLIT_MODE == PTL_PCIE_FLAGS_FLIT, "flags");
_Static_assert(PCI_EXP_LNKCTL_FLIT_MODE_DIS == PTL_PCIE_LNKCTL_FLIT_DIS,
               "lnkctl");
_Static_assert(PCI_EXP_LNKSTA2 == PTL_PCIE_LNKSTA2, "lnksta2");
_Static_assert(PCI_EXP_LINKSTA2_FLIT_MODE == PTL_PCIE_LNKSTA2_FLIT,
               "lnksta2 flit");
_Static_assert(PCI_CAP_ID_EXP == PTL_PCIE_CAP_ID, "PCI Express");

#define CONFIG_SIZE     4096u
#define STD_CAPS_MAX    48      /* (256 - 64) / 4: a looping list ends */
#define EXT_CAPS_MAX    ((CONFIG_SIZE - PTL_EXT_CAP_START) / 4)

/* ------------------------------------------------------------ decoding */

unsigned ptl_flit_cap_id(ptl_flit_cap cap)
{
    static const unsigned id[PTL_FLIT_NCAPS] = {
        PTL_FLIT_CAP_ID_64GT, PTL_FLIT_CAP_ID_LOG, PTL_FLIT_CAP_ID_PERF,
    };

    return cap < PTL_FLIT_NCAPS ? id[cap] : 0;
}

unsigned ptl_flit_width(unsigned code)
{
    return code <= 4 ? 1u << code : 0;
}

void ptl_flit_mode_decode(uint16_t flags, uint16_t lnkctl, uint16_t lnksta2,
                          ptl_flit_mode *m)
{
    m->pcie = true;
    m->supported = flags & PTL_PCIE_FLAGS_FLIT;
    m->disable = lnkctl & PTL_PCIE_LNKCTL_FLIT_DIS;
    m->active = lnksta2 & PTL_PCIE_LNKSTA2_FLIT;
}

bool ptl_flit_mode_any(const ptl_flit_mode *m)
{
    bool any = m->supported;

    for (unsigned k = 0; k < PTL_FLIT_NCAPS; k++) {
        any |= m->cap[k] != 0;
    }
    return any;
}

void ptl_flit_64gt_decode(uint32_t status, ptl_flit_64gt *s)
{
    s->status = status;
    s->eq_complete = status & PTL_64GT_EQ_COMPLETE;
    s->eq_phase1 = status & PTL_64GT_EQ_PHASE1;
    s->eq_phase2 = status & PTL_64GT_EQ_PHASE2;
    s->eq_phase3 = status & PTL_64GT_EQ_PHASE3;
    s->eq_request = status & PTL_64GT_EQ_REQUEST;
}

void ptl_flit_log_decode(uint32_t log1, uint32_t log2, ptl_flit_log_entry *e)
{
    e->log1 = log1;
    e->log2 = log2;
    e->valid = log1 & PTL_FLOG_ERR1_VALID;
    e->width_code = PTL_FIELD(log1, PTL_FLOG_ERR1_WIDTH);
    e->width = ptl_flit_width(e->width_code);
    e->offset = PTL_FIELD(log1, PTL_FLOG_ERR1_OFFSET);
    e->consecutive = PTL_FIELD(log1, PTL_FLOG_ERR1_CONS);
    e->more = log1 & PTL_FLOG_ERR1_MORE;
    e->unrecognized = log1 & PTL_FLOG_ERR1_UNREC;
    e->uncorrectable = log1 & PTL_FLOG_ERR1_UNCOR;
    e->syndrome = PTL_FIELD(log1, PTL_FLOG_ERR1_SYND);
}

void ptl_flit_err_counter_decode(uint16_t control, uint16_t status,
                                 ptl_flit_err_counter *c)
{
    c->control = control;
    c->status = status;
    c->enabled = control & PTL_FLOG_CNT_EN;
    c->int_enable = control & PTL_FLOG_CNT_INT_EN;
    c->events = PTL_FIELD(control, PTL_FLOG_CNT_EVENTS);
    c->trigger = PTL_FIELD(control, PTL_FLOG_CNT_TRIGGER);
    c->width_code = PTL_FIELD(status, PTL_FLOG_STS_WIDTH);
    c->width = ptl_flit_width(c->width_code);
    c->interrupt = status & PTL_FLOG_STS_INT;
    c->count = PTL_FIELD(status, PTL_FLOG_STS_COUNT);
}

const char *ptl_flit_events_text(unsigned events)
{
    static const char *const text[] = {
        "all flit errors", "uncorrectable and unrecognized", "correctable",
        "none",
    };

    return text[events & PTL_FLOG_CNT_EVENTS_MASK];
}

void ptl_flit_fber_ctl_decode(uint32_t control, ptl_flit_fber_ctl *f)
{
    f->control = control;
    f->enabled = control & PTL_FLOG_FBER_EN;
    f->granularity = PTL_FIELD(control, PTL_FLOG_FBER_GRAN);
}

uint32_t ptl_flit_counter_diff(uint32_t start, uint32_t end)
{
    return end - start;         /* unsigned: modulo 2^32 */
}

void ptl_flit_counter_add(uint64_t *total, uint32_t *last, uint32_t now)
{
    *total += ptl_flit_counter_diff(*last, now);
    *last = now;
}

uint32_t ptl_flit_count16_diff(uint32_t start, uint32_t end,
                               bool *saturated)
{
    start &= PTL_FLOG_COUNT16_MAX;
    end &= PTL_FLOG_COUNT16_MAX;
    *saturated = end == PTL_FLOG_COUNT16_MAX;
    /* these stop rather than wrap: lower means cleared meanwhile */
    return end >= start ? end - start : end;
}

void ptl_flit_perf_status_decode(uint32_t v, ptl_flit_perf_status *s)
{
    s->raw = v;
    s->status = PTL_FIELD(v, PTL_FST_STATUS);
    s->tracked = PTL_FIELD(v, PTL_FST_TRACKED);
    s->interrupt = v & PTL_FST_INT;
    s->counter = PTL_FIELD(v, PTL_FST_COUNTER);
}

const char *ptl_flit_status_text(unsigned status)
{
    static const char *const text[] = {
        "not started", "started", "done", "overflow",
    };

    return text[status & PTL_FST_STATUS_MASK];
}

void ptl_flit_perf_ctl_decode(uint32_t v, ptl_flit_perf_ctl *c)
{
    c->control = v;
    c->enabled = v & PTL_FPERF_EN;
    c->type = PTL_FIELD(v, PTL_FPERF_TYPE);
    c->instances = PTL_FIELD(v, PTL_FPERF_INST);
    c->threshold = PTL_FIELD(v, PTL_FPERF_THR);
    c->trackers = PTL_FIELD(v, PTL_FPERF_TRACK);
    c->ltssm_instances = PTL_FIELD(v, PTL_FPERF_LINST);
    c->ltssm_threshold = PTL_FIELD(v, PTL_FPERF_LTHR);
    c->l1_threshold = PTL_FIELD(v, PTL_FPERF_L1THR);
}

uint32_t ptl_flit_perf_ctl_run(uint32_t found, unsigned instances,
                               bool enable)
{
    return (found & PTL_FPERF_CTL_RSVDP) |
           PTL_FPERF_TYPE_ACK << PTL_FPERF_TYPE_SHIFT |
           (instances & PTL_FPERF_INST_MASK) << PTL_FPERF_INST_SHIFT |
           (enable ? PTL_FPERF_EN : 0);
}

const char *ptl_flit_tracker_name(unsigned k)
{
    static const char *const name[] = {
        "L0->Recovery", "L0p upconfiguration", "L1.0->L0", "L1.1->L0",
        "L1.2->L0",
    };

    return k < sizeof(name) / sizeof(name[0]) ? name[k] : NULL;
}

int ptl_flit_ltssm_tracker(unsigned trackers, unsigned i)
{
    for (unsigned k = 0; k < 5; k++) {
        if ((trackers >> k) & 1) {
            if (i == 0) {
                return (int)k;
            }
            i--;
        }
    }
    return -1;
}

void ptl_flit_latency_compute(uint32_t status, unsigned instances,
                              ptl_flit_latency *l)
{
    l->measured = true;
    l->skipped[0] = '\0';
    l->instances = instances;
    ptl_flit_perf_status_decode(status, &l->st);
    l->counter_ns = l->average_ns = l->worst_ns = NAN;
    /* an overflowed measurement's other fields are undefined */
    if (l->st.status == PTL_FST_NOT_STARTED ||
        l->st.status == PTL_FST_OVERFLOW) {
        return;
    }
    l->counter_ns = (double)l->st.counter * PTL_FPERF_UNIT_NS;
    if (l->st.tracked == 0) {
        return;
    }
    if (instances) {
        l->average_ns = l->counter_ns / l->st.tracked;
    } else {
        l->worst_ns = l->counter_ns;    /* the counter holds the longest */
    }
}

/* ------------------------------------------------------ register access */

struct ptl_flit_meas {
    const ptl_config_ops *ops;
    void *opaque;
    ptl_flit_dev dev;
    unsigned pcie;              /* the PCI Express capability, 0: none */
    unsigned instances;
    bool started;               /* the first start was made */
    /* FBER: as found, whether the tool enabled it, the window's state */
    uint32_t fber_found;
    bool fber_owned;
    uint64_t t0;
    uint32_t flits_last;
    uint64_t flits_total;
    uint32_t invalid0;
    uint32_t lane0[PTL_FLOG_LANES];
    /* Performance Measurement: as found, whether the tool runs it */
    uint32_t perf_found;
    bool perf_owned;
};

static ptl_err io_error(const ptl_flit_meas *m, ptl_error *err,
                        const char *what, uint32_t off)
{
    const char *why = m->ops->error ? m->ops->error(m->opaque) : NULL;

    return ptl_set_error(err, PTL_E_INTERNAL, "%s 0x%03x of the "
                         "configuration space of %s failed%s%s", what, off,
                         m->dev.slot, why && *why ? ": " : "",
                         why ? why : "");
}

static ptl_err rd32(ptl_flit_meas *m, uint32_t off, uint32_t *v,
                    ptl_error *err)
{
    if (!m->ops->read32(m->opaque, off, v)) {
        return io_error(m, err, "reading", off);
    }
    return PTL_OK;
}

/* a 16-bit register at off (2-aligned), from its dword */
static ptl_err rd16(ptl_flit_meas *m, uint32_t off, uint16_t *v,
                    ptl_error *err)
{
    uint32_t dw;
    ptl_err r = rd32(m, off & ~3u, &dw, err);

    *v = (uint16_t)(dw >> (8 * (off & 2)));
    return r;
}

static ptl_err wr32(ptl_flit_meas *m, uint32_t off, uint32_t v,
                    ptl_error *err)
{
    if (!m->ops->write32(m->opaque, off, v)) {
        return io_error(m, err, "writing", off);
    }
    return PTL_OK;
}

/* The standard list for the PCI Express capability. */
static ptl_err find_pcie(ptl_flit_meas *m, ptl_error *err)
{
    uint32_t v, ptr;
    ptl_err r;

    m->pcie = 0;
    r = rd32(m, 0x04, &v, err);         /* Command, Status */
    if (r != PTL_OK || !(v & (PCI_STATUS_CAP_LIST << 16))) {
        return r;
    }
    r = rd32(m, PCI_CAPABILITY_LIST & ~3u, &v, err);
    ptr = v & 0xFC;
    for (unsigned i = 0; r == PTL_OK && ptr >= 0x40 && i < STD_CAPS_MAX;
         i++) {
        r = rd32(m, ptr, &v, err);
        if (r == PTL_OK && (v & 0xFF) == PTL_PCIE_CAP_ID) {
            m->pcie = ptr;
            break;
        }
        ptr = (v >> 8) & 0xFC;
    }
    return r;
}

/*
 * The extended list for the flit capabilities (the first of each ID). A
 * read that fails ends it: a function without extended space has none.
 */
static void find_flit_caps(ptl_flit_meas *m)
{
    uint32_t off = PTL_EXT_CAP_START, hdr;

    memset(m->dev.mode.cap, 0, sizeof(m->dev.mode.cap));
    for (unsigned i = 0; i < EXT_CAPS_MAX; i++) {
        if (!m->ops->read32(m->opaque, off, &hdr) || hdr == 0 ||
            hdr == 0xFFFFFFFFu) {
            return;
        }
        for (unsigned k = 0; k < PTL_FLIT_NCAPS; k++) {
            if ((hdr & PTL_EXT_CAP_ID_MASK) == ptl_flit_cap_id(k) &&
                !m->dev.mode.cap[k]) {
                m->dev.mode.cap[k] = off;
            }
        }
        off = (hdr >> PTL_EXT_CAP_NEXT_SHIFT) & 0xFFCu;
        if (off < PTL_EXT_CAP_START) {
            return;
        }
    }
}

/* Link and flit bits of the PCI Express capability. */
static ptl_err read_mode(ptl_flit_meas *m, ptl_error *err)
{
    uint32_t lnkcap = 0;
    uint16_t flags = 0, lnkctl = 0, lnksta = 0, lnksta2 = 0;
    unsigned cap[PTL_FLIT_NCAPS];
    ptl_err r = PTL_OK;

    memcpy(cap, m->dev.mode.cap, sizeof(cap));
    memset(&m->dev.mode, 0, sizeof(m->dev.mode));
    memcpy(m->dev.mode.cap, cap, sizeof(cap));
    memset(&m->dev.link, 0, sizeof(m->dev.link));
    if (!m->pcie) {
        return PTL_OK;
    }
    if ((r = rd16(m, m->pcie + PTL_PCIE_FLAGS, &flags, err)) != PTL_OK ||
        (r = rd32(m, m->pcie + PTL_PCIE_LNKCAP, &lnkcap, err)) != PTL_OK ||
        (r = rd16(m, m->pcie + PTL_PCIE_LNKCTL, &lnkctl, err)) != PTL_OK ||
        (r = rd16(m, m->pcie + PTL_PCIE_LNKSTA, &lnksta, err)) != PTL_OK) {
        return r;
    }
    /* Link Status 2 came with version 2 of the capability */
    if ((flags & PCI_EXP_FLAGS_VERS) >= 2) {
        r = rd16(m, m->pcie + PTL_PCIE_LNKSTA2, &lnksta2, err);
    }
    ptl_link_decode(flags, lnkcap, lnksta, &m->dev.link);
    ptl_flit_mode_decode(flags, lnkctl, lnksta2, &m->dev.mode);
    return r;
}

ptl_err ptl_flit_meas_new(const ptl_config_ops *ops, void *opaque,
                          const char *slot, bool card, unsigned instances,
                          ptl_flit_meas **out, ptl_error *err)
{
    ptl_flit_meas *m;
    uint32_t id;
    ptl_err r;

    *out = NULL;
    if (instances > PTL_FPERF_INST_MASK) {
        return ptl_set_error(err, PTL_E_USAGE, "%u Flit->Ack instances: "
                             "at most %u", instances, PTL_FPERF_INST_MASK);
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    m->ops = ops;
    m->opaque = opaque;
    m->instances = instances;
    snprintf(m->dev.slot, sizeof(m->dev.slot), "%.15s", slot);
    m->dev.card = card;
    r = rd32(m, 0x00, &id, err);
    if (r == PTL_OK && id == 0xFFFFFFFFu) {
        r = ptl_set_error(err, PTL_E_GONE, "%s does not respond (its "
                          "configuration space reads all ones)", slot);
    }
    if (r == PTL_OK) {
        r = find_pcie(m, err);
    }
    if (r == PTL_OK) {
        find_flit_caps(m);
        r = read_mode(m, err);
    }
    if (r != PTL_OK) {
        free(m);
        return r;
    }
    *out = m;
    return PTL_OK;
}

const ptl_flit_dev *ptl_flit_meas_dev(const ptl_flit_meas *m)
{
    return &m->dev;
}

void ptl_flit_meas_free(ptl_flit_meas *m)
{
    free(m);
}

static unsigned lanes_shown(const ptl_flit_meas *m)
{
    unsigned w = m->dev.link.present ? m->dev.link.width : 0;

    return w >= 1 && w <= PTL_FLOG_LANES ? w : PTL_FLOG_LANES;
}

/* The FBER counters: Flit Counter, invalid flits, lanes. */
static ptl_err read_fber(ptl_flit_meas *m, uint32_t *flits,
                         uint32_t *invalid, uint32_t lane[PTL_FLOG_LANES],
                         ptl_error *err)
{
    unsigned log = m->dev.mode.cap[PTL_FLIT_CAP_LOG];
    ptl_err r = rd32(m, log + PTL_FLOG_FBER_FLITS, flits, err);

    if (r == PTL_OK) {
        r = rd32(m, log + PTL_FLOG_FBER_INVALID, invalid, err);
        *invalid &= PTL_FLOG_FBER_INVALID_MASK;
    }
    for (unsigned i = 0; r == PTL_OK && i < PTL_FLOG_LANES / 2; i++) {
        uint32_t v;

        r = rd32(m, log + PTL_FLOG_FBER_LANES + 4 * i, &v, err);
        lane[2 * i] = v & 0xFFFF;
        lane[2 * i + 1] = v >> 16;
    }
    return r;
}

ptl_err ptl_flit_meas_start(ptl_flit_meas *m, uint64_t now_ns,
                            ptl_error *err)
{
    unsigned log = m->dev.mode.cap[PTL_FLIT_CAP_LOG];
    unsigned perf = m->dev.mode.cap[PTL_FLIT_CAP_PERF];
    bool first = !m->started;
    ptl_err r = PTL_OK;

    m->started = true;
    if (log) {
        if (first) {
            r = rd32(m, log + PTL_FLOG_FBER_CTL, &m->fber_found, err);
            m->fber_owned = r == PTL_OK &&
                            !(m->fber_found & PTL_FLOG_FBER_EN);
            ptl_flit_fber_ctl_decode(m->fber_found, &m->dev.fber_found);
        }
        /* off as found: on with Clear, the granularity kept */
        if (r == PTL_OK && m->fber_owned) {
            r = wr32(m, log + PTL_FLOG_FBER_CTL,
                     (m->fber_found & ~PTL_FLOG_FBER_CLEAR) |
                     PTL_FLOG_FBER_EN | PTL_FLOG_FBER_CLEAR, err);
        }
        if (r == PTL_OK) {
            r = read_fber(m, &m->flits_last, &m->invalid0, m->lane0, err);
        }
        m->flits_total = 0;
        m->t0 = now_ns;
    }
    if (r == PTL_OK && perf) {
        if (first) {
            r = rd32(m, perf + PTL_FPERF_CTL, &m->perf_found, err);
            m->perf_owned = r == PTL_OK && !(m->perf_found & PTL_FPERF_EN);
            ptl_flit_perf_ctl_decode(m->perf_found, &m->dev.perf.found);
        }
        /* Enable 0 -> 1 starts a measurement; 1 -> 0 ends the last one */
        if (r == PTL_OK && m->perf_owned) {
            r = wr32(m, perf + PTL_FPERF_CTL,
                     ptl_flit_perf_ctl_run(m->perf_found, m->instances,
                                           false), err);
        }
        if (r == PTL_OK && m->perf_owned) {
            r = wr32(m, perf + PTL_FPERF_CTL,
                     ptl_flit_perf_ctl_run(m->perf_found, m->instances,
                                           true), err);
        }
    }
    return r;
}

ptl_err ptl_flit_meas_poll(ptl_flit_meas *m, ptl_error *err)
{
    unsigned log = m->dev.mode.cap[PTL_FLIT_CAP_LOG];
    uint32_t v;
    ptl_err r;

    if (!log || !m->started) {
        return PTL_OK;
    }
    r = rd32(m, log + PTL_FLOG_FBER_FLITS, &v, err);
    if (r == PTL_OK) {
        ptl_flit_counter_add(&m->flits_total, &m->flits_last, v);
    }
    return r;
}

/* Each capability still where it was: else the function went away. */
static ptl_err check_caps(ptl_flit_meas *m, ptl_error *err)
{
    for (unsigned k = 0; k < PTL_FLIT_NCAPS; k++) {
        uint32_t hdr;
        ptl_err r;

        if (!m->dev.mode.cap[k]) {
            continue;
        }
        r = rd32(m, m->dev.mode.cap[k], &hdr, err);
        if (r != PTL_OK) {
            return r;
        }
        if ((hdr & PTL_EXT_CAP_ID_MASK) != ptl_flit_cap_id(k)) {
            return ptl_set_error(err, PTL_E_GONE, "%s disappeared (its "
                                 "capability 0x%04x at 0x%03x reads "
                                 "0x%08x)", m->dev.slot, ptl_flit_cap_id(k),
                                 m->dev.mode.cap[k], hdr);
        }
    }
    return PTL_OK;
}

static ptl_err end_log(ptl_flit_meas *m, uint64_t now_ns, ptl_error *err)
{
    unsigned log = m->dev.mode.cap[PTL_FLIT_CAP_LOG];
    ptl_flit_fber *f = &m->dev.fber;
    uint32_t log1, log2, cnt, flits, invalid, lane[PTL_FLOG_LANES];
    ptl_err r;

    if ((r = rd32(m, log + PTL_FLOG_ERR1, &log1, err)) != PTL_OK ||
        (r = rd32(m, log + PTL_FLOG_ERR2, &log2, err)) != PTL_OK ||
        (r = rd32(m, log + PTL_FLOG_CNT_CTL, &cnt, err)) != PTL_OK) {
        return r;
    }
    ptl_flit_log_decode(log1, log2, &m->dev.log);
    /* Control at 0Ch, Status at 0Eh: one dword */
    ptl_flit_err_counter_decode(cnt & 0xFFFF, cnt >> 16, &m->dev.counter);
    memset(f, 0, sizeof(*f));
    if (!m->started) {
        return PTL_OK;
    }
    r = read_fber(m, &flits, &invalid, lane, err);
    if (r != PTL_OK) {
        return r;
    }
    ptl_flit_counter_add(&m->flits_total, &m->flits_last, flits);
    f->measured = true;
    f->cleared = m->fber_owned;
    f->seconds = now_ns > m->t0 ? (now_ns - m->t0) / 1e9 : 0;
    f->flits = m->flits_total;
    f->flits_per_s = f->seconds > 0 ? f->flits / f->seconds : NAN;
    f->invalid = ptl_flit_count16_diff(m->invalid0, invalid,
                                       &f->invalid_saturated);
    f->nlanes = lanes_shown(m);
    for (unsigned i = 0; i < PTL_FLOG_LANES; i++) {
        f->lane[i] = ptl_flit_count16_diff(m->lane0[i], lane[i],
                                           &f->lane_saturated[i]);
    }
    /* a window found running goes on: the next one starts here */
    m->invalid0 = invalid;
    memcpy(m->lane0, lane, sizeof(lane));
    m->flits_total = 0;
    m->t0 = now_ns;
    return PTL_OK;
}

static ptl_err end_perf(ptl_flit_meas *m, ptl_error *err)
{
    unsigned perf = m->dev.mode.cap[PTL_FLIT_CAP_PERF];
    ptl_flit_perf *p = &m->dev.perf;
    uint32_t status;
    ptl_err r;

    /* Status first: the next start's Enable 1 -> 0 ends the measurement */
    if ((r = rd32(m, perf + PTL_FPERF_STATUS, &status, err)) != PTL_OK ||
        (r = rd32(m, perf + PTL_FPERF_CAP, &p->capability, err)) !=
        PTL_OK) {
        return r;
    }
    p->vector = PTL_FIELD(p->capability, PTL_FPERF_CAP_VECTOR);
    p->nltssm = PTL_FIELD(p->capability, PTL_FPERF_CAP_LTSSM);
    for (unsigned i = 0; i < p->nltssm && i < PTL_FPERF_LTSSM_MAX; i++) {
        uint32_t v;

        r = rd32(m, perf + PTL_FPERF_LTSSM(i), &v, err);
        if (r != PTL_OK) {
            return r;
        }
        ptl_flit_perf_status_decode(v, &p->ltssm[i]);
    }
    memset(&p->latency, 0, sizeof(p->latency));
    if (!m->started) {
        return PTL_OK;
    }
    if (m->perf_owned) {
        ptl_flit_latency_compute(status, m->instances, &p->latency);
    } else {
        p->latency.instances = m->instances;
        ptl_flit_perf_status_decode(status, &p->latency.st);
        p->latency.counter_ns = p->latency.average_ns =
            p->latency.worst_ns = NAN;
        snprintf(p->latency.skipped, sizeof(p->latency.skipped),
                 "Enable was set (another measurement is running): left "
                 "alone");
    }
    return PTL_OK;
}

ptl_err ptl_flit_meas_end(ptl_flit_meas *m, uint64_t now_ns,
                          ptl_error *err)
{
    unsigned pl64 = m->dev.mode.cap[PTL_FLIT_CAP_64GT];
    ptl_err r = check_caps(m, err);

    /* the latency first: its Status is what the interval ends with */
    if (r == PTL_OK && m->dev.mode.cap[PTL_FLIT_CAP_PERF]) {
        r = end_perf(m, err);
    }
    if (r == PTL_OK && m->dev.mode.cap[PTL_FLIT_CAP_LOG]) {
        r = end_log(m, now_ns, err);
    }
    if (r == PTL_OK && pl64) {
        uint32_t st;

        r = rd32(m, pl64 + PTL_64GT_STATUS, &st, err);
        ptl_flit_64gt_decode(st, &m->dev.pl64);
    }
    if (r == PTL_OK) {
        r = read_mode(m, err);
    }
    return r;
}

ptl_err ptl_flit_meas_restore(ptl_flit_meas *m, ptl_error *err)
{
    unsigned log = m->dev.mode.cap[PTL_FLIT_CAP_LOG];
    unsigned perf = m->dev.mode.cap[PTL_FLIT_CAP_PERF];
    ptl_err r = PTL_OK, r2 = PTL_OK;
    ptl_error e2 = { 0 };

    if (!m->started) {
        return PTL_OK;
    }
    /* Enable 0 as found: the counters and the Status keep their values */
    if (log && m->fber_owned) {
        r = wr32(m, log + PTL_FLOG_FBER_CTL,
                 m->fber_found & ~PTL_FLOG_FBER_CLEAR, err);
    }
    if (perf && m->perf_owned) {
        r2 = wr32(m, perf + PTL_FPERF_CTL, m->perf_found,
                  r == PTL_OK ? err : &e2);
    }
    m->started = false;
    return r != PTL_OK ? r : r2;
}

/* ------------------------------------------------- a card and its ports */

struct ptl_flit_run {
    unsigned n;
    ptl_config *cfg[PTL_PCI_PATH_MAX];
    ptl_flit_meas *meas[PTL_PCI_PATH_MAX];
    ptl_flit_dev devs[PTL_PCI_PATH_MAX];
    uint64_t t0;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void run_free(ptl_flit_run *r)
{
    for (unsigned i = 0; i < r->n; i++) {
        ptl_flit_meas_free(r->meas[i]);
        ptl_config_close(r->cfg[i]);
    }
    free(r);
}

ptl_err ptl_flit_run_open(const char *card, unsigned instances,
                          bool writable, ptl_flit_run **out, ptl_error *err)
{
    ptl_pci_path path;
    ptl_flit_run *r;
    ptl_err rc;

    *out = NULL;
    rc = ptl_pci_path_get(card, &path, err);
    if (rc != PTL_OK) {
        return rc;
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
    }
    for (unsigned i = 0; i < path.n; i++) {
        ptl_config *c;
        ptl_flit_meas *m;

        rc = ptl_config_open(path.slot[i], writable, &c, err);
        if (rc == PTL_E_NO_CARD && i > 0) {
            continue;           /* a bridge sysfs does not list */
        }
        if (rc != PTL_OK) {
            run_free(r);
            return rc;
        }
        rc = ptl_flit_meas_new(ptl_config_get_ops(), c, path.slot[i],
                               i == 0, instances, &m, err);
        if (rc != PTL_OK) {
            ptl_config_close(c);
            run_free(r);
            return rc;
        }
        if (!ptl_flit_mode_any(&m->dev.mode)) {
            ptl_flit_meas_free(m);
            ptl_config_close(c);
            continue;
        }
        r->cfg[r->n] = c;
        r->meas[r->n] = m;
        r->devs[r->n] = m->dev;
        r->n++;
    }
    *out = r;
    return PTL_OK;
}

ptl_err ptl_flit_run_check(const ptl_flit_run *r, ptl_error *err)
{
    char list[256] = "";
    size_t len = 0;

    for (unsigned i = 0; i < r->n; i++) {
        const ptl_flit_dev *d = &r->devs[i];
        int k;

        if (d->mode.active) {
            return PTL_OK;
        }
        k = snprintf(list + len, sizeof(list) - len, "%s%s (%s%s)",
                     i ? ", " : "", d->slot, d->card ? "card" : "port",
                     d->mode.supported ? "" : ", flit mode not supported");
        len += k > 0 && (size_t)k < sizeof(list) - len ? (size_t)k : 0;
    }
    if (r->n == 0) {
        return ptl_set_error(err, PTL_E_NO_FLIT, "no flit-mode link: "
                             "neither the card nor a port above it has flit "
                             "mode or a flit capability (0x0031-0x0033)");
    }
    return ptl_set_error(err, PTL_E_NO_FLIT, "no flit-mode link: Flit Mode "
                         "Status is clear on %s (a link trains in flit mode "
                         "at 64 GT/s when both ends support it and neither "
                         "sets Flit Mode Disable)", list);
}

const ptl_flit_dev *ptl_flit_run_devs(const ptl_flit_run *r, unsigned *n)
{
    *n = r->n;
    return r->devs;
}

ptl_err ptl_flit_run_start(ptl_flit_run *r, ptl_error *err)
{
    for (unsigned i = 0; i < r->n; i++) {
        ptl_err rc = ptl_flit_meas_start(r->meas[i], mono_ns(), err);

        if (i == 0) {
            r->t0 = mono_ns();
        }
        if (rc != PTL_OK) {
            return rc;
        }
    }
    return PTL_OK;
}

ptl_err ptl_flit_run_poll(ptl_flit_run *r, ptl_error *err)
{
    for (unsigned i = 0; i < r->n; i++) {
        ptl_err rc = ptl_flit_meas_poll(r->meas[i], err);

        if (rc != PTL_OK) {
            return rc;
        }
    }
    return PTL_OK;
}

ptl_err ptl_flit_run_end(ptl_flit_run *r, double *seconds, ptl_error *err)
{
    for (unsigned i = 0; i < r->n; i++) {
        ptl_err rc = ptl_flit_meas_end(r->meas[i], mono_ns(), err);

        if (rc != PTL_OK) {
            return rc;
        }
        r->devs[i] = r->meas[i]->dev;
    }
    *seconds = (mono_ns() - r->t0) / 1e9;
    return PTL_OK;
}

ptl_err ptl_flit_run_restore(ptl_flit_run *r, ptl_error *err)
{
    ptl_err first = PTL_OK;
    ptl_error e = { 0 };

    for (unsigned i = 0; i < r->n; i++) {
        ptl_err rc = ptl_flit_meas_restore(r->meas[i],
                                           first == PTL_OK ? err : &e);

        first = first == PTL_OK ? rc : first;
    }
    return first;
}

void ptl_flit_run_close(ptl_flit_run *r)
{
    if (r) {
        ptl_flit_run_restore(r, NULL);
        run_free(r);
    }
}
